/**
 * `keycloakresolver` over Tessera's HTTP API against a stub of Keycloak's
 * token endpoint and admin REST API on loopback: the service token request
 * and its reuse, exact lookups, searches, writes, the password grant check,
 * Keycloak's error bodies and `/resolver/test`.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import {
  formOf,
  json,
  type SeenRequest,
  startStoreStub,
  type StoreStub,
} from "./_http_store_stub.ts";

const ELIZABETH = {
  id: "6ea9a2c0-0000-4000-8000-00000000e1e1",
  username: "elizabeth",
  firstName: "Elizabeth",
  lastName: "Bennet",
  email: "eliza@example.org",
  enabled: true,
};

/** A stub of Keycloak: realm `pi`, service account `svc`. */
class Keycloak {
  users: Json[] = [
    structuredClone(ELIZABETH),
    { id: "a1", username: "darcy", firstName: "Fitzwilliam", lastName: "Darcy", enabled: true },
    { id: "d1", username: "dup", firstName: "One", enabled: true },
    { id: "d2", username: "dup", firstName: "Two", enabled: true },
  ];
  passwords: Record<string, string> = { elizabeth: "pride&prejudice*1" };
  tokens = 0;
  broken = false;
  stub: StoreStub;

  constructor() {
    this.stub = startStoreStub((req) => this.handle(req));
  }

  handle(req: SeenRequest): Response {
    const route = `${req.method} ${req.path}`;
    if (route === "POST /realms/pi/protocol/openid-connect/token") {
      const form = formOf(req.body);
      if (form.grant_type !== "password" || form.client_id !== "admin-cli") {
        return json({ error: "unsupported_grant_type" }, 400);
      }
      if (form.username === "svc" && form.password === "svc*pw") {
        return json({ access_token: `KCT${++this.tokens}`, expires_in: 60, token_type: "Bearer" });
      }
      if (this.passwords[form.username] === form.password) {
        return json({ access_token: "USER", expires_in: 300 });
      }
      return json({ error: "invalid_grant", error_description: "Invalid user credentials" }, 401);
    }
    if (this.broken) return new Response("<html>Internal Server Error</html>", { status: 500 });
    if (!req.path.startsWith("/admin/realms/pi/")) return json({ error: "Realm not found." }, 404);
    if (req.headers.authorization !== `Bearer KCT${this.tokens}`) {
      return json({ error: "HTTP 401 Unauthorized" }, 401);
    }
    const q = new URLSearchParams(req.query);
    const one = req.path.match(/^\/admin\/realms\/pi\/users\/([^/]+)$/);
    if (req.method === "GET" && req.path === "/admin/realms/pi/users") {
      const name = q.get("username");
      const first = q.get("firstName");
      return json(this.users.filter((u) =>
        (name === null ||
          (q.get("exact") === "True" ? u.username === name : u.username.includes(name))) &&
        (first === null || (u.firstName ?? "").toLowerCase().includes(first.toLowerCase()))
      ));
    }
    if (one) {
      const i = this.users.findIndex((u) => u.id === decodeURIComponent(one[1]));
      if (i < 0) return json({ error: "User not found" }, 404);
      if (req.method === "GET") return json(this.users[i]);
      if (req.method === "PUT") {
        Object.assign(this.users[i], JSON.parse(req.body));
        return new Response(null, { status: 204 });
      }
      if (req.method === "DELETE") {
        this.users.splice(i, 1);
        return new Response(null, { status: 204 });
      }
    }
    if (route === "POST /admin/realms/pi/users") {
      const body = JSON.parse(req.body);
      if (this.users.some((u) => u.username === body.username)) {
        return json({ errorMessage: "User exists with same username" }, 409);
      }
      const id = `new-${this.users.length}`;
      const { credentials, ...user } = body;
      if (credentials) this.passwords[body.username] = credentials[0].value;
      this.users.push({ ...user, id });
      return new Response(null, {
        status: 201,
        headers: { location: `${this.stub.origin}/admin/realms/pi/users/${id}` },
      });
    }
    return json({ error: "no route" }, 404);
  }

  config(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      type: "keycloakresolver",
      base_url: this.stub.origin,
      realm: "pi",
      username: "svc",
      password: "svc*pw",
      Editable: "True",
      timeout: "2",
      ...overrides,
    };
  }
}

async function withKeycloak(fn: (t: TestApp, kc: Keycloak) => Promise<void>): Promise<void> {
  const t = await createTestApp();
  const kc = new Keycloak();
  try {
    await fn(t, kc);
  } finally {
    await kc.stub.close();
    await t.close();
  }
}

async function save(t: TestApp, name: string, body: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin("POST", `/resolver/${name}`, { body, json: true }));
}

