/**
 * The benchmark's result: targets of issue 32, the human table and the JSON
 * form (pure).
 *
 * @module
 */
import { shippedRuntime } from "./server.ts";
import { type Scenario, SCENARIO_TITLES } from "./args.ts";
import type { WrkResult } from "./stats.ts";
import { isOneTransaction, kindsText, type PgWork } from "./pg_stats.ts";

/** One measured load scenario. */
export interface ScenarioResult {
  scenario: Scenario;
  /** Row label when not the scenario's title. */
  label?: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  statuses: Record<string, number>;
  accepts: number;
  /** Requests per second relative to the hello ceiling of the same run. */
  ratio?: number;
  /** Server CPU time (user + system, all threads) per request of the measured run, µs. */
  cpuUsPerRequest?: number;
  /** The server's peak RSS (VmHWM) right after this scenario, bytes (the largest node's). */
  peakRssAfterBytes?: number;
  /**
   * The engine/node run of this row ("PostgreSQL, 2 nodes") when a run covers
   * several; absent for the hello ceiling and in a run on one engine.
   */
  target?: string;
  /** CPU time of the PostgreSQL server and its backends per request of the measured run, µs. */
  dbCpuUsPerRequest?: number;
  /** PostgreSQL's statements, transactions and execution time per request of the measured run. */
  pg?: PgWork;
}

/** A correctness check done by the run. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** Raw RSA-PSS signing rate measured on its own (bench/sign_rate.ts). */
export interface SignRate {
  /** Signatures per second, one at a time. */
  sequential: number;
  /** Signatures per second with several in flight (Web Crypto runs them off the JS thread). */
  parallel: number;
  /** Milliseconds per signature, one at a time. */
  msPerSignature: number;
}

/** A target of issue 32 (or 10) and where the run stands. */
export interface Target {
  name: string;
  goal: string;
  actual: string;
  /** undefined: not measured in this run, or information only ({@link isInfo}). */
  met?: boolean;
  /** Shown for information beside the targets, not judged. */
  isInfo?: boolean;
}

/** Everything one run produced. */
export interface BenchReport {
  startedAt: string;
  machine: { cpus: number; deno: string; wrk: string };
  options: {
    durationS: number;
    warmupS: number;
    connections: number;
    threads: number;
    users: number;
    tokens: number;
    /** Extra environment the servers ran with. */
    serverEnv?: Record<string, string>;
    /** Engine/node runs ("SQLite, 1 node", …) when not SQLite alone. */
    targets?: string[];
  };
  ceilingRps: number;
  results: ScenarioResult[];
  signRate?: SignRate;
  /** Peak RSS (VmHWM) of the unsigned server process, bytes. */
  peakRssBytes?: number;
  /** Its peak RSS once it answered /healthz/ (before any API call), bytes. */
  peakRssAtStartBytes?: number;
  /** Its peak RSS right after enrolment, bytes. */
  peakRssAfterEnrolBytes?: number;
  /** Its peak RSS before the /auth scenario (validate and token list only), bytes. */
  peakRssBeforeAuthBytes?: number;
  /** Peak RSS of the server restarted with signing on, bytes. */
  peakRssSignedBytes?: number;
  /** Tokens in the database when the peak RSS was read. */
  tokensInDb: number;
  checks: Check[];
  targets: Target[];
  notes: string[];
}

/** Turns a wrk result into a scenario row (ratio against `ceilingRps` if known). */
export function scenarioResult(
  scenario: Scenario,
  wrk: WrkResult,
  ceilingRps?: number,
): ScenarioResult {
  return {
    scenario,
    rps: wrk.rps,
    p50Ms: wrk.p50Ms,
    p99Ms: wrk.p99Ms,
    requests: wrk.requests,
    statuses: wrk.statuses,
    accepts: wrk.accepts,
    ratio: ceilingRps && ceilingRps > 0 ? wrk.rps / ceilingRps : undefined,
  };
}

