/**
 * `httpresolver` over Tessera's HTTP API against a stub user-store API on
 * loopback: the exact requests (method, path, query, headers, body, token
 * request), lookups by name and id, listing with wildcards, password checks,
 * writes, errors (401, 404, timeouts, malformed answers, refused
 * connections), `/resolver/test`, TLS verification and secret handling.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from "../fixtures/self_signed_tls.ts";
import {
  formOf,
  globMatch,
  json,
  type SeenRequest,
  sleep,
  startStoreStub,
  type StoreStub,
} from "./_http_store_stub.ts";

interface ApiUser {
  id: number;
  login: string;
  first_name?: string;
  last_name?: string;
  mail?: string;
  password: string;
}

/** A small user API: service token, users by id / login / search, writes, password check. */
class UserApi {
  users: ApiUser[] = [
    {
      id: 42,
      login: "hans",
      first_name: "Hans",
      last_name: "Meier",
      mail: "hans@example.com",
      password: "p&a+s*s",
    },
    { id: 43, login: "heidi", first_name: "Heidi", last_name: "Huber", password: "heidi-pw" },
    { id: 7, login: "otto", first_name: "Otto", password: "otto-pw" },
  ];
  tokens = 0;
  valid = new Set<string>();
  /** A mode for error tests. */
  mode: "ok" | "401" | "500" | "slow" | "garbage" = "ok";
  stub: StoreStub;

  constructor(tls?: { cert: string; key: string }) {
    this.stub = startStoreStub((req) => this.handle(req), { tls });
  }

  get base(): string {
    return `${this.stub.origin}/api`;
  }

  async handle(req: SeenRequest): Promise<Response> {
    const route = `${req.method} ${req.path}`;
    if (route === "POST /api/token") {
      const form = formOf(req.body);
      if (form.username !== "svc" || form.password !== "s*vc&pw") {
        return json({ error: "invalid_grant" }, 401);
      }
      const token = `SVC${++this.tokens}`;
      this.valid.add(token);
      return json({ access_token: token, token_type: "Bearer", expires_in: 300 });
    }
    if (this.mode === "slow") await sleep(2500);
    if (this.mode === "500") return new Response("<html>oops</html>", { status: 500 });
    if (this.mode === "garbage") return new Response("<html>hello</html>", { status: 200 });
    const bearer = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    if (this.mode === "401" || !this.valid.has(bearer)) {
      return json({ error: "unauthorized" }, 401);
    }
    const q = new URLSearchParams(req.query);
    const byId = req.path.match(/^\/api\/users\/([^/]+)$/);
    const show = (u: ApiUser) => {
      const { password: _, ...rest } = u;
      return rest;
    };
    if (req.method === "GET" && req.path === "/api/users") {
      const found = this.users.filter((u) =>
        (!q.has("login") ||
          (q.get("exact") === "True" ? u.login === q.get("login") : globMatch(
            q.get("login")!,
            u.login,
          ))) &&
        (!q.has("first_name") || globMatch(q.get("first_name")!, u.first_name ?? "")) &&
        (!q.has("last_name") || globMatch(q.get("last_name")!, u.last_name ?? ""))
      );
      return json(found.map(show));
    }
    if (req.method === "GET" && byId) {
      const u = this.users.find((x) => String(x.id) === decodeURIComponent(byId[1]));
      return u ? json(show(u)) : json({ error: "no such user" }, 404);
    }
    if (req.method === "POST" && req.path === "/api/users") {
      const body = JSON.parse(req.body);
      if (this.users.some((u) => u.login === body.login)) return json({ error: "exists" }, 409);
      const user = { ...body, id: 100 + this.users.length, password: body.secret };
      delete user.secret;
      this.users.push(user);
      return json({ id: user.id, login: user.login }, 201);
    }
    if (req.method === "PATCH" && byId) {
      const u = this.users.find((x) => String(x.id) === byId[1]);
      if (!u) return json({ error: "no such user" }, 404);
      Object.assign(u, JSON.parse(req.body));
      return new Response(null, { status: 204 });
    }
    if (req.method === "DELETE" && byId) {
      const i = this.users.findIndex((x) => String(x.id) === byId[1]);
      if (i < 0) return json({ error: "no such user" }, 404);
      this.users.splice(i, 1);
      return new Response(null, { status: 204 });
    }
    if (req.method === "POST" && req.path === "/api/auth") {
      const form = formOf(req.body);
      const u = this.users.find((x) => x.login === form.u && String(x.id) === form.id);
      return u && u.password === form.p
        ? json({ ok: true })
        : json({ ok: false, error: "wrong" }, 401);
    }
    return json({ error: "no route" }, 404);
  }

