/**
 * A SQLite node whose database another process holds locked beyond the busy
 * timeout answers HTTP 503 with a clear message, and writes again once the
 * lock is gone (the SQLite run only).
 *
 * @module
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { TEST_ENGINE } from "../test_db.ts";
import { api, hotp, HOTP_KEY_HEX, initialAdminPassword, login, startNode } from "./_node.ts";

/** Tessera's SQLite busy timeout (sqlite_adapter.ts). */
const BUSY_TIMEOUT_MS = 5_000;
/**
 * How long the other process holds the lock: beyond the busy timeout of the
 * request's write (which may start a little late on a loaded machine), short
 * enough that the node's next audit write, which waits synchronously too,
 * gets the lock soon after.
 */
const HOLD_MS = BUSY_TIMEOUT_MS + 3_000;

Deno.test({
  name: "a SQLite node answers 503 while another process holds the write lock too long",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "tessera-mn-" });
    const node = await startNode({ dataDir: dir });
    const other = new DatabaseSync(`${dir}/tessera.sqlite`);
    let release: Promise<void> | undefined;
    try {
      const jwt = await login(node, "admin", await initialAdminPassword(dir));
      const serial = "MNLOCKED01";
      const enrol = { type: "hotp", otpkey: HOTP_KEY_HEX, genkey: "0", serial };
      assert.equal((await api(node, "POST", "/token/init", { jwt, params: enrol })).status, 200);
      // the audit rows so far are written first: only the request below meets the lock
      const audited = other.prepare("select count(*) as n from audit where action = ?");
      const deadline = Date.now() + 10_000;
      while (Number(audited.get("POST /token/init")!.n) === 0) {
        assert.ok(Date.now() < deadline, "the node wrote no audit row within 10 s");
        await new Promise((r) => setTimeout(r, 20));
      }

      other.exec("begin immediate");
      release = new Promise<void>((r) => setTimeout(r, HOLD_MS)).then(() => other.exec("rollback"));
      const pass = hotp(HOTP_KEY_HEX, 0);
      const locked = await api(node, "POST", "/validate/check", {
        params: { serial, pass },
        timeoutMs: HOLD_MS + 10_000,
      }).catch((err) => {
        throw new Error(`${err}; the node's log:\n${node.output()}`);
      });
      const log = `the node's log:\n${node.output()}`;
      assert.equal(locked.status, 503, `${JSON.stringify(locked.body)}; ${log}`);
      assert.equal(locked.body.result.status, false);
      assert.equal(
        locked.body.result.error.message,
        "The database is not available, try again later",
      );
      // the node waited for the lock (busy timeout) before it gave up, and not much longer
      assert.ok(
        locked.ms > BUSY_TIMEOUT_MS - 1_000 && locked.ms < HOLD_MS + 2_000,
        `answered after ${Math.round(locked.ms)} ms; ${log}`,
      );

      await release;
      const ok = await api(node, "POST", "/validate/check", { params: { serial, pass } });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.result.value, true, "the OTP refused during the lock is still unused");
    } finally {
      await release;
      other.close();
      await node.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
