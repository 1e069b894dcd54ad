import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";

Deno.test("every request writes one audit row; GET /audit/ lists them newest first", async () => {
  const t = await createTestApp();
  await t.asAdmin("POST", "/system/setConfig", {
    body: { custom: "1" },
    headers: { "user-agent": "curl/8.0" },
  });
  await t.post("/auth", { username: "ghost", password: "nope" });
  const res = await jsonOf(await t.asAdmin("GET", "/audit/"));
  assert.equal(res.status, 200);
  const v = res.body.result.value;
  assert.ok(v.auditcolumns.includes("action"));
  assert.equal(v.count, 3, "admin login, setConfig, failed login");
  const [failed, setConfig, login] = v.auditdata;
  assert.equal(login.action, "POST /auth");
  assert.equal(login.success, 1);
  assert.equal(setConfig.action, "POST /system/setConfig");
  assert.equal(setConfig.administrator, "admin");
  assert.equal(setConfig.user_agent, "curl/8.0");
  assert.equal(setConfig.client, "127.0.0.1");
  assert.equal(setConfig.privacyidea_server, "test-node");
  assert.equal(failed.success, 0);
  assert.equal(failed.action, "POST /auth");
  assert.ok(!JSON.stringify(v).includes("nope"), "the audit log never stores passwords");
  await t.close();
});

Deno.test("GET /audit/ filters with * wildcards, pages and sorts", async () => {
  const t = await createTestApp();
  for (let i = 0; i < 5; i++) await t.asAdmin("DELETE", `/system/key${i}`);
  const filtered = await jsonOf(
    await t.asAdmin("GET", "/audit/", {
      query: { action: "DELETE /system/key*", page_size: "2", sortorder: "asc" },
    }),
  );
  const v = filtered.body.result.value;
  assert.equal(v.count, 5);
  assert.equal(v.auditdata.length, 2);
  assert.equal(v.auditdata[0].action, "DELETE /system/key0");
  assert.equal(v.next, 2);
  assert.equal(v.prev, null);
  const page3 = await jsonOf(
    await t.asAdmin("GET", "/audit/", { query: { action: "DELETE*", page_size: "2", page: "3" } }),
  );
  assert.equal(page3.body.result.value.auditdata.length, 1);
  assert.equal(page3.body.result.value.next, null);
  const literal = await jsonOf(
    await t.asAdmin("GET", "/audit/", { query: { action: "DELETE /system/key_" } }),
  );
  assert.equal(literal.body.result.value.count, 0, "_ is literal, not a wildcard");
  await t.close();
});

Deno.test("GET /audit/ rejects bad paging parameters and needs an admin", async () => {
  const t = await createTestApp();
  const bad: Record<string, string>[] = [{ page: "0" }, { page_size: "x" }, { sortorder: "up" }, {
    timelimit: "forever",
  }];
  for (const query of bad) {
    const res = await jsonOf(await t.asAdmin("GET", "/audit/", { query }));
    assert.equal(res.status, 400, JSON.stringify(query));
    assert.equal(res.body.result.error.code, 905);
  }
  const anon = await jsonOf(await t.get("/audit/"));
  assert.equal(anon.status, 401);
  await t.close();
});

Deno.test("request ids: each answer carries X-Request-ID, its audit row and its log lines the same id", async () => {
  const t = await createTestApp();
  const first = await t.post("/auth", { username: "ghost", password: "nope" });
  await first.body?.cancel();
  const id = first.headers.get("x-request-id") ?? "";
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  // the log line the failed login wrote names the request
  const line = t.log.lines.find((l) => l.includes("Login failed"));
  assert.ok(line?.endsWith(` request_id=${id}`), String(line));

  // without server.trusted_proxies nobody names a request: a client's id is replaced
  const sent = await t.get("/system/", { headers: { "x-request-id": "lb-7f3a.42:eu@node_1" } });
  await sent.body?.cancel();
  assert.match(sent.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);

  // an error answer has one too
  const missing = await t.get("/no/such/path");
  await missing.body?.cancel();
  assert.equal(missing.status, 404);
  assert.match(missing.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);

  const res = await jsonOf(
    await t.asAdmin("GET", "/audit/", { query: { request_id: id } }),
  );
  assert.equal(res.status, 200);
  const v = res.body.result.value;
  assert.ok(v.auditcolumns.includes("request_id"));
  assert.equal(v.count, 1, "the filter finds the one row of the request");
  assert.equal(v.auditdata[0].request_id, id);
  assert.equal(v.auditdata[0].action, "POST /auth");
  assert.equal(v.auditdata[0].success, 0);
  const byClient = await jsonOf(
    await t.asAdmin("GET", "/audit/", { query: { request_id: "lb-7f3a.42:eu@node_1" } }),
  );
  assert.equal(byClient.body.result.value.count, 0, "the client's id is in no audit row");
  await t.close();
});

Deno.test("request ids: X-Request-ID is taken only from a proxy of server.trusted_proxies", async () => {
  const t = await createTestApp({ configText: '[server]\ntrusted_proxies = ["10.0.0.0/8"]\n' });
  const id = "lb-7f3a.42:eu@node_1";
  const fromProxy = async (value: string) => {
    const res = await t.get("/system/", {
      headers: { "x-request-id": value },
      remoteAddr: "10.1.2.3",
    });
    await res.body?.cancel();
    return res.headers.get("x-request-id") ?? "";
  };
  // the proxy's id is kept; one with spaces or too long is replaced
  assert.equal(await fromProxy(id), id);
  assert.match(await fromProxy("a b"), /^[0-9a-f-]{36}$/);
  assert.match(await fromProxy("x".repeat(129)), /^[0-9a-f-]{36}$/);
  // any other peer (also one that claims to be forwarded by the proxy) gets a new one
  for (const headers of [{}, { "x-forwarded-for": "10.1.2.3" }] as Record<string, string>[]) {
    const res = await t.get("/system/", {
      headers: { ...headers, "x-request-id": "spoofed-1" },
      remoteAddr: "192.0.2.7",
    });
    await res.body?.cancel();
    assert.match(res.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
  }
  const byId = async (requestId: string) =>
    (await jsonOf(await t.asAdmin("GET", "/audit/", { query: { request_id: requestId } }))).body
      .result.value;
  const kept = await byId(id);
  assert.equal(kept.count, 1);
  assert.match(kept.auditdata[0].action, /^GET \/system/);
  assert.equal(kept.auditdata[0].request_id, id);
  assert.equal((await byId("spoofed-1")).count, 0);
  await t.close();
});
