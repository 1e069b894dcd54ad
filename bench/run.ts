/**
 * `deno task bench`: measures Tessera's hot paths against this machine's
 * ceiling (a plain Hono "hello" served by the same program) with wrk on
 * loopback, checks correctness under load, and prints a table (or JSON).
 * See README "Benchmark" and `deno task bench --help`.
 *
 * @module
 */
import { benchPolicies } from "./lib/policies.ts";
import { ArgsError, type BenchOptions, parseBenchArgs, type Scenario, USAGE } from "./lib/args.ts";
import { Api } from "./lib/api.ts";
import {
  advanceUsers,
  enrol,
  type Enrolment,
  failCounts,
  type OtpUser,
  validateBody,
} from "./lib/enrol.ts";
import type { LuaItem, LuaSpec } from "./lib/lua.ts";
import { hotpSequence } from "./lib/otp.ts";
import {
  type BenchReport,
  type Check,
  evaluateTargets,
  formatReport,
  reportJson,
  scenarioResult,
  type SignRate,
} from "./lib/report.ts";
import { freePort, type ServerProcess, startServer } from "./lib/server.ts";
import { combineRuns, serverErrors, type WrkResult } from "./lib/stats.ts";
import { runWrk, WRK_INSTALL_HINT, wrkVersion } from "./lib/wrk.ts";
import { type ProfileRow, summarize } from "./profile_summary.ts";
import { verifySignedBody } from "./sign_rate.ts";

/** At most this many logins in flight: each costs one scrypt (ln=14: 16 MB, tens of ms). */
const AUTH_CONNECTIONS = 4;

const progress = (msg: string) => console.error(`[bench] ${msg}`);

class Bench {
  readonly checks: Check[] = [];
  readonly notes: string[] = [];
  readonly report: BenchReport;
  ceilingRps = 0;
  /** The server the current scenario loads (its CPU time is read around each run). */
  server?: ServerProcess;
  private runNo = 0;

  constructor(readonly o: BenchOptions, readonly tmp: string, wrk: string) {
    this.report = {
      startedAt: new Date().toISOString(),
      machine: { cpus: navigator.hardwareConcurrency, deno: Deno.version.deno, wrk },
      options: {
        durationS: o.durationS,
        warmupS: o.warmupS,
        connections: o.connections,
        threads: o.threads,
        users: o.users,
        tokens: o.tokens,
        serverEnv: o.serverEnv,
      },
      ceilingRps: 0,
      results: [],
      tokensInDb: 0,
      checks: this.checks,
      targets: [],
      notes: this.notes,
    };
  }

  check(name: string, ok: boolean, detail: string): void {
    this.checks.push({ name, ok, detail });
    if (!ok) progress(`CHECK FAILED ${name}: ${detail}`);
  }

  wants(s: Scenario): boolean {
    return this.o.scenarios.includes(s);
  }

  /** OTPs per item for a run of `seconds` (generous: the ceiling rate with a margin). */
  otpsPerItem(items: number, seconds: number): number {
    const rate = Math.max(this.ceilingRps, 1000);
    return Math.ceil((rate * Math.max(1, Math.round(seconds)) * 1.3) / items) + 3;
  }

