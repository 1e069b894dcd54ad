import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";
import { issueJwt } from "../../src/http/jwt.ts";

Deno.test("GET /metrics: off by default (404); on, counts requests and /validate outcomes for an admin or the token", async () => {
  const off = await createTestApp();
  assert.equal((await jsonOf(await off.asAdmin("GET", "/metrics"))).status, 404);
  await off.close();

  const t = await createTestApp({ configText: '[metrics]\nenabled = true\ntoken = "scrape-me"\n' });
  await t.get("/healthz/");
  await t.post("/validate/check", { user: "nobody", pass: "x" });
  const res = await t.asAdmin("GET", "/metrics");
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.match(
    text,
    /tessera_http_requests_total\{route="\/healthz",method="GET",status="200"\} 1/,
  );
  assert.match(text, /tessera_http_request_duration_seconds_bucket\{le="0\.005",route="\/healthz"/);
  assert.match(text, /tessera_validate_results_total\{outcome="[A-Z]+"\} 1/);
  assert.match(text, /tessera_audit_queue_rows \d+/);
  assert.match(text, /tessera_cache_lookups\{result="hit"\} \d+/);
  // the scraper's token works; a wrong one, no credentials and a user JWT do not
  const scraped = await t.get("/metrics", { headers: { Authorization: "Bearer scrape-me" } });
  assert.equal(scraped.status, 200);
  await scraped.body?.cancel();
  assert.equal(
    (await jsonOf(await t.get("/metrics", { headers: { Authorization: "Bearer wrong" } }))).status,
    401,
  );
  assert.equal((await jsonOf(await t.get("/metrics"))).status, 401);
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "r1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  assert.equal((await jsonOf(await t.get("/metrics", { token }))).status, 401);
  await t.close();
});