async function saveOk(t: TestApp, body: Record<string, unknown>) {
  const res = await save(t, "kc", body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const r = await jsonOf(await t.asAdmin("POST", "/realm/pi", { body: { resolvers: "kc" } }));
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

async function testConfig(t: TestApp, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", "/resolver/test", { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { value: res.body.result.value, description: res.body.detail?.description as string };
}

Deno.test("keycloakresolver: defaults; service token by admin-cli's password grant, reused for its life", async () => {
  await withKeycloak(async (t, kc) => {
    const defaults = (await jsonOf(await t.asAdmin("GET", "/resolver/keycloakresolver/default")))
      .body.result.value;
    assert.equal(defaults.type, "keycloakresolver");
    assert.equal(defaults.base_url, "http://localhost:8080");
    assert.equal(defaults.advanced, true);
    assert.equal(
      defaults.config_authorization.endpoint,
      "/realms/{realm}/protocol/openid-connect/token",
    );
    assert.equal(defaults.username, undefined);

    await saveOk(t, kc.config());
    const listed = (await jsonOf(await t.asAdmin("GET", "/resolver/kc"))).body.result.value.kc;
    assert.equal(listed.data.password, "__CENSORED__");
    assert.equal(listed.data.username, "svc");

    const users = await jsonOf(
      await t.asAdmin("GET", "/user/", {
        query: { realm: "pi", username: "eli*", givenname: "Eliza", email: "*" },
      }),
    );
    assert.equal(users.status, 200, JSON.stringify(users.body));
    assert.deepEqual(kc.stub.lines(), [
      "POST /realms/pi/protocol/openid-connect/token",
      "GET /admin/realms/pi/users?username=eli&firstName=Eliza",
    ]);
    const token = kc.stub.requests[0];
    assert.equal(token.headers["content-type"], "application/x-www-form-urlencoded");
    assert.equal(
      token.body,
      "grant_type=password&client_id=admin-cli&username=svc&password=svc%2Apw",
    );
    assert.equal(kc.stub.requests[1].headers.authorization, "Bearer KCT1");
    const [eliza] = users.body.result.value;
    assert.equal(eliza.username, "elizabeth");
    assert.equal(eliza.userid, ELIZABETH.id);
    assert.equal(eliza.givenname, "Elizabeth");
    assert.equal(eliza.surname, "Bennet");
    assert.equal(eliza.email, "eliza@example.org");
    assert.equal(eliza.enabled, undefined);

    // within the token's life (60 s, used for 54 s): no second token request
    t.clock.advance(50_000);
    kc.stub.requests.length = 0;
    await t.asAdmin("GET", "/user/", { query: { realm: "pi" } });
    assert.deepEqual(kc.stub.lines(), ["GET /admin/realms/pi/users"]);
    t.clock.advance(10_000);
    kc.stub.requests.length = 0;
    await t.asAdmin("GET", "/user/", { query: { realm: "pi" } });
    assert.deepEqual(kc.stub.lines(), [
      "POST /realms/pi/protocol/openid-connect/token",
      "GET /admin/realms/pi/users",
    ]);
  });
});

Deno.test("keycloakresolver: exact lookup and the password grant at /validate/check", async () => {
  await withKeycloak(async (t, kc) => {
    await saveOk(t, kc.config());
    await enrollHotp(t, { user: "elizabeth", realm: "pi", pin: "1" });
    kc.stub.requests.length = 0;
    const ok = await jsonOf(
      await t.post("/validate/check", { user: "elizabeth", realm: "pi", pass: "1" + hotp(0) }),
    );
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    assert.ok(kc.stub.lines().includes("GET /admin/realms/pi/users?username=elizabeth&exact=True"));

    await t.asAdmin("POST", "/policy/pin", {
      body: { scope: "authentication", action: "otppin=userstore" },
      json: true,
    });
    kc.stub.requests.length = 0;
    const viaStore = await jsonOf(
      await t.post("/validate/check", {
        user: "elizabeth",
        realm: "pi",
        pass: "pride&prejudice*1" + hotp(1),
      }),
    );
    assert.equal(viaStore.body.result.value, true, JSON.stringify(viaStore.body));
    const grants = kc.stub.requests.filter((r) => formOf(r.body).username === "elizabeth");
    assert.equal(grants.length, 1);
    assert.equal(
      grants[0].body,
      "grant_type=password&client_id=admin-cli&username=elizabeth&password=pride%26prejudice%2A1",
    );
    assert.equal(grants[0].headers.authorization, "Bearer KCT1");
    const wrong = await jsonOf(
      await t.post("/validate/check", { user: "elizabeth", realm: "pi", pass: "x" + hotp(2) }),
    );
    assert.equal(wrong.status, 200);
    assert.equal(wrong.body.result.value, false);

    // no such user: Keycloak lists nobody
    const nobody = await jsonOf(
      await t.post("/validate/check", { user: "wickham", realm: "pi", pass: "x" }),
    );
    assert.equal(nobody.body.result.error.message, "ERR904: User <wickham@pi> does not exist.");
    // two users of one name: an error, as privacyIDEA
    const dup = await jsonOf(
      await t.post("/validate/check", { user: "dup", realm: "pi", pass: "x" }),
    );
    assert.equal(dup.status, 400);
    assert.equal(dup.body.result.error.message, "ERR907: Multiple users found for username 'dup'");
  });
});

Deno.test("keycloakresolver: POST, PUT, DELETE /user/ and Keycloak's refusals", async () => {
  await withKeycloak(async (t, kc) => {
    await saveOk(t, kc.config());
    kc.stub.requests.length = 0;
    const created = await jsonOf(
      await t.asAdmin("POST", "/user/", {
        body: { user: "neu", resolver: "kc", givenname: "N", surname: "U", email: "n@x" },
      }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.result.value, "new-4");
    assert.deepEqual(kc.stub.lines(), [
      "POST /realms/pi/protocol/openid-connect/token",
      "POST /admin/realms/pi/users",
      "GET /admin/realms/pi/users?username=neu&exact=True",
    ]);
    assert.deepEqual(JSON.parse(kc.stub.requests[1].body), {
      enabled: true,
      username: "neu",
      firstName: "N",
      lastName: "U",
      email: "n@x",
    });
    const exists = await jsonOf(
      await t.asAdmin("POST", "/user/", { body: { user: "darcy", resolver: "kc" } }),
    );
    assert.equal(exists.status, 400);
    assert.equal(
      exists.body.result.error.message,
      "ERR907: Failed to create user: User exists with same username",
    );
    // the preset create request carries no password: refused rather than dropped
    kc.stub.requests.length = 0;
    const withPassword = await jsonOf(
      await t.asAdmin("POST", "/user/", {
        body: { user: "lydia", resolver: "kc", password: "x" },
      }),
    );
    assert.equal(withPassword.status, 400);
    assert.match(withPassword.body.result.error.message, /config_create_user sends no password/);
    assert.equal(kc.stub.requests.length, 0);
    // with credentials in the template it does
    // (a new endpoint configuration needs the service password again)
    const res = await save(t, "kc", {
      type: "keycloakresolver",
      password: "svc*pw",
      config_create_user: {
        method: "POST",
        endpoint: "/admin/realms/{realm}/users",
        requestMapping: {
          enabled: true,
          credentials: [{ type: "password", value: "{password}", temporary: false }],
        },
      },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const lydia = await jsonOf(
      await t.asAdmin("POST", "/user/", {
        body: { user: "lydia", resolver: "kc", password: 'wick"ham' },
      }),
    );
    assert.equal(lydia.status, 200, JSON.stringify(lydia.body));
    assert.equal(kc.passwords.lydia, 'wick"ham');

    kc.stub.requests.length = 0;
    const updated = await jsonOf(
      await t.asAdmin("PUT", "/user/", {
        body: { user: "elizabeth", resolver: "kc", surname: "Darcy" },
      }),
    );
    assert.equal(updated.body.result.value, true, JSON.stringify(updated.body));
    const put = kc.stub.requests.find((r) => r.method === "PUT")!;
    assert.equal(put.path, `/admin/realms/pi/users/${ELIZABETH.id}`);
    assert.deepEqual(JSON.parse(put.body), { lastName: "Darcy" });
    const deleted = await jsonOf(await t.asAdmin("DELETE", "/user/kc/darcy"));
    assert.equal(deleted.body.result.value, true);
    assert.ok(kc.stub.lines().includes("DELETE /admin/realms/pi/users/a1"));
  });
});

Deno.test("keycloakresolver: a refused service account and a broken server are clear errors; /resolver/test", async () => {
  await withKeycloak(async (t, kc) => {
    const ok = await testConfig(
      t,
      kc.config({ test_userid: ELIZABETH.id, test_username: "elizabeth" }),
    );
    assert.deepEqual(ok, {
      value: true,
      description: "Resolver config seems to be OK. Tested configurations: Authorization, " +
        "Get user by ID, Get user by name, User List.",
    });
    const badAccount = await testConfig(t, kc.config({ password: "wrong" }));
    assert.deepEqual(badAccount, {
      value: false,
      description:
        "Failed to get authorization header: ERR907: Failed to get authorization header.",
    });
    const badRealm = await testConfig(t, kc.config({ realm: "nope", test_username: "elizabeth" }));
    assert.equal(badRealm.value, false);
    const noRealm = await save(t, "kc2", kc.config({ realm: "" }));
    assert.equal(noRealm.status, 400);
    assert.equal(noRealm.body.result.error.message, "ERR905: Missing parameter: realm");

    await saveOk(t, kc.config({ password: "wrong" }));
    const check = await jsonOf(
      await t.post("/validate/check", { user: "elizabeth", realm: "pi", pass: "x" }),
    );
    assert.equal(check.status, 400);
    assert.equal(
      check.body.result.error.message,
      'ERR907: Cannot find a user in resolver "kc": Failed to get authorization header.',
    );
    const fixed = await save(t, "kc", { type: "keycloakresolver", password: "svc*pw" });
    assert.equal(fixed.status, 200);
    kc.broken = true;
    const broken = await jsonOf(
      await t.post("/validate/check", { user: "elizabeth", realm: "pi", pass: "x" }),
    );
    assert.equal(broken.status, 400);
    assert.match(broken.body.result.error.message, /the user store answered 500/);
  });
});
