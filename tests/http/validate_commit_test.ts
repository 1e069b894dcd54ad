/**
 * `/validate/check` commits its writes (the OTP counter, fail counter, auth
 * counts) and its audit row before the answer leaves, and on SQLite a lone
 * check does so in one commit: the row joins the check's write group.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { migrateToLatest, openDatabase, sqliteConnectionOf } from "../../src/db/database.ts";
import type { NodeSqliteDatabase } from "../../src/db/sqlite_adapter.ts";
import { AuditWriter } from "../../src/domain/audit/mod.ts";
import { memoryLogger } from "../../src/lib/logger.ts";
import { TEST_ENGINE } from "../test_db.ts";
import { createUsers } from "../fixtures/users.ts";
import { createHostsResolver, initToken } from "../domain/machine/fixtures.ts";

/** What another connection (another process, a crash's survivor) sees now. */
interface Reader {
  counter(serial: string): Promise<number>;
  auditRows(action: string): Promise<{ success: number; serial: string; info: string }[]>;
  close(): Promise<void>;
}

/** A test app on a database another connection can read: a SQLite file, or PostgreSQL. */
async function appWithReader(): Promise<
  { t: TestApp; reader: Reader; conn?: NodeSqliteDatabase; done: () => Promise<void> }
> {
  if (TEST_ENGINE === "postgres") {
    const t = await createTestApp();
    const other = openDatabase(t.deps.config.storage.databaseUrl, { poolSize: 1 });
    const reader: Reader = {
      async counter(serial) {
        const row = await other.selectFrom("token").select("count").where("serial", "=", serial)
          .executeTakeFirstOrThrow();
        return Number(row.count);
      },
      async auditRows(action) {
        const rows = await other.selectFrom("audit").select(["success", "serial", "info"])
          .where("action", "=", action).orderBy("id").execute();
        return rows.map((r) => ({ success: Number(r.success), serial: r.serial, info: r.info }));
      },
      close: () => other.destroy(),
    };
    return { t, reader, done: () => t.close() };
  }
  const dir = await Deno.makeTempDir({ prefix: "tessera-commit-" });
  const path = `${dir}/tessera.sqlite`;
  const db = openDatabase(`sqlite:${path}`);
  await migrateToLatest(db);
  const log = memoryLogger();
  const t = await createTestApp({ deps: { db, audit: new AuditWriter(db, log), log } });
  const other = new DatabaseSync(path, { readOnly: true });
  const reader: Reader = {
    counter(serial) {
      const row = other.prepare(`select count from token where serial = ?`).get(serial);
      return Promise.resolve(Number(row!.count));
    },
    auditRows(action) {
      const rows = other.prepare(
        `select success, serial, info from audit where action = ? order by id`,
      ).all(action);
      return Promise.resolve(
        rows.map((r) => ({
          success: Number(r.success),
          serial: String(r.serial),
          info: String(r.info),
        })),
      );
    },
    close() {
      other.close();
      return Promise.resolve();
    },
  };
  return {
    t,
    reader,
    conn: sqliteConnectionOf(db),
    async done() {
      await t.close();
      await db.destroy();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("POST /validate/check: counter and audit row are committed when the answer arrives", async () => {
  const { t, reader, done } = await appWithReader();
  try {
    const serial = await enrollHotp(t, { pin: "1234" });
    const before = await reader.counter(serial);
    const ok = await jsonOf(await t.post("/validate/check", { serial, pass: "1234" + hotp(0) }));
    // read at once by another connection: nothing of this request waits to be written
    assert.equal(ok.body.result.value, true);
    assert.equal(await reader.counter(serial), before + 1);
    assert.deepEqual(await reader.auditRows("POST /validate/check"), [
      { success: 1, serial, info: "matching 1 tokens" },
    ]);
    const wrong = await jsonOf(await t.post("/validate/check", { serial, pass: "1234000000" }));
    assert.equal(wrong.body.result.value, false);
    const rows = await reader.auditRows("POST /validate/check");
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[1], { success: 0, serial, info: "wrong otp value" });
  } finally {
    await reader.close();
    await done();
  }
});

Deno.test({
  name: "POST /validate/check on SQLite: a lone check's writes and audit row share one commit",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const { t, reader, conn, done } = await appWithReader();
    try {
      const serial = await enrollHotp(t, { pin: "1234" });
      const seen: string[] = [];
      conn!.observe = (sql) => seen.push(sql.trim().split(/\s+/)[0].toLowerCase());
      for (const pass of ["1234" + hotp(0), "1234000000", "1234" + hotp(1)]) {
        seen.length = 0;
        const res = await t.post("/validate/check", { serial, pass });
        assert.equal(res.status, 200);
        assert.equal(seen.filter((s) => s === "commit").length, 1, seen.join(" "));
        // the row is in, as the answer is
        assert.equal(seen.filter((s) => s === "insert").length >= 1, true);
      }
      conn!.observe = undefined;
      assert.equal((await reader.auditRows("POST /validate/check")).length, 3);
    } finally {
      await reader.close();
      await done();
    }
  },
});

Deno.test({
  name: "POST /validate/check on SQLite: a failed commit answers an error, the OTP stays unused",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const { t, reader, conn, done } = await appWithReader();
    try {
      const serial = await enrollHotp(t, { pin: "1234" });
      const before = await reader.counter(serial);
      // the next commit of the connection fails (a full disk), once
      const exec = conn!.exec.bind(conn!);
      let isFailing = true;
      conn!.exec = (p, ...rest) => {
        if (isFailing && p.sql === "commit") {
          isFailing = false;
          throw new Error("database or disk is full");
        }
        return exec(p, ...rest);
      };
      const res = await t.post("/validate/check", { serial, pass: "1234" + hotp(0) });
      assert.ok(res.status >= 500, `status ${res.status}`);
      const body = await res.json();
      assert.equal(body.result.status, false);
      assert.ok(res.headers.get("x-request-id"));
      assert.equal(isFailing, false);
      // nothing of the check stands, and the audit row says it failed
      assert.equal(await reader.counter(serial), before);
      const rows = await reader.auditRows("POST /validate/check");
      assert.equal(rows.length, 1);
      assert.equal(rows[0].success, 0);
      // the OTP was not used up: it authenticates now
      const again = await jsonOf(
        await t.post("/validate/check", { serial, pass: "1234" + hotp(0) }),
      );
      assert.equal(again.body.result.value, true);
      assert.equal(await reader.counter(serial), before + 1);
    } finally {
      await reader.close();
      await done();
    }
  },
});

