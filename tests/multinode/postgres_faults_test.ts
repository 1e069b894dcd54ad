/**
 * Two nodes on a private PostgreSQL cluster under concurrent checks while the
 * server hangs (SIGSTOP/SIGCONT of all its processes), stops fast (SIGINT)
 * and stops immediately (SIGQUIT, a crash): answers come within the
 * statement timeout, every answer agrees with the audit, no accepted OTP is
 * accepted again, a client that retries after a 503 gets its OTP accepted,
 * and the nodes recover without a restart (the PostgreSQL run only).
 *
 * @module
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import { TEST_ENGINE } from "../test_db.ts";
import { type PgCluster, startPgCluster } from "../pg_cluster.ts";
import {
  api,
  copyKeys,
  hotp,
  HOTP_KEY_HEX,
  initialAdminPassword,
  login,
  type NodeSetup,
  startNode,
  type TesseraNode,
} from "./_node.ts";

const STATEMENT_TIMEOUT_MS = 1000;
/**
 * The longest an answer may take while the server hangs: a statement's limit
 * plus the client's margin, or a pool wait, then the 503, with room for a
 * loaded test machine. Without the limits an answer waits for the server.
 */
const ANSWER_BOUND_MS = 3 * STATEMENT_TIMEOUT_MS + 1500;
const CLIENTS = 8;
const HANG_MS = 6000;

