/**
 * What PostgreSQL itself counts for one benchmark database: statements by
 * kind and their execution time (pg_stat_statements), transactions
 * (pg_stat_database) and the CPU time of the cluster's processes; and the
 * per-request figures made from them (pure). Used by bench/run.ts (wrk) and
 * bench/inprocess.ts.
 *
 * @module
 */
import { existsSync } from "node:fs";
import pg from "pg";
import { pgBinDir } from "../../tests/pg_cluster.ts";
import { type BenchCluster, startBenchCluster } from "./postgres.ts";

/** Server settings that load pg_stat_statements and count nested statements too. */
export const STATEMENT_COUNTING_SETTINGS = [
  "shared_preload_libraries=pg_stat_statements",
  "pg_stat_statements.track=all",
];

/**
 * How long to wait before reading the transaction counts. pg_stat_statements
 * counts at once, but each backend sends its transaction counts to the shared
 * statistics at most once a second and, when it then goes idle, only after
 * PGSTAT_IDLE_INTERVAL (10 s, PostgreSQL 15+): read earlier, the last second of
 * every connection is missing.
 */
export const STATS_SETTLE_MS = 10_500;

/** One row of pg_stat_statements. */
export interface StatementRow {
  query: string;
  calls: number;
  totalExecMs: number;
}

/** What PostgreSQL counted between {@link PgCounter.start} and {@link PgCounter.take}. */
export interface PgSample {
  statements: StatementRow[];
  commits: number;
  rollbacks: number;
  /** CPU ms of the cluster's processes, when readable. */
  cpuMs?: number;
}

/** PostgreSQL's work per answered request of a measured run. */
export interface PgWork {
  /** Answered requests the figures are divided by. */
  requests: number;
  /** Requests sent (≥ requests: the rest were in flight at the end; the server may have done them). */
  sent: number;
  /** Statements per request by kind (first word, lower case: select, insert, begin, commit…). */
  statements: Record<string, number>;
  statementsPerRequest: number;
  /** Committed transactions per request (pg_stat_database.xact_commit). */
  commitsPerRequest: number;
  rollbacksPerRequest: number;
  /** PostgreSQL's execution time of the statements per request, µs. */
  execUsPerRequest: number;
  /** The counts themselves, over the measured run. */
  totals: { statements: number; commits: number; rollbacks: number; execMs: number };
}

/** The kind of a statement: its first word, lower case, after comments and parentheses. */
export function statementKind(query: string): string {
  const rest = query.replace(/^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/|\()*/, "");
  return rest.match(/^[A-Za-z_]+/)?.[0].toLowerCase() ?? "?";
}

/** The order kinds are listed in: the data statements, the transaction ones, then the rest. */
const KIND_ORDER = ["select", "insert", "update", "delete", "with", "begin", "commit", "rollback"];

