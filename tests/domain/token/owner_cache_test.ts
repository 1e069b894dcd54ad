import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, jsonOf, type TestApp } from "../../test_app.ts";
import { createUsers } from "../../fixtures/users.ts";
import { enroll, enrollHotp, hotp, SEED_HEX, totp } from "../../fixtures/tokens.ts";
import * as store from "../../../src/domain/token/token_store.ts";
import { ownerTokensNow } from "../../../src/domain/token/owner_cache.ts";
import { migrateToLatest, openDatabase, sqliteConnectionOf } from "../../../src/db/database.ts";
import type { Db } from "../../../src/db/schema.ts";
import { TEST_ENGINE } from "../../test_db.ts";

/**
 * The owner cache lives in SQLite's direct path (src/db/direct.ts); these
 * tests look at SQLite's connection, so they run in the SQLite run only.
 */
function sqliteTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: TEST_ENGINE !== "sqlite", fn });
}

const ALICE = { realm: "realm1", login: "alice" };

async function withAlice(): Promise<{ t: TestApp; serial: string }> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "pw" }] });
  const serial = await enrollHotp(t, { pin: "1234", user: "alice", realm: "realm1" });
  return { t, serial };
}

async function check(t: TestApp, pass: string) {
  return (await jsonOf(await t.post("/validate/check", { user: "alice", realm: "realm1", pass })))
    .body;
}

/** What the token tables hold for alice, read without the cache (findByOwner + withInfo). */
async function fresh(db: Db, owner: { realm: string; login: string; uid?: string }) {
  return await store.withInfo(db, await store.findByOwner(db, owner), false);
}

/** Counts the statements that read the token table while `fn` runs. */
async function tokenReads(db: Db, fn: () => Promise<unknown>): Promise<number> {
  const conn = sqliteConnectionOf(db)!;
  let n = 0;
  conn.observe = (sql) => {
    if (/^select\b[\s\S]*\bfrom "token"/i.test(sql)) n++;
  };
  try {
    await fn();
  } finally {
    conn.observe = undefined;
  }
  return n;
}

const OWNER = { realm: "r1", login: "ann", uid: "7", resolver: "res" };

/**
 * A migrated file database with one token of {@link OWNER}, and a second
 * connection to it (another process's view), for `fn`.
 */