  /** The resolver definition for this API. */
  config(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      type: "httpresolver",
      base_url: this.base,
      Editable: "True",
      timeout: "1",
      headers: { "Content-Type": "application/json" },
      attribute_mapping: {
        username: "login",
        userid: "id",
        givenname: "first_name",
        surname: "last_name",
        email: "mail",
      },
      username: "svc",
      password: "s*vc&pw",
      config_authorization: {
        method: "POST",
        endpoint: "/token",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        requestMapping: "grant_type=password&username={username}&password={password}",
        responseMapping: { Authorization: "Bearer {access_token}" },
      },
      config_get_user_by_id: { method: "GET", endpoint: "/users/{userid}" },
      config_get_user_by_name: {
        method: "GET",
        endpoint: "/users",
        requestMapping: { login: "{username}", exact: true },
        responseMapping: { id: "{0.id}", login: "{0.login}" },
      },
      config_get_user_list: { method: "GET", endpoint: "/users" },
      config_create_user: {
        method: "POST",
        endpoint: "/users",
        requestMapping: { enabled: true, display: "{givenname} {surname}", secret: "{password}" },
      },
      config_edit_user: { method: "PATCH", endpoint: "/users/{userid}" },
      config_delete_user: { method: "DELETE", endpoint: "/users/{userid}" },
      config_user_auth: {
        method: "POST",
        endpoint: "/auth",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        requestMapping: "u={username}&p={password}&id={userid}",
      },
      ...overrides,
    };
  }

  close(): Promise<void> {
    return this.stub.close();
  }
}

async function withApi(
  fn: (t: TestApp, api: UserApi) => Promise<void>,
  tls?: { cert: string; key: string },
): Promise<void> {
  const t = await createTestApp();
  const api = new UserApi(tls);
  try {
    await fn(t, api);
  } finally {
    await api.close();
    await t.close();
  }
}

async function save(t: TestApp, name: string, body: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin("POST", `/resolver/${name}`, { body, json: true }));
}

