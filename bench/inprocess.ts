/**
 * Where a request's time goes, without HTTP, wrk or other processes: builds
 * the app in this process on a file database (signing off), enrols through
 * the API (app.request), then sends each scenario's requests one at a time
 * and reports wall-clock µs per request, the process's CPU µs per request
 * (user + system; steadier than wall-clock on a loaded machine) and SQL
 * statements per request (by kind). A plain Hono hello in the same process
 * is the reference.
 *
 * Run: deno run -A bench/inprocess.ts [requests per scenario] [scenario name filter] [--profile] [--sql]
 *      [--postgres]
 * (--profile: a V8 CPU profile of each measured loop only, summarised by function;
 * --sql: print the statements of one request per scenario (SQLite) or the statements of the
 * measured loop with their calls and time (PostgreSQL);
 * --postgres: the database is a private PostgreSQL cluster the benchmark starts and stops;
 * statements and transactions are counted by the server itself (pg_stat_statements,
 * pg_stat_database; bench/lib/pg_stats.ts, which waits ~10 s before and after each measured
 * loop for the transaction counts), its CPU is that of all its processes)
 *
 * @module
 */
import { Hono } from "hono";
import { Kysely, SqliteDialect } from "kysely";
import { NodeSqliteDatabase } from "../src/db/sqlite_adapter.ts";
import type { Database } from "../src/db/schema.ts";
import { attachDirect } from "../src/db/direct.ts";
import { type Checkpointer, startCheckpointer } from "../src/db/sqlite_checkpoint.ts";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { openRuntime } from "../src/runtime.ts";
import { createLogger } from "../src/lib/logger.ts";
import { ensureInitialAdmin } from "../src/domain/admin/mod.ts";
import { AuditWriter } from "../src/domain/audit/mod.ts";
import { createResponseSigner, generateSigningKeyPem } from "../src/domain/signing/mod.ts";
import { Api } from "./lib/api.ts";
import { enrol, type OtpUser, validateBody } from "./lib/enrol.ts";
import { hotpSequence } from "./lib/otp.ts";
import { percentile } from "./lib/stats.ts";
import { type CpuProfile, type ProfileRow, summarize } from "./profile_summary.ts";
import { Session } from "node:inspector/promises";
import { cpuUsage } from "node:process";
import { startBenchCluster } from "./lib/postgres.ts";
import { perRequest, PgCounter, STATEMENT_COUNTING_SETTINGS } from "./lib/pg_stats.ts";

/**
 * Counts every statement of a connection by its first word and sums the time
 * SQLite spends executing them (precompiled statements and the write group's
 * begin/commit included; Kysely's query building is not part of it).
 */
class StatementCounter {
  counts = new Map<string, number>();
  execMs = 0;
  /** Per statement text: executions and ms (for --sql). */
  byStatement = new Map<string, { n: number; ms: number }>();
  /** When set, statements are also collected here (for --sql). */
  trace?: string[];
  constructor(readonly inner: NodeSqliteDatabase) {
    inner.observe = (sqlText, ms) => this.#seen(sqlText, ms);
  }
  #seen(sqlText: string, ms: number): void {
    this.trace?.push(sqlText);
    const verb = (sqlText.trimStart().match(/^\w+/)?.[0] ?? "?").toLowerCase();
    this.counts.set(verb, (this.counts.get(verb) ?? 0) + 1);
    this.execMs += ms;
    const e = this.byStatement.get(sqlText);
    if (e) {
      e.n++;
      e.ms += ms;
    } else this.byStatement.set(sqlText, { n: 1, ms });
  }
  take(): {
    counts: Map<string, number>;
    sqlMs: number;
    byStatement: Map<string, { n: number; ms: number }>;
  } {
    const out = { counts: this.counts, sqlMs: this.execMs, byStatement: this.byStatement };
    this.counts = new Map();
    this.byStatement = new Map();
    this.execMs = 0;
    return out;
  }
}