async function withFileDb(
  serial: string,
  fn: (db: Db, other: DatabaseSync, owner: typeof OWNER, id: number) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tessera-owner-cache-" });
  const db = openDatabase(`sqlite:${dir}/t.sqlite`);
  const other = new DatabaseSync(`${dir}/t.sqlite`);
  try {
    await migrateToLatest(db);
    const id = await store.insertToken(db, {
      serial,
      tokentype: "hotp",
      user_id: OWNER.uid,
      user_login: OWNER.login,
      user_realm: OWNER.realm,
      resolver: OWNER.resolver,
      created_at: 1,
    } as never);
    await fn(db, other, OWNER, id);
  } finally {
    other.close();
    await db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
}

sqliteTest(
  "owner cache: after checks, wrong OTPs and a reset it holds what the tables hold",
  async () => {
    const { t, serial } = await withAlice();
    try {
      const user = (await store.findByOwner(t.deps.db, ALICE))[0].owner!;
      const owner = {
        realm: user.realm,
        login: user.login,
        uid: user.uid,
        resolver: user.resolver,
      };
      assert.equal((await check(t, "1234" + hotp(0))).result.value, true);
      assert.equal((await check(t, "1234000000")).result.value, false);
      assert.equal((await check(t, "1234000001")).result.value, false);
      let cached = await store.findByOwnerWithInfo(t.deps.db, owner);
      assert.deepEqual(cached, await fresh(t.deps.db, owner));
      assert.equal(cached[0].serial, serial);
      assert.equal(cached[0].count, 1);
      assert.equal(cached[0].failcount, 2);
      assert.equal(cached[0].info.count_auth.value, "3");
      assert.equal(cached[0].info.count_auth_success.value, "1");
      // a success clears the fail counter (an ordinary write: the cache starts over)
      assert.equal((await check(t, "1234" + hotp(1))).result.value, true);
      cached = await store.findByOwnerWithInfo(t.deps.db, owner);
      assert.deepEqual(cached, await fresh(t.deps.db, owner));
      assert.equal(cached[0].failcount, 0);
      assert.equal(cached[0].count, 2);
      assert.equal(cached[0].info.count_auth_success.value, "2");
      // and the next checks are answered from the cache, still exactly
      assert.equal((await check(t, "1234" + hotp(2))).result.value, true);
      const reads = await tokenReads(t.deps.db, async () => {
        assert.equal((await check(t, "1234" + hotp(3))).result.value, true);
        assert.equal((await check(t, "1234" + hotp(3))).result.value, false, "no OTP twice");
        assert.equal((await check(t, "9999" + hotp(4))).result.value, false);
      });
      assert.equal(reads, 0, "checks of a cached owner read no token rows");
      cached = await store.findByOwnerWithInfo(t.deps.db, owner);
      assert.deepEqual(cached, await fresh(t.deps.db, owner));
      assert.equal(cached[0].count, 4);
      assert.equal(cached[0].failcount, 2);
    } finally {
      await t.close();
    }
  },
);

sqliteTest("owner cache: an administrator's change applies to the next check", async () => {
  const { t, serial } = await withAlice();
  try {
    assert.equal((await check(t, "1234" + hotp(0))).result.value, true);
    const disable = await t.asAdmin("POST", "/token/disable", { body: { serial } });
    assert.equal(disable.status, 200);
    const refused = await check(t, "1234" + hotp(1));
    assert.equal(refused.result.value, false);
    assert.match(refused.detail.message, /disabled/);
    await t.asAdmin("POST", "/token/enable", { body: { serial } });
    // a new PIN is used at once
    const pin = await t.asAdmin("POST", "/token/setpin", { body: { serial, otppin: "4321" } });
    assert.equal(pin.status, 200);
    assert.equal((await check(t, "1234" + hotp(2))).result.value, false);
    assert.equal((await check(t, "4321" + hotp(3))).result.value, true);
    // maxfail lowered to the current fail counter: locked at once
    await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "1" } });
    assert.equal((await check(t, "4321000000")).result.value, false);
    const locked = await check(t, "4321" + hotp(4));
    assert.equal(locked.result.value, false);
    assert.match(locked.detail.message, /[Ff]ailcounter exceeded/);
    // unassigned: alice has no token any more
    await t.asAdmin("POST", "/token/unassign", { body: { serial } });
    const none = await check(t, "4321" + hotp(5));
    assert.equal(none.result.value, false);
    assert.match(none.detail.message, /no tokens/);
  } finally {
    await t.close();
  }
});

sqliteTest("owner cache: copies handed out do not change the cache", async () => {
  const { t } = await withAlice();
  try {
    await check(t, "1234" + hotp(0));
    const first = await store.findByOwnerWithInfo(t.deps.db, ALICE);
    first[0].failcount = 99;
    first[0].info.count_auth = { value: "1000", type: "" };
    delete first[0].info.hashlib;
    const again = await store.findByOwnerWithInfo(t.deps.db, ALICE);
    assert.equal(again[0].failcount, 0);
    assert.equal(again[0].info.count_auth.value, "1");
    assert.ok(again[0].info.hashlib);
    assert.throws(() => {
      (again[0].info.count_auth as { value: string }).value = "x";
    }, TypeError);
  } finally {
    await t.close();
  }
});

sqliteTest("owner cache: another connection's commit is seen within milliseconds", async () => {
  await withFileDb("OC-1", async (db, other, owner, id) => {
    assert.equal((await store.findByOwnerWithInfo(db, owner))[0].active, true);
    other.prepare(`update token set active = 0 where id = ?`).run(id);
    other.prepare(`insert into tokeninfo (token_id, key, value) values (?, 'note', 'x')`).run(id);
    await new Promise((r) => setTimeout(r, 5));
    const seen = await store.findByOwnerWithInfo(db, owner);
    assert.equal(seen[0].active, false);
    assert.equal(seen[0].info.note.value, "x");
    // a write group that rolls back leaves no patched value behind
    await store.advanceCounter(db, id, 5);
    assert.equal((await store.findByOwnerWithInfo(db, owner))[0].count, 5);
    await db.transaction().execute(async (trx) => {
      await trx.updateTable("token").set({ count: 9 }).where("id", "=", id).execute();
    });
    assert.equal((await store.findByOwnerWithInfo(db, owner))[0].count, 9);
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.updateTable("token").set({ count: 20 }).where("id", "=", id).execute();
        throw new Error("abort");
      }),
    );
    assert.equal((await store.findByOwnerWithInfo(db, owner))[0].count, 9);
  });
});