async function saveOk(t: TestApp, name: string, body: Record<string, unknown>, realm?: string) {
  const res = await save(t, name, body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  if (realm) {
    const r = await jsonOf(
      await t.asAdmin("POST", `/realm/${realm}`, { body: { resolvers: name } }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
}

async function listUsers(t: TestApp, query: Record<string, string>): Promise<Json[]> {
  const res = await jsonOf(await t.asAdmin("GET", "/user/", { query }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

async function testConfig(t: TestApp, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", "/resolver/test", { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { value: res.body.result.value, description: res.body.detail?.description as string };
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

Deno.test("httpresolver: saved with the password encrypted and censored, JSON objects listed as objects", async () => {
  await withApi(async (t, api) => {
    await saveOk(t, "api", api.config());
    const listed = await jsonOf(await t.asAdmin("GET", "/resolver/api"));
    const entry = listed.body.result.value.api;
    assert.equal(entry.type, "httpresolver");
    assert.deepEqual(entry.censor_keys, ["password"]);
    assert.equal(entry.data.password, "__CENSORED__");
    assert.deepEqual(entry.data.attribute_mapping.userid, "id");
    assert.equal(entry.data.config_get_user_by_id.endpoint, "/users/{userid}");
    assert.equal(JSON.stringify(listed.body).includes("s*vc&pw"), false);
    const row = await t.deps.db.selectFrom("resolver").select("config").executeTakeFirstOrThrow();
    assert.equal(row.config.includes("s*vc&pw"), false);
    // editable: listed by ?editable=1
    const editable = await jsonOf(
      await t.asAdmin("GET", "/resolver/", { query: { editable: "1" } }),
    );
    assert.deepEqual(Object.keys(editable.body.result.value), ["api"]);
    // nothing was sent while saving
    assert.deepEqual(api.stub.requests, []);

    const defaults = await jsonOf(await t.asAdmin("GET", "/resolver/httpresolver/default"));
    assert.deepEqual(defaults.body.result.value, {
      headers: {},
      Editable: false,
      verify_tls: true,
      type: "httpresolver",
      timeout: 60,
    });
  });
});

Deno.test("httpresolver: a stored password is not kept when the URL it is sent to changes", async () => {
  await withApi(async (t, api) => {
    await saveOk(t, "api", api.config());
    for (
      const body of [
        { type: "httpresolver", base_url: "http://127.0.0.1:1/evil" },
        { type: "httpresolver", base_url: "http://127.0.0.1:1/evil", password: "__CENSORED__" },
        {
          type: "httpresolver",
          config_authorization: {
            ...api.config().config_authorization as Json,
            endpoint: "http://x/",
          },
        },
        // the token the password buys goes with every request: no endpoint may move either
        {
          type: "httpresolver",
          config_get_user_by_id: { method: "GET", endpoint: "http://127.0.0.1:1/{userid}" },
        },
      ]
    ) {
      const res = await save(t, "api", body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.result.error.message, /Cannot keep the stored "password"/);
    }
    const row = await jsonOf(await t.asAdmin("GET", "/resolver/api"));
    assert.equal(row.body.result.value.api.data.base_url, api.base);
    // /resolver/test with the stored password and another URL: refused, nothing sent anywhere
    const test = await jsonOf(
      await t.asAdmin("POST", "/resolver/test", {
        body: { ...api.config(), resolver: "api", password: "__CENSORED__", base_url: "http://x" },
        json: true,
      }),
    );
    assert.equal(test.status, 400);
    // with the password sent again, the change is taken
    const ok = await save(t, "api", { type: "httpresolver", timeout: "5", password: "s*vc&pw" });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(api.stub.requests, []);
  });
});

Deno.test("httpresolver: exact requests for lookups, listing with wildcards, the token request and its reuse", async () => {
  await withApi(async (t, api) => {
    await saveOk(t, "api", api.config(), "people");
    const users = await listUsers(t, { realm: "people", username: "h*" });
    assert.deepEqual(
      users.map((u) => [u.username, u.userid, u.givenname, u.surname ?? null, u.editable]),
      [["hans", "42", "Hans", "Meier", true], ["heidi", "43", "Heidi", "Huber", true]],
    );
    assert.deepEqual(api.stub.lines(), ["POST /api/token", "GET /api/users?login=h%2A"]);
    const token = api.stub.requests[0];
    assert.equal(token.headers["content-type"], "application/x-www-form-urlencoded");
    // the service password is form-encoded; its "*" is kept (privacyIDEA deletes it)
    assert.equal(token.body, "grant_type=password&username=svc&password=s%2Avc%26pw");
    const list = api.stub.requests[1];
    assert.equal(list.headers.authorization, "Bearer SVC1");
    assert.equal(list.headers["content-type"], "application/json");
    assert.equal(list.body, "");

    // search fields map to the API's names; unmapped fields are not sent
    api.stub.requests.length = 0;
    const found = await listUsers(t, {
      realm: "people",
      username: "*",
      givenname: "Hei*",
      favourite: "x",
    });
    assert.deepEqual(found.map((u) => u.username), ["heidi"]);
    assert.deepEqual(api.stub.lines(), ["GET /api/users?login=%2A&first_name=Hei%2A"]);

    // a login: by name, then by id; the token is reused (expires_in 300)
    api.stub.requests.length = 0;
    const one = await jsonOf(
      await t.asAdmin("GET", "/user/attribute", { query: { user: "hans", realm: "people" } }),
    );
    assert.equal(one.status, 200, JSON.stringify(one.body));
    // (the rights step and the handler each resolve the user: no token request either time)
    assert.deepEqual([...new Set(api.stub.lines())], ["GET /api/users?login=hans&exact=True"]);
    assert.equal(api.tokens, 1);

    // a name with "*" is no wildcard in a lookup ("*" removed, as privacyIDEA), "&" is encoded
    api.stub.requests.length = 0;
    await t.asAdmin("GET", "/user/attribute", { query: { user: "ha*ns&x=1", realm: "people" } });
    assert.deepEqual([...new Set(api.stub.lines())], [
      "GET /api/users?login=hans%26x%3D1&exact=True",
    ]);

    // once the token is old, a new one is fetched
    t.clock.advance(300_000);
    api.stub.requests.length = 0;
    await listUsers(t, { realm: "people", username: "otto" });
    assert.deepEqual(api.stub.lines(), ["POST /api/token", "GET /api/users?login=otto"]);
    assert.equal(api.stub.requests[1].headers.authorization, "Bearer SVC2");

    // a token the API no longer accepts is replaced once
    api.valid.clear();
    api.stub.requests.length = 0;
    assert.equal((await listUsers(t, { realm: "people", username: "otto" })).length, 1);
    assert.deepEqual(api.stub.lines(), [
      "GET /api/users?login=otto",
      "POST /api/token",
      "GET /api/users?login=otto",
    ]);
  });
});

Deno.test("httpresolver: /validate/check with a token PIN and with otppin=userstore (exact password request)", async () => {
  await withApi(async (t, api) => {
    await saveOk(t, "api", api.config(), "people");
    const serial = await enrollHotp(t, { user: "hans", realm: "people", pin: "1234" });
    api.stub.requests.length = 0;
    const ok = await jsonOf(
      await t.post("/validate/check", { user: "hans", realm: "people", pass: "1234" + hotp(0) }),
    );
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    assert.ok(api.stub.lines().includes("GET /api/users?login=hans&exact=True"));
    assert.ok(!api.stub.lines().some((l) => l.startsWith("POST /api/auth")));

    const policy = await jsonOf(
      await t.asAdmin("POST", "/policy/pin", {
        body: { scope: "authentication", action: "otppin=userstore", realm: "people" },
        json: true,
      }),
    );
    assert.equal(policy.status, 200);
    api.stub.requests.length = 0;
    const viaStore = await jsonOf(
      await t.post("/validate/check", { user: "hans", realm: "people", pass: "p&a+s*s" + hotp(1) }),
    );
    assert.equal(viaStore.body.result.value, true, JSON.stringify(viaStore.body));
    const auth = api.stub.requests.filter((r) => r.path === "/api/auth");
    assert.equal(auth.length, 1);
    // each value encoded for the form: the password arrives intact, "*" included
    assert.equal(auth[0].body, "u=hans&p=p%26a%2Bs%2As&id=42");
    assert.equal(auth[0].headers["content-type"], "application/x-www-form-urlencoded");
    assert.equal(auth[0].headers.authorization, "Bearer SVC1");
    const wrong = await jsonOf(
      await t.post("/validate/check", { user: "hans", realm: "people", pass: "nope" + hotp(2) }),
    );
    assert.equal(wrong.status, 200);
    assert.equal(wrong.body.result.value, false);
    // an unknown login: the API finds none, the user does not exist
    const unknown = await jsonOf(
      await t.post("/validate/check", { user: "nobody", realm: "people", pass: "x" }),
    );
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.result.error.message, "ERR904: User <nobody@people> does not exist.");
    assert.ok(serial);
  });
});

Deno.test("httpresolver: POST, PUT and DELETE /user/ send the exact writes", async () => {
  await withApi(async (t, api) => {
    await saveOk(t, "api", api.config(), "people");
    api.stub.requests.length = 0;
    const created = await jsonOf(
      await t.asAdmin("POST", "/user/", {
        body: {
          user: "neu",
          resolver: "api",
          givenname: "N",
          surname: "U",
          email: "n@x",
          password: 'pw"*\\',
          color: "blue",
        },
      }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.result.value, "103");
    const post = api.stub.requests.find((r) => r.method === "POST" && r.path === "/api/users")!;
    assert.equal(post.headers["content-type"], "application/json");
    // the template's values are JSON-escaped; mapped attributes added; the password only as tag
    assert.deepEqual(JSON.parse(post.body), {
      enabled: true,
      display: "N U",
      secret: 'pw"*\\',
      login: "neu",
      first_name: "N",
      last_name: "U",
      mail: "n@x",
    });

    api.stub.requests.length = 0;
    const updated = await jsonOf(
      await t.asAdmin("PUT", "/user/", { body: { user: "hans", resolver: "api", surname: "S" } }),
    );
    assert.equal(updated.body.result.value, true, JSON.stringify(updated.body));
    const patch = api.stub.requests.find((r) => r.method === "PATCH")!;
    assert.equal(patch.path, "/api/users/42");
    assert.deepEqual(JSON.parse(patch.body), { last_name: "S" });

    // a new password the edit request would drop is refused, and nothing is sent
    api.stub.requests.length = 0;
    const withPassword = await jsonOf(
      await t.asAdmin("PUT", "/user/", {
        body: { user: "hans", resolver: "api", password: "new" },
      }),
    );
    assert.equal(withPassword.status, 400);
    assert.match(withPassword.body.result.error.message, /config_edit_user sends no password/);
    assert.ok(!api.stub.requests.some((r) => r.method === "PATCH"));

    api.stub.requests.length = 0;
    const deleted = await jsonOf(await t.asAdmin("DELETE", "/user/api/heidi"));
    assert.equal(deleted.body.result.value, true, JSON.stringify(deleted.body));
    assert.ok(api.stub.lines().includes("DELETE /api/users/43"));
    assert.ok(!api.users.some((u) => u.login === "heidi"));
    // an existing login: the API's 409 is a clear refusal
    const again = await jsonOf(
      await t.asAdmin("POST", "/user/", { body: { user: "hans", resolver: "api" } }),
    );
    assert.equal(again.status, 400);
    assert.equal(
      again.body.result.error.message,
      "ERR907: Failed to create a user in the user store.",
    );
  });
});

Deno.test("httpresolver: 401, server errors, malformed answers and refused connections are clear errors, never a 500", async () => {
  await withApi(async (t, api) => {
    await saveOk(t, "api", api.config(), "people");
    await enrollHotp(t, { user: "hans", realm: "people", pin: "1234" });
    const check = () =>
      t.post("/validate/check", { user: "hans", realm: "people", pass: "1234" + hotp(0) }).then(
        jsonOf,
      );
    const cases: [UserApi["mode"], RegExp][] = [
      ["401", /Cannot find a user in resolver \\"api\\": the user store answered 401/],
      ["500", /the user store answered 500/],
      ["garbage", /the answer \(status 200\) is no JSON/],
    ];
    for (const [mode, message] of cases) {
      api.mode = mode;
      const res = await check();
      assert.equal(res.status, 400, `${mode}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.result.error.code, 907);
      assert.match(JSON.stringify(res.body), message);
      // a failing store is skipped by GET /user/ (logged), never a 500
      const list = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "people" } }));
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.result.value, []);
    }
    api.mode = "ok";

    await api.close();
    const refused = await check();
    assert.equal(refused.status, 400);
    assert.match(refused.body.result.error.message, /connection refused/);
    assert.equal(JSON.stringify(refused.body).includes(String(api.stub.port)), false);
    assert.ok(t.log.lines.some((l) => l.includes(`127.0.0.1:${api.stub.port}`)));
    api.stub = startStoreStub(() => json({}));
  });
});

Deno.test("httpresolver: a slow API fails within timeout; another realm keeps answering meanwhile", async () => {
  await withApi(async (t, api) => {
    await saveOk(t, "api", api.config(), "people");
    await createUsers(t.deps, { realm: "local", users: [{ login: "sue", password: "s" }] });
    const sueSerial = await enrollHotp(t, { user: "sue", realm: "local" });
    assert.ok(sueSerial);
    api.mode = "slow";
    let slowDone = false;
    const slow = timed(
      t.post("/validate/check", { user: "hans", realm: "people", pass: "1234" }).then(jsonOf),
    ).finally(() => slowDone = true);
    const local = await jsonOf(
      await t.post("/validate/check", { user: "sue", realm: "local", pass: hotp(0) }),
    );
    assert.equal(local.body.result.value, true);
    assert.equal(slowDone, false, "the local realm waited for the slow API");
    const failed = await slow;
    assert.ok(failed.ms >= 900 && failed.ms < 2400, `took ${failed.ms} ms`);
    assert.equal(failed.value.status, 400);
    assert.match(failed.value.body.result.error.message, /no answer within 1 s/);
    const test = await timed(testConfig(t, api.config({ test_username: "hans" })));
    assert.equal(test.value.value, false);
    assert.match(
      test.value.description,
      /^Failed to get user by name: ERR907: .*no answer within 1 s/,
    );
    assert.ok(test.ms < 2400);
  });
});

Deno.test("httpresolver: special error answer and 404 mean no such user", async () => {
  await withApi(async (t, api) => {
    const stub = startStoreStub((req) => {
      if (req.query === "id=pepeperez") {
        return json({
          success: true,
          data: {
            the_username: "PepePerez",
            the_email: "pepe@perez.com",
            the_phones: { mobile: "+1123568974" },
            n: 5,
            lst: [1, 2],
          },
        });
      }
      return json({ success: false });
    });
    try {
      // basic mode (privacyIDEA before 3.12): the top-level keys read a user by id
      await saveOk(t, "basic", {
        type: "httpresolver",
        endpoint: `${stub.origin}/get-data`,
        method: "GET",
        headers: JSON.stringify({ "Content-Type": "application/json", charset: "UTF-8" }),
        requestMapping: JSON.stringify({ id: "{userid}" }),
        responseMapping: JSON.stringify({
          username: "{data.the_username}",
          email: "{data.the_email}",
          mobile: "{data.the_phones.mobile}",
          a_static_key: "a static value",
          num: "{data.n}",
          numtxt: "n={data.n}",
          missing: "{data.nope}",
          missingtxt: "x{data.nope}",
          l: "{data.lst}",
          lt: "L {data.lst}",
        }),
        hasSpecialErrorHandler: "True",
        errorResponse: JSON.stringify({ success: false }),
      }, "basic");
      // "*" in a login is no wildcard: removed before the lookup, as privacyIDEA does
      const lookup = await jsonOf(
        await t.asAdmin("GET", "/user/attribute", {
          query: { user: "pepe*perez", realm: "basic" },
        }),
      );
      assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
      const seen = stub.requests.at(-1)!;
      assert.equal(`${seen.method} ${seen.path}?${seen.query}`, "GET /get-data?id=pepeperez");
      assert.equal(seen.headers.charset, "UTF-8");
      assert.equal(seen.headers["content-type"], "application/json");
      assert.equal(seen.body, "");
      await enrollHotp(t, { user: "pepeperez", realm: "basic", pin: "1" });
      const policy = await jsonOf(
        await t.asAdmin("POST", "/policy/ad", {
          body: { scope: "authorization", action: "add_user_in_response" },
          json: true,
        }),
      );
      assert.equal(policy.status, 200);
      const res = await jsonOf(
        await t.post("/validate/check", { user: "pepeperez", realm: "basic", pass: "1" + hotp(0) }),
      );
      assert.equal(res.body.result.value, true, JSON.stringify(res.body));
      const user = res.body.detail.user;
      assert.equal(user.username, "PepePerez");
      assert.equal(user.userid, "pepeperez");
      assert.equal(user.email, "pepe@perez.com");
      assert.equal(user.mobile, "+1123568974");
      assert.equal(user.a_static_key, "a static value");
      assert.equal(user.num, "5");
      assert.equal(user.numtxt, "n=5");
      assert.equal(user.missing, "");
      assert.equal(user.missingtxt, "x");
      assert.equal(user.lt, "L [1, 2]");
      // the special error answer: no such user
      const none = await jsonOf(
        await t.post("/validate/check", { user: "nobody", realm: "basic", pass: "x" }),
      );
      assert.equal(none.body.result.error.message, "ERR904: User <nobody@basic> does not exist.");
      // /resolver/test of the basic config
      const test = await testConfig(t, {
        type: "httpresolver",
        endpoint: `${stub.origin}/get-data`,
        method: "GET",
        responseMapping: JSON.stringify({ username: "{data.the_username}" }),
        testUser: "pepeperez",
      });
      assert.deepEqual(test, {
        value: true,
        description:
          "Resolver config seems to be OK. Tested configurations: Get user by name, User List.",
      });
      assert.equal(api.stub.requests.length, 0);
    } finally {
      await stub.close();
    }
  });
});

Deno.test("httpresolver: /resolver/test answers privacyIDEA's messages", async () => {
  await withApi(async (t, api) => {
    const ok = await testConfig(t, api.config({ test_userid: "42", test_username: "hans" }));
    assert.deepEqual(ok, {
      value: true,
      description: "Resolver config seems to be OK. Tested configurations: Authorization, " +
        "Get user by ID, Get user by name, User List.",
    });
    const mismatch = await testConfig(t, api.config({ test_userid: "43", test_username: "hans" }));
    assert.deepEqual(mismatch, {
      value: false,
      description:
        "Defined username 'hans' does not match resolved username 'heidi' for the user id '43'.",
    });
    // the API's 404 for an id: no such user
    const noId = await testConfig(t, api.config({ test_userid: "999" }));
    assert.deepEqual(noId, { value: false, description: "No user found for user ID '999'." });
    const noUser = await testConfig(t, api.config({ test_username: "nobody" }));
    assert.equal(noUser.description, "No user found for username 'nobody'.");
    const badAuth = await testConfig(t, api.config({ password: "wrong" }));
    assert.deepEqual(badAuth, {
      value: false,
      description:
        "Failed to get authorization header: ERR907: Failed to get authorization header.",
    });
    api.mode = "500";
    const list = await testConfig(t, api.config());
    assert.deepEqual(list, {
      value: false,
      description: "Failed to get user list: ERR907: Failed to get the user list!",
    });
    api.mode = "ok";
    const missing = await testConfig(t, { type: "httpresolver", base_url: api.base });
    assert.deepEqual(missing, {
      value: false,
      description: "Failed: ERR905: Missing parameter: endpoint",
    });
    const badCreate = await testConfig(
      t,
      api.config({ config_create_user: { method: "FETCH", endpoint: "/users" } }),
    );
    assert.deepEqual(badCreate, {
      value: false,
      description: "Failed to load create user config: ERR905: Invalid method 'fetch'!",
    });
    // the same definition cannot be saved
    const refused = await save(
      t,
      "bad",
      api.config({ config_create_user: { method: "FETCH", endpoint: "/users" } }),
    );
    assert.equal(refused.status, 400);
    assert.equal(refused.body.result.error.message, "ERR905: Invalid method 'fetch'!");
    const badTimeout = await save(t, "bad", api.config({ timeout: "30.5" }));
    assert.equal(badTimeout.status, 400);
    assert.match(badTimeout.body.result.error.message, /Invalid value for 'timeout': 30.5\./);
    const listed = await jsonOf(await t.asAdmin("GET", "/resolver/"));
    assert.deepEqual(listed.body.result.value, {});
  });
});

Deno.test("httpresolver: TLS is verified by default; tls_ca_path trusts a CA; verify_tls=False switches it off", async () => {
  await withApi(async (t, api) => {
    const dir = t.deps.config.storage.dataDir;
    await Deno.writeTextFile(`${dir}/ca.pem`, SELF_SIGNED_CERT);
    const failed = await testConfig(t, api.config({ test_userid: "42" }));
    assert.equal(failed.value, false);
    assert.match(failed.description, /Failed to get authorization header: .*TLS failed/);
    assert.equal(api.stub.requests.length, 0);
    const trusted = await testConfig(
      t,
      api.config({ test_userid: "42", tls_ca_path: "ca.pem" }),
    );
    assert.equal(trusted.value, true, trusted.description);
    const off = await testConfig(t, api.config({ test_userid: "42", verify_tls: "False" }));
    assert.equal(off.value, true, off.description);
    // Tessera's own key file is never a CA bundle
    const own = await save(t, "api", api.config({ tls_ca_path: t.deps.config.storage.keyFile }));
    assert.equal(own.status, 400);
    assert.match(own.body.result.error.message, /one of Tessera's own files/);
    const badFlag = await save(t, "api", api.config({ verify_tls: "maybe" }));
    assert.equal(badFlag.status, 400);
    assert.match(badFlag.body.result.error.message, /Invalid value for 'verify_tls'/);
  }, { cert: SELF_SIGNED_CERT, key: SELF_SIGNED_KEY });
});

Deno.test("httpresolver: a password inside base_url is censored, kept by the censored round trip only while the URL's target stays", async () => {
  await withApi(async (t, api) => {
    const withPw = api.base.replace("://", "://urluser:urlPw5secret@");
    const censoredUrl = api.base.replace("://", "://urluser:__CENSORED__@");
    await saveOk(t, "api", api.config({ base_url: withPw }), "realm1");
    const listed = await jsonOf(await t.asAdmin("GET", "/resolver/api"));
    assert.equal(listed.body.result.value.api.data.base_url, censoredUrl);
    assert.equal(JSON.stringify(listed.body).includes("urlPw5secret"), false);
    // the censored view sent back keeps the stored URL, and it still works (Basic auth from it)
    await saveOk(t, "api", { type: "httpresolver", base_url: censoredUrl });
    const row = await t.deps.db.selectFrom("resolver").select("config").executeTakeFirstOrThrow();
    assert.ok(row.config.includes(withPw), "stored URL unchanged");
    const users = await listUsers(t, { realm: "realm1", username: "hans" });
    assert.equal(users.length, 1);
    const sent = api.stub.requests.at(-1)!;
    assert.equal(sent.headers.authorization?.startsWith("Bearer "), true, "the API's own token");
    const tokenRequest = api.stub.requests.find((r) => r.path.endsWith("/token"))!;
    assert.equal(tokenRequest.headers.authorization, `Basic ${btoa("urluser:urlPw5secret")}`);
    // another host or path with the placeholder: refused, nothing changes
    for (
      const moved of [
        censoredUrl.replace("127.0.0.1", "localhost"),
        censoredUrl.replace("/api", "/other"),
      ]
    ) {
      const res = await save(t, "api", { type: "httpresolver", base_url: moved });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.result.error.message, /Cannot keep the stored "base_url password"/);
      const test = await jsonOf(
        await t.asAdmin("POST", "/resolver/test", {
          body: { ...api.config(), resolver: "api", base_url: moved },
          json: true,
        }),
      );
      assert.equal(test.status, 400, JSON.stringify(test.body));
    }
    const after = await t.deps.db.selectFrom("resolver").select("config").executeTakeFirstOrThrow();
    assert.equal(after.config, row.config, "nothing changed");
    const audit = await jsonOf(
      await t.asAdmin("GET", "/audit/", { query: { action: "*resolver*" } }),
    );
    assert.equal(JSON.stringify(audit.body).includes("urlPw5secret"), false, "not in audit");
    assert.equal(t.log.lines.join("\n").includes("urlPw5secret"), false, "not in logs");
  });
});

Deno.test("httpresolver: a password inside an endpoint URL of a config_* object is censored in the list and kept by the censored round trip only while its target stays", async () => {
  await withApi(async (t, api) => {
    const full = `${api.base.replace("://", "://epuser:epPw7secret@")}/users/{userid}`;
    const shownUrl = `${api.base.replace("://", "://epuser:__CENSORED__@")}/users/{userid}`;
    await saveOk(
      t,
      "api",
      api.config({ config_get_user_by_id: { method: "GET", endpoint: full } }),
      "realm1",
    );
    const listed = await jsonOf(await t.asAdmin("GET", "/resolver/api"));
    assert.equal(listed.body.result.value.api.data.config_get_user_by_id.endpoint, shownUrl);
    assert.equal(JSON.stringify(listed.body).includes("epPw7secret"), false);
    const before = await t.deps.db.selectFrom("resolver").select("config")
      .executeTakeFirstOrThrow();
    assert.ok(before.config.includes("epPw7secret"));
    // the list as the UI sends it back: the stored password stays
    await saveOk(t, "api", {
      type: "httpresolver",
      config_get_user_by_id: listed.body.result.value.api.data.config_get_user_by_id,
    });
    const kept = await t.deps.db.selectFrom("resolver").select("config").executeTakeFirstOrThrow();
    assert.ok(kept.config.includes("epPw7secret"), "stored endpoint password kept");
    assert.equal(kept.config.includes("__CENSORED__"), false);
    // moved to another host with the placeholder: refused, nothing changes
    const moved = await save(t, "api", {
      type: "httpresolver",
      config_get_user_by_id: {
        method: "GET",
        endpoint: shownUrl.replace("127.0.0.1", "localhost"),
      },
    });
    assert.equal(moved.status, 400, JSON.stringify(moved.body));
    assert.match(
      moved.body.result.error.message,
      /Cannot keep the stored "config_get_user_by_id\.endpoint password"/,
    );
    const after = await t.deps.db.selectFrom("resolver").select("config").executeTakeFirstOrThrow();
    assert.equal(after.config, kept.config, "nothing changed");
  });
});