/** What a {@link PgCounter} counted, in the shape of {@link sqliteTake}'s answer (totals). */
async function pgTake(c: PgCounter, requests: number) {
  const sample = await c.take();
  const work = perRequest(sample, requests);
  const counts = new Map<string, number>(
    Object.entries(work.statements).map(([kind, per]) => [kind, Math.round(per * requests)]),
  );
  counts.set("commits", sample.commits);
  if (sample.rollbacks > 0) counts.set("rollbacks", sample.rollbacks);
  const byStatement = new Map(
    sample.statements.map((r) => [r.query, { n: r.calls, ms: r.totalExecMs }]),
  );
  return { counts, execMs: work.totals.execMs, cpuMs: sample.cpuMs, byStatement };
}

/** What a {@link StatementCounter} counted, in the shape of {@link pgTake}'s. */
function sqliteTake(c: StatementCounter) {
  const { counts, sqlMs, byStatement } = c.take();
  return { counts, execMs: sqlMs, byStatement, cpuMs: undefined as number | undefined };
}

const flags = Deno.args.filter((a) => a.startsWith("--"));
const positional = Deno.args.filter((a) => !a.startsWith("--"));
const N = Number(positional[0] ?? 1000);
const only = positional[1];
const profiling = flags.includes("--profile");
const showSql = flags.includes("--sql");
const inspector = profiling ? new Session() : undefined;
if (inspector) {
  inspector.connect();
  await inspector.post("Profiler.enable");
  await inspector.post("Profiler.setSamplingInterval", { interval: 500 });
}
const onPostgres = flags.includes("--postgres");
const dir = await Deno.makeTempDir({ prefix: "tessera-inprocess-" });
const cluster = onPostgres
  ? await startBenchCluster({ settings: STATEMENT_COUNTING_SETTINGS })
  : undefined;
const PG_DB = "tessera_inprocess";
const config = loadConfig({
  env: {
    TESSERA_SIGNING_ENABLED: "false",
    ...(cluster ? { TESSERA_STORAGE_DATABASE_URL: await cluster.createDatabase(PG_DB) } : {}),
  },
  overrides: { dataDir: dir },
});
const deps = await openRuntime(config, createLogger("warn"));
let counter: StatementCounter | undefined;
let checkpointer: Checkpointer | undefined;
let pgCounter: PgCounter | undefined;
if (cluster) {
  pgCounter = new PgCounter(cluster, PG_DB);
  await pgCounter.open();
} else {
  // a second connection to the same file, counted (the audit writer keeps the first)
  const counted = new NodeSqliteDatabase(config.storage.databaseUrl.replace(/^sqlite:/, ""), {
    hotPathTables: true,
  });
  counter = new StatementCounter(counted);
  // as the server does (serve): the WAL is checkpointed once a second, not in the commits
  checkpointer = startCheckpointer(counted.raw);
  deps.db = new Kysely<Database>({ dialect: new SqliteDialect({ database: counted }) });
  attachDirect(deps.db, counted.direct);
  // as in the server, the audit writer shares the request's connection (another connection's
  // commits would empty this connection's page cache before every request)
  await deps.audit.flush();
  deps.audit = new AuditWriter(deps.db, createLogger("warn"));
}
const password = (await ensureInitialAdmin(deps))!;
const app = createApp(deps);
const api = new Api("http://bench.local", (url, init) => Promise.resolve(app.request(url, init)));
await api.login("admin", password);
const e = await enrol(api, { users: 50, tokens: 200, progress: (m) => console.error(m) });
await deps.audit.flush();
counter?.take();

const hello = new Hono();
hello.get("*", (c) => c.text("hello"));

interface Row {
  name: string;
  meanUs: number;
  p50Us: number;
  p99Us: number;
  /** CPU µs (user + system) of the whole process per request. */
  cpuUs: number;
  /** µs per request the database spent executing statements. */
  sqlUs: number;
  /** PostgreSQL: CPU µs of the cluster's processes per request. */
  dbCpuUs?: number;
  queries: string;
}
const rows: Row[] = [];

