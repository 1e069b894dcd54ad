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

/** The series lines of a scrape (no comments), by metric name. */
function seriesOf(text: string): string[] {
  return text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
}

/** Every value of `label` in the scrape. */
function labelValues(text: string, label: string): Set<string> {
  return new Set([...text.matchAll(new RegExp(`[{,]${label}="([^"]*)"`, "g"))].map((m) => m[1]));
}

Deno.test("GET /metrics: invented methods and paths add no series; every label value is from a fixed set", async () => {
  const t = await createTestApp({ configText: '[metrics]\nenabled = true\ntoken = "scrape-me"\n' });
  const scrape = async () => {
    const res = await t.get("/metrics", { headers: { Authorization: "Bearer scrape-me" } });
    assert.equal(res.status, 200);
    return await res.text();
  };
  // one round: invented methods on invented paths and on real routes, standard methods on
  // invented paths, a lower-case method (fetch keeps "patch" as sent)
  const round = async (tag: string) => {
    for (let i = 0; i < 700; i++) {
      const method = `M${tag}${i}X`;
      const a = await t.request(method, `/nope/${tag}/${i}`);
      await a.body?.cancel();
      const b = await t.request(method, "/healthz/");
      await b.body?.cancel();
      const c = await t.request(i % 2 ? "GET" : "POST", `/x${tag}${i}/y`);
      await c.body?.cancel();
    }
    const d = await t.request("patch", "/healthz/");
    await d.body?.cancel();
  };
  // a scrape first, so that its own series exist in both scrapes compared below
  await scrape();
  await round("a");
  const first = await scrape();
  await round("b");
  const second = await scrape();
  // the second round of 2,100 new names added no series at all, and the scrape stays small
  assert.equal(seriesOf(second).length, seriesOf(first).length);
  assert.ok(second.length < 32_000, `scrape of ${second.length} bytes`);
  assert.deepEqual(
    [...labelValues(second, "method")].sort(),
    ["GET", "POST", "other"],
  );
  const routes = new Set(t.app.routes.map((r) => r.path.replace(/(.)\/+$/, "$1")));
  for (const route of labelValues(second, "route")) {
    assert.ok(route === "other" || routes.has(route), `route label "${route}"`);
  }
  // the requests are still counted, under the fixed values
  assert.match(
    second,
    /tessera_http_requests_total\{route="other",method="other",status="404"\} 1400/,
  );
  assert.match(
    second,
    /tessera_http_requests_total\{route="other",method="GET",status="404"\} 700/,
  );
  // invented methods on a real route (and "patch", which no route has) are refused with 405
  assert.match(
    second,
    /tessera_http_requests_total\{route="other",method="other",status="405"\} 1402/,
  );
  assert.deepEqual([...labelValues(second, "status")].sort(), ["200", "404", "405"]);
  await t.close();
});
