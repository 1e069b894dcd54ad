/**
 * A node whose PostgreSQL server goes away: requests are refused at once with
 * HTTP 503 in the envelope, readiness reports the outage, and the node
 * recovers by itself when the server is back (the PostgreSQL run only). The
 * test runs its own cluster: stopping the run's shared one would break the
 * other tests.
 *
 * @module
 */
import assert from "node:assert/strict";
import { CONNECT_TIMEOUT_MS } from "../../src/db/postgres.ts";
import { TEST_ENGINE } from "../test_db.ts";
import { type PgCluster, startPgCluster } from "../pg_cluster.ts";
import {
  api,
  type ApiResult,
  hotp,
  HOTP_KEY_HEX,
  initialAdminPassword,
  login,
  startNode,
  type TesseraNode,
} from "./_node.ts";

/** The longest a refused request may take while the database is down. */
const REFUSAL_MS = 3_000;
const UNAVAILABLE_MESSAGE = "The database is not available, try again later";

function show(res: ApiResult): string {
  return `HTTP ${res.status} in ${Math.round(res.ms)} ms: ${JSON.stringify(res.body)}`;
}

function assertUnavailable(res: ApiResult, what: string): void {
  assert.equal(res.status, 503, `${what}: ${show(res)}`);
  assert.equal(res.body.result.status, false, `${what}: ${show(res)}`);
  assert.equal(res.body.result.error.message, UNAVAILABLE_MESSAGE, what);
  assert.equal(res.body.result.error.code, 503, what);
  assert.equal(res.body.jsonrpc, "2.0", what);
  assert.ok(res.ms < REFUSAL_MS, `${what} took ${Math.round(res.ms)} ms`);
}

/** Listens on `port` and holds every connection without a byte of answer. */
function holdConnections(port: number): { close(): Promise<void> } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const conn of listener) held.push(conn);
    } catch { /* closed */ }
  })();
  return {
    async close() {
      listener.close();
      await accepting;
      for (const conn of held) {
        try {
          conn.close();
        } catch { /* closed by the peer */ }
      }
    },
  };
}

Deno.test({
  name: "a node answers 503 while PostgreSQL is down and recovers without a restart",
  ignore: TEST_ENGINE !== "postgres",
  async fn() {
    let cluster: PgCluster | undefined;
    let node: TesseraNode | undefined;
    const dir = await Deno.makeTempDir({ prefix: "tessera-mn-" });
    try {
      cluster = await startPgCluster();
      node = await startNode({ dataDir: dir, databaseUrl: cluster.url });
      let alive = true;
      node.exited.then(() => alive = false);
      const jwt = await login(node, "admin", await initialAdminPassword(dir));
      const serial = "MNOUTAGE01";
      const enrol = { type: "hotp", otpkey: HOTP_KEY_HEX, genkey: "0", serial };
      assert.equal((await api(node, "POST", "/token/init", { jwt, params: enrol })).status, 200);
      const check = (counter: number) =>
        api(node!, "POST", "/validate/check", {
          params: { serial, pass: hotp(HOTP_KEY_HEX, counter) },
        });
      assert.equal((await check(0)).body.result.value, true);

      await cluster.pause();
      for (let round = 0; round < 2; round++) {
        assertUnavailable(await api(node, "GET", "/token/", { jwt }), "GET /token/");
        assertUnavailable(await check(1), "POST /validate/check");
        const auth = await api(node, "POST", "/auth", {
          params: { username: "admin", password: "whatever-it-is" },
        });
        assertUnavailable(auth, "POST /auth");
        const ready = await api(node, "GET", "/healthz/readyz");
        assert.equal(ready.status, 503, `readyz: ${show(ready)}`);
        assert.equal(ready.body.result.value.status, "NOT OK");
        assert.ok(ready.ms < REFUSAL_MS, `readyz took ${Math.round(ready.ms)} ms`);
        // liveness: the process itself is fine, a restart would not help
        assert.equal((await api(node, "GET", "/healthz/livez")).status, 200);
      }

      await cluster.resume();
      assert.equal((await api(node, "GET", "/healthz/readyz")).status, 200);
      const list = await api(node, "GET", "/token/", { jwt });
      assert.equal(list.status, 200, show(list));
      // the refused checks did not use OTP 1
      const after = await check(1);
      assert.equal(after.body.result.value, true, show(after));

      // the server goes away while requests are running: each one is answered, 200 or 503
      const burst = Array.from({ length: 60 }, async (_, i): Promise<ApiResult> => {
        await new Promise((r) => setTimeout(r, i * 5));
        try {
          return i % 2 === 0
            ? await api(node!, "GET", "/token/", { jwt })
            : await api(node!, "GET", "/healthz/readyz");
        } catch (err) {
          return { status: 0, body: String(err), ms: 0 };
        }
      });
      await new Promise((r) => setTimeout(r, 100));
      await cluster.pause();
      const answers = await Promise.all(burst);
      const odd = answers.filter((a) => a.status !== 200 && a.status !== 503);
      assert.deepEqual(
        odd.map(show),
        [],
        `answers other than 200 and 503 during the outage; the node's log:\n${node.output()}`,
      );
      assert.ok(answers.some((a) => a.status === 503), "no request saw the outage");
      await cluster.resume();
      assert.equal((await api(node, "GET", "/token/", { jwt })).status, 200);

      // a server that accepts connections and never answers (a hung host, a black-holing
      // network): requests still get their 503 within seconds, not after a TCP timeout
      await cluster.pause();
      const silent = holdConnections(cluster.port);
      try {
        const [list, ready] = await Promise.all([
          api(node, "GET", "/token/", { jwt }),
          api(node, "GET", "/healthz/readyz"),
        ]);
        assert.equal(list.status, 503, `${show(list)}\n${node.output()}`);
        assert.ok(
          list.ms < CONNECT_TIMEOUT_MS + 1_500,
          `GET /token/ took ${Math.round(list.ms)} ms`,
        );
        assert.equal(ready.status, 503, show(ready));
        assert.ok(ready.ms < REFUSAL_MS, `readyz took ${Math.round(ready.ms)} ms`);
      } finally {
        await silent.close();
      }
      await cluster.resume();
      assert.equal((await api(node, "GET", "/token/", { jwt })).status, 200);
      assert.ok(alive, `the node exited:\n${node.output()}`);
    } finally {
      // a running server lets the node write its queued audit rows and stop at once
      await cluster?.resume();
      await node?.stop();
      await cluster?.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
