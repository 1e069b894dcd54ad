import assert from "node:assert/strict";
import { ADMIN_PASSWORD, createTestApp, jsonOf } from "../test_app.ts";

Deno.test("GET /healthz/ answers OK without authentication", async () => {
  const t = await createTestApp();
  const { status, body } = await jsonOf(await t.get("/healthz/"));
  assert.equal(status, 200);
  assert.deepEqual(body.result, { status: true, value: { status: "OK" } });
  assert.equal(body.id, 1);
  assert.equal(body.jsonrpc, "2.0");
  assert.match(body.version, /^Tessera \d+\.\d+\.\d+$/);
  // privacyIDEA reports its release there; Tessera the one whose API it implements
  assert.equal(body.versionnumber, "3.12.3");
  assert.equal(typeof body.time, "number");
  assert.equal("detail" in body, false);
  await t.close();
});

Deno.test("GET /healthz/readyz checks the database", async () => {
  const t = await createTestApp();
  const ok = await jsonOf(await t.get("/healthz/readyz"));
  assert.equal(ok.status, 200);
  assert.equal(ok.body.result.value.database, "OK");
  await t.deps.db.destroy();
  const down = await jsonOf(await t.get("/healthz/readyz"));
  assert.equal(down.status, 503);
  assert.equal(down.body.result.value.status, "NOT OK");
});

Deno.test("unknown path gives a 404 envelope, wrong method a 405 envelope", async () => {
  const t = await createTestApp();
  const nf = await jsonOf(await t.get("/no/such/path"));
  assert.equal(nf.status, 404);
  assert.equal(nf.body.result.status, false);
  assert.equal(nf.body.detail, null);
  assert.equal(nf.body.result.error.code, 404);
  const na = await jsonOf(await t.request("PUT", "/system/setConfig"));
  assert.equal(na.status, 405);
  assert.equal(na.body.result.error.code, 405);
  assert.equal("versionnumber" in na.body, false);
  await t.close();
});

Deno.test("malformed JSON gives 400 with code 905 and changes nothing", async () => {
  const t = await createTestApp();
  const token = await t.adminToken();
  const res = await t.app.request("/system/setConfig", {
    method: "POST",
    headers: { "content-type": "application/json", "PI-Authorization": token },
    body: '{"PrependPin": ',
  });
  const { status, body } = await jsonOf(res);
  assert.equal(status, 400);
  assert.equal(body.result.error.code, 905);
  assert.match(body.result.error.message, /^ERR905: /);
  const cfg = await jsonOf(await t.asAdmin("GET", "/system/"));
  assert.deepEqual(cfg.body.result.value, {});
  await t.close();
});

Deno.test("a body over the limit gives 413", async () => {
  const t = await createTestApp({ configText: "[server]\nbody_limit = 100\n" });
  const res = await t.post("/auth", { username: "admin", password: "x".repeat(200) });
  const { status, body } = await jsonOf(res);
  assert.equal(status, 413);
  assert.equal(body.result.status, false);
  await t.close();
});

Deno.test("NUL bytes and bad percent-escapes are refused with 905", async () => {
  const t = await createTestApp();
  for (const raw of ["username=a%00b&password=x", "username=%zz&password=x", "username=%C3%28"]) {
    const res = await t.app.request("/auth", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: raw,
    });
    const { status, body } = await jsonOf(res);
    assert.equal(status, 400, raw);
    assert.equal(body.result.error.code, 905, raw);
  }
  await t.close();
});

Deno.test("responses are never cached", async () => {
  const t = await createTestApp();
  const res = await t.get("/healthz/");
  assert.match(res.headers.get("cache-control") ?? "", /no-store/);
  assert.equal(res.headers.get("content-type"), "application/json");
  await res.body?.cancel();
  await t.close();
});

Deno.test("POST /auth issues a JWT to a local admin", async () => {
  const t = await createTestApp();
  await t.adminToken();
  const { status, body } = await jsonOf(
    await t.post("/auth", { username: "admin", password: ADMIN_PASSWORD }),
  );
  assert.equal(status, 200);
  assert.equal(body.id, 2);
  assert.equal(body.result.authentication, "ACCEPT");
  const v = body.result.value;
  assert.equal(v.role, "admin");
  assert.equal(v.username, "admin");
  assert.equal(v.realm, "");
  assert.equal(v.auth, true);
  assert.ok(Array.isArray(v.rights));
  assert.ok(v.menus.includes("config"));
  assert.equal(v.logout_time, 120);
  const [, payload] = v.token.split(".");
  const claims = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
  assert.equal(claims.role, "admin");
  assert.equal(claims.exp, t.clock.now() / 1000 + 3600);
  assert.match(claims.nonce, /^[0-9a-f]{40}$/);
  await t.close();
});