  /**
   * Warm-up (not counted) and measured wrk runs of one scenario. `spec` is
   * called per run with that run's length; `after` sees each run's result.
   */
  async load(
    scenario: Scenario,
    url: string,
    spec: (seconds: number) => LuaSpec,
    after?: (r: WrkResult) => void,
    connections = this.o.connections,
  ): Promise<{ measured: WrkResult; all: WrkResult[] }> {
    const all: WrkResult[] = [];
    const phases = this.o.warmupS > 0 ? [this.o.warmupS, this.o.durationS] : [this.o.durationS];
    let cpuBefore: number | undefined;
    let cpuAfter: number | undefined;
    for (const seconds of phases) {
      cpuBefore = this.server?.cpuSeconds();
      const r = await runWrk({
        url,
        spec: spec(seconds),
        scriptPath: `${this.tmp}/run${++this.runNo}-${scenario}.lua`,
        seconds,
        connections,
      });
      cpuAfter = this.server?.cpuSeconds();
      after?.(r);
      all.push(r);
    }
    const measured = all[all.length - 1];
    const cpuUs = cpuBefore !== undefined && cpuAfter !== undefined && measured.requests > 0
      ? ((cpuAfter - cpuBefore) * 1e6) / measured.requests
      : undefined;
    progress(
      `  ${scenario}: ${measured.rps.toFixed(0)} req/s, p50 ${measured.p50Ms.toFixed(2)} ms, p99 ${
        measured.p99Ms.toFixed(2)
      } ms`,
    );
    if (measured.exhausted) {
      this.notes.push(`${scenario}: the pre-computed OTPs ran out, the run stopped early`);
    }
    const c = combineRuns(all);
    this.check(
      `${scenario}: no 5xx, no socket errors`,
      serverErrors(c.statuses) === 0 && c.socketErrors === 0 && c.requests > 0,
      `${c.requests} responses, statuses ${
        JSON.stringify(c.statuses)
      }, ${c.socketErrors} socket errors`,
    );
    this.report.results.push({
      ...scenarioResult(scenario, measured, this.ceilingRps || undefined),
      cpuUsPerRequest: cpuUs,
      peakRssAfterBytes: this.server?.peakRss(),
    });
    return { measured, all };
  }

  /** Items whose OTP sequences continue at each user's `next` counter. */
  otpItems(users: OtpUser[], byUser: boolean, seconds: number): LuaItem[] {
    const n = this.otpsPerItem(users.length, seconds);
    return users.map((u) => ({
      path: "/validate/check",
      body: validateBody(u, byUser),
      otps: hotpSequence(u.key, u.next, n),
    }));
  }

  /**
   * The hello ceiling. Run at the start and again after the Tessera scenarios: the
   * ratios use the mean of both, so a change in the machine's load during the run
   * shifts them less.
   */
  async ceiling(again = false): Promise<void> {
    const port = freePort();
    const hello = await startServer({
      args: ["hello", "--listen", `127.0.0.1:${port}`],
      port,
      env: this.o.serverEnv,
      logFile: `${this.tmp}/hello.log`,
      binary: this.o.binary,
      readyPath: "/",
    });
    this.server = hello;
    try {
      progress(`ceiling${again ? " again" : ""}: plain Hono hello from the same program`);
      const { measured } = await this.load("hello", hello.url, () => ({
        method: "GET",
        items: [{ path: "/" }],
        threads: this.o.threads,
      }));
      const row = this.report.results[this.report.results.length - 1];
      if (again) {
        row.label = "hello — ceiling again, after the scenarios";
        const hellos = this.report.results.filter((r) => r.scenario === "hello");
        this.ceilingRps = hellos.reduce((a, r) => a + r.rps, 0) / hellos.length;
        for (const r of this.report.results) r.ratio = r.rps / this.ceilingRps;
        this.notes.push(
          `ceiling = mean of the two hello runs (${
            hellos.map((r) => r.rps.toFixed(0)).join(" and ")
          } req/s)`,
        );
      } else {
        this.ceilingRps = measured.rps;
        row.ratio = 1;
      }
      this.report.ceilingRps = this.ceilingRps;
      if (row.cpuUsPerRequest !== undefined) {
        const cores = (row.cpuUsPerRequest * measured.rps) / 1e6;
        this.notes.push(
          `the hello server${again ? " (again)" : ""} used ${
            cores.toFixed(2)
          } CPU cores at the ceiling` +
            (cores < 0.8
              ? ": the ceiling is bounded by the load generator (wrk) sharing this machine"
              : ""),
        );
      }
    } finally {
      await hello.stop();
      this.notes.push(
        `hello process${again ? " (again)" : ""} peak RSS ${
          ((hello.peakRss() ?? 0) / 1e6).toFixed(1)
        } MB`,
      );
    }
  }

  async tessera(
    dataDir: string,
    signing: boolean,
    log: string,
    denoFlags: string[] = [],
  ): Promise<ServerProcess> {
    const port = freePort();
    return this.server = await startServer({
      denoFlags,
      args: ["serve", "--data-dir", dataDir, "--listen", `127.0.0.1:${port}`],
      port,
      env: {
        TESSERA_SIGNING_ENABLED: String(signing),
        TESSERA_LOG_LEVEL: "warn",
        TESSERA_CONFIG: `${this.tmp}/tessera.toml`,
        ...this.o.serverEnv,
      },
      logFile: log,
      binary: this.o.binary,
      readyPath: "/healthz/",
      timeoutMs: 60000,
    });
  }

