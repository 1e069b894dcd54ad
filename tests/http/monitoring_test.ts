/**
 * `/monitoring/` (spec 14 §11): statistics keys, values filtered by time
 * (dates as privacyIDEA's clients write them, bounds inclusive), the last
 * value, deletion by time window; bad dates are refused and delete nothing.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { writeStats } from "../../src/domain/monitoring/mod.ts";

const T0 = Date.UTC(2026, 2, 2, 8, 0, 1);
const MINUTE = 60_000;

/** Four values of key1 a minute apart (T0 …), one of key2. */
async function seed(t: TestApp): Promise<void> {
  for (let i = 0; i < 4; i++) await writeStats(t.deps.db, "key1", 10 + i, T0 + i * MINUTE);
  await writeStats(t.deps.db, "key2", 7, T0);
}

async function get(t: TestApp, path: string, query?: Record<string, string>) {
  const res = await jsonOf(await t.asAdmin("GET", path, { query }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

Deno.test("GET /monitoring/ lists the keys; /monitoring/<key> the values, oldest first", async () => {
  const t = await createTestApp();
  assert.deepEqual(await get(t, "/monitoring/"), []);
  await seed(t);
  assert.deepEqual(await get(t, "/monitoring/"), ["key1", "key2"]);
  assert.deepEqual(await get(t, "/monitoring/key1"), [
    ["2026-03-02 08:00:01.000000+0000", 10],
    ["2026-03-02 08:01:01.000000+0000", 11],
    ["2026-03-02 08:02:01.000000+0000", 12],
    ["2026-03-02 08:03:01.000000+0000", 13],
  ]);
  assert.equal(await get(t, "/monitoring/key1/last"), 13);
  assert.deepEqual(await get(t, "/monitoring/unknown"), []);
  assert.equal(await get(t, "/monitoring/unknown/last"), null);
  await t.close();
});

Deno.test("GET /monitoring/<key> filters by start and end (inclusive, any zone, output format)", async () => {
  const t = await createTestApp();
  await seed(t);
  const values = async (query: Record<string, string>) =>
    (await get(t, "/monitoring/key1", query)).map((v: [string, number]) => v[1]);
  // privacyIDEA's test: a start after the second value gives the last two
  assert.deepEqual(await values({ start: "2026-03-02 08:01:30+0000" }), [12, 13]);
  // the output format is accepted back; both bounds are inclusive
  assert.deepEqual(
    await values({
      start: "2026-03-02 08:01:01.000000+0000",
      end: "2026-03-02T08:02:01.000000+0000",
    }),
    [11, 12],
  );
  // another zone: 10:02+0200 is 08:02 UTC
  assert.deepEqual(await values({ end: "2026-03-02 10:02+0200" }), [10, 11]);
  assert.deepEqual(await values({ start: "2026-03-02T08:03:00Z" }), [13]);
  await t.close();
});

Deno.test("DELETE /monitoring/<key> deletes the values in the window and says how many", async () => {
  const t = await createTestApp();
  await seed(t);
  const del = async (path: string, query?: Record<string, string>) => {
    const res = await jsonOf(await t.asAdmin("DELETE", path, { query }));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.result.value;
  };
  assert.equal(
    await del("/monitoring/key1", {
      start: "2026-03-02 08:01:01+0000",
      end: "2026-03-02 08:02:01+0000",
    }),
    2,
  );
  assert.deepEqual((await get(t, "/monitoring/key1")).map((v: [string, number]) => v[1]), [10, 13]);
  assert.equal(await del("/monitoring/unknown"), 0);
  assert.equal(await del("/monitoring/key1"), 2);
  assert.deepEqual(await get(t, "/monitoring/"), ["key2"]);
  await t.close();
});

Deno.test("/monitoring/ refuses an unreadable date with 400/905 and deletes nothing", async () => {
  const t = await createTestApp();
  await seed(t);
  for (
    const [method, name, value] of [
      ["GET", "start", "yesterday"],
      ["GET", "end", "2026-13-01"],
      ["DELETE", "start", "2026-02-30 10:00"],
      ["DELETE", "end", "2026-03-02 08:00+2500"],
    ]
  ) {
    const res = await jsonOf(
      await t.asAdmin(method, "/monitoring/key1", { query: { [name]: value } }),
    );
    assert.equal(res.status, 400, `${method} ${name}=${value}`);
    assert.equal(res.body.result.error.code, 905);
    assert.match(res.body.result.error.message, new RegExp(`Cannot parse parameter "${name}"`));
  }
  assert.equal((await get(t, "/monitoring/key1")).length, 4);
  await t.close();
});