/**
 * A scenario's requests: `prepare(i)` makes request i's body (the client's own work, e.g. its
 * OTP) before any timing starts, in the order the requests are sent; `send` sends it.
 */
interface Scenario<T> {
  prepare?: (i: number) => T;
  send: (i: number, prepared: T) => Promise<Response> | Response;
}

async function measure<T>(
  name: string,
  n: number,
  scenario: Scenario<T> | ((i: number) => Promise<Response> | Response),
): Promise<void> {
  if (only && !name.includes(only)) return;
  const { prepare, send: sendPrepared } = typeof scenario === "function"
    ? { prepare: undefined, send: scenario }
    : scenario;
  const warmUp = Math.min(50, n);
  // the order of sending: warm-up, the --sql sample, the measured loop (an OTP counter moves
  // in this order)
  const order = [...Array(warmUp).keys(), ...(showSql && counter ? [n + 100] : [])];
  for (let i = 0; i < n; i++) order.push(i + 50);
  const prepared = new Map<number, T>();
  if (prepare) { for (const i of order) prepared.set(i, prepare(i)); }
  const send = (i: number) => sendPrepared(i, prepared.get(i) as T);
  for (let i = 0; i < warmUp; i++) await (await send(i)).arrayBuffer(); // warm-up
  await deps.audit.flush();
  if (showSql && counter) {
    counter.trace = [];
    await (await send(n + 100)).arrayBuffer();
    console.error(`--- SQL of one "${name}" request:\n  ${counter.trace.join("\n  ")}`);
    counter.trace = undefined;
  }
  counter?.take();
  await pgCounter?.start();
  const times: number[] = [];
  if (inspector) await inspector.post("Profiler.start");
  const cpu0 = cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await (await send(i + 50)).arrayBuffer();
    times.push((performance.now() - s) * 1000);
  }
  await deps.audit.flush();
  const total = (performance.now() - t0) * 1000;
  const cpu = cpuUsage(cpu0);
  if (inspector) {
    const { profile } = await inspector.post("Profiler.stop") as { profile: CpuProfile };
    printProfile(name, profile, n);
  }
  const q = counter ? sqliteTake(counter) : await pgTake(pgCounter!, n);
  if (showSql) {
    const lines = [...q.byStatement].sort((a, b) => b[1].ms - a[1].ms).map(([text, v]) =>
      `  ${((v.ms * 1000) / v.n).toFixed(1).padStart(7)} µs × ${(v.n / n).toFixed(2)}/req  ${
        text.replace(/\s+/g, " ").slice(0, 110)
      }`
    );
    console.error(`--- SQL time per statement in "${name}":\n${lines.join("\n")}`);
  }
  rows.push({
    name,
    meanUs: total / n,
    p50Us: percentile(times, 50)!,
    p99Us: percentile(times, 99)!,
    cpuUs: (cpu.user + cpu.system) / n,
    sqlUs: (q.execMs * 1000) / n,
    dbCpuUs: q.cpuMs === undefined ? undefined : (q.cpuMs * 1000) / n,
    queries: [...q.counts].map(([k, v]) => `${k} ${(v / n).toFixed(2)}`).join(", "),
  });
  console.error(`${name}: ${(total / n).toFixed(0)} µs/request`);
}

function printProfile(name: string, profile: CpuProfile, requests: number): void {
  const s = summarize(profile);
  const idle = s.functions.find((r) => r.name.startsWith("(idle)"))?.selfMs ?? 0;
  const busy = s.totalMs - idle;
  const real = (r: ProfileRow) => !/^\((idle|root|program)\)/.test(r.name);
  const us = (ms: number) => ((ms * 1000) / requests).toFixed(0).padStart(6);
  const fmt = (r: ProfileRow) =>
    `  self ${us(r.selfMs)} µs ${((r.selfMs / busy) * 100).toFixed(1).padStart(5)}%  incl ${
      us(r.totalMs)
    } µs ${((r.totalMs / busy) * 100).toFixed(1).padStart(5)}%  ${r.name}`;
  console.error(
    [
      `--- profile of "${name}": ${busy.toFixed(0)} ms busy on the JS thread, ${
        us(busy).trim()
      } µs per request (sampling adds some)`,
      " by file (self):",
      ...s.files.slice(0, 12).map(fmt),
      " by function (self):",
      ...s.functions.filter(real).slice(0, 25).map(fmt),
      " by function (inclusive):",
      ...[...s.functions].filter(real).sort((a, b) => b.totalMs - a.totalMs).slice(0, 40)
        .map(fmt),
    ].join("\n"),
  );
}

