import assert from "node:assert/strict";
import { cronProblem, nextCronTime } from "../../src/lib/cron.ts";

const at = (iso: string) => Date.parse(iso);
const next = (interval: string, after: string, tz = "UTC") =>
  new Date(nextCronTime(interval, at(after), tz)).toISOString();

Deno.test("nextCronTime gives the first time strictly after the reference", () => {
  // spec 14 §10.3: last run 08:00:05, next due the next day at 08:00
  assert.equal(next("0 8 * * *", "2026-03-02T08:00:05Z"), "2026-03-03T08:00:00.000Z");
  assert.equal(next("0 8 * * *", "2026-03-02T08:00:00Z"), "2026-03-03T08:00:00.000Z");
  assert.equal(next("0 8 * * *", "2026-03-02T07:59:59.999Z"), "2026-03-02T08:00:00.000Z");
  assert.equal(next("*/5 * * * *", "2026-03-02T08:01:00Z"), "2026-03-02T08:05:00.000Z");
  // day of month and day of week both given: either matches (cron's and croniter's rule)
  assert.equal(next("0 8 1 * mon", "2026-03-02T09:00:00Z"), "2026-03-09T08:00:00.000Z");
  assert.equal(next("@daily", "2026-03-02T09:00:00Z"), "2026-03-03T00:00:00.000Z");
  assert.equal(next("@midnight", "2026-03-02T09:00:00Z"), "2026-03-03T00:00:00.000Z");
  assert.equal(next("@hourly", "2026-03-02T09:00:00Z"), "2026-03-02T10:00:00.000Z");
});

Deno.test("nextCronTime reads croniter's sixth field as seconds and honours the time zone", () => {
  assert.equal(next("* * * * * */20", "2026-03-02T08:00:01Z"), "2026-03-02T08:00:20.000Z");
  // 08:00 in Berlin (CET, +01:00 in March before the switch) is 07:00 UTC
  assert.equal(
    next("0 8 * * *", "2026-03-02T09:00:00Z", "Europe/Berlin"),
    "2026-03-03T07:00:00.000Z",
  );
});

Deno.test("cronProblem refuses what croniter refuses, with the reason", () => {
  assert.equal(cronProblem("0 8 * * *"), undefined);
  assert.equal(cronProblem("  */15 8-18 * * 1-5 "), undefined);
  assert.equal(cronProblem("0 0 1 jan *"), undefined);
  assert.match(cronProblem("61 * * * *")!, /61/);
  assert.match(cronProblem("* * * *")!, /expected 5 fields .* got 4/);
  assert.match(cronProblem("* * * * * * *")!, /got 7/);
  assert.equal(cronProblem(""), "the interval is empty");
  assert.equal(cronProblem("@every"), 'unknown alias "@every"');
  assert.ok(cronProblem("a b c d e") !== undefined);
  assert.throws(() => nextCronTime("* *", 0), /expected 5 fields/);
});
