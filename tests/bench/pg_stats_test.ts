import assert from "node:assert/strict";
import pg from "pg";
import {
  isOneTransaction,
  kindsText,
  perRequest,
  PgCounter,
  type PgSample,
  startCountingCluster,
  statementKind,
} from "../../bench/lib/pg_stats.ts";
import {
  type BenchReport,
  evaluateTargets,
  formatReport,
  pgWorkRows,
  scenarioResult,
} from "../../bench/lib/report.ts";
import type { WrkResult } from "../../bench/lib/stats.ts";
import { pgBinDir } from "../pg_cluster.ts";

Deno.test("statementKind: the first word, after whitespace, comments and parentheses", () => {
  assert.equal(statementKind("SELECT 1"), "select");
  assert.equal(statementKind("  \n\tupdate t set a = $1"), "update");
  assert.equal(statementKind("/* kysely */ insert into t values ($1)"), "insert");
  assert.equal(statementKind("-- a comment\nDELETE FROM t"), "delete");
  assert.equal(statementKind("(select 1) union (select 2)"), "select");
  assert.equal(statementKind("BEGIN"), "begin");
  assert.equal(statementKind("with x as (select 1) update t set a = 1"), "with");
  assert.equal(statementKind(""), "?");
  assert.equal(statementKind("$1"), "?");
});

const sample: PgSample = {
  statements: [
    { query: "select * from token where serial = $1", calls: 2000, totalExecMs: 20 },
    { query: "SELECT id FROM users WHERE login = $1", calls: 1000, totalExecMs: 5 },
    { query: "update token set count = $1 where id = $2", calls: 1000, totalExecMs: 30 },
    { query: "insert into audit (a) values ($1)", calls: 250, totalExecMs: 10 },
    { query: "COMMIT", calls: 1000, totalExecMs: 1 },
    { query: "BEGIN", calls: 1000, totalExecMs: 0.5 },
    { query: "SET lock_timeout = 5", calls: 10, totalExecMs: 0.1 },
  ],
  commits: 1010,
  rollbacks: 5,
};

Deno.test("perRequest: statements by kind, commits and execution time per answered request", () => {
  const w = perRequest(sample, 1000, 1016);
  assert.deepEqual(w.statements, {
    select: 3,
    insert: 0.25,
    update: 1,
    begin: 1,
    commit: 1,
    set: 0.01,
  });
  // the kinds in a fixed order: data statements, transaction control, the rest
  assert.deepEqual(Object.keys(w.statements), [
    "select",
    "insert",
    "update",
    "begin",
    "commit",
    "set",
  ]);
  assert.equal(w.statementsPerRequest, 6.26);
  assert.equal(w.commitsPerRequest, 1.01);
  assert.equal(w.rollbacksPerRequest, 0.005);
  assert.ok(Math.abs(w.execUsPerRequest - 66.6) < 1e-9, String(w.execUsPerRequest));
  assert.deepEqual(w.totals, { statements: 6260, commits: 1010, rollbacks: 5, execMs: 66.6 });
  assert.equal(w.requests, 1000);
  assert.equal(w.sent, 1016);
  assert.equal(
    kindsText(w),
    "select 3.00, insert 0.25, update 1.00, begin 1.00, commit 1.00, set 0.01",
  );
  const none = perRequest({ statements: [], commits: 0, rollbacks: 0 }, 0);
  assert.equal(none.commitsPerRequest, 0);
  assert.equal(none.statementsPerRequest, 0);
});

Deno.test("isOneTransaction: judged on the requests sent, at two decimals", () => {
  // 1010 commits: the server did up to 1016 requests, 1000 were answered
  assert.equal(isOneTransaction(perRequest(sample, 1000, 1016)), true);
  // 1.01 per request is more than one; 1.004 shows as 1.00
  assert.equal(isOneTransaction(perRequest(sample, 1000, 1000)), false);
  assert.equal(isOneTransaction(perRequest({ ...sample, commits: 1004 }, 1000, 1000)), true);
  assert.equal(isOneTransaction(perRequest({ ...sample, commits: 2000 }, 1000, 1016)), false);
  assert.equal(isOneTransaction(perRequest(sample, 0, 0)), false);
});