  async hotp(
    url: string,
    e: Enrolment,
    scenario: "hotp" | "signed" | "policies",
  ): Promise<WrkResult> {
    let sentOtps = 0;
    const { measured, all } = await this.load(
      scenario,
      url,
      (seconds) => ({
        method: "POST",
        items: this.otpItems(e.hotp, e.byUser, seconds),
        threads: this.o.threads,
      }),
      (r) => sentOtps += advanceUsers(e.hotp, r.used),
    );
    const c = combineRuns(all);
    this.check(
      `${scenario}: no OTP accepted twice`,
      c.accepts <= sentOtps,
      `${c.accepts} accepted of ${sentOtps} distinct OTPs sent (each once), ${
        c.requests > 0 ? ((c.accepts / c.requests) * 100).toFixed(2) : "0"
      }% of responses accepted`,
    );
    return measured;
  }

  async wrong(url: string, api: Api, e: Enrolment): Promise<void> {
    const { all } = await this.load("wrong", url, () => ({
      method: "POST",
      items: e.wrong.map((u) => ({
        path: "/validate/check",
        body: validateBody(u, e.byUser) + u.wrong,
      })),
      threads: this.o.threads,
    }));
    const c = combineRuns(all);
    await new Promise((r) => setTimeout(r, 300)); // requests in flight when wrk stopped
    const counts = await failCounts(api, "BW");
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    // wrk counts responses; requests still in flight at its stop may or may not have been
    // served, so the exact number of attempts the server saw comes from its audit log
    let audited: number | undefined;
    try {
      const page = await api.call("GET", "/audit/", {
        serial: "BW*",
        action: "POST /validate/check",
        page_size: 1,
      });
      audited = Number(page.count);
    } catch (err) {
      this.notes.push(`wrong: audit count not available (${(err as Error).message.slice(0, 120)})`);
    }
    this.check(
      "wrong: fail counters equal the wrong attempts",
      total >= c.requests && total <= c.sent && c.accepts === 0 &&
        (audited === undefined || audited === total),
      `sum of failcount over ${counts.size} tokens = ${total}; attempts in the audit log ${
        audited ?? "?"
      }; wrk: ${c.requests} answered, ${c.sent} sent (the rest were in flight at its stop); accepted ${c.accepts}`,
    );
  }

  async unknown(url: string, e: Enrolment): Promise<void> {
    const { all } = await this.load("unknown", url, () => ({
      method: "POST",
      items: e.unknown.map((login) => ({
        path: "/validate/check",
        body: `user=${login}&realm=${e.realm}&pass=4711123456`,
      })),
      threads: this.o.threads,
    }));
    const c = combineRuns(all);
    this.check(
      "unknown: every answer is 400 (ERR904), nothing accepted",
      c.statuses["400"] === c.requests && c.accepts === 0,
      `statuses ${JSON.stringify(c.statuses)}, accepted ${c.accepts}`,
    );
  }

  async spass(url: string, e: Enrolment): Promise<void> {
    const { all } = await this.load("spass", url, () => ({
      method: "POST",
      items: e.spass.map((u) => ({ path: "/validate/check", body: validateBody(u, e.byUser) })),
      threads: this.o.threads,
    }));
    const c = combineRuns(all);
    this.check(
      "spass: every answer accepts",
      c.accepts === c.requests && c.statuses["200"] === c.requests,
      `${c.accepts} of ${c.requests} accepted`,
    );
  }

  async tokenList(url: string, api: Api, e: Enrolment): Promise<void> {
    const pages = Math.max(1, Math.ceil(e.tokensInDb / 15));
    const { all } = await this.load("tokenlist", url, () => ({
      method: "GET",
      headers: { "PI-Authorization": api.jwt ?? "" },
      items: Array.from({ length: Math.min(pages, 100) }, (_, i) => ({
        path: `/token/?pagesize=15&page=${i + 1}`,
      })),
      threads: this.o.threads,
    }));
    const c = combineRuns(all);
    this.check(
      "tokenlist: every answer is 200",
      c.statuses["200"] === c.requests,
      `statuses ${JSON.stringify(c.statuses)} over ${
        Math.min(pages, 100)
      } pages of ${e.tokensInDb} tokens`,
    );
  }