// issue 32: [scenario, goal, longer-term goal]
const RATIO_TARGETS: [Scenario, number, number?][] = [
  ["hotp", 0.15, 0.25],
  ["unknown", 0.25],
  ["tokenlist", 0.05],
];

const SQLITE_1 = "SQLite, 1 node";
const POSTGRES_1 = "PostgreSQL, 1 node";
const POSTGRES_2 = "PostgreSQL, 2 nodes";

/** RSS limit at 10,000 tokens. */
export const RSS_LIMIT_BYTES = 150 * 1000 * 1000;

/**
 * Where the run stands against the targets of issue 32 (the peak RSS: issue 10). The ratio,
 * policy and signing targets are judged on the rows of `primary` (the first engine/node run;
 * rows without a run label count for it); the PostgreSQL targets compare the runs of
 * `--database both --nodes both`.
 */
export function evaluateTargets(
  report: Pick<BenchReport, "results" | "signRate" | "peakRssBytes" | "tokensInDb">,
  options: { primary?: string } = {},
): Target[] {
  const targets: Target[] = [];
  const row = (s: Scenario) =>
    report.results.find((r) =>
      r.scenario === s && (r.target === undefined || r.target === options.primary)
    );
  for (const [scenario, goal, longTerm] of RATIO_TARGETS) {
    const r = row(scenario);
    targets.push({
      name: `${SCENARIO_TITLES[scenario]} vs ceiling`,
      goal: `≥ ${pct(goal)}${longTerm === undefined ? "" : ` (longer term ≥ ${pct(longTerm)})`}`,
      actual: r?.ratio === undefined ? "not run" : pct(r.ratio),
      met: r?.ratio === undefined ? undefined : r.ratio >= goal,
    });
  }
  const plain = row("hotp");
  const withPolicies = row("policies");
  const policyRatio = plain && withPolicies && plain.rps > 0
    ? withPolicies.rps / plain.rps
    : undefined;
  targets.push({
    name: "validate with 50 policies vs none",
    goal: "≥ 80%",
    actual: policyRatio === undefined
      ? "not run"
      : `${pct(policyRatio)} (${fmtRate(withPolicies!.rps)} vs ${fmtRate(plain!.rps)} req/s)`,
    met: policyRatio === undefined ? undefined : policyRatio >= 0.8,
  });
  const signed = row("signed");
  const rate = report.signRate ? Math.max(report.signRate.sequential, report.signRate.parallel) : 0;
  targets.push({
    name: "signed validate vs raw RSA-PSS signing rate",
    goal: "≥ 90%",
    actual: signed && rate > 0
      ? `${pct(signed.rps / rate)} (${fmtRate(signed.rps)} of ${fmtRate(rate)} signatures/s)`
      : "not run",
    met: signed && rate > 0 ? signed.rps / rate >= 0.9 : undefined,
  });
  targets.push(...postgresTargets(report.results, options.primary));
  const rss = report.peakRssBytes;
  const at10k = report.tokensInDb >= 10000;
  targets.push({
    name: "server peak RSS at 10,000 tokens (issue 10)",
    goal: "≤ 150 MB",
    actual: rss === undefined
      ? "not measured"
      : `${mb(rss)} at ${report.tokensInDb} tokens${at10k ? "" : " (run --tokens 10000)"}`,
    met: rss === undefined || !at10k ? undefined : rss <= RSS_LIMIT_BYTES,
  });
  return targets;
}

/**
 * The PostgreSQL goals of issue 32, from the correct-HOTP rows of each engine/node run (rows
 * without a run label belong to `primary`: a run on one engine labels none).
 */