/** Per-request figures of `sample` over `requests` answered (`sent` sent) requests. */
export function perRequest(sample: PgSample, requests: number, sent = requests): PgWork {
  const byKind = new Map<string, number>();
  let total = 0;
  let execMs = 0;
  for (const s of sample.statements) {
    const kind = statementKind(s.query);
    byKind.set(kind, (byKind.get(kind) ?? 0) + s.calls);
    total += s.calls;
    execMs += s.totalExecMs;
  }
  const rank = (k: string) => {
    const i = KIND_ORDER.indexOf(k);
    return i < 0 ? KIND_ORDER.length : i;
  };
  const kinds = [...byKind.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const per = (n: number) => (requests > 0 ? n / requests : 0);
  return {
    requests,
    sent,
    statements: Object.fromEntries(kinds.map((k) => [k, per(byKind.get(k)!)])),
    statementsPerRequest: per(total),
    commitsPerRequest: per(sample.commits),
    rollbacksPerRequest: per(sample.rollbacks),
    execUsPerRequest: per(execMs * 1000),
    totals: { statements: total, commits: sample.commits, rollbacks: sample.rollbacks, execMs },
  };
}

/** "select 2.00, update 1.00, begin 1.00, commit 1.00". */
export function kindsText(w: PgWork): string {
  return Object.entries(w.statements).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ");
}

/**
 * At most one transaction per request, at the two decimals shown? Judged on
 * the commits over the requests sent (the server did at most those), so the
 * requests still in flight at the end cannot turn one transaction per request
 * into a miss, and neither can the odd transaction an idle session runs on its
 * own (PostgreSQL catches up on catalogue changes in one).
 */
export function isOneTransaction(w: PgWork): boolean {
  const handled = Math.max(w.sent, w.requests);
  return handled > 0 && Math.round((w.totals.commits / handled) * 100) <= 100;
}

/**
 * Counts PostgreSQL's work for database `dbName` of `cluster`, read through a
 * connection to the `postgres` database (whose own statements are not counted).
 */
export class PgCounter {
  #client: pg.Client;
  #cpu0 = 0;
  #commits0 = 0;
  #rollbacks0 = 0;
  constructor(
    readonly cluster: BenchCluster,
    readonly dbName: string,
    readonly settleMs = STATS_SETTLE_MS,
  ) {
    this.#client = new pg.Client({ connectionString: cluster.cluster.url });
  }

  /** Connects and creates the extension (the cluster must preload its library). */
  async open(): Promise<void> {
    await this.#client.connect();
    await this.#client.query("create extension if not exists pg_stat_statements");
  }

  async #transactions(): Promise<{ commits: number; rollbacks: number }> {
    // a transaction's statistics are a snapshot: clear it to see new counts
    await this.#client.query("select pg_stat_clear_snapshot()");
    const { rows } = await this.#client.query(
      "select xact_commit, xact_rollback from pg_stat_database where datname = $1",
      [this.dbName],
    );
    return { commits: Number(rows[0].xact_commit), rollbacks: Number(rows[0].xact_rollback) };
  }

  #settle(): Promise<void> {
    return new Promise((r) => setTimeout(r, this.settleMs));
  }

  /** Waits until the work so far is in the statistics, then starts counting from zero. */
  async start(): Promise<void> {
    await this.#settle();
    await this.#client.query("select pg_stat_statements_reset()");
    const t = await this.#transactions();
    this.#commits0 = t.commits;
    this.#rollbacks0 = t.rollbacks;
    this.#cpu0 = this.cluster.cpuSeconds() ?? 0;
  }

  /** Waits until the work so far is in the statistics and returns what was counted since {@link start}. */
  async take(): Promise<PgSample> {
    const cpu = this.cluster.cpuSeconds();
    await this.#settle();
    const { rows } = await this.#client.query(
      `select query, calls, total_exec_time from pg_stat_statements s
       join pg_database d on d.oid = s.dbid where d.datname = $1`,
      [this.dbName],
    );
    const t = await this.#transactions();
    return {
      statements: rows.map((r) => ({
        query: String(r.query),
        calls: Number(r.calls),
        totalExecMs: Number(r.total_exec_time),
      })),
      commits: t.commits - this.#commits0,
      rollbacks: t.rollbacks - this.#rollbacks0,
      cpuMs: cpu === undefined ? undefined : (cpu - this.#cpu0) * 1000,
    };
  }

  async close(): Promise<void> {
    await this.#client.end();
  }
}

/** The benchmark's cluster, with statement counting when PostgreSQL has the extension. */
export interface CountingCluster {
  cluster: BenchCluster;
  /** pg_stat_statements is loaded: {@link PgCounter} works. */
  counting: boolean;
  /** Why it is not, when it is not. */
  note?: string;
}

/**
 * Starts the benchmark's cluster with pg_stat_statements loaded; without it
 * (library not installed, or the server refused to start with it) the
 * cluster runs as before and `note` says why nothing is counted.
 */
export async function startCountingCluster(): Promise<CountingCluster> {
  const bin = pgBinDir();
  const library = bin === undefined ? undefined : `${bin}/../lib/pg_stat_statements.so`;
  if (library !== undefined && !existsSync(library)) {
    return {
      cluster: await startBenchCluster(),
      counting: false,
      note: `PostgreSQL statements and transactions not counted: no ${library} ` +
        "(Debian: the postgresql-contrib files of the server's version)",
    };
  }
  try {
    return {
      cluster: await startBenchCluster({ settings: STATEMENT_COUNTING_SETTINGS }),
      counting: true,
    };
  } catch (err) {
    return {
      cluster: await startBenchCluster(),
      counting: false,
      note: "PostgreSQL statements and transactions not counted: the server did not start " +
        `with pg_stat_statements (${(err as Error).message.split("\n")[0].slice(0, 200)})`,
    };
  }
}
