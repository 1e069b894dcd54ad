/**
 * `scimresolver` over Tessera's HTTP API against a stub SCIM 1.0 service on
 * loopback: the Basic-authenticated token request and its reuse, users by id
 * and login, the list (filtered by the search), refusals of what a SCIM
 * resolver cannot do, errors and `/resolver/test`.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { json, type SeenRequest, startStoreStub, type StoreStub } from "./_http_store_stub.ts";

const BJENSEN = {
  schemas: ["urn:scim:schemas:core:1.0"],
  id: "2819c223-7f76-453a-919d-413861904646",
  externalId: "bjensen",
  userName: "bjensen",
  name: { formatted: "Ms. Barbara J Jensen III", familyName: "Jensen", givenName: "Barbara" },
  emails: [{ value: "bjensen@example.com", type: "work", primary: true }],
  phoneNumbers: [{ value: "555-555-8377", type: "work" }],
};
const JSMITH = { userName: "jsmith", name: { givenName: "John", familyName: "Smith" } };

class Scim {
  tokens = 0;
  expiresIn?: number = 600;
  failList = false;
  stub: StoreStub;

  constructor() {
    this.stub = startStoreStub((req) => this.handle(req));
  }

  handle(req: SeenRequest): Response {
    if (req.method === "GET" && req.path === "/oauth/token") {
      const basic = Buffer.from("tessera:s3cr:t", "utf8").toString("base64");
      if (
        req.query !== "grant_type=client_credentials" ||
        req.headers.authorization !== `Basic ${basic}`
      ) {
        return json({ error: "unauthorized" }, 401);
      }
      return json({
        access_token: `SCIM${++this.tokens}`,
        ...(this.expiresIn ? { expires_in: this.expiresIn } : {}),
      });
    }
    if (req.headers.authorization !== `Bearer SCIM${this.tokens}`) return json({}, 401);
    if (req.method === "GET" && req.path === "/scim/Users") {
      if (this.failList) return json({ error: "down" }, 503);
      return json({
        totalResults: 2,
        schemas: ["urn:scim:schemas:core:1.0"],
        Resources: [BJENSEN, JSMITH],
      });
    }
    if (req.method === "GET" && req.path === "/scim/Users/bjensen") return json(BJENSEN);
    if (req.method === "GET" && req.path === "/scim/Users/jsmith") return json(JSMITH);
    return json({ Errors: [{ description: "not found", code: "404" }] }, 404);
  }

  config(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      type: "scimresolver",
      Authserver: this.stub.origin,
      Resourceserver: `${this.stub.origin}/scim`,
      Client: "tessera",
      Secret: "s3cr:t",
      Mapping: "{}",
      timeout: "2",
      ...overrides,
    };
  }
}

async function withScim(fn: (t: TestApp, scim: Scim) => Promise<void>): Promise<void> {
  const t = await createTestApp();
  const scim = new Scim();
  try {
    await fn(t, scim);
  } finally {
    await scim.stub.close();
    await t.close();
  }
}

async function saveOk(t: TestApp, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", "/resolver/scim", { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const r = await jsonOf(
    await t.asAdmin("POST", "/realm/scimrealm", { body: { resolvers: "scim" } }),
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

async function testConfig(t: TestApp, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", "/resolver/test", { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { value: res.body.result.value, description: res.body.detail?.description as string };
}

Deno.test("scimresolver: token with HTTP Basic (reused), users by login, the list filtered by the search", async () => {
  await withScim(async (t, scim) => {
    await saveOk(t, scim.config());
    const listed = (await jsonOf(await t.asAdmin("GET", "/resolver/scim"))).body.result.value.scim;
    // privacyIDEA lists the Secret in clear; Tessera censors it
    assert.equal(listed.data.Secret, "__CENSORED__");
    assert.deepEqual(listed.censor_keys, ["Secret"]);
    const row = await t.deps.db.selectFrom("resolver").select("config").executeTakeFirstOrThrow();
    assert.equal(row.config.includes("s3cr:t"), false);

    const all = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "scimrealm" } }));
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.deepEqual(scim.stub.lines(), [
      "GET /oauth/token?grant_type=client_credentials",
      "GET /scim/Users",
    ]);
    assert.equal(scim.stub.requests[1].headers.authorization, "Bearer SCIM1");
    assert.equal(scim.stub.requests[1].headers["content-type"], "application/json");
    const [b, j] = all.body.result.value;
    assert.deepEqual(
      [b.username, b.userid, b.givenname, b.surname, b.email, b.phone, b.mobile],
      ["bjensen", "bjensen", "Barbara", "Jensen", "bjensen@example.com", "555-555-8377", ""],
    );
    assert.equal(j.username, "jsmith");
    const some = await jsonOf(
      await t.asAdmin("GET", "/user/", { query: { realm: "scimrealm", username: "bj*" } }),
    );
    assert.deepEqual(some.body.result.value.map((u: { username: string }) => u.username), [
      "bjensen",
    ]);

    scim.stub.requests.length = 0;
    await enrollHotp(t, { user: "bjensen", realm: "scimrealm", pin: "1" });
    const ok = await jsonOf(
      await t.post("/validate/check", { user: "bjensen", realm: "scimrealm", pass: "1" + hotp(0) }),
    );
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    assert.ok(scim.stub.lines().every((l) => l === "GET /scim/Users/bjensen"));
    assert.equal(scim.tokens, 1);
    // a login the service does not know is no user (privacyIDEA takes any login)
    const nobody = await jsonOf(
      await t.post("/validate/check", { user: "nobody", realm: "scimrealm", pass: "x" }),
    );
    assert.equal(
      nobody.body.result.error.message,
      "ERR904: User <nobody@scimrealm> does not exist.",
    );
    // without expires_in the token is not reused
    scim.expiresIn = undefined;
    t.clock.advance(601_000);
    scim.stub.requests.length = 0;
    await t.asAdmin("GET", "/user/", { query: { realm: "scimrealm" } });
    await t.asAdmin("GET", "/user/", { query: { realm: "scimrealm" } });
    assert.equal(scim.stub.lines().filter((l) => l.startsWith("GET /oauth/token")).length, 2);
  });
});

Deno.test("scimresolver: passwords and writes are refused; errors are clear; /resolver/test", async () => {
  await withScim(async (t, scim) => {
    await saveOk(t, scim.config());
    await enrollHotp(t, { user: "bjensen", realm: "scimrealm", pin: "1" });
    await t.asAdmin("POST", "/policy/pin", {
      body: { scope: "authentication", action: "otppin=userstore" },
      json: true,
    });
    const check = await jsonOf(
      await t.post("/validate/check", { user: "bjensen", realm: "scimrealm", pass: "x" + hotp(0) }),
    );
    assert.equal(check.status, 400);
    assert.equal(
      check.body.result.error.message,
      'ERR907: Cannot check a password in resolver "scim": a SCIM resolver checks no passwords',
    );
    const create = await jsonOf(
      await t.asAdmin("POST", "/user/", { body: { user: "x", resolver: "scim" } }),
    );
    assert.equal(create.status, 400);
    assert.match(create.body.result.error.message, /not editable/);

    const ok = await testConfig(t, scim.config());
    assert.deepEqual(ok, { value: true, description: "Found 2 users" });
    const badSecret = await testConfig(t, scim.config({ Secret: "nope" }));
    assert.deepEqual(badSecret, {
      value: false,
      description: "failed to retrieve users: Could not get access token: 401",
    });
    scim.failList = true;
    const down = await testConfig(t, scim.config());
    assert.deepEqual(down, {
      value: false,
      description: "failed to retrieve users: Could not get user list: 503",
    });
    const list = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "scimrealm" } }));
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.result.value, []);
    // the stored Secret is not sent to another token server
    const moved = await jsonOf(
      await t.asAdmin("POST", "/resolver/scim", {
        body: { type: "scimresolver", Authserver: "http://127.0.0.1:9" },
        json: true,
      }),
    );
    assert.equal(moved.status, 400);
    assert.match(moved.body.result.error.message, /Cannot keep the stored "Secret"/);
    await scim.stub.close();
    const refused = await jsonOf(
      await t.post("/validate/check", { user: "jsmith", realm: "scimrealm", pass: "x" }),
    );
    assert.equal(refused.status, 400);
    assert.match(
      refused.body.result.error.message,
      /Cannot find a user in resolver "scim": connection refused/,
    );
    scim.stub = startStoreStub(() => json({}));
  });
});