function wrk(rps: number): WrkResult {
  return {
    requests: rps * 2,
    sent: rps * 2 + 8,
    durationUs: 2e6,
    rps,
    p50Ms: 1,
    p99Ms: 5,
    meanMs: 1,
    maxMs: 9,
    statuses: { "200": rps * 2 },
    accepts: rps * 2,
    signed: 0,
    errors: { connect: 0, read: 0, write: 0, timeout: 0 },
    used: {},
    exhausted: false,
  };
}

function pgReport(commits: number): BenchReport {
  const pgRow = {
    ...scenarioResult("hotp", wrk(500), 20000),
    target: "PostgreSQL, 1 node",
    cpuUsPerRequest: 900,
    dbCpuUsPerRequest: 310,
    pg: perRequest({ ...sample, commits }, 1000, 1008),
  };
  return {
    startedAt: "2026-11-27T02:00:00.000Z",
    machine: { cpus: 2, deno: "2.9.6", wrk: "wrk 4.1.0" },
    options: { durationS: 2, warmupS: 1, connections: 16, threads: 1, users: 200, tokens: 200 },
    ceilingRps: 20000,
    results: [
      scenarioResult("hello", wrk(20000), 20000),
      { ...scenarioResult("hotp", wrk(1500), 20000), target: "SQLite, 1 node" },
      pgRow,
    ],
    tokensInDb: 200,
    checks: [],
    targets: [],
    notes: [],
  };
}

Deno.test("evaluateTargets: statements per check for information, commits per check judged", () => {
  const by = (r: BenchReport, prefix: string) =>
    evaluateTargets(r, { primary: "SQLite, 1 node" }).find((x) => x.name.startsWith(prefix))!;
  const one = pgReport(1000);
  const statements = by(one, "PostgreSQL statements per check");
  assert.equal(statements.isInfo, true);
  assert.equal(statements.met, undefined);
  assert.equal(
    statements.actual,
    "6.26 (select 3.00, insert 0.25, update 1.00, begin 1.00, commit 1.00, set 0.01; 67 µs executing)",
  );
  const commits = by(one, "PostgreSQL commits per check");
  assert.equal(commits.goal, "one transaction");
  assert.equal(commits.actual, "1.00 (+0.01 rolled back)");
  assert.equal(commits.met, true);
  const two = by(pgReport(2000), "PostgreSQL commits per check");
  assert.equal(two.actual, "2.00 (+0.01 rolled back)");
  assert.equal(two.met, false);
  // without counts (no extension, or SQLite only): not run
  const plain = pgReport(1000);
  delete plain.results[2].pg;
  assert.match(by(plain, "PostgreSQL commits per check").actual, /^not run /);
  assert.equal(by(plain, "PostgreSQL commits per check").met, undefined);
  const missed = pgReport(2000);
  const text = formatReport({ ...missed, targets: evaluateTargets(missed) });
  assert.match(text, /\[info\] PostgreSQL statements per check: 6\.26 /);
  assert.match(
    text,
    /\[MISS\] PostgreSQL commits per check: 2\.00 \(\+0\.01 rolled back\) \(goal one transaction\)/,
  );
});

