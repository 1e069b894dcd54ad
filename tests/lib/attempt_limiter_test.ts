import assert from "node:assert/strict";
import { AttemptLimiter } from "../../src/lib/attempt_limiter.ts";

const LIMITS = { maxFailures: 3, windowMs: 1000, maxPending: 2, maxKeys: 100 };

function fail(l: AttemptLimiter, key: string, now: number): void {
  const a = l.begin(key, now);
  assert.ok(a.allowed);
  a.finish(true, now);
}

Deno.test("AttemptLimiter refuses a key after maxFailures until its window ends; other keys go on", () => {
  const l = new AttemptLimiter(LIMITS);
  for (let i = 0; i < 3; i++) fail(l, "a", 100 + i);
  const refused = l.begin("a", 500);
  assert.deepEqual(refused, { allowed: false, reason: "failures", retryAfterMs: 600 });
  assert.ok(l.begin("b", 500).allowed);
  // the window started at the first failure (100)
  assert.ok(l.begin("a", 1100).allowed);
});

Deno.test("AttemptLimiter: successes do not reset the failures; attempts in progress count", () => {
  const l = new AttemptLimiter(LIMITS);
  fail(l, "a", 0);
  const ok = l.begin("a", 1);
  assert.ok(ok.allowed);
  ok.finish(false, 1);
  fail(l, "a", 2);
  // one failure left: one attempt may run, a second one at the same time not
  const running = l.begin("a", 3);
  assert.ok(running.allowed);
  assert.equal(l.begin("a", 3).allowed, false);
  running.finish(false, 4);
  assert.ok(l.begin("a", 5).allowed);
});

Deno.test("AttemptLimiter: at most maxPending at once per key", () => {
  const l = new AttemptLimiter({ ...LIMITS, maxFailures: 100 });
  const a1 = l.begin("a", 0);
  const a2 = l.begin("a", 0);
  assert.ok(a1.allowed && a2.allowed);
  assert.deepEqual(l.begin("a", 0), { allowed: false, reason: "pending", retryAfterMs: 0 });
  a1.finish(false, 1);
  a1.finish(false, 1); // a second finish is ignored
  assert.ok(l.begin("a", 1).allowed);
  assert.equal(l.begin("a", 1).allowed, false);
});

Deno.test("AttemptLimiter stays within maxKeys and forgets idle keys", () => {
  const l = new AttemptLimiter({ ...LIMITS, maxKeys: 10 });
  for (let i = 0; i < 50; i++) fail(l, `k${i}`, i);
  assert.ok(l.size <= 10, `size ${l.size}`);
  const ok = l.begin("idle", 0);
  assert.ok(ok.allowed);
  ok.finish(false, 0);
  assert.ok(l.size <= 10);
});