const form = (body: string, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  body,
});
// the client's OTPs are computed before the timed loop: the figures are the server's alone
const hotpReq = (users: OtpUser[], headers?: Record<string, string>): Scenario<string> => ({
  prepare: (i) => {
    const u = users[i % users.length];
    return validateBody(u, e.byUser) + hotpSequence(u.key, u.next++, 1);
  },
  send: (_i, body) => app.request("/validate/check", form(body, headers)),
});

await measure("hello (plain Hono, same process)", N, () => hello.request("/"));
await measure("healthz (Tessera middleware + envelope)", N, () => app.request("/healthz/"));
await measure("hotp", N, hotpReq(e.hotp));
// a client component's User-Agent: the subscription meter runs (no subscription, free tier)
await measure(
  "hotp, metered client (privacyidea-cp)",
  N,
  hotpReq(e.hotp, { "user-agent": "privacyidea-cp/2.0 Windows/Laptop" }),
);
await measure("wrong", N, (i) => {
  const u = e.wrong[i % e.wrong.length];
  return app.request("/validate/check", form(validateBody(u, e.byUser) + u.wrong));
});
await measure("unknown", N, (i) =>
  app.request(
    "/validate/check",
    form(`user=${e.unknown[i % e.unknown.length]}&realm=${e.realm}&pass=4711123456`),
  ));
await measure(
  "spass",
  N,
  (i) => app.request("/validate/check", form(validateBody(e.spass[i % e.spass.length], e.byUser))),
);
await measure("tokenlist", N, (i) =>
  app.request(`/token/?pagesize=15&page=${(i % 13) + 1}`, {
    headers: { "PI-Authorization": api.jwt! },
  }));
await measure(
  "auth",
  Math.min(N, 20),
  () => app.request("/auth", form(`username=admin&password=${encodeURIComponent(password)}`)),
);
deps.signer = await createResponseSigner(generateSigningKeyPem());
await measure("signed hotp", Math.min(N, 300), hotpReq(e.hotp));

console.log(
  `In-process, one request at a time, ${N} requests per scenario (signing off unless named)`,
);
console.log(
  "scenario                                   mean µs   p50 µs   p99 µs   CPU µs   SQL µs" +
    (cluster ? "  PG CPU µs" : "") + "  statements per request",
);
for (const r of rows) {
  console.log(
    `${r.name.padEnd(42)} ${r.meanUs.toFixed(0).padStart(7)} ${r.p50Us.toFixed(0).padStart(8)} ${
      r.p99Us.toFixed(0).padStart(8)
    } ${r.cpuUs.toFixed(0).padStart(8)} ${r.sqlUs.toFixed(0).padStart(8)}${
      cluster ? (r.dbCpuUs ?? 0).toFixed(0).padStart(11) : ""
    }  ${r.queries}`,
  );
}
if (cluster) {
  console.log(
    "(database: PostgreSQL. CPU µs: this process's user + system time per request, all threads;",
  );
  console.log(
    " SQL µs: PostgreSQL's execution time of the statements; PG CPU µs: CPU time of all its",
  );
  console.log(
    " processes; statements from pg_stat_statements, commits from pg_stat_database, per request)",
  );
} else {
  console.log(
    "(CPU µs: the process's user + system time per request, all threads; SQL µs: time SQLite",
  );
  console.log(" spent executing the statements, per request, the audit rows included)");
}
await deps.audit.flush();
checkpointer?.stop();
await deps.db.destroy();
await pgCounter?.close();
await cluster?.stop();
await Deno.remove(dir, { recursive: true });