function postgresTargets(results: readonly ScenarioResult[], primary?: string): Target[] {
  const hotp = (label: string) =>
    results.find((r) => r.scenario === "hotp" && (r.target ?? primary) === label);
  const sqlite = hotp(SQLITE_1);
  const pg = hotp(POSTGRES_1);
  const pg2 = hotp(POSTGRES_2);
  const notRun = (what: string) => `not run (${what})`;
  const cpuRatio = sqlite?.cpuUsPerRequest && pg?.cpuUsPerRequest
    ? pg.cpuUsPerRequest / sqlite.cpuUsPerRequest
    : undefined;
  const nodeRatio = pg && pg2 && pg.rps > 0 ? pg2.rps / pg.rps : undefined;
  return [
    {
      name: "Tessera CPU per check, PostgreSQL vs SQLite",
      goal: "≤ 1.50×",
      actual: cpuRatio === undefined
        ? notRun("--scenario hotp --database both")
        : `${cpuRatio.toFixed(2)}× (${pg!.cpuUsPerRequest!.toFixed(0)} vs ${
          sqlite!.cpuUsPerRequest!.toFixed(0)
        } µs)`,
      met: cpuRatio === undefined ? undefined : cpuRatio <= 1.5,
    },
    {
      name: "PostgreSQL CPU per check",
      goal: "≤ 200 µs",
      actual: pg?.dbCpuUsPerRequest === undefined
        ? notRun("--database postgres")
        : `${pg.dbCpuUsPerRequest.toFixed(0)} µs`,
      met: pg?.dbCpuUsPerRequest === undefined ? undefined : pg.dbCpuUsPerRequest <= 200,
    },
    {
      name: "PostgreSQL statements per check",
      goal: "no statement that a cache or a join makes unnecessary",
      actual: pg?.pg === undefined
        ? notRun("--database postgres, with pg_stat_statements")
        : `${pg.pg.statementsPerRequest.toFixed(2)} (${kindsText(pg.pg)}; ${
          pg.pg.execUsPerRequest.toFixed(0)
        } µs executing)`,
      isInfo: true,
    },
    {
      name: "PostgreSQL commits per check",
      goal: "one transaction",
      actual: pg?.pg === undefined
        ? notRun("--database postgres, with pg_stat_statements")
        : `${pg.pg.commitsPerRequest.toFixed(2)}${
          pg.pg.rollbacksPerRequest > 0
            ? ` (+${pg.pg.rollbacksPerRequest.toFixed(2)} rolled back)`
            : ""
        }`,
      met: pg?.pg === undefined ? undefined : isOneTransaction(pg.pg),
    },
    {
      name: "two nodes vs one on PostgreSQL",
      goal: "≥ 1.60×",
      actual: nodeRatio === undefined
        ? notRun("--database postgres --nodes both")
        : `${nodeRatio.toFixed(2)}× (${fmtRate(pg2!.rps)} vs ${fmtRate(pg!.rps)} req/s)`,
      met: nodeRatio === undefined ? undefined : nodeRatio >= 1.6,
    },
  ];
}

/** "12.3%". */
export function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

/** "123.4 MB" (decimal megabytes). */
export function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** "12345" / "123.4" requests per second. */
export function fmtRate(rps: number): string {
  return rps >= 1000 ? rps.toFixed(0) : rps.toFixed(1);
}

function statusText(statuses: Record<string, number>): string {
  return Object.entries(statuses)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([code, n]) => `${code}×${n}`)
    .join(" ");
}

/** Pads cells into aligned columns; numbers right-aligned. */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) =>
    r.map((cell, i) =>
      /^[\d.]+%?$/.test(cell) && i > 0 ? cell.padStart(widths[i]) : cell.padEnd(widths[i])
    ).join("  ").trimEnd()
  ).join("\n");
}

