/**
 * `GET /info/rss` (spec 14 §15): the news of the feeds a webui policy names, fetched at request
 * time from a local RSS 2.0 stub, cut to the items of the last `rss_age` days.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { RSS_FEEDS_DEFAULT } from "../../src/domain/info/mod.ts";
import { actionTest } from "../policy_actions/_registry.ts";

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
const DAY = 86_400_000;

/** A stub web server: `/feed.xml` holds two items (10 and 100 days old), others answer 404. */
function startFeedServer(now: number) {
  const item = (title: string, age: number) =>
    `<item><title>${title}</title><link>https://news.example/${title}</link>` +
    `<pubDate>${new Date(now - age * DAY).toUTCString()}</pubDate>` +
    `<description><![CDATA[About <b>${title}</b>]]></description></item>`;
  const rss = `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>` +
    `<title>Stub</title>${item("recent", 10)}${item("older", 100)}</channel></rss>`;
  const hits: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    hits.push(path);
    if (path === "/feed.xml") {
      return new Response(rss, { headers: { "content-type": "application/rss+xml" } });
    }
    if (path === "/notxml") return new Response("<html><p>not a feed");
    return new Response("no", { status: 404 });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  return { base, hits, stop: () => server.shutdown() };
}

async function userToken(t: TestApp): Promise<string> {
  return (await issueJwt(t.deps, {
    username: "alice",
    realm: "realm1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  })).token;
}

const RECENT = (now: number) => ({
  title: "recent",
  link: "https://news.example/recent",
  pub_date: new Date(now - 10 * DAY).toUTCString(),
  summary: "About <b>recent</b>",
});

actionTest(
  "webui",
  "rss_feeds",
  "GET /info/rss reads the feeds the policy names; a failing feed is left out",
  async () => {
    const t = await createTestApp();
    const stub = startFeedServer(t.clock.now());
    try {
      // baseline: privacyIDEA's three feeds (a user's age 0 fetches nothing)
      const user = { token: await userToken(t) };
      const before = await jsonOf(await t.get("/info/rss", user));
      assert.equal(before.status, 200);
      assert.deepEqual(before.body.result.value, {
        "Community News": [],
        "privacyIDEA News": [],
        "NetKnights News": [],
      });
      assert.deepEqual(Object.keys(RSS_FEEDS_DEFAULT), Object.keys(before.body.result.value));
      await savePolicy(t.deps, "feeds", {
        scope: "webui",
        action: `rss_feeds='Local':'${stub.base}/feed.xml'-'Gone':'${stub.base}/gone'-` +
          `'Junk':'${stub.base}/notxml'-'Ftp':'ftp://127.0.0.1/x'`,
      });
      const res = await jsonOf(await t.asAdmin("GET", "/info/rss"));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      // admins see 180 days: the 100 days old item too; the three failing feeds are omitted
      assert.deepEqual(Object.keys(res.body.result.value), ["Local"]);
      assert.deepEqual(res.body.result.value.Local.map((i: { title: string }) => i.title), [
        "recent",
        "older",
      ]);
      assert.deepEqual(res.body.result.value.Local[0], RECENT(t.clock.now()));
      assert.deepEqual(stub.hits.sort(), ["/feed.xml", "/gone", "/notxml"], "no ftp fetch");
      // the user's age 0 lists the policy's channels, empty
      const mine = await jsonOf(await t.get("/info/rss", user));
      assert.deepEqual(mine.body.result.value, { Local: [], Gone: [], Junk: [], Ftp: [] });
    } finally {
      await stub.stop();
      await t.close();
    }
  },
);

Deno.test("GET /info/rss: rss_age cuts the items by age; the request cannot widen it", async () => {
  const t = await createTestApp();
  const stub = startFeedServer(t.clock.now());
  try {
    await savePolicy(t.deps, "feeds", {
      scope: "webui",
      action: `rss_feeds='Local':'${stub.base}/feed.xml'`,
    });
    await savePolicy(t.deps, "age", { scope: "webui", action: "rss_age=30" });
    const admin = await jsonOf(await t.asAdmin("GET", "/info/rss?rss_age=365"));
    assert.equal(admin.status, 200);
    assert.deepEqual(admin.body.result.value, { Local: [RECENT(t.clock.now())] });
    // a user gets the policy's 30 days as well (default 0)
    const user = await jsonOf(await t.get("/info/rss", { token: await userToken(t) }));
    assert.deepEqual(user.body.result.value, { Local: [RECENT(t.clock.now())] });
    assert.equal(stub.hits.length, 2);
  } finally {
    await stub.stop();
    await t.close();
  }
});

Deno.test("GET /info/rss?channel=: one channel; an unknown one is a 400; no JWT 401", async () => {
  const t = await createTestApp();
  const stub = startFeedServer(t.clock.now());
  try {
    await savePolicy(t.deps, "feeds", {
      scope: "webui",
      action: `rss_feeds='Local':'${stub.base}/feed.xml'-'Other':'${stub.base}/feed.xml'`,
    });
    const one = await jsonOf(await t.asAdmin("GET", "/info/rss?channel=Other"));
    assert.equal(one.status, 200);
    assert.deepEqual(Object.keys(one.body.result.value), ["Other"]);
    assert.equal(one.body.result.value.Other.length, 2);
    assert.equal(stub.hits.length, 1);

    const unknown = await jsonOf(await t.asAdmin("GET", "/info/rss?channel=Nope"));
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.result.error.code, 905);
    assert.equal(unknown.body.result.error.message, 'ERR905: Unknown channel "Nope"');
    const userUnknown = await t.get("/info/rss?channel=Nope", { token: await userToken(t) });
    assert.equal(userUnknown.status, 400);
    await userUnknown.body?.cancel();
    assert.equal(stub.hits.length, 1, "nothing fetched for an unknown channel");

    const anon = await t.get("/info/rss");
    assert.equal(anon.status, 401);
    await anon.body?.cancel();
  } finally {
    await stub.stop();
    await t.close();
  }
});