Deno.test("evaluateTargets: a run on PostgreSQL alone (rows without a run label) is judged", () => {
  const r = pgReport(1000);
  const only = { ...r, results: [r.results[0], { ...r.results[2], target: undefined }] };
  const t = evaluateTargets(only, { primary: "PostgreSQL, 1 node" });
  const by = (prefix: string) => t.find((x) => x.name.startsWith(prefix))!;
  assert.equal(by("PostgreSQL CPU per check").actual, "310 µs");
  assert.equal(by("PostgreSQL commits per check").actual, "1.00 (+0.01 rolled back)");
  assert.equal(by("PostgreSQL commits per check").met, true);
  // a run on SQLite alone has no PostgreSQL figures
  const sqlite = evaluateTargets(
    { ...r, results: [{ ...r.results[1], target: undefined }] },
    { primary: "SQLite, 1 node" },
  );
  assert.match(sqlite.find((x) => x.name.startsWith("PostgreSQL CPU"))!.actual, /^not run/);
});

Deno.test("formatReport: a PostgreSQL section with the counts of every row that has them", () => {
  const r = pgReport(1000);
  assert.deepEqual(pgWorkRows(r.results), [
    ["scenario", "statements", "commits", "rollbacks", "exec µs", "by kind"],
    [
      "PostgreSQL, 1 node: hotp",
      "6.26",
      "1.00",
      "0.01",
      "67",
      "select 3.00, insert 0.25, update 1.00, begin 1.00, commit 1.00, set 0.01",
    ],
  ]);
  const text = formatReport(r);
  assert.match(
    text,
    /PostgreSQL per request \(pg_stat_statements, pg_stat_database; measured run only\):\nscenario\s+statements/,
  );
  assert.match(text, /PostgreSQL, 1 node: hotp\s+6\.26\s+1\.00\s+0\.01\s+67\s+select 3\.00/);
  const none = pgReport(1000);
  delete none.results[2].pg;
  assert.doesNotMatch(formatReport(none), /PostgreSQL per request/);
});

Deno.test({
  name: "PgCounter counts every statement and transaction of a measured phase, the last ones too",
  ignore: pgBinDir() === undefined, // Debian's postgresql package
  async fn() {
    const started = await startCountingCluster();
    let counter: PgCounter | undefined;
    try {
      assert.equal(started.counting, true, started.note ?? "");
      const url = await started.cluster.createDatabase("tessera_pg_stats_test");
      const db = new pg.Pool({ connectionString: url, max: 3 });
      try {
        await db.query(
          "create table t (id int primary key, n int) with (autovacuum_enabled = false)",
        );
        await db.query("insert into t values (1, 0)");
        counter = new PgCounter(started.cluster, "tessera_pg_stats_test");
        await counter.open();
        // work before start (a warm-up, which also opens the three connections: a session's
        // start is a transaction of its own) is not counted
        await Promise.all([0, 1, 2].map(() => db.query("select n, pg_sleep(0.05) from t")));
        await counter.start();
        // three connections busy at once, to the very end: 60 autocommitted selects and
        // 30 explicit transactions (begin, update, commit), one of them rolled back
        await Promise.all([0, 1, 2].map(async (w) => {
          for (let i = 0; i < 20; i++) await db.query("select n from t where id = $1", [1]);
          const c = await db.connect();
          try {
            for (let i = 0; i < 10; i++) {
              await c.query("BEGIN");
              await c.query("update t set n = n + 1 where id = $1", [1]);
              await c.query(w === 0 && i === 9 ? "ROLLBACK" : "COMMIT");
            }
          } finally {
            c.release();
          }
        }));
        const work = perRequest(await counter.take(), 30);
        assert.deepEqual(work.statements, {
          select: 2,
          update: 1,
          begin: 1,
          commit: 29 / 30,
          rollback: 1 / 30,
        });
        // 60 + 29, and an idle session may commit one transaction of its own (catalogue catch-up);
        // with the statistics read too early, the last second of every connection would be missing
        assert.ok(
          work.totals.commits >= 60 + 29 && work.totals.commits <= 60 + 29 + 3,
          String(work.totals.commits),
        );
        assert.equal(work.totals.rollbacks, 1);
        assert.ok(work.execUsPerRequest > 0);
      } finally {
        await db.end();
      }
    } finally {
      await counter?.close();
      await started.cluster.stop();
    }
  },
});