/** The human-readable report. */
export function formatReport(report: BenchReport): string {
  const o = report.options;
  const lines: string[] = [];
  lines.push(
    `Tessera benchmark ${report.startedAt}: ${report.machine.cpus} CPUs, deno ${report.machine.deno}, ${report.machine.wrk}`,
  );
  lines.push(
    `wrk -t${o.threads} -c${o.connections}, ${o.durationS}s per scenario after ${o.warmupS}s warm-up; ${o.users} users per validate scenario, ${report.tokensInDb} tokens`,
  );
  if (o.targets && o.targets.length > 0) {
    lines.push(
      `runs: ${o.targets.join("; ")} (PostgreSQL: a private cluster on loopback, fsync off)`,
    );
  }
  const shipped = shippedRuntime();
  const runtime = [
    ...Object.entries(shipped.env).map(([k, v]) => `${k}=${v}`),
    ...shipped.denoFlags,
  ];
  if (runtime.length > 0) {
    lines.push(`servers run as \`deno task start\` does: ${runtime.join(" ")}`);
  }
  const env = Object.entries(o.serverEnv ?? {});
  if (env.length > 0) {
    lines.push(`server environment: ${env.map(([k, v]) => `${k}=${v}`).join(" ")}`);
  }
  lines.push("");
  const hasDbCpu = report.results.some((r) => r.dbCpuUsPerRequest !== undefined);
  const header = [
    "scenario",
    "req/s",
    "p50 ms",
    "p99 ms",
    "of ceiling",
    "srv CPU µs/req",
    ...(hasDbCpu ? ["db CPU µs/req"] : []),
    "peak RSS MB",
    "statuses",
  ];
  const rowOf = (r: ScenarioResult, indent: string) => [
    indent + (r.label ?? `${r.scenario} — ${SCENARIO_TITLES[r.scenario]}`),
    fmtRate(r.rps),
    r.p50Ms.toFixed(2),
    r.p99Ms.toFixed(2),
    r.ratio === undefined ? "-" : pct(r.ratio),
    r.cpuUsPerRequest === undefined ? "-" : r.cpuUsPerRequest.toFixed(0),
    ...(hasDbCpu ? [r.dbCpuUsPerRequest === undefined ? "-" : r.dbCpuUsPerRequest.toFixed(0)] : []),
    r.peakRssAfterBytes === undefined ? "-" : (r.peakRssAfterBytes / 1e6).toFixed(1),
    statusText(r.statuses),
  ];
  const rows = [header];
  const groups = targetGroups(report.results);
  if (groups.length === 0) {
    for (const r of report.results) rows.push(rowOf(r, ""));
  } else {
    // the ceilings first, then one group of rows per engine/node run
    for (const r of report.results) if (r.target === undefined) rows.push(rowOf(r, ""));
    for (const g of groups) {
      rows.push([`${g}:`]);
      for (const r of report.results) if (r.target === g) rows.push(rowOf(r, "  "));
    }
  }
  lines.push(table(rows));
  lines.push(
    "(srv CPU µs/req: the server process's CPU time per answered request; it does not depend on",
  );
  lines.push(" what else runs on the machine, unlike req/s. peak RSS MB: the serving process's");
  lines.push(" VmHWM right after the scenario.)");
  if (hasDbCpu) {
    lines.push(
      "(db CPU µs/req: CPU time of the PostgreSQL server and its backends per request; with 2",
    );
    lines.push(" nodes srv CPU is both Tessera processes together and peak RSS the larger one.)");
  }
  if (groups.length > 1) {
    lines.push("");
    lines.push("Side by side (req/s · of ceiling · CPU µs/req: server, + PostgreSQL when used):");
    lines.push(table(sideBySide(report.results, groups)));
  }
  const pgRows = report.results.filter((r) => r.pg !== undefined);
  if (pgRows.length > 0) {
    lines.push("");
    lines.push("PostgreSQL per request (pg_stat_statements, pg_stat_database; measured run only):");
    lines.push(table(pgWorkRows(pgRows)));
    lines.push(
      "(statements: every statement PostgreSQL ran, nested ones included, by first word;",
    );
    lines.push(
      " commits: transactions committed, autocommitted single statements included; exec µs: its",
    );
    lines.push(" execution time of them. Divided by the answered requests.)");
  }
  lines.push("");
  if (report.signRate) {
    const s = report.signRate;
    lines.push(
      `Raw RSA-PSS signing (server key, Web Crypto): ${fmtRate(s.sequential)}/s one at a time (${
        s.msPerSignature.toFixed(2)
      } ms each), ${fmtRate(s.parallel)}/s with several in flight`,
    );
  }
  if (report.peakRssBytes !== undefined) {
    lines.push(
      `Server peak RSS (VmHWM): ${mb(report.peakRssBytes)} with ${report.tokensInDb} tokens` +
        (report.peakRssBeforeAuthBytes !== undefined
          ? ` (${mb(report.peakRssBeforeAuthBytes)} before the /auth scenario)`
          : "") +
        (report.peakRssAfterEnrolBytes !== undefined
          ? `; ${mb(report.peakRssAfterEnrolBytes)} right after enrolment`
          : "") +
        (report.peakRssAtStartBytes !== undefined
          ? `; ${mb(report.peakRssAtStartBytes)} when it started`
          : "") +
        (report.peakRssSignedBytes !== undefined
          ? `; signed-run server ${mb(report.peakRssSignedBytes)}`
          : ""),
    );
  }
  lines.push("");
  lines.push("Correctness under load:");
  for (const c of report.checks) lines.push(`  [${c.ok ? "ok" : "FAIL"}] ${c.name}: ${c.detail}`);
  lines.push("");
  lines.push("Targets (issue 32):");
  for (const t of report.targets) {
    const mark = t.isInfo ? "info" : t.met === undefined ? "n/a " : t.met ? "met " : "MISS";
    lines.push(`  [${mark}] ${t.name}: ${t.actual} (goal ${t.goal})`);
  }
  if (report.notes.length > 0) {
    lines.push("");
    lines.push("Notes:");
    for (const n of report.notes) lines.push(`  - ${n}`);
  }
  return lines.join("\n");
}

