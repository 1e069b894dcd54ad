/**
 * A SQLite node whose database another process holds locked beyond the
 * statement timeout (SQLite's busy timeout) answers HTTP 503 with a clear
 * message within that time, uses nothing up (the OTP is accepted once the
 * lock is gone), and audits the refusal with the token it was about (the
 * SQLite run only).
 *
 * @module
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { TEST_ENGINE } from "../test_db.ts";
import {
  api,
  type ApiResult,
  hotp,
  HOTP_KEY_HEX,
  initialAdminPassword,
  login,
  startNode,
} from "./_node.ts";

/** The node's statement timeout, on SQLite its busy timeout (the wait for another's lock). */
const STATEMENT_TIMEOUT_MS = 1_000;
/**
 * How long the other process holds the lock: beyond the busy timeout of the
 * request's write (which may start a little late on a loaded machine), short
 * enough that the node's audit writes get the lock soon after.
 */
const HOLD_MS = STATEMENT_TIMEOUT_MS + 2_000;

Deno.test({
  name: "a SQLite node answers 503 while another process holds the write lock too long",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "tessera-mn-" });
    // the test names its requests (X-Request-ID), which a node takes from a trusted proxy only
    const node = await startNode({
      dataDir: dir,
      env: {
        TESSERA_STORAGE_STATEMENT_TIMEOUT: String(STATEMENT_TIMEOUT_MS),
        TESSERA_SERVER_TRUSTED_PROXIES: "127.0.0.1",
      },
    });
    const other = new DatabaseSync(`${dir}/tessera.sqlite`);
    let release: Promise<void> | undefined;
    try {
      const jwt = await login(node, "admin", await initialAdminPassword(dir));
      const ok = (res: ApiResult) => assert.equal(res.status, 200, JSON.stringify(res.body));
      const map = JSON.stringify({ userid: "id", username: "username", password: "password" });
      const resolver = {
        type: "sqlresolver",
        Database: `${dir}/people.sqlite`,
        Table: "users",
        Editable: "1",
        Map: map,
      };
      ok(await api(node, "POST", "/resolver/people", { jwt, params: resolver }));
      ok(await api(node, "POST", "/realm/staff", { jwt, params: { resolvers: "people" } }));
      const alice = { user: "alice", resolver: "people", password: "Alice-Pass-1" };
      ok(await api(node, "POST", "/user/", { jwt, params: alice }));
      const serial = "MNLOCKED01";
      const enrol = {
        type: "hotp",
        otpkey: HOTP_KEY_HEX,
        genkey: "0",
        serial,
        user: "alice",
        realm: "staff",
      };
      ok(await api(node, "POST", "/token/init", { jwt, params: enrol }));

      other.exec("begin immediate");
      release = new Promise<void>((r) => setTimeout(r, HOLD_MS)).then(() => other.exec("rollback"));
      const pass = hotp(HOTP_KEY_HEX, 0);
      // by user: the request names no token, the node finds it
      const locked = await api(node, "POST", "/validate/check", {
        params: { user: "alice", realm: "staff", pass },
        headers: { "x-request-id": "locked-check" },
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
      // the node waited for the lock (the statement timeout) before it gave up, and not longer
      // than that and a little (the 503's own audit row does not hold the answer)
      assert.ok(
        locked.ms > STATEMENT_TIMEOUT_MS - 200 && locked.ms < 2 * STATEMENT_TIMEOUT_MS + 500,
        `answered after ${Math.round(locked.ms)} ms; ${log}`,
      );

      await release;
      const retried = await api(node, "POST", "/validate/check", {
        params: { user: "alice", realm: "staff", pass },
      });
      ok(retried);
      assert.equal(retried.body.result.value, true, "the OTP refused during the lock is unused");

      // the 503's audit row, written once the lock is gone: a failure, about alice's token
      const row = other.prepare("select success, serial, user from audit where request_id = ?");
      const deadline = Date.now() + 10_000;
      let audited = row.get("locked-check");
      while (audited === undefined && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        audited = row.get("locked-check");
      }
      assert.deepEqual(
        audited && { ...audited },
        { success: 0, serial, user: "alice" },
        `the 503's audit row; ${log}`,
      );
    } finally {
      await release;
      other.close();
      await node.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
