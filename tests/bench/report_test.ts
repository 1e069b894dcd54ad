import assert from "node:assert/strict";
import {
  type BenchReport,
  evaluateTargets,
  fmtRate,
  formatReport,
  mb,
  pct,
  reportJson,
  scenarioResult,
  sideBySide,
  table,
  targetGroups,
} from "../../bench/lib/report.ts";
import type { WrkResult } from "../../bench/lib/stats.ts";

function wrk(rps: number, extra: Partial<WrkResult> = {}): WrkResult {
  return {
    requests: rps * 8,
    sent: rps * 8,
    durationUs: 8e6,
    rps,
    p50Ms: 1.25,
    p99Ms: 9.5,
    meanMs: 2,
    maxMs: 20,
    statuses: { "200": rps * 8 },
    accepts: 0,
    signed: 0,
    errors: { connect: 0, read: 0, write: 0, timeout: 0 },
    used: {},
    exhausted: false,
    ...extra,
  };
}

function report(overrides: Partial<BenchReport> = {}): BenchReport {
  const ceiling = 40000;
  return {
    startedAt: "2026-11-21T16:00:00.000Z",
    machine: { cpus: 2, deno: "2.9.6", wrk: "wrk 4.1.0" },
    options: { durationS: 8, warmupS: 1, connections: 32, threads: 1, users: 200, tokens: 1000 },
    ceilingRps: ceiling,
    results: [
      scenarioResult("hello", wrk(ceiling), ceiling),
      {
        ...scenarioResult("hotp", wrk(12000), ceiling),
        cpuUsPerRequest: 83.4,
        peakRssAfterBytes: 98.76e6,
      },
      scenarioResult("wrong", wrk(9000), ceiling),
      scenarioResult("unknown", wrk(17000, { statuses: { "400": 136000 } }), ceiling),
      scenarioResult("tokenlist", wrk(7000), ceiling),
      scenarioResult("signed", wrk(250)),
    ],
    signRate: { sequential: 200, parallel: 340, msPerSignature: 5 },
    peakRssBytes: 120e6,
    peakRssBeforeAuthBytes: 100e6,
    tokensInDb: 10000,
    checks: [{ name: "hotp: no 5xx", ok: true, detail: "fine" }, {
      name: "wrong: fail counters",
      ok: false,
      detail: "off by one",
    }],
    targets: [],
    notes: ["a note"],
    ...overrides,
  };
}

Deno.test("scenarioResult computes the ratio to the ceiling", () => {
  const r = scenarioResult("hotp", wrk(10000), 40000);
  assert.equal(r.ratio, 0.25);
  assert.equal(r.rps, 10000);
  assert.equal(scenarioResult("hotp", wrk(10000)).ratio, undefined);
  assert.equal(scenarioResult("hotp", wrk(10000), 0).ratio, undefined);
});

Deno.test("evaluateTargets: ratio targets, signing rate and RSS at 10,000 tokens", () => {
  const t = evaluateTargets(report());
  const by = (prefix: string) => t.find((x) => x.name.startsWith(prefix))!;
  assert.equal(by("/validate/check correct HOTP").met, true); // 30% ≥ 15%
  assert.equal(by("/validate/check correct HOTP").actual, "30.0%");
  assert.equal(by("/validate/check correct HOTP").goal, "≥ 15.0% (longer term ≥ 25.0%)");
  assert.equal(t.find((x) => x.name.startsWith("/validate/check wrong OTP")), undefined);
  assert.equal(by("/validate/check unknown user").met, true); // 42.5% ≥ 25%
  assert.equal(by("GET /token/").met, true); // 17.5% ≥ 5%
  const low = evaluateTargets(report({
    results: [scenarioResult("tokenlist", wrk(1000), 40000)],
  }));
  assert.equal(low.find((x) => x.name.startsWith("GET /token/"))!.met, false); // 2.5% < 5%
  const signed = by("signed validate");
  assert.equal(signed.met, false); // 250 of max(200, 340) = 73.5% < 90%
  assert.match(signed.actual, /^73\.5% \(250\.0 of 340\.0 signatures\/s\)$/);
  const fast = evaluateTargets(
    report({ signRate: { sequential: 200, parallel: 270, msPerSignature: 5 } }),
  );
  assert.equal(fast.find((x) => x.name.startsWith("signed validate"))!.met, true); // 92.6%
  assert.equal(by("server peak RSS").met, true);
  assert.equal(by("server peak RSS").actual, "120.0 MB at 10000 tokens");
  assert.equal(by("validate with 50 policies").met, undefined);
});

