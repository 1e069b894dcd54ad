/**
 * PostgreSQL's cache epoch reading (db/postgres.ts PgCacheEpoch) shared between
 * requests: a look never uses a reading sent before its request began, and the
 * requests that begin while a reading is in flight share the next one. The row
 * is read through a function the test controls, so the order is exact.
 */
import assert from "node:assert/strict";
import { PgCacheEpoch } from "../../src/db/postgres.ts";

/** A row reader whose readings the test answers one by one. */
function controlledRow() {
  const pending: ((n: number) => void)[] = [];
  return {
    read: () => new Promise<number | undefined>((resolve) => pending.push(resolve)),
    /** Answers the oldest open reading with `n`. */
    answer(n: number) {
      const next = pending.shift();
      assert.ok(next, "a reading is open");
      next(n);
    },
    get open() {
      return pending.length;
    },
  };
}

/** Lets every settled promise's callbacks run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
  await new Promise((r) => setTimeout(r, 0));
}

Deno.test("cache epoch: requests begun while a reading is in flight share the next one", async () => {
  const row = controlledRow();
  const epoch = new PgCacheEpoch();
  epoch.attach(row.read);

  // request 1 begins and looks: a reading goes out
  epoch.beginRequest();
  const first = epoch.epoch();
  await flush();
  assert.equal(row.open, 1);
  // request 1 looks again: the same reading
  const firstAgain = epoch.epoch();
  await flush();
  assert.equal(row.open, 1);

  // requests 2 and 3 begin while it is in flight: it was sent before they began
  epoch.beginRequest();
  const second = epoch.epoch();
  epoch.beginRequest();
  const third = epoch.epoch();
  await flush();
  assert.equal(row.open, 1, "no second reading while one is in flight");

  // the first reading returns the old value: request 1 gets it
  row.answer(7);
  const e1 = await first;
  assert.equal(await firstAgain, e1);
  await flush();
  assert.equal(row.open, 1, "then one reading for requests 2 and 3");

  // something committed meanwhile: requests 2 and 3 see the new value, not the first reading's
  row.answer(8);
  const [e2, e3] = [await second, await third];
  assert.equal(e2, e3);
  assert.notEqual(e2, e1, "a change committed after request 1's reading is seen by 2 and 3");
  assert.equal(row.open, 0);
});

Deno.test("cache epoch: a lone request reads at once; a look of the same request reuses it", async () => {
  const row = controlledRow();
  const epoch = new PgCacheEpoch();
  epoch.attach(row.read);
  for (const n of [1, 1, 2]) {
    epoch.beginRequest();
    const a = epoch.epoch();
    await flush();
    assert.equal(row.open, 1, "a request that begins reads afresh");
    row.answer(n);
    const ea = await a;
    assert.equal(await epoch.epoch(), ea, "its next look reuses the reading");
    assert.equal(row.open, 0);
  }
});

Deno.test("cache epoch: a failed reading fails its looks, and the next request reads again", async () => {
  let calls = 0;
  const epoch = new PgCacheEpoch();
  epoch.attach(() => {
    calls++;
    return calls === 1 ? Promise.reject(new Error("gone")) : Promise.resolve(3);
  });
  epoch.beginRequest();
  await assert.rejects(epoch.epoch(), /gone/);
  epoch.beginRequest();
  assert.equal(typeof await epoch.epoch(), "number");
  assert.equal(calls, 2);
});
