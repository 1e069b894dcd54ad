/**
 * Two Tessera processes on one SQLite file under load lose no audit row,
 * counted in the file after both stopped gracefully (the SQLite run only).
 *
 * @module
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { TEST_ENGINE } from "../test_db.ts";
import { api, type ApiOptions, hotp, HOTP_KEY_HEX } from "./_node.ts";
import { startPair } from "./_scenarios.ts";

const REQUESTS = 2_000;
const IN_FLIGHT_PER_NODE = 16;

Deno.test({
  name: "two processes on one SQLite file write one audit row per request under load",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const pair = await startPair("sqlite");
    let stopped = false;
    try {
      const [a, b] = pair.nodes;
      const jwt = pair.adminJwt;
      const serial = `MNAUDIT${crypto.randomUUID().slice(0, 6).toUpperCase()}`;
      const enrol = { type: "hotp", otpkey: HOTP_KEY_HEX, genkey: "0", serial };
      assert.equal((await api(a, "POST", "/token/init", { jwt, params: enrol })).status, 200);
      // every request of the load carries this user agent: the rows to count
      const agent = `multinode-audit-${crypto.randomUUID()}`;
      const headers = { "user-agent": agent };
      const kinds: [string, string, ApiOptions][] = [
        // writes: the fail counter moves (and stops at max_failcount; the row is still due)
        ["POST", "/validate/check", { headers, params: { serial, pass: "000000" } }],
        ["POST", "/validate/check", { headers, params: { serial, pass: hotp(HOTP_KEY_HEX, 0) } }],
        ["GET", "/token/", { headers, jwt }],
        ["GET", "/system/", { headers }],
      ];
      let next = 0;
      const statuses = new Map<number, number>();
      const worker = async (node: typeof a) => {
        while (next < REQUESTS) {
          const [method, path, options] = kinds[next++ % kinds.length];
          const res = await api(node, method, path, options);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }
      };
      await Promise.all(
        Array.from({ length: 2 * IN_FLIGHT_PER_NODE }, (_, i) => worker(i % 2 === 0 ? a : b)),
      );
      assert.equal([...statuses.values()].reduce((x, y) => x + y, 0), REQUESTS);
      const exits = await Promise.all(pair.nodes.map((n) => n.stop()));
      stopped = true;
      const logs = pair.nodes.map((n) => n.output()).join("\n");
      assert.deepEqual(
        exits.map((s) => s.signal),
        [null, null],
        `not stopped gracefully:\n${logs}`,
      );
      const file = new DatabaseSync(`${pair.setups[0].dataDir}/tessera.sqlite`, { readOnly: true });
      let rows: number;
      try {
        const row = file.prepare("select count(*) as n from audit where user_agent = ?").get(agent);
        rows = Number(row!.n);
      } finally {
        file.close();
      }
      const lost = logs.split("\n").filter((l) => /audit/i.test(l) && / (ERROR|WARN) /.test(l));
      assert.equal(
        rows,
        REQUESTS,
        `audit rows for ${REQUESTS} requests (statuses ${JSON.stringify([...statuses])}); ` +
          `audit problems logged:\n${lost.slice(0, 5).join("\n")}`,
      );
    } finally {
      if (!stopped) await Promise.all(pair.nodes.map((n) => n.stop()));
      await pair.close();
    }
  },
});
