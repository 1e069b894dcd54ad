/**
 * The test command (`deno task test`): the whole suite on SQLite and, at the
 * same time, on a private PostgreSQL cluster (started here in a temporary
 * folder on a loopback port and stopped by process id; see pg_cluster.ts).
 * Arguments are passed to `deno test` (e.g. a file or `--filter`).
 * `--sqlite-only` / `--postgres-only` run one engine. Without PostgreSQL
 * installed the run fails with a message saying so: CI must run both.
 *
 * The last line sums both runs as `ok | N passed | M failed`.
 *
 * @module
 */
import { migrateToLatest, openDatabase } from "../src/db/database.ts";
import { sql } from "kysely";
import { startPgCluster } from "./pg_cluster.ts";

const args = [...Deno.args];
const only = (flag: string) => {
  const i = args.indexOf(flag);
  if (i >= 0) args.splice(i, 1);
  return i >= 0;
};
const sqliteOnly = only("--sqlite-only");
const postgresOnly = only("--postgres-only");
const TEMPLATE = "tessera_template";

interface Outcome {
  engine: string;
  passed: number;
  failed: number;
  success: boolean;
  /** The FAILURES/ERRORS blocks deno printed, repeated after both summaries. */
  report: string[];
}

async function runSuite(engine: string, env: Record<string, string>): Promise<Outcome> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", "--parallel", ...args],
    env: { ...env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let passed = 0;
  let failed = 0;
  const report: string[] = [];
  let inReport = false;
  const pump = async (
    stream: ReadableStream<Uint8Array<ArrayBuffer>>,
    out: (s: string) => void,
  ) => {
    let rest = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        const m = line.match(/^(?:ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed/);
        if (m) {
          passed += Number(m[1]);
          failed += Number(m[2]);
          inReport = false;
        } else if (/^ *(ERRORS|FAILURES) *$/.test(line)) {
          inReport = true;
        }
        if (inReport && report.length < 400) report.push(line);
        out(`[${engine}] ${line}`);
      }
    }
    if (rest) out(`[${engine}] ${rest}`);
  };
  const enc = new TextEncoder();
  await Promise.all([
    pump(child.stdout, (s) => Deno.stdout.writeSync(enc.encode(s + "\n"))),
    pump(child.stderr, (s) => Deno.stderr.writeSync(enc.encode(s + "\n"))),
  ]);
  const status = await child.status;
  return { engine, passed, failed, success: status.success, report };
}

const runs: Promise<Outcome>[] = [];
let stopCluster: (() => Promise<void>) | undefined;
if (!postgresOnly) runs.push(runSuite("sqlite", {}));
if (!sqliteOnly) {
  const cluster = await startPgCluster();
  stopCluster = cluster.stop;
  console.log(`[postgres] private cluster on 127.0.0.1:${cluster.port} (pid ${cluster.pid})`);
  const admin = openDatabase(cluster.url, { poolSize: 1 });
  await sql`create database ${sql.id(TEMPLATE)}`.execute(admin);
  await admin.destroy();
  const template = openDatabase(cluster.urlOf(TEMPLATE), { poolSize: 1 });
  await migrateToLatest(template);
  await template.destroy();
  runs.push(runSuite("postgres", {
    TEST_PG_URL: cluster.url,
    TEST_PG_TEMPLATE: TEMPLATE,
  }));
}
let outcomes: Outcome[];
try {
  outcomes = await Promise.all(runs);
} finally {
  await stopCluster?.();
}
// A failure of the engine that finished first would otherwise scroll far up
// the log; CI shows the tail, so the failures are repeated here.
for (const o of outcomes) {
  if (o.report.length === 0) continue;
  console.log(`\n[${o.engine}] failures, repeated:`);
  for (const line of o.report) console.log(`[${o.engine}] ${line}`);
}
for (const o of outcomes) {
  console.log(
    `${o.engine}: ${o.passed} passed, ${o.failed} failed${o.success ? "" : " (run failed)"}`,
  );
}
const passed = outcomes.reduce((n, o) => n + o.passed, 0);
const failed = outcomes.reduce((n, o) => n + o.failed, 0);
const ok = outcomes.every((o) => o.success);
console.log(`${ok ? "ok" : "FAILED"} | ${passed} passed | ${failed} failed`);
Deno.exit(ok ? 0 : 1);