interface Attempt {
  serial: string;
  counter: number;
  requestId: string;
  node: number;
  phase: string;
  /** HTTP status; 0 when no answer came. */
  status: number;
  value?: boolean;
  ms: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name: "two nodes under load through a hung, a stopped and a crashed PostgreSQL keep their word",
  ignore: TEST_ENGINE !== "postgres",
  sanitizeResources: false,
  async fn() {
    let cluster: PgCluster | undefined;
    const nodes: TesseraNode[] = [];
    const dirs: string[] = [];
    try {
      // as in production, a commit is in the WAL before it is answered: an immediate stop
      // (a crash of the server) loses none
      cluster = await startPgCluster({ isCrashSafe: true });
      const admin = openDatabase(cluster.url, { poolSize: 1 });
      await sql`create database faults`.execute(admin);
      await admin.destroy();
      const url = cluster.urlOf("faults");
      // the test names its requests (X-Request-ID), which a node takes from a trusted proxy only
      const env = {
        TESSERA_SERVER_TRUSTED_PROXIES: "127.0.0.1",
        TESSERA_STORAGE_STATEMENT_TIMEOUT: String(STATEMENT_TIMEOUT_MS),
      };
      for (let i = 0; i < 2; i++) dirs.push(await Deno.makeTempDir({ prefix: "tessera-faults-" }));
      const setups: NodeSetup[] = dirs.map((dataDir) => ({ dataDir, databaseUrl: url, env }));
      nodes.push(await startNode(setups[0]));
      await copyKeys(dirs[0], dirs[1]);
      nodes.push(await startNode(setups[1]));
      const jwt = await login(nodes[0], "admin", await initialAdminPassword(dirs[0]));
      const serials = Array.from({ length: CLIENTS }, (_, i) => `MNFAULT${i}`);
      for (const serial of serials) {
        const params = { type: "hotp", otpkey: HOTP_KEY_HEX, genkey: "0", serial };
        assert.equal((await api(nodes[0], "POST", "/token/init", { jwt, params })).status, 200);
      }

      const attempts: Attempt[] = [];
      let phase = "normal";
      let isRunning = true;
      const client = async (i: number) => {
        const serial = serials[i];
        let counter = 0;
        for (let n = 0; isRunning; n++) {
          // the same client alternates nodes, as behind a load balancer
          const node = (i + n) % 2;
          const a: Attempt = {
            serial,
            counter,
            requestId: `fault-${serial}-${counter}-${n}`,
            node,
            phase,
            status: 0,
            ms: 0,
          };
          attempts.push(a);
          const started = performance.now();
          try {
            const res = await api(nodes[node], "POST", "/validate/check", {
              params: { serial, pass: hotp(HOTP_KEY_HEX, counter) },
              headers: { "x-request-id": a.requestId },
              timeoutMs: 20_000,
            });
            a.status = res.status;
            a.value = res.body?.result?.value;
          } catch {
            a.status = 0;
          }
          a.ms = performance.now() - started;
          // a success moves on to the next OTP; anything else retries the same one, as a
          // client does after a 503
          if (a.status === 200 && a.value === true) counter++;
          else await sleep(50);
        }
      };
      const load = Promise.all(serials.map((_, i) => client(i)));
      const stage = async (name: string, action: () => Promise<void>, ms: number) => {
        phase = name;
        await action();
        await sleep(ms);
      };
      try {
        await sleep(700);
        await stage("hang", () => cluster!.freeze(), HANG_MS);
        await stage("after hang", () => cluster!.thaw(), 1500);
        await stage("fast stop", () => cluster!.pause(), 1000);
        await stage("after fast stop", () => cluster!.resume(), 1500);
        await stage("immediate stop", () => cluster!.crash(), 1000);
        await stage("after immediate stop", () => cluster!.resume(), 2000);
      } finally {
        isRunning = false;
        await cluster.thaw();
        await cluster.resume();
        await load;
      }

      const show = (a: Attempt) =>
        `${a.requestId} node ${a.node + 1} [${a.phase}] HTTP ${a.status} value ${a.value} ` +
        `in ${Math.round(a.ms)} ms`;
      // every request got an answer: 200, or 503 while the database was away
      const odd = attempts.filter((a) => a.status !== 200 && a.status !== 503);
      assert.deepEqual(odd.map(show), [], "answers other than 200 and 503");
      // bounded latency, also while the server hung with connections open
      const slow = attempts.filter((a) => a.ms > ANSWER_BOUND_MS);
      assert.deepEqual(slow.map(show), [], `answers slower than ${ANSWER_BOUND_MS} ms`);
      const during = attempts.filter((a) => a.phase === "hang");
      assert.ok(during.some((a) => a.status === 503), "no request saw the hang");
      // recovery without a restart: both nodes accept checks again after each fault
      for (const name of ["after hang", "after fast stop", "after immediate stop"]) {
        for (const node of [0, 1]) {
          assert.ok(
            attempts.some((a) => a.phase === name && a.node === node && a.value === true),
            `node ${node + 1} accepted nothing ${name}`,
          );
        }
      }
      // a client that retried after a 503 never found its OTP used up: the 503 changed nothing.
      // The one exception: the server stopped while it ran the check's deciding statement, and
      // the node gave up waiting for its answer ("Query read timeout"): it cannot know whether
      // that statement committed before the stop
      const logOf = (id: string) =>
        nodes.flatMap((n) => n.output().split("\n"))
          .filter((l) => l.endsWith(` request_id=${id}`) || l.includes(` request_id=${id} `));
      const unknown = new Set<string>();
      const lostIds: string[] = [];
      for (const [i, a] of attempts.entries()) {
        if (a.status !== 503) continue;
        const next = attempts.slice(i + 1).find((b) => b.serial === a.serial && b.status === 200);
        if (next === undefined || next.value === true) continue;
        assert.equal(next.counter, a.counter, `${show(a)} then ${show(next)}`);
        // the OTP was used up: only a lost answer of one of its earlier tries may have done that
        const tries = attempts.slice(0, attempts.indexOf(next))
          .filter((b) => b.serial === a.serial && b.counter === a.counter);
        const lost = tries.filter((b) =>
          b.status === 503 && logOf(b.requestId).some((l) => l.includes("Query read timeout"))
        );
        if (lost.length > 0) {
          unknown.add(`${a.serial}-${a.counter}`);
          lostIds.push(...lost.map((b) => b.requestId));
          continue;
        }
        const lines = tries.flatMap((b) => logOf(b.requestId));
        assert.fail(
          `a 503 used up its OTP: ${show(a)} then ${show(next)}; log:\n${lines.join("\n")}`,
        );
      }
      // at most one such statement per connection the server stopped under (2 nodes × 10)
      assert.ok(
        unknown.size <= 20,
        `${unknown.size} OTPs used up by a statement whose answer was lost`,
      );
      const accepted = attempts.filter((a) => a.status === 200 && a.value === true);
      assert.ok(accepted.length > 0);

      // the audit agrees with every answer; rows a node could not write during an outage are
      // written once the database is back
      const audit = openDatabase(url, { poolSize: 1 });
      try {
        let rows = new Map<string, number>();
        let infos = new Map<string, string>();
        let missing: Attempt[] = accepted;
        for (let tries = 0; tries < 50 && missing.length > 0; tries++) {
          if (tries > 0) await sleep(200);
          const res = await sql<{ request_id: string; success: number; info: string }>`
            select request_id, success, info from audit where request_id like 'fault-%'
          `.execute(audit);
          rows = new Map(res.rows.map((r) => [r.request_id, Number(r.success)]));
          infos = new Map(res.rows.map((r) => [r.request_id, r.info]));
          missing = accepted.filter((a) => rows.get(a.requestId) !== 1);
        }
        assert.deepEqual(missing.map(show), [], "answered successes without a success row");
        const contradicted = attempts.filter((a) =>
          a.status === 503 && rows.get(a.requestId) === 1
        );
        assert.deepEqual(contradicted.map(show), [], "503 answers audited as a success");
        // a 503 whose statement's answer was lost says in the audit that its outcome is unknown
        for (const id of lostIds) {
          assert.match(infos.get(id) ?? "", /whether it took effect is unknown/, id);
        }
      } finally {
        await audit.destroy();
      }

      // no accepted OTP is accepted again, on either node
      for (const [i, a] of accepted.entries()) {
        const res = await api(nodes[i % 2], "POST", "/validate/check", {
          params: { serial: a.serial, pass: hotp(HOTP_KEY_HEX, a.counter) },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.result.value, false, `${show(a)} accepted again`);
      }
      for (const node of nodes) {
        assert.equal(node.output().includes("Unhandled error"), false, node.output());
      }
    } finally {
      await cluster?.thaw();
      await cluster?.resume();
      await Promise.all(nodes.map((n) => n.stop()));
      await cluster?.stop();
      for (const dir of dirs) await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
