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

  // an id from the proxy in front is kept; one with spaces or too long is replaced
  const kept = await t.get("/healthz/", { headers: { "x-request-id": "lb-7f3a.42:eu@node_1" } });
  await kept.body?.cancel();
  assert.equal(kept.headers.get("x-request-id"), "lb-7f3a.42:eu@node_1");
  const replaced = await t.get("/healthz/", { headers: { "x-request-id": "a b" } });
  await replaced.body?.cancel();
  assert.notEqual(replaced.headers.get("x-request-id"), "a b");
  const long = await t.get("/healthz/", { headers: { "x-request-id": "x".repeat(129) } });
  await long.body?.cancel();
  assert.match(long.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);

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
  const byProxy = await jsonOf(
    await t.asAdmin("GET", "/audit/", { query: { request_id: "lb-7f3a.42:eu@node_1" } }),
  );
  assert.match(byProxy.body.result.value.auditdata[0].action, /^GET \/healthz/);
  await t.close();
});