/** The engine/node runs of `results` in order of first appearance. */
export function targetGroups(results: readonly ScenarioResult[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    if (r.target !== undefined && !out.includes(r.target)) out.push(r.target);
  }
  return out;
}

/** One cell of the side-by-side table: "6787 · 6.6% · 172" or "2100 · 2.0% · 310+240". */
export function compactCell(r: ScenarioResult | undefined): string {
  if (!r) return "-";
  const cpu = r.cpuUsPerRequest === undefined ? "-" : r.cpuUsPerRequest.toFixed(0) +
    (r.dbCpuUsPerRequest === undefined ? "" : `+${r.dbCpuUsPerRequest.toFixed(0)}`);
  return `${fmtRate(r.rps)} · ${r.ratio === undefined ? "-" : pct(r.ratio)} · ${cpu}`;
}

/** Rows of the side-by-side table: one per scenario, one column per engine/node run. */
export function sideBySide(results: readonly ScenarioResult[], groups: string[]): string[][] {
  const scenarios: Scenario[] = [];
  for (const r of results) {
    if (r.target !== undefined && !scenarios.includes(r.scenario)) scenarios.push(r.scenario);
  }
  const rows = [["scenario", ...groups]];
  for (const s of scenarios) {
    rows.push([
      s,
      ...groups.map((g) => compactCell(results.find((r) => r.target === g && r.scenario === s))),
    ]);
  }
  return rows;
}

/** Rows of the PostgreSQL section: one per scenario row that has counts. */
export function pgWorkRows(results: readonly ScenarioResult[]): string[][] {
  const rows = [["scenario", "statements", "commits", "rollbacks", "exec µs", "by kind"]];
  for (const r of results) {
    if (!r.pg) continue;
    rows.push([
      r.target ? `${r.target}: ${r.scenario}` : r.scenario,
      r.pg.statementsPerRequest.toFixed(2),
      r.pg.commitsPerRequest.toFixed(2),
      r.pg.rollbacksPerRequest.toFixed(2),
      r.pg.execUsPerRequest.toFixed(0),
      kindsText(r.pg),
    ]);
  }
  return rows;
}

/** The machine-readable report (stable key names, numbers unrounded). */
export function reportJson(report: BenchReport): string {
  return JSON.stringify(report, null, 2);
}