Deno.test("evaluateTargets compares validate with 50 policies to the plain run", () => {
  const base = report();
  const hotp = base.results.find((r) => r.scenario === "hotp")!;
  const within = evaluateTargets(
    report({ results: [...base.results, { ...hotp, scenario: "policies", rps: hotp.rps * 0.85 }] }),
  );
  const w = within.find((x) => x.name.startsWith("validate with 50 policies"))!;
  assert.equal(w.met, true);
  assert.match(w.actual, /^85\.0% /);
  const slow = evaluateTargets(
    report({ results: [...base.results, { ...hotp, scenario: "policies", rps: hotp.rps * 0.7 }] }),
  );
  assert.equal(slow.find((x) => x.name.startsWith("validate with 50 policies"))!.met, false);
});

Deno.test("evaluateTargets leaves targets open that the run did not measure", () => {
  const t = evaluateTargets(
    report({ results: [], signRate: undefined, peakRssBytes: 90e6, tokensInDb: 1000 }),
  );
  assert.equal(t.length, 11);
  for (const x of t) assert.equal(x.met, undefined);
  assert.match(t[10].actual, /run --tokens 10000/);
  assert.match(t[5].actual, /^not run \(--scenario hotp --database both\)$/);
  const over = evaluateTargets(report({ peakRssBytes: 151e6 }));
  assert.equal(over[10].met, false);
});

Deno.test("evaluateTargets: the PostgreSQL goals compare the engine and node runs", () => {
  const run = (target: string, rps: number, cpu: number, db?: number) => ({
    ...scenarioResult("hotp", wrk(rps), 40000),
    target,
    cpuUsPerRequest: cpu,
    dbCpuUsPerRequest: db,
  });
  const t = evaluateTargets(
    report({
      results: [
        run("SQLite, 1 node", 3000, 400),
        run("PostgreSQL, 1 node", 1200, 700, 690),
        run("PostgreSQL, 2 nodes", 2000, 720, 700),
      ],
    }),
    { primary: "SQLite, 1 node" },
  );
  const by = (prefix: string) => t.find((x) => x.name.startsWith(prefix))!;
  assert.equal(by("Tessera CPU per check").actual, "1.75× (700 vs 400 µs)");
  assert.equal(by("Tessera CPU per check").met, false);
  assert.equal(by("PostgreSQL CPU per check").actual, "690 µs");
  assert.equal(by("PostgreSQL CPU per check").met, false);
  assert.equal(by("two nodes vs one").actual, "1.67× (2000 vs 1200 req/s)");
  assert.equal(by("two nodes vs one").met, true);
  // the ratio targets read the primary run's rows only
  assert.equal(by("/validate/check correct HOTP").actual, "7.5%");
});

Deno.test("number formatting helpers", () => {
  assert.equal(pct(0.2534), "25.3%");
  assert.equal(mb(150e6), "150.0 MB");
  assert.equal(fmtRate(12345.6), "12346");
  assert.equal(fmtRate(12.34), "12.3");
});

Deno.test("table aligns columns and right-aligns numbers", () => {
  const out = table([["name", "req/s"], ["hello", "40000"], ["hotp", "9"]]);
  assert.equal(out, "name   req/s\nhello  40000\nhotp       9");
});

