import assert from "node:assert/strict";
import { BoundedQueue, QueueFullError } from "../../src/lib/bounded_queue.ts";

function gate(): { open(): void; wait: Promise<void> } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => open = resolve);
  return { open, wait };
}

Deno.test("BoundedQueue runs one job at a time in arrival order and refuses beyond maxWaiting", async () => {
  const q = new BoundedQueue(1);
  const order: number[] = [];
  const first = gate();
  const jobs = [0, 1, 2].map((i) =>
    q.run(async () => {
      if (i === 0) await first.wait;
      order.push(i);
      return i;
    }, 2)
  );
  assert.equal(q.running, 1);
  assert.equal(q.waiting, 2);
  await assert.rejects(q.run(() => Promise.resolve(9), 2), QueueFullError);
  first.open();
  assert.deepEqual(await Promise.all(jobs), [0, 1, 2]);
  assert.deepEqual(order, [0, 1, 2]);
  assert.equal(q.running, 0);
  assert.equal(q.waiting, 0);
});

Deno.test("BoundedQueue frees the slot when a job throws", async () => {
  const q = new BoundedQueue(1);
  await assert.rejects(q.run(() => Promise.reject(new Error("boom"))), /boom/);
  assert.equal(q.running, 0);
  assert.equal(await q.run(() => Promise.resolve("ok"), 0), "ok");
});