  /** Connections of the /auth scenario: a login is a CPU- and memory-bound password hash. */
  authConnections(): number {
    return Math.max(this.o.threads, Math.min(this.o.connections, AUTH_CONNECTIONS));
  }

  async auth(url: string, password: string): Promise<void> {
    const { all } = await this.load(
      "auth",
      url,
      () => ({
        method: "POST",
        items: [{
          path: "/auth",
          body: `username=admin&password=${encodeURIComponent(password)}`,
        }],
        threads: this.o.threads,
      }),
      undefined,
      this.authConnections(),
    );
    const c = combineRuns(all);
    this.check(
      "auth: every login succeeds",
      c.statuses["200"] === c.requests,
      `statuses ${JSON.stringify(c.statuses)}`,
    );
  }

  /** Replays: used OTPs are refused; one fresh OTP sent 10× at once is accepted once. */
  async replay(api: Api, e: Enrolment): Promise<void> {
    const sample = e.hotp.slice(0, 20);
    const check = async (u: OtpUser, counter: number) => {
      const otp = hotpSequence(u.key, counter, 1);
      const body = Object.fromEntries(new URLSearchParams(validateBody(u, e.byUser) + otp));
      const a = await api.raw("POST", "/validate/check", body);
      if (a.httpStatus >= 500) throw new Error(`HTTP ${a.httpStatus}`);
      return a.body?.result?.value === true;
    };
    // one fresh OTP per user first, so there is something to replay in any case
    let fresh = 0;
    for (const u of sample) {
      if (await check(u, u.next)) fresh++;
      u.next += 1;
    }
    this.check(
      "replay: fresh OTPs are accepted",
      fresh === sample.length,
      `${fresh} of ${sample.length} accepted`,
    );
    let replayAccepted = 0;
    for (const u of sample) {
      for (const back of [1, 2, 5]) {
        if (u.next - back >= 0 && await check(u, u.next - back)) replayAccepted++;
      }
    }
    this.check(
      "replay: already used OTPs are refused",
      sample.length > 0 && replayAccepted === 0,
      `${replayAccepted} of up to ${
        sample.length * 3
      } replayed OTPs accepted (${sample.length} users)`,
    );
    const parallel = e.hotp.slice(0, 20);
    const accepted = await Promise.all(parallel.map(async (u) => {
      const counter = u.next;
      u.next += 1;
      const results = await Promise.all(Array.from({ length: 10 }, () => check(u, counter)));
      return results.filter(Boolean).length;
    }));
    this.check(
      "replay: a fresh OTP sent 10 times at once is accepted exactly once",
      accepted.every((n) => n === 1),
      `accepts per user: ${accepted.join(",")}`,
    );
    // over everything so far (load runs included): the server's own record of accepts
    const distinct = e.hotp.reduce((a, u) => a + u.next, 0);
    const page = await api.call("GET", "/audit/", {
      serial: "BH*",
      action: "POST /validate/check",
      success: "1",
      page_size: 1,
    });
    this.check(
      "replay: accepts in the audit log ≤ distinct OTPs ever sent",
      Number(page.count) <= distinct,
      `${page.count} successful /validate/check audit rows for the HOTP users, ${distinct} distinct OTPs sent`,
    );
  }

  /** One more signed validate answer, verified with the server's key. */
  async verifySignature(url: string, e: Enrolment, keyFile: string): Promise<void> {
    const u = e.hotp[0];
    const otp = hotpSequence(u.key, u.next++, 1);
    const params = Object.fromEntries(new URLSearchParams(validateBody(u, e.byUser) + otp));
    const answer = await new Api(url).raw("POST", "/validate/check", params);
    const pem = await Deno.readTextFile(keyFile).catch(() => "");
    const ok = pem !== "" && await verifySignedBody(answer.text, pem);
    this.check(
      "signed: a response's signature verifies with the server's key",
      ok,
      ok ? "RSA-PSS SHA-256 over the canonical body" : `body: ${answer.text.slice(0, 200)}`,
    );
  }

