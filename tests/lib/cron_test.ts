import assert from "node:assert/strict";
import { cronProblem, nextCronTime } from "../../src/lib/cron.ts";

const at = (iso: string) => Date.parse(iso);
const next = async (interval: string, after: string, tz = "UTC") =>
  new Date(await nextCronTime(interval, at(after), tz)).toISOString();

Deno.test("nextCronTime gives the first time strictly after the reference", async () => {
  // spec 14 §10.3: last run 08:00:05, next due the next day at 08:00
  assert.equal(await next("0 8 * * *", "2026-03-02T08:00:05Z"), "2026-03-03T08:00:00.000Z");
  assert.equal(await next("0 8 * * *", "2026-03-02T08:00:00Z"), "2026-03-03T08:00:00.000Z");
  assert.equal(await next("0 8 * * *", "2026-03-02T07:59:59.999Z"), "2026-03-02T08:00:00.000Z");
  assert.equal(await next("*/5 * * * *", "2026-03-02T08:01:00Z"), "2026-03-02T08:05:00.000Z");
  // day of month and day of week both given: either matches (cron's and croniter's rule)
  assert.equal(await next("0 8 1 * mon", "2026-03-02T09:00:00Z"), "2026-03-09T08:00:00.000Z");
  assert.equal(await next("@daily", "2026-03-02T09:00:00Z"), "2026-03-03T00:00:00.000Z");
  assert.equal(await next("@midnight", "2026-03-02T09:00:00Z"), "2026-03-03T00:00:00.000Z");
  assert.equal(await next("@hourly", "2026-03-02T09:00:00Z"), "2026-03-02T10:00:00.000Z");
});

Deno.test("nextCronTime reads croniter's sixth field as seconds and honours the time zone", async () => {
  assert.equal(await next("* * * * * */20", "2026-03-02T08:00:01Z"), "2026-03-02T08:00:20.000Z");
  // 08:00 in Berlin (CET, +01:00 in March before the switch) is 07:00 UTC
  assert.equal(
    await next("0 8 * * *", "2026-03-02T09:00:00Z", "Europe/Berlin"),
    "2026-03-03T07:00:00.000Z",
  );
});

Deno.test("cronProblem refuses what croniter refuses, with the reason", async () => {
  assert.equal(await cronProblem("0 8 * * *"), undefined);
  assert.equal(await cronProblem("  */15 8-18 * * 1-5 "), undefined);
  assert.equal(await cronProblem("0 0 1 jan *"), undefined);
  assert.match((await cronProblem("61 * * * *"))!, /61/);
  assert.match((await cronProblem("* * * *"))!, /expected 5 fields .* got 4/);
  assert.match((await cronProblem("* * * * * * *"))!, /got 7/);
  assert.equal(await cronProblem(""), "the interval is empty");
  assert.equal(await cronProblem("@every"), 'unknown alias "@every"');
  assert.ok((await cronProblem("a b c d e")) !== undefined);
  await assert.rejects(() => nextCronTime("* *", 0), /expected 5 fields/);
});
