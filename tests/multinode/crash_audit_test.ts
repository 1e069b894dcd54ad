/**
 * A Tessera process killed with SIGKILL under concurrent checks, then started
 * again on the same data: every answered success has its audit row, and no
 * OTP it accepted is accepted again (on the run's engine: a SQLite file, or a
 * fresh PostgreSQL database).
 *
 * @module
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import { openTestDatabase, TEST_ENGINE } from "../test_db.ts";
import {
  api,
  hotp,
  HOTP_KEY_HEX,
  initialAdminPassword,
  login,
  type NodeSetup,
  startNode,
  type TesseraNode,
} from "./_node.ts";

const CLIENTS = 16;
/** The kill comes once this many checks were answered with a success. */
const SUCCESSES_BEFORE_KILL = 400;

interface Sent {
  serial: string;
  counter: number;
  requestId: string;
  /** true/false: the answer's value; undefined: no answer (in flight at the kill). */
  value?: boolean;
}

/** The audit rows of the load: request id → success (1/0). */
async function auditRows(url: string): Promise<Map<string, number>> {
  const db = openDatabase(url, { poolSize: 1 });
  try {
    const rows = await sql<{ request_id: string; success: number }>`
      select request_id, success from audit where request_id like 'crash-%'
    `.execute(db);
    return new Map(rows.rows.map((r) => [r.request_id, Number(r.success)]));
  } finally {
    await db.destroy();
  }
}

Deno.test({
  name: "after SIGKILL under load every answered success has its audit row and no OTP is reused",
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "tessera-crash-" });
    const database = TEST_ENGINE === "postgres" ? await openTestDatabase() : undefined;
    // the test database's own handle is not needed: the nodes migrate and use it
    await database?.db.destroy();
    const url = database?.url ?? `sqlite:${dir}/tessera.sqlite`;
    // the test names its requests (X-Request-ID), which a node takes from a trusted proxy only
    const env = { TESSERA_SERVER_TRUSTED_PROXIES: "127.0.0.1" };
    const setup: NodeSetup = { dataDir: dir, databaseUrl: url, env };
    let node: TesseraNode | undefined;
    try {
      node = await startNode(setup);
      const jwt = await login(node, "admin", await initialAdminPassword(dir));
      const serials = Array.from({ length: CLIENTS }, (_, i) => `MNCRASH${i}`);
      for (const serial of serials) {
        const params = { type: "hotp", otpkey: HOTP_KEY_HEX, genkey: "0", serial };
        assert.equal((await api(node, "POST", "/token/init", { jwt, params })).status, 200);
      }
      const sent: Sent[] = [];
      let successes = 0;
      let isKilled = false;
      const first = node;
      const client = async (serial: string) => {
        for (let counter = 0; !isKilled; counter++) {
          const s: Sent = { serial, counter, requestId: `crash-${serial}-${counter}` };
          sent.push(s);
          try {
            const res = await api(first, "POST", "/validate/check", {
              params: { serial, pass: hotp(HOTP_KEY_HEX, counter) },
              headers: { "x-request-id": s.requestId },
            });
            if (res.status !== 200) continue;
            s.value = res.body.result.value;
            if (s.value === true && ++successes === SUCCESSES_BEFORE_KILL) {
              isKilled = true;
              Deno.kill(first.pid, "SIGKILL");
            }
          } catch {
            // the connection died with the process: no answer
            return;
          }
        }
      };
      await Promise.all(serials.map(client));
      const status = await first.exited;
      assert.equal(status.signal, "SIGKILL", first.output());
      const answered = sent.filter((s) => s.value === true);
      assert.ok(answered.length >= SUCCESSES_BEFORE_KILL, `${answered.length} successes`);

      node = await startNode(setup);
      const rows = await auditRows(url);
      const missing = answered.filter((s) => rows.get(s.requestId) !== 1);
      assert.deepEqual(
        missing.map((s) => s.requestId),
        [],
        `${missing.length} of ${answered.length} answered successes have no success row ` +
          `(${rows.size} rows of the load in the audit)`,
      );
      // each OTP again, on the restarted node: an accepted one is refused as used, and one
      // whose first request got no answer succeeds now only if that request left no success
      let replayed = 0;
      for (const s of sent) {
        const res = await api(node, "POST", "/validate/check", {
          params: { serial: s.serial, pass: hotp(HOTP_KEY_HEX, s.counter) },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const value = res.body.result.value;
        if (s.value === true) assert.equal(value, false, `${s.requestId} accepted again`);
        if (s.value === undefined && value === true) {
          replayed++;
          assert.notEqual(rows.get(s.requestId), 1, `${s.requestId}: audited success, reused`);
        }
      }
      // an unanswered check that committed moved the counter past the later replays
      assert.ok(replayed <= CLIENTS, `${replayed} unanswered OTPs accepted on replay`);
    } finally {
      if (node) await node.stop();
      await database?.drop().catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