  async signRate(keyFile: string): Promise<SignRate | undefined> {
    try {
      Deno.statSync(keyFile);
    } catch {
      this.notes.push(`no signing key at ${keyFile}: the raw signing rate was not measured`);
      return undefined;
    }
    const script = new URL("./sign_rate.ts", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", script, keyFile, "3", String(Math.min(this.o.connections, 16))],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      this.notes.push(`sign_rate.ts failed: ${new TextDecoder().decode(out.stderr).slice(0, 300)}`);
      return undefined;
    }
    const rate = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").pop()!);
    progress(
      `  raw RSA-PSS: ${rate.sequential.toFixed(0)}/s sequential, ${
        rate.parallel.toFixed(0)
      }/s parallel`,
    );
    return rate;
  }
}

/**
 * Prints the summary of the server's CPU profile (stderr), leaving out its
 * first `skipMs` (start and enrolment).
 */
async function printProfile(dir: string, skipMs: number): Promise<void> {
  const files = [...Deno.readDirSync(dir)].filter((f) => f.name.endsWith(".cpuprofile"));
  if (files.length === 0) {
    progress(`no CPU profile in ${dir}`);
    return;
  }
  const path = `${dir}/${files[0].name}`;
  const s = summarize(JSON.parse(await Deno.readTextFile(path)), { skipMs });
  const busy = s.totalMs - (s.functions.find((r) => r.name.startsWith("(idle)"))?.selfMs ?? 0);
  const lines = [
    `CPU profile ${path}, after start and enrolment: ${
      (busy / 1000).toFixed(1)
    } s busy; share of busy time:`,
  ];
  const fmt = (r: ProfileRow) =>
    `  self ${((r.selfMs / busy) * 100).toFixed(1).padStart(5)}%  incl ${
      ((r.totalMs / busy) * 100).toFixed(1).padStart(5)
    }%  ${r.name}`;
  const real = (r: ProfileRow) => !/^\((idle|root|program)\)/.test(r.name);
  lines.push(" by file:", ...s.files.filter((r) => r.name !== "(native)").slice(0, 15).map(fmt));
  lines.push(" by function, self:", ...s.functions.filter(real).slice(0, 20).map(fmt));
  lines.push(
    " by function, inclusive:",
    ...[...s.functions].filter(real).sort((a, b) => b.totalMs - a.totalMs).slice(0, 25).map(fmt),
  );
  console.error(lines.join("\n"));
}

async function guarded(bench: Bench, name: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    const msg = (err as Error).message.split("\n")[0].slice(0, 300);
    progress(`${name} failed: ${msg}`);
    bench.check(`${name}: ran`, false, msg);
  }
}