Deno.test({
  name: "POST /validate/check on SQLite: offline values are made only after the check's commit",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const { t, reader, conn, done } = await appWithReader();
    try {
      await createUsers(t.deps, {
        realm: "realm1",
        users: [{ login: "cornelius", password: "x" }],
      });
      await createHostsResolver(t);
      await initToken(t, {
        type: "hotp",
        serial: "HOTP1",
        otpkey: "3132333435363738393031323334353637383930",
        pin: "test",
        user: "cornelius",
        realm: "realm1",
      });
      const bind = await t.asAdmin("POST", "/machine/token", {
        body: { serial: "HOTP1", application: "offline", hostname: "gandalf", count: 17 },
      });
      assert.equal(bind.status, 200, await bind.text());
      const before = await reader.counter("HOTP1");
      // the check's commit fails (a full disk), once
      const exec = conn!.exec.bind(conn!);
      let isFailing = true;
      conn!.exec = (p, ...rest) => {
        if (isFailing && p.sql === "commit") {
          isFailing = false;
          throw new Error("database or disk is full");
        }
        return exec(p, ...rest);
      };
      const pass = "test755224"; // RFC 4226 counter 0
      const res = await t.post("/validate/check", { user: "cornelius", realm: "realm1", pass });
      const body = await res.json();
      assert.ok(res.status >= 500, `status ${res.status}`);
      assert.equal(isFailing, false);
      // no offline values left the server and none were written: the counter stands
      assert.equal("auth_items" in body, false);
      assert.equal(await reader.counter("HOTP1"), before);
      const rows = await reader.auditRows("POST /validate/check");
      assert.deepEqual(rows.map((r) => r.success), [0]);
      // the same OTP now authenticates, with its offline values
      const again = await jsonOf(
        await t.post("/validate/check", { user: "cornelius", realm: "realm1", pass }),
      );
      assert.equal(again.body.result.value, true);
      assert.equal(again.body.auth_items.offline[0].serial, "HOTP1");
      assert.equal(await reader.counter("HOTP1"), 18);
    } finally {
      await reader.close();
      await done();
    }
  },
});
