import assert from "node:assert/strict";
import { TEST_ENGINE } from "../test_db.ts";
import { isRunning, startTessera } from "./_server.ts";

// about processes, not the database: the SQLite run only
const SQLITE_RUN_ONLY = { ignore: TEST_ENGINE !== "sqlite" };

const WORKER_LISTEN_REGEXP =
  /Tessera listening address=127\.0\.0\.1:(\d+) version=\S+ pid=(\d+) worker=(\d+)/g;

/** The value of one series of a scrape (0 when it is not there yet). */
function valueOf(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

Deno.test(
  "serve --workers 2 with metrics: every scrape adds up both workers, back-to-back scrapes never go backwards",
  SQLITE_RUN_ONLY,
  async () => {
    const server = await startTessera(["serve", "--workers", "2", "--listen", "127.0.0.1:0"], {
      env: { TESSERA_METRICS_ENABLED: "true", TESSERA_METRICS_TOKEN: "scrape-me" },
    });
    // no idle connection is kept: each request is a new connection, which the kernel gives
    // to either worker (SO_REUSEPORT)
    const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
    try {
      let port = 0;
      const pids = new Set<number>();
      await server.waitFor(/worker=2/);
      for (;;) {
        for (const m of server.log().matchAll(WORKER_LISTEN_REGEXP)) {
          port = Number(m[1]);
          pids.add(Number(m[2]));
        }
        if (pids.size === 2) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      // the workers' sockets are in a directory only the service user can open
      const argv = Deno.readTextFileSync(`/proc/${[...pids][0]}/cmdline`).split("\0");
      const dir = argv[argv.indexOf("--metrics-dir") + 1];
      assert.match(dir, /tessera-metrics-/);
      assert.equal(Deno.statSync(dir).mode! & 0o777, 0o700);
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["1.sock", "2.sock"]);
      const base = `http://127.0.0.1:${port}`;
      const healthz = '{route="/healthz",method="GET",status="200"}';
      const scrapes = '{route="/metrics",method="GET",status="200"}';
      let previous = -1;
      for (let i = 1; i <= 40; i++) {
        const res = await fetch(`${base}/healthz/`, { client });
        assert.equal(res.status, 200);
        await res.body?.cancel();
        const scrape = await fetch(`${base}/metrics`, {
          client,
          headers: { Authorization: "Bearer scrape-me" },
        });
        assert.equal(scrape.status, 200);
        const text = await scrape.text();
        // the server's count, whichever worker answered: exactly the requests made so far
        assert.equal(valueOf(text, `tessera_http_requests_total${healthz}`), i, text);
        assert.equal(valueOf(text, "tessera_metrics_workers"), 2);
        const scraped = valueOf(text, `tessera_http_requests_total${scrapes}`);
        assert.equal(scraped, i - 1, "the scrapes before this one");
        assert.ok(scraped > previous);
        previous = scraped;
      }
      server.child.kill("SIGTERM");
      assert.equal((await server.status).code, 0, server.log());
      for (const pid of pids) assert.ok(!isRunning(pid));
      // the parent removed the workers' socket directory
      assert.throws(() => Deno.statSync(dir), Deno.errors.NotFound);
    } finally {
      client.close();
      await server.cleanup();
    }
  },
);