async function main(args: string[]): Promise<number> {
  let o: BenchOptions;
  try {
    o = parseBenchArgs(args);
  } catch (err) {
    if (err instanceof ArgsError) {
      console.error(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
  if (o.help) {
    console.log(USAGE);
    return 0;
  }
  const wrk = await wrkVersion();
  if (!wrk) {
    console.error(WRK_INSTALL_HINT);
    return 2;
  }
  const tmp = await Deno.makeTempDir({ prefix: "tessera-bench-" });
  const dataDir = `${tmp}/data`;
  // an empty config file: defaults plus the TESSERA_* variables set per server below
  await Deno.writeTextFile(`${tmp}/tessera.toml`, "# tessera bench: defaults\n");
  const bench = new Bench(o, tmp, wrk);
  if (o.users <= o.connections / o.threads) {
    bench.notes.push(
      `--users ${o.users} is not above the connections per wrk thread (${
        o.connections / o.threads
      }): ` +
        "a user's next OTP can overtake the previous one, which is then refused as already used",
    );
  }
  const started = performance.now();
  let server: ServerProcess | undefined;
  let failed = false;
  try {
    await bench.ceiling();

    progress(`starting Tessera (signing off) on ${dataDir}`);
    const profDir = `${tmp}/profile`;
    const serverStarted = performance.now();
    server = await bench.tessera(
      dataDir,
      false,
      `${tmp}/tessera.log`,
      o.profile ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [],
    );
    bench.report.peakRssAtStartBytes = server.peakRss();
    const api = new Api(server.url);
    const password = (await Deno.readTextFile(`${dataDir}/initial-admin-password`)).trim();
    await api.login("admin", password);
    const enrolStarted = performance.now();
    const e = await enrol(api, { users: o.users, tokens: o.tokens, progress });
    bench.notes.push(...e.notes);
    bench.report.tokensInDb = e.tokensInDb;
    bench.report.peakRssAfterEnrolBytes = server.peakRss();
    const enrolledAfterMs = performance.now() - serverStarted;
    progress(
      `enrolled in ${
        ((performance.now() - enrolStarted) / 1000).toFixed(1)
      } s; ${e.tokensInDb} tokens`,
    );

    const url = server.url;
    if (bench.wants("hotp")) await guarded(bench, "hotp", () => bench.hotp(url, e, "hotp").then());
    if (bench.wants("wrong")) await guarded(bench, "wrong", () => bench.wrong(url, api, e));
    if (bench.wants("unknown")) {
      if (e.byUser) await guarded(bench, "unknown", () => bench.unknown(url, e));
      else bench.notes.push("unknown: skipped (no users API)");
    }
    if (bench.wants("spass")) await guarded(bench, "spass", () => bench.spass(url, e));
    if (bench.wants("tokenlist")) {
      await guarded(bench, "tokenlist", () => bench.tokenList(url, api, e));
    }
    if (bench.wants("replay")) await guarded(bench, "replay", () => bench.replay(api, e));
    bench.report.peakRssBeforeAuthBytes = server.peakRss();
    if (bench.wants("auth")) {
      await guarded(bench, "auth", () => bench.auth(url, password));
      bench.notes.push(
        `auth ran with ${bench.authConnections()} connections (a login is one scrypt password hash)`,
      );
    }
    if (bench.wants("policies")) {
      await guarded(bench, "policies", async () => {
        const policies = benchPolicies();
        progress(`defining ${policies.length} policies through /policy/`);
        for (const [i, p] of policies.entries()) await api.call("POST", `/policy/bench${i}`, p);
        await bench.hotp(url, e, "policies");
        for (let i = 0; i < policies.length; i++) await api.call("DELETE", `/policy/bench${i}`);
      });
    }
    await server.stop();
    bench.report.peakRssBytes = server.peakRss();
    server = undefined;
    if (o.profile) await printProfile(profDir, enrolledAfterMs);
    await bench.ceiling(true);

    if (bench.wants("signed")) {
      await guarded(bench, "signed", async () => {
        progress("restarting Tessera with response signing on (same data)");
        const signed = await bench.tessera(dataDir, true, `${tmp}/tessera-signed.log`);
        server = signed;
        const measured = await bench.hotp(signed.url, e, "signed");
        bench.check(
          "signed: every response carries a signature",
          measured.signed === measured.requests,
          `${measured.signed} of ${measured.requests} responses signed`,
        );
        await bench.verifySignature(signed.url, e, `${dataDir}/signing-key.pem`);
        await signed.stop();
        bench.report.peakRssSignedBytes = signed.peakRss();
        server = undefined;
        progress("raw RSA-PSS signing rate of the server's key, on its own");
        bench.report.signRate = await bench.signRate(`${dataDir}/signing-key.pem`);
        const plain = bench.report.results.find((r) => r.scenario === "hotp");
        const withSig = bench.report.results.find((r) => r.scenario === "signed");
        if (plain?.cpuUsPerRequest && withSig?.cpuUsPerRequest) {
          const extra = withSig.cpuUsPerRequest - plain.cpuUsPerRequest;
          bench.notes.push(
            `signing adds ${extra.toFixed(0)} µs server CPU per validate request (${
              ((extra / withSig.cpuUsPerRequest) * 100).toFixed(0)
            }% of a signed request's CPU; the target wants signing to be nearly all of it)`,
          );
        }
      });
    }
  } catch (err) {
    failed = true;
    progress(`benchmark aborted: ${(err as Error).stack ?? err}`);
    bench.notes.push(`aborted: ${(err as Error).message.split("\n")[0]}`);
  } finally {
    if (server) await server.stop();
  }
  bench.report.targets = evaluateTargets(bench.report);
  bench.notes.push(`total run time ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (o.keep || failed || o.profile) bench.notes.push(`data, logs and Lua scripts kept in ${tmp}`);
  else await Deno.remove(tmp, { recursive: true }).catch(() => {});
  if (o.json) console.log(reportJson(bench.report));
  else console.log(formatReport(bench.report));
  return failed || bench.checks.some((c) => !c.ok) ? 1 : 0;
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