sqliteTest(
  "owner cache: parallel checks of one user accept each OTP once and count every attempt",
  async () => {
    const { t } = await withAlice();
    try {
      await check(t, "1234" + hotp(0));
      // each OTP twice, plus wrong ones, all at once
      const passes: string[] = [];
      for (let c = 1; c <= 6; c++) passes.push("1234" + hotp(c), "1234" + hotp(c), "1234000000");
      const results = await Promise.all(passes.map((p) => check(t, p)));
      const accepted = results.filter((r) => r.result.value === true).length;
      assert.equal(accepted, 6);
      const [tok] = await fresh(t.deps.db, ALICE);
      const [cached] = await store.findByOwnerWithInfo(t.deps.db, ALICE);
      assert.deepEqual(cached, tok);
      assert.equal(tok.info.count_auth.value, String(1 + passes.length));
      assert.equal(tok.count, 7);
    } finally {
      await t.close();
    }
  },
);

sqliteTest(
  "owner cache: a TOTP check's time shift goes into the cache, not around it",
  async () => {
    const t = await createTestApp();
    try {
      await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "pw" }] });
      await enroll(t, { type: "totp", otpkey: SEED_HEX, pin: "p", user: "alice", realm: "realm1" });
      assert.equal((await check(t, "p" + totp(t.clock.now()))).result.value, true);
      t.clock.advance(30_000);
      assert.equal((await check(t, "p" + totp(t.clock.now()))).result.value, true);
      const reads = await tokenReads(t.deps.db, async () => {
        for (let i = 0; i < 3; i++) {
          t.clock.advance(60_000);
          // one step late (and after the last used step): accepted, the time shift is written
          assert.equal((await check(t, "p" + totp(t.clock.now() - 30_000))).result.value, true);
        }
      });
      assert.equal(reads, 0, "TOTP checks of a cached owner read no token rows");
      const [cached] = await store.findByOwnerWithInfo(t.deps.db, ALICE);
      assert.deepEqual(cached, (await fresh(t.deps.db, ALICE))[0]);
      assert.equal(
        cached.info.timeShift.value,
        (await fresh(t.deps.db, ALICE))[0].info.timeShift.value,
      );
      assert.match(cached.info.timeShift.value, /^-\d+$/);
    } finally {
      await t.close();
    }
  },
);

sqliteTest(
  "owner cache: a hand-set counter that is no integer is counted as SQLite counts it",
  async () => {
    const { t, serial } = await withAlice();
    try {
      assert.equal((await check(t, "1234" + hotp(0))).result.value, true);
      const set = await t.asAdmin("POST", `/token/info/${serial}/count_auth`, {
        body: { value: "12abc" },
      });
      assert.equal(set.status, 200);
      // loaded with the odd value, then counted by SQL (cast to integer: 12, plus one)
      assert.equal((await check(t, "1234" + hotp(1))).result.value, true);
      assert.equal((await check(t, "1234" + hotp(2))).result.value, true);
      const [cached] = await store.findByOwnerWithInfo(t.deps.db, ALICE);
      assert.deepEqual(cached, (await fresh(t.deps.db, ALICE))[0]);
      assert.equal(cached.info.count_auth.value, "14");
    } finally {
      await t.close();
    }
  },
);

sqliteTest(
  "owner cache: a commit of another process right after a load is not hidden by it",
  async () => {
    await withFileDb("OC-2", async (db, other, owner, id) => {
      const key = "test-owner";
      const read = () => store.findByOwner(db, owner);
      const rows = (await read()).map((t) => ({ ...t, info: {}, realms: [] }));
      // the load returns what it read, then another process commits before the cache stores it
      const loaded = ownerTokensNow(db, key, () => {
        other.prepare(`update token set active = 0 where id = ?`).run(id);
        const until = performance.now() + 3; // past the 1 ms data_version window
        while (performance.now() < until) { /* wait */ }
        return rows;
      });
      assert.equal(loaded?.[0].active, true, "the load's own answer is what it read");
      await new Promise((r) => setTimeout(r, 5));
      const again = ownerTokensNow(db, key, () => rows.map((t) => ({ ...t, active: false })));
      assert.equal(again?.[0].active, false, "the next request reloads: the commit was seen");
    });
  },
);