Deno.test("POST /auth answers unknown user and wrong password alike", async () => {
  const t = await createTestApp();
  await t.adminToken();
  const wrong = await jsonOf(await t.post("/auth", { username: "admin", password: "nope" }));
  const unknown = await jsonOf(await t.post("/auth", { username: "ghost", password: "nope" }));
  for (const r of [wrong, unknown]) {
    assert.equal(r.status, 401);
    assert.equal(r.body.result.error.code, 4031);
    assert.equal(r.body.result.error.message, "Authentication failure. Wrong credentials");
    assert.deepEqual(r.body.detail, {});
  }
  const missing = await jsonOf(await t.post("/auth", { password: "x" }));
  assert.equal(missing.status, 401);
  assert.equal(missing.body.result.error.code, 4032);
  assert.equal(missing.body.result.error.message, "Authentication failure. Missing Username");
  await t.close();
});

Deno.test("admin endpoints need a valid JWT", async () => {
  const t = await createTestApp();
  const token = await t.adminToken();
  const cases: [string, Record<string, string>, number, number][] = [
    ["no header", {}, 401, 4033],
    ["garbage", { "PI-Authorization": "not-a-jwt" }, 401, 4304],
    ["Authorization fallback", { Authorization: token }, 200, 0],
    ["Bearer prefix", { Authorization: `Bearer ${token}` }, 200, 0],
  ];
  for (const [name, headers, status, code] of cases) {
    const { status: s, body } = await jsonOf(await t.get("/system/", { headers }));
    assert.equal(s, status, name);
    if (code) {
      assert.equal(body.result.error.code, code, name);
      assert.equal(body.detail, null, name);
    }
  }
  await t.close();
});

Deno.test("JWTs with alg none, a foreign key or past expiry are refused", async () => {
  const t = await createTestApp();
  const token = await t.adminToken();
  const [h, p] = token.split(".");
  const b64 = (o: unknown) =>
    btoa(JSON.stringify(o)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
  const none = `${b64({ alg: "none", typ: "JWT" })}.${p}.`;
  const foreign = `${h}.${p}.${"A".repeat(43)}`;
  for (const bad of [none, foreign, "not-a-jwt-but-a-secret-value"]) {
    const { status, body } = await jsonOf(await t.get("/system/", { token: bad }));
    assert.equal(status, 401);
    assert.equal(body.result.error.code, 4304);
    // the refusal names the failure, never the token (it may be a forwarded credential)
    assert.ok(!JSON.stringify(body).includes(bad.slice(0, 20)), JSON.stringify(body));
    assert.ok(!JSON.stringify(body).includes(p), "no part of the token comes back");
  }
  // a token already accepted (its verified payload is kept) still expires, and a
  // token differing from it in the signature alone is still refused
  assert.equal((await jsonOf(await t.get("/system/", { token }))).status, 200);
  const tampered = token.slice(0, -2) + (token.endsWith("AA") ? "BB" : "AA");
  assert.equal((await jsonOf(await t.get("/system/", { token: tampered }))).status, 401);
  t.clock.advance(3601_000);
  const { status, body } = await jsonOf(await t.get("/system/", { token }));
  assert.equal(status, 401);
  assert.equal(body.result.error.code, 4305);
  assert.match(body.result.error.message, /^Authentication failure. Your token has expired/);
  await t.close();
});

Deno.test("the PI-Authorization prefix is configurable", async () => {
  const t = await createTestApp({ configText: '[auth]\nheader_prefix = "TS"\n' });
  const token = await t.adminToken().catch(() => undefined);
  assert.ok(token);
  const res = await t.get("/system/", { headers: { "TS-Authorization": token } });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  await t.close();
});

Deno.test("over a real listener: bodies with a declared length, chunked bodies and the limit", async () => {
  const t = await createTestApp({ configText: "[server]\nbody_limit = 100\n" });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req, info) => t.app.fetch(req, info),
  );
  const url = `http://127.0.0.1:${server.addr.port}/validate/check`;
  const form = { "content-type": "application/x-www-form-urlencoded" };
  try {
    // fetch declares the length of a string body: read whole
    let res = await fetch(url, { method: "POST", headers: form, body: "user=nobody&pass=1" });
    let body = await res.json();
    assert.equal(res.status, 400);
    assert.equal(body.result.error.code, 904, "the form was read: the user is unknown");
    // the same form as a stream (chunked, no length): read up to the limit
    const chunked = (text: string) =>
      new ReadableStream<Uint8Array>({
        start(c) {
          for (const part of text.match(/.{1,7}/g)!) c.enqueue(new TextEncoder().encode(part));
          c.close();
        },
      });
    res = await fetch(url, { method: "POST", headers: form, body: chunked("user=nobody&pass=1") });
    body = await res.json();
    assert.equal(body.result.error.code, 904);
    // over the limit, declared or streamed: 413
    res = await fetch(url, { method: "POST", headers: form, body: "pass=" + "1".repeat(200) });
    assert.equal(res.status, 413);
    await res.body?.cancel();
    res = await fetch(url, {
      method: "POST",
      headers: form,
      body: chunked("pass=" + "1".repeat(200)),
    });
    assert.equal(res.status, 413);
    await res.body?.cancel();
  } finally {
    await server.shutdown();
    await t.close();
  }
});