Deno.test("formatReport shows rows, ratios, signing, RSS, checks, targets and notes", () => {
  const r = report();
  r.targets = evaluateTargets(r);
  const text = formatReport(r);
  assert.match(
    text,
    /hotp — \/validate\/check correct HOTP\s+12000\s+1\.25\s+9\.50\s+30\.0%\s+83\s+98\.8\s+200×96000/,
  );
  assert.match(text, /hello — plain Hono hello \(ceiling\)\s+40000 .* 100\.0%\s+-\s+-\s+200×/);
  assert.match(text, /signed — .* 250\.0 .* -/);
  assert.match(text, /400×136000/);
  assert.match(text, /200\.0\/s one at a time \(5\.00 ms each\), 340\.0\/s with several in flight/);
  assert.match(text, /peak RSS \(VmHWM\): 120\.0 MB with 10000 tokens \(100\.0 MB before/);
  assert.match(text, /\[ok\] hotp: no 5xx: fine/);
  assert.match(text, /\[FAIL\] wrong: fail counters: off by one/);
  assert.match(
    text,
    /Targets \(issue 32\):\n {2}\[met \] \/validate\/check correct HOTP vs ceiling: 30\.0%/,
  );
  assert.match(text, /\[MISS\] signed validate vs raw RSA-PSS signing rate: 73\.5%/);
  assert.match(text, /\[met \] \/validate\/check correct HOTP vs ceiling: 30\.0%/);
  assert.match(text, /- a note/);
});

Deno.test("reportJson round-trips the report", () => {
  const r = report();
  assert.deepEqual(JSON.parse(reportJson(r)), JSON.parse(JSON.stringify(r)));
});

Deno.test("formatReport groups the rows of several engine/node runs and sets them side by side", () => {
  const ceiling = 40000;
  const row = (scenario: "hotp" | "unknown", rps: number, target: string, db?: number) => ({
    ...scenarioResult(scenario, wrk(rps), ceiling),
    cpuUsPerRequest: 170,
    target,
    ...(db === undefined ? {} : { dbCpuUsPerRequest: db }),
  });
  const r = report({
    options: {
      durationS: 5,
      warmupS: 1,
      connections: 32,
      threads: 1,
      users: 200,
      tokens: 1000,
      targets: ["SQLite, 1 node", "PostgreSQL, 2 nodes"],
    },
    results: [
      scenarioResult("hello", wrk(ceiling), ceiling),
      row("hotp", 8000, "SQLite, 1 node"),
      row("unknown", 12000, "SQLite, 1 node"),
      row("hotp", 2000, "PostgreSQL, 2 nodes", 240.4),
      row("unknown", 6000, "PostgreSQL, 2 nodes", 80),
    ],
  });
  const text = formatReport(r);
  assert.match(text, /runs: SQLite, 1 node; PostgreSQL, 2 nodes/);
  assert.match(text, /db CPU µs\/req/);
  assert.match(
    text,
    /\nSQLite, 1 node:\n {2}hotp — \/validate\/check correct HOTP\s+8000 .* 20\.0%\s+170\s+-/,
  );
  assert.match(text, /\nPostgreSQL, 2 nodes:\n {2}hotp — .*\s+2000 .* 5\.0%\s+170\s+240\s/);
  assert.match(text, /Side by side/);
  assert.match(text, /hotp\s+8000 · 20\.0% · 170\s+2000 · 5\.0% · 170\+240/);
  assert.match(text, /unknown\s+12000 · 30\.0% · 170\s+6000 · 15\.0% · 170\+80/);
});

Deno.test("formatReport of one engine: no groups, no db CPU column, no side-by-side table", () => {
  const text = formatReport(report());
  assert.doesNotMatch(text, /db CPU|Side by side|runs:/);
  assert.match(text, /\nhotp — /);
});

Deno.test("sideBySide: a scenario a run did not measure shows a dash", () => {
  const results = [
    { ...scenarioResult("hotp", wrk(100), 1000), target: "A" },
    { ...scenarioResult("wrong", wrk(50), 1000), target: "B" },
  ];
  assert.deepEqual(targetGroups(results), ["A", "B"]);
  assert.deepEqual(sideBySide(results, targetGroups(results)), [
    ["scenario", "A", "B"],
    ["hotp", "100.0 · 10.0% · -", "-"],
    ["wrong", "-", "50.0 · 5.0% · -"],
  ]);
});
