/**
 * `deno task bench`: measures Tessera's hot paths against this machine's
 * ceiling (a plain Hono "hello" served by the same program) with wrk on
 * loopback, checks correctness under load, and prints a table (or JSON).
 * `--database postgres|both` runs the scenarios on a private PostgreSQL
 * cluster too, `--nodes 2` with two Tessera processes sharing it.
 * See README "Benchmark" and `deno task bench --help`.
 *
 * @module
 */
import { benchPolicies } from "./lib/policies.ts";
import {
  ArgsError,
  type BenchOptions,
  benchTargets,
  parseBenchArgs,
  type Scenario,
  targetLabel,
  USAGE,
} from "./lib/args.ts";
import { Api, mapLimit } from "./lib/api.ts";
import {
  advanceUsers,
  enrol,
  type Enrolment,
  failCounts,
  type OtpUser,
  planUsers,
  validateBody,
} from "./lib/enrol.ts";
import type { LuaItem, LuaSpec } from "./lib/lua.ts";
import { hotpSequence, toHex } from "./lib/otp.ts";
import {
  benchLdif,
  LDAP_CACHE_TIMEOUT,
  LDAP_REALM,
  LDAP_RESOLVER,
  ldapResolverDefinition,
} from "./lib/ldap.ts";
import { slapdBinary, startSlapd } from "../tests/ldap/_slapd.ts";
import {
  MARIADB_DATABASE,
  MARIADB_REALM,
  MARIADB_RESOLVER,
  mariaDbResolverDefinition,
  usersTableSql,
} from "./lib/mariadb.ts";
import { mariaDbBinaries, startMariaDb } from "../tests/mariadb_server.ts";
import {
  type BenchReport,
  type Check,
  evaluateTargets,
  formatReport,
  reportJson,
  scenarioResult,
  type SignRate,
} from "./lib/report.ts";
import { type BenchCluster, benchDatabaseName } from "./lib/postgres.ts";
import {
  kindsText,
  perRequest as pgPerRequest,
  PgCounter,
  type PgWork,
  startCountingCluster,
} from "./lib/pg_stats.ts";
import { freePort, processTreeCpuSeconds, type ServerProcess, startServer } from "./lib/server.ts";
import { planRun, shareKeys, type TargetRun, threadsFor } from "./lib/targets.ts";
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
  /** The server(s) the current scenario loads (their CPU time is read around each run). */
  servers: ServerProcess[] = [];
  /** Every server process started (stopped again on error and Ctrl-C). */
  readonly started: ServerProcess[] = [];
  /** Set on Ctrl-C: a server that starts after that is stopped at once. */
  interrupted = false;
  /** CPU seconds of the database server of the current run (PostgreSQL), if any. */
  dbCpu?: () => number | undefined;
  /** Counts PostgreSQL's statements and transactions of the current run, if it can. */
  pgCounter?: PgCounter;
  /** The engine/node run of the current rows when a run covers several (row group, check prefix). */
  group?: string;
  /** wrk threads of the current run (a multiple of its nodes). */
  threads: number;
  private runNo = 0;

  constructor(readonly o: BenchOptions, readonly tmp: string, wrk: string) {
    this.threads = o.threads;
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
        ...(benchTargets(o).length > 1 || o.databases.includes("postgres")
          ? { targets: benchTargets(o).map(targetLabel) }
          : {}),
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
    const full = this.group ? `${this.group}: ${name}` : name;
    this.checks.push({ name: full, ok, detail });
    if (!ok) progress(`CHECK FAILED ${full}: ${detail}`);
  }

  /** Keeps a just spawned server for the clean-up (or stops it after Ctrl-C). */
  track(server: ServerProcess): void {
    this.started.push(server);
    if (this.interrupted) void server.stop();
  }

  note(text: string): void {
    this.notes.push(this.group ? `${this.group}: ${text}` : text);
  }

  /** Makes `run` the current engine/node run (undefined: the ceiling, no group). */
  enter(run?: TargetRun, multi = false): void {
    this.group = run && multi ? run.label : undefined;
    this.threads = run ? threadsFor(this.o.threads, run.target.nodes) : this.o.threads;
    this.dbCpu = run?.cluster ? () => run.cluster!.cpuSeconds() : undefined;
    this.pgCounter = run?.pgCounter;
  }

  /** CPU seconds of the current servers together; undefined if one cannot be read. */
  serversCpu(): number | undefined {
    let total = 0;
    for (const s of this.servers) {
      const cpu = s.cpuSeconds();
      if (cpu === undefined) return undefined;
      total += cpu;
    }
    return this.servers.length > 0 ? total : undefined;
  }

  /** The largest peak RSS of the current servers. */
  serversPeakRss(): number | undefined {
    const peaks = this.servers.map((s) => s.peakRss()).filter((p) => p !== undefined);
    return peaks.length > 0 ? Math.max(...peaks) : undefined;
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
    urls: string[],
    spec: (seconds: number) => LuaSpec,
    after?: (r: WrkResult) => void,
    connections = this.o.connections,
    beforePhase?: () => Promise<void>,
  ): Promise<{ measured: WrkResult; all: WrkResult[] }> {
    const all: WrkResult[] = [];
    const phases = this.o.warmupS > 0 ? [this.o.warmupS, this.o.durationS] : [this.o.durationS];
    // several nodes: wrk's threads are spread over them (lua.ts), each with its own items
    const nodes = urls.length > 1
      ? urls.map((u) => ({ host: new URL(u).hostname, port: Number(new URL(u).port) }))
      : undefined;
    let cpuBefore: number | undefined;
    let cpuAfter: number | undefined;
    let dbBefore: number | undefined;
    let dbAfter: number | undefined;
    // PostgreSQL's counts cover the measured run only: they start after the warm-up
    let counter = this.pgCounter;
    for (const [i, seconds] of phases.entries()) {
      await beforePhase?.();
      if (counter && i === phases.length - 1) {
        await counter.start().catch((err) => {
          this.note(`${scenario}: PostgreSQL counts not read (${(err as Error).message})`);
          counter = undefined;
        });
      }
      cpuBefore = this.serversCpu();
      dbBefore = this.dbCpu?.();
      const r = await runWrk({
        url: urls[0],
        spec: nodes ? { ...spec(seconds), nodes } : spec(seconds),
        scriptPath: `${this.tmp}/run${++this.runNo}-${scenario}.lua`,
        seconds,
        connections,
        cpus: this.o.wrkCpus,
      });
      cpuAfter = this.serversCpu();
      dbAfter = this.dbCpu?.();
      after?.(r);
      all.push(r);
    }
    const measured = all[all.length - 1];
    const perRequest = (before?: number, after?: number) =>
      before !== undefined && after !== undefined && measured.requests > 0
        ? ((after - before) * 1e6) / measured.requests
        : undefined;
    const cpuUs = perRequest(cpuBefore, cpuAfter);
    const dbCpuUs = perRequest(dbBefore, dbAfter);
    let pgWork: PgWork | undefined;
    if (counter) {
      try {
        pgWork = pgPerRequest(await counter.take(), measured.requests, measured.sent);
      } catch (err) {
        this.note(`${scenario}: PostgreSQL counts not read (${(err as Error).message})`);
      }
    }
    progress(
      `  ${this.group ? `[${this.group}] ` : ""}${scenario}: ${
        measured.rps.toFixed(0)
      } req/s, p50 ${measured.p50Ms.toFixed(2)} ms, p99 ${measured.p99Ms.toFixed(2)} ms${
        pgWork
          ? `; PostgreSQL per request: ${pgWork.statementsPerRequest.toFixed(2)} statements (${
            kindsText(pgWork)
          }), ${pgWork.commitsPerRequest.toFixed(2)} commits`
          : ""
      }`,
    );
    if (measured.exhausted) {
      this.note(`${scenario}: the pre-computed OTPs ran out, the run stopped early`);
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
      peakRssAfterBytes: this.serversPeakRss(),
      ...(this.group ? { target: this.group } : {}),
      ...(dbCpuUs !== undefined ? { dbCpuUsPerRequest: dbCpuUs } : {}),
      ...(pgWork ? { pg: pgWork } : {}),
    });
    return { measured, all };
  }

  /** Items whose OTP sequences continue at each user's `next` counter. */
  otpItems(users: OtpUser[], byUser: boolean, seconds: number, realm?: string): LuaItem[] {
    const n = this.otpsPerItem(users.length, seconds);
    return users.map((u) => ({
      path: "/validate/check",
      body: validateBody(u, byUser, realm),
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
      onSpawn: (s) => this.track(s),
    });
    this.servers = [hello];
    try {
      progress(`ceiling${again ? " again" : ""}: plain Hono hello from the same program`);
      const { measured } = await this.load("hello", [hello.url], () => ({
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
    databaseUrl?: string,
  ): Promise<ServerProcess> {
    const port = freePort();
    const server = await startServer({
      denoFlags,
      args: [
        "serve",
        "--data-dir",
        dataDir,
        "--listen",
        `127.0.0.1:${port}`,
        ...(this.o.workers > 1 ? ["--workers", String(this.o.workers)] : []),
      ],
      port,
      env: {
        TESSERA_SIGNING_ENABLED: String(signing),
        TESSERA_LOG_LEVEL: "warn",
        TESSERA_CONFIG: `${this.tmp}/tessera.toml`,
        ...(databaseUrl ? { TESSERA_STORAGE_DATABASE_URL: databaseUrl } : {}),
        ...this.o.serverEnv,
      },
      logFile: log,
      binary: this.o.binary,
      readyPath: "/healthz/",
      timeoutMs: 60000,
      onSpawn: (s) => this.track(s),
    });
    return server;
  }

  /**
   * Starts the nodes of `run` one after the other on the shared database:
   * the first creates the keys (and migrates, and creates the admin), the
   * others get copies of its key files, as a second node of an installation
   * does. The servers become the current load targets.
   */
  async startNodes(run: TargetRun, signing: boolean, denoFlags: string[] = []): Promise<void> {
    this.servers = [];
    for (const log of [...run.logs, ...run.signedLogs]) {
      await Deno.mkdir(log.slice(0, log.lastIndexOf("/")), { recursive: true });
    }
    for (let i = 0; i < run.dataDirs.length; i++) {
      if (i > 0) await shareKeys(run.dataDirs[0], run.dataDirs[i]);
      this.servers.push(
        await this.tessera(
          run.dataDirs[i],
          signing,
          signing ? run.signedLogs[i] : run.logs[i],
          i === 0 ? denoFlags : [],
          run.databaseUrl,
        ),
      );
    }
  }

  /** Stops the current servers; returns them. */
  async stopNodes(): Promise<ServerProcess[]> {
    const stopped = this.servers;
    for (const s of stopped) await s.stop();
    this.servers = [];
    return stopped;
  }

  async hotp(
    urls: string[],
    e: Enrolment,
    scenario: "hotp" | "signed" | "policies",
  ): Promise<WrkResult> {
    let sentOtps = 0;
    const { measured, all } = await this.load(
      scenario,
      urls,
      (seconds) => ({
        method: "POST",
        items: this.otpItems(e.hotp, e.byUser, seconds),
        threads: this.threads,
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

  /**
   * HOTP checks of users that live in a directory: a private slapd with one
   * entry per user, an `ldapresolver` with a user cache, a token each. Once
   * the users are cached (warm-up), the rate is compared with the SQL
   * resolver's (`hotp`) of the same run.
   */
  async ldap(urls: string[], api: Api, e: Enrolment): Promise<void> {
    if (!e.byUser) {
      this.note("ldap: skipped (no users API)");
      return;
    }
    if (slapdBinary() === undefined) {
      this.note("ldap: skipped (OpenLDAP's slapd is not installed: apt-get install slapd)");
      return;
    }
    const users = planUsers("l", this.o.users);
    const ldif = `${this.tmp}/bench-ldap.ldif`;
    await Deno.writeTextFile(ldif, benchLdif(users));
    progress(`ldap: starting a private slapd with ${users.length} users`);
    const slapd = await startSlapd({ ldif });
    try {
      await api.call("POST", `/resolver/${LDAP_RESOLVER}`, ldapResolverDefinition(slapd.url));
      await api.call("POST", `/realm/${LDAP_REALM}`, { resolvers: LDAP_RESOLVER });
      progress(`ldap: enrolling ${users.length} HOTP tokens for the directory's users`);
      await mapLimit(users, 8, (u) =>
        api.call("POST", "/token/init", {
          type: "hotp",
          serial: u.serial,
          otpkey: toHex(u.key),
          pin: u.pin,
          user: u.login,
          realm: LDAP_REALM,
        }));
      let sentOtps = 0;
      const { measured, all } = await this.load(
        "ldap",
        urls,
        (seconds) => ({
          method: "POST",
          items: this.otpItems(users, true, seconds, LDAP_REALM),
          threads: this.threads,
        }),
        (r) => sentOtps += advanceUsers(users, r.used),
      );
      const c = combineRuns(all);
      this.check(
        "ldap: no OTP accepted twice",
        c.accepts <= sentOtps,
        `${c.accepts} accepted of ${sentOtps} distinct OTPs sent (each once)`,
      );
      const sql = this.report.results.find((r) => r.scenario === "hotp" && r.target === this.group);
      if (sql === undefined) {
        this.note("ldap: no hotp row in this run to compare with (run the hotp scenario too)");
      } else {
        const share = measured.rps / sql.rps;
        this.check(
          "ldap: within 50% of the SQL resolver's rate once users are cached",
          share >= 0.5,
          `${measured.rps.toFixed(0)} req/s with LDAP users, ${sql.rps.toFixed(0)} req/s with ` +
            `SQL users (${(share * 100).toFixed(0)}%); user cache ${LDAP_CACHE_TIMEOUT} s`,
        );
      }
    } finally {
      await slapd.stop();
    }
  }

  /**
   * HOTP checks of users that live in a MariaDB table: the tests' private
   * MariaDB server with one row per user, a `sqlresolver` on it as a
   * privacyIDEA site defines one, a token each. Every check looks its user up
   * in MariaDB (privacyIDEA's user cache stays off, its default). Once warm
   * (the pool open, the lookup prepared on each connection), the rate is
   * compared with the SQL resolver's on SQLite (`hotp`) of the same run.
   */
  async mariadb(urls: string[], api: Api, e: Enrolment): Promise<void> {
    if (!e.byUser) {
      this.note("mariadb: skipped (no users API)");
      return;
    }
    if (mariaDbBinaries() === undefined) {
      this.note("mariadb: skipped (MariaDB is not installed: apt-get install mariadb-server)");
      return;
    }
    const users = planUsers("m", this.o.users);
    progress(`mariadb: starting a private MariaDB server with ${users.length} users`);
    const server = await startMariaDb();
    try {
      await server.createDatabase(MARIADB_DATABASE);
      for (const statement of usersTableSql(users)) {
        await server.sql(statement, { database: MARIADB_DATABASE });
      }
      await api.call("POST", `/resolver/${MARIADB_RESOLVER}`, mariaDbResolverDefinition(server));
      await api.call("POST", `/realm/${MARIADB_REALM}`, { resolvers: MARIADB_RESOLVER });
      progress(`mariadb: enrolling ${users.length} HOTP tokens for the table's users`);
      await mapLimit(users, 8, (u) =>
        api.call("POST", "/token/init", {
          type: "hotp",
          serial: u.serial,
          otpkey: toHex(u.key),
          pin: u.pin,
          user: u.login,
          realm: MARIADB_REALM,
        }));
      let sentOtps = 0;
      // the MariaDB server's CPU per request is reported beside Tessera's
      const outerDbCpu = this.dbCpu;
      this.dbCpu = () => processTreeCpuSeconds(server.pid);
      const { measured, all } = await this.load(
        "mariadb",
        urls,
        (seconds) => ({
          method: "POST",
          items: this.otpItems(users, true, seconds, MARIADB_REALM),
          threads: this.threads,
        }),
        (r) => sentOtps += advanceUsers(users, r.used),
      ).finally(() => this.dbCpu = outerDbCpu);
      const c = combineRuns(all);
      this.check(
        "mariadb: no OTP accepted twice",
        c.accepts <= sentOtps,
        `${c.accepts} accepted of ${sentOtps} distinct OTPs sent (each once)`,
      );
      this.check(
        "mariadb: the checks succeed",
        c.requests > 0 && c.accepts >= c.requests * 0.99,
        `${c.accepts} of ${c.requests} accepted`,
      );
      const hotp = this.report.results.find((r) =>
        r.scenario === "hotp" && r.target === this.group
      );
      if (hotp === undefined) {
        this.note("mariadb: no hotp row in this run to compare with (run the hotp scenario too)");
      } else {
        const share = measured.rps / hotp.rps;
        const row = this.report.results.find((r) =>
          r.scenario === "mariadb" && r.target === this.group
        );
        const cpu = (us?: number) => us === undefined ? "?" : us.toFixed(0);
        this.check(
          "mariadb: within 50% of the SQLite SQL resolver's rate once warm",
          share >= 0.5,
          `${measured.rps.toFixed(0)} req/s with MariaDB users, ${hotp.rps.toFixed(0)} req/s ` +
            `with SQLite users (${(share * 100).toFixed(0)}%); CPU per request: Tessera ` +
            `${cpu(row?.cpuUsPerRequest)} µs and MariaDB ${cpu(row?.dbCpuUsPerRequest)} µs, ` +
            `against ${cpu(hotp.cpuUsPerRequest)} µs for hotp; one lookup per check`,
        );
      }
    } finally {
      await server.stop();
    }
  }

  async wrong(urls: string[], api: Api, e: Enrolment): Promise<void> {
    const { all } = await this.load("wrong", urls, () => ({
      method: "POST",
      items: e.wrong.map((u) => ({
        path: "/validate/check",
        body: validateBody(u, e.byUser) + u.wrong,
      })),
      threads: this.threads,
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
      this.note(`wrong: audit count not available (${(err as Error).message.slice(0, 120)})`);
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

  async unknown(urls: string[], e: Enrolment): Promise<void> {
    const { all } = await this.load("unknown", urls, () => ({
      method: "POST",
      items: e.unknown.map((login) => ({
        path: "/validate/check",
        body: `user=${login}&realm=${e.realm}&pass=4711123456`,
      })),
      threads: this.threads,
    }));
    const c = combineRuns(all);
    this.check(
      "unknown: every answer is 400 (ERR904), nothing accepted",
      c.statuses["400"] === c.requests && c.accepts === 0,
      `statuses ${JSON.stringify(c.statuses)}, accepted ${c.accepts}`,
    );
  }

  async spass(urls: string[], e: Enrolment): Promise<void> {
    const { all } = await this.load("spass", urls, () => ({
      method: "POST",
      items: e.spass.map((u) => ({ path: "/validate/check", body: validateBody(u, e.byUser) })),
      threads: this.threads,
    }));
    const c = combineRuns(all);
    this.check(
      "spass: every answer accepts",
      c.accepts === c.requests && c.statuses["200"] === c.requests,
      `${c.accepts} of ${c.requests} accepted`,
    );
  }

  async tokenList(urls: string[], api: Api, e: Enrolment): Promise<void> {
    const pages = Math.max(1, Math.ceil(e.tokensInDb / 15));
    const { all } = await this.load("tokenlist", urls, () => ({
      method: "GET",
      headers: { "PI-Authorization": api.jwt ?? "" },
      items: Array.from({ length: Math.min(pages, 100) }, (_, i) => ({
        path: `/token/?pagesize=15&page=${i + 1}`,
      })),
      threads: this.threads,
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
    return Math.max(this.threads, Math.min(this.o.connections, AUTH_CONNECTIONS));
  }

  /**
   * Waits until each node admits as many logins at once as the next wrk run
   * keeps in flight. The logins wrk had in flight when its previous run
   * stopped still run on the server (queued password hashes) and count
   * against the per-address limit (`auth.login_parallel`, 4); a run started
   * before they end gets 429s that are the previous run's, not its own.
   */
  async drainLogins(urls: string[], password: string): Promise<void> {
    const perNode = Math.ceil(this.authConnections() / urls.length);
    const deadline = Date.now() + 30_000;
    for (const url of urls) {
      const api = new Api(url);
      for (;;) {
        const answers = await Promise.all(
          Array.from(
            { length: perNode },
            () => api.raw("POST", "/auth", { username: "admin", password }),
          ),
        );
        if (answers.every((a) => a.httpStatus === 200)) break;
        if (Date.now() > deadline) {
          throw new Error(
            `logins still refused after 30 s: HTTP ${answers.map((a) => a.httpStatus).join(",")}`,
          );
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  async auth(urls: string[], password: string): Promise<void> {
    const { all } = await this.load(
      "auth",
      urls,
      () => ({
        method: "POST",
        items: [{
          path: "/auth",
          body: `username=admin&password=${encodeURIComponent(password)}`,
        }],
        threads: this.threads,
      }),
      undefined,
      this.authConnections(),
      () => this.drainLogins(urls, password),
    );
    const c = combineRuns(all);
    this.check(
      "auth: every login succeeds",
      c.statuses["200"] === c.requests,
      `statuses ${JSON.stringify(c.statuses)}`,
    );
  }

  /**
   * Replays: used OTPs are refused; one fresh OTP sent 10× at once is accepted
   * once. With several nodes (`apis`, one per node) a user's fresh OTP goes to
   * one node and its replays to the next, and the 10 parallel sends alternate.
   */
  async replay(apis: Api[], e: Enrolment): Promise<void> {
    const sample = e.hotp.slice(0, 20);
    const node = (i: number) => apis[i % apis.length];
    const check = async (u: OtpUser, counter: number, api: Api) => {
      const otp = hotpSequence(u.key, counter, 1);
      const body = Object.fromEntries(new URLSearchParams(validateBody(u, e.byUser) + otp));
      const a = await api.raw("POST", "/validate/check", body);
      if (a.httpStatus >= 500) throw new Error(`HTTP ${a.httpStatus}`);
      return a.body?.result?.value === true;
    };
    // one fresh OTP per user first, so there is something to replay in any case
    let fresh = 0;
    for (const [i, u] of sample.entries()) {
      if (await check(u, u.next, node(i))) fresh++;
      u.next += 1;
    }
    this.check(
      "replay: fresh OTPs are accepted",
      fresh === sample.length,
      `${fresh} of ${sample.length} accepted`,
    );
    let replayAccepted = 0;
    for (const [i, u] of sample.entries()) {
      for (const back of [1, 2, 5]) {
        if (u.next - back >= 0 && await check(u, u.next - back, node(i + 1))) replayAccepted++;
      }
    }
    this.check(
      "replay: already used OTPs are refused",
      sample.length > 0 && replayAccepted === 0,
      `${replayAccepted} of up to ${
        sample.length * 3
      } replayed OTPs accepted (${sample.length} users${
        apis.length > 1 ? ", each replayed on the node that did not accept it" : ""
      })`,
    );
    const parallel = e.hotp.slice(0, 20);
    const accepted = await Promise.all(parallel.map(async (u) => {
      const counter = u.next;
      u.next += 1;
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, j) => check(u, counter, node(j))),
      );
      return results.filter(Boolean).length;
    }));
    this.check(
      "replay: a fresh OTP sent 10 times at once is accepted exactly once",
      accepted.every((n) => n === 1),
      `accepts per user: ${accepted.join(",")}${
        apis.length > 1 ? ` (sent to ${apis.length} nodes in turn)` : ""
      }`,
    );
    // over everything so far (load runs included): the server's own record of accepts
    const distinct = e.hotp.reduce((a, u) => a + u.next, 0);
    const page = await apis[0].call("GET", "/audit/", {
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

  /** One more signed validate answer per node, verified with the (shared) server key. */
  async verifySignature(urls: string[], e: Enrolment, keyFile: string): Promise<void> {
    const pem = await Deno.readTextFile(keyFile).catch(() => "");
    const bad: string[] = [];
    for (const url of urls) {
      const u = e.hotp[0];
      const otp = hotpSequence(u.key, u.next++, 1);
      const params = Object.fromEntries(new URLSearchParams(validateBody(u, e.byUser) + otp));
      const answer = await new Api(url).raw("POST", "/validate/check", params);
      if (!(pem !== "" && await verifySignedBody(answer.text, pem))) {
        bad.push(`body: ${answer.text.slice(0, 200)}`);
      }
    }
    this.check(
      urls.length > 1
        ? "signed: a response of every node verifies with the shared server key"
        : "signed: a response's signature verifies with the server's key",
      bad.length === 0,
      bad.length === 0 ? "RSA-PSS SHA-256 over the canonical body" : bad.join("; "),
    );
  }

  async signRate(keyFile: string): Promise<SignRate | undefined> {
    try {
      Deno.statSync(keyFile);
    } catch {
      this.note(`no signing key at ${keyFile}: the raw signing rate was not measured`);
      return undefined;
    }
    const script = new URL("./sign_rate.ts", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", script, keyFile, "3", String(Math.min(this.o.connections, 16))],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      this.note(`sign_rate.ts failed: ${new TextDecoder().decode(out.stderr).slice(0, 300)}`);
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

/** Lines of a server log that report problems (for the notes when a check failed). */
async function errorLines(logFile: string, max = 5): Promise<string[]> {
  const text = await Deno.readTextFile(logFile).catch(() => "");
  const lines = text.split("\n").filter((l) => /error|warn|fatal|exception|timeout/i.test(l));
  return lines.slice(0, max).map((l) => l.slice(0, 300));
}

/** Start, enrolment and the unsigned scenarios of one engine/node run. */
async function runUnsigned(bench: Bench, run: TargetRun, tmp: string): Promise<void> {
  const o = bench.o;
  const profDir = `${tmp}/profile`;
  const profile = o.profile && run.primary;
  progress(
    `starting Tessera (signing off) on ${run.dataDirs.join(", ")}${
      run.databaseUrl ? ` with ${run.label} on ${run.databaseUrl}` : ""
    }`,
  );
  const serverStarted = performance.now();
  await bench.startNodes(run, false, profile ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : []);
  const servers = bench.servers;
  if (run.primary) bench.report.peakRssAtStartBytes = servers[0].peakRss();
  const apis = servers.map((s) => new Api(s.url));
  const api = apis[0];
  const password = (await Deno.readTextFile(`${run.dataDirs[0]}/initial-admin-password`)).trim();
  await api.login("admin", password);
  for (const other of apis.slice(1)) other.jwt = api.jwt;
  const enrolStarted = performance.now();
  const e = await enrol(api, {
    users: o.users,
    tokens: o.tokens,
    progress,
    usersDatabase: run.usersDatabase,
  });
  run.enrolment = e;
  for (const n of e.notes) bench.note(n);
  if (run.primary) {
    bench.report.tokensInDb = e.tokensInDb;
    bench.report.peakRssAfterEnrolBytes = servers[0].peakRss();
  }
  const enrolledAfterMs = performance.now() - serverStarted;
  progress(
    `enrolled in ${
      ((performance.now() - enrolStarted) / 1000).toFixed(1)
    } s; ${e.tokensInDb} tokens`,
  );
  if (o.users <= o.connections / bench.threads) {
    const note =
      `--users ${o.users} is not above the connections per wrk thread (${
        o.connections / bench.threads
      }): ` +
      "a user's next OTP can overtake the previous one, which is then refused as already used";
    if (!bench.notes.includes(note)) bench.notes.push(note);
  }
  if (servers.length > 1) {
    bench.note(
      `${servers.length} Tessera processes on one database; wrk runs ${bench.threads} threads, ` +
        `thread t on node t mod ${servers.length}, each with its own users`,
    );
  }

  const urls = servers.map((s) => s.url);
  if (bench.wants("hotp")) await guarded(bench, "hotp", () => bench.hotp(urls, e, "hotp").then());
  if (bench.wants("ldap")) await guarded(bench, "ldap", () => bench.ldap(urls, api, e));
  if (bench.wants("mariadb")) await guarded(bench, "mariadb", () => bench.mariadb(urls, api, e));
  if (bench.wants("wrong")) await guarded(bench, "wrong", () => bench.wrong(urls, api, e));
  if (bench.wants("unknown")) {
    if (e.byUser) await guarded(bench, "unknown", () => bench.unknown(urls, e));
    else bench.note("unknown: skipped (no users API)");
  }
  if (bench.wants("spass")) await guarded(bench, "spass", () => bench.spass(urls, e));
  if (bench.wants("tokenlist")) {
    await guarded(bench, "tokenlist", () => bench.tokenList(urls, api, e));
  }
  if (bench.wants("replay")) await guarded(bench, "replay", () => bench.replay(apis, e));
  if (run.primary) bench.report.peakRssBeforeAuthBytes = servers[0].peakRss();
  if (bench.wants("auth")) {
    await guarded(bench, "auth", () => bench.auth(urls, password));
    bench.note(
      `auth ran with ${bench.authConnections()} connections (a login is one scrypt password hash)`,
    );
  }
  if (bench.wants("policies")) {
    await guarded(bench, "policies", async () => {
      const policies = benchPolicies();
      progress(`defining ${policies.length} policies through /policy/`);
      for (const [i, p] of policies.entries()) await api.call("POST", `/policy/bench${i}`, p);
      for (const [n, other] of apis.entries()) {
        if (n === 0) continue;
        const listed = await other.call("GET", "/policy/");
        // an object keyed by name, or a list with compat.policy_list
        const names: string[] = Array.isArray(listed)
          ? listed.map((p: { name: string }) => p.name)
          : Object.keys(listed ?? {});
        const seen = names.filter((name: string) => /^bench\d+$/.test(name)).length;
        bench.check(
          `policies: node ${n + 1} lists the policies defined on node 1`,
          seen === policies.length,
          `${seen} of ${policies.length}`,
        );
      }
      await bench.hotp(urls, e, "policies");
      for (let i = 0; i < policies.length; i++) await api.call("DELETE", `/policy/bench${i}`);
    });
  }
  const stopped = await bench.stopNodes();
  if (run.primary) bench.report.peakRssBytes = stopped[0].peakRss();
  else {
    bench.note(
      `server peak RSS ${
        stopped.map((s, i) => `${stopped.length > 1 ? `node ${i + 1} ` : ""}${mbText(s.peakRss())}`)
          .join(", ")
      } with ${e.tokensInDb} tokens`,
    );
  }
  run.enrolled = true;
  if (profile) await printProfile(profDir, enrolledAfterMs);
}

/** The signed part of one run: its nodes restarted with signing on (same data), hotp again. */
async function runSigned(bench: Bench, run: TargetRun): Promise<void> {
  const e = run.enrolment!;
  progress(
    `restarting Tessera with response signing on (same data)${
      run.target.database === "postgres" ? `: ${run.label}` : ""
    }`,
  );
  await bench.startNodes(run, true);
  const urls = bench.servers.map((s) => s.url);
  const measured = await bench.hotp(urls, e, "signed");
  bench.check(
    "signed: every response carries a signature",
    measured.signed === measured.requests,
    `${measured.signed} of ${measured.requests} responses signed`,
  );
  const keyFile = `${run.dataDirs[0]}/signing-key.pem`;
  await bench.verifySignature(urls, e, keyFile);
  const stopped = await bench.stopNodes();
  if (run.primary) bench.report.peakRssSignedBytes = stopped[0].peakRss();
  if (!bench.report.signRate) {
    progress("raw RSA-PSS signing rate of the server's key, on its own");
    bench.report.signRate = await bench.signRate(keyFile);
  }
  const rows = bench.report.results.filter((r) => r.target === bench.group);
  const plain = rows.find((r) => r.scenario === "hotp");
  const withSig = rows.find((r) => r.scenario === "signed");
  if (plain?.cpuUsPerRequest && withSig?.cpuUsPerRequest) {
    const extra = withSig.cpuUsPerRequest - plain.cpuUsPerRequest;
    bench.note(
      `signing adds ${extra.toFixed(0)} µs server CPU per validate request (${
        ((extra / withSig.cpuUsPerRequest) * 100).toFixed(0)
      }% of a signed request's CPU; the target wants signing to be nearly all of it)`,
    );
  }
}

/** The 1-minute load average of the machine (/proc/loadavg), or undefined. */
function loadAverage(): number | undefined {
  try {
    const n = Number(Deno.readTextFileSync("/proc/loadavg").split(" ")[0]);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

function mbText(bytes: number | undefined): string {
  return bytes === undefined ? "?" : `${(bytes / 1e6).toFixed(1)} MB`;
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
  // an empty config file: defaults plus the TESSERA_* variables set per server below
  await Deno.writeTextFile(`${tmp}/tessera.toml`, "# tessera bench: defaults\n");
  const bench = new Bench(o, tmp, wrk);
  const targets = benchTargets(o);
  const multi = targets.length > 1;
  const runs = targets.map((t, i) => planRun(t, tmp, i === 0));
  if (!multi && o.users <= o.connections / threadsFor(o.threads, targets[0].nodes)) {
    bench.notes.push(
      `--users ${o.users} is not above the connections per wrk thread (${
        o.connections / threadsFor(o.threads, targets[0].nodes)
      }): ` +
        "a user's next OTP can overtake the previous one, which is then refused as already used",
    );
  }
  let cluster: BenchCluster | undefined;
  let clusterStarting: Promise<BenchCluster> | undefined;
  let counting = false;
  // Ctrl-C or SIGTERM: stop every server and the PostgreSQL cluster before leaving
  const cleanUp = async () => {
    for (const s of bench.started) await s.stop().catch(() => {});
    const c = cluster ?? await clusterStarting?.catch(() => undefined);
    await c?.stop().catch(() => {});
  };
  const onSignal = () => {
    if (bench.interrupted) return;
    bench.interrupted = true;
    progress("interrupted: stopping the servers and PostgreSQL");
    cleanUp().finally(async () => {
      if (!o.keep) await Deno.remove(tmp, { recursive: true }).catch(() => {});
      Deno.exit(130);
    });
  };
  for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, onSignal);
  const started = performance.now();
  const loadAtStart = loadAverage();
  let failed = false;
  try {
    await bench.ceiling();

    for (const run of runs) {
      bench.enter(run, multi);
      try {
        if (run.target.database === "postgres") {
          if (!cluster) {
            progress("starting a private PostgreSQL cluster (initdb in a temporary folder)");
            const starting = startCountingCluster();
            clusterStarting = starting.then((c) => c.cluster);
            const started = await starting;
            cluster = started.cluster;
            counting = started.counting;
            if (started.note) {
              progress(started.note);
              bench.notes.push(started.note);
            }
            progress(
              `  PostgreSQL on 127.0.0.1:${cluster.cluster.port} (pid ${cluster.cluster.pid})${
                counting ? ", counting statements (pg_stat_statements)" : ""
              }`,
            );
          }
          run.cluster = cluster;
          const dbName = benchDatabaseName(run.target.nodes);
          run.databaseUrl = await cluster!.createDatabase(dbName);
          if (counting) {
            const counter = new PgCounter(cluster!, dbName);
            await counter.open();
            run.pgCounter = counter;
          }
          bench.enter(run, multi);
        }
        await runUnsigned(bench, run, tmp);
      } catch (err) {
        if (!multi) throw err;
        failed = true;
        progress(`${run.label} aborted: ${(err as Error).stack ?? err}`);
        bench.note(`aborted: ${(err as Error).message.split("\n")[0]}`);
        await bench.stopNodes();
      }
    }
    bench.enter(undefined);
    await bench.ceiling(true);

    if (bench.wants("signed")) {
      for (const run of runs.filter((r) => r.enrolled)) {
        bench.enter(run, multi);
        await guarded(bench, "signed", async () => {
          try {
            await runSigned(bench, run);
          } finally {
            await bench.stopNodes();
          }
        });
      }
      bench.enter(undefined);
    }
  } catch (err) {
    failed = true;
    progress(`benchmark aborted: ${(err as Error).stack ?? err}`);
    bench.notes.push(`aborted: ${(err as Error).message.split("\n")[0]}`);
  } finally {
    bench.enter(undefined);
    for (const s of bench.started) await s.stop();
    for (const run of runs) await run.pgCounter?.close().catch(() => {});
    if (cluster && (o.keep || failed)) {
      await cluster.keepLogs(`${tmp}/postgres-log`).catch(() => {});
    }
    await cluster?.stop();
    for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.removeSignalListener(sig, onSignal);
  }
  // a failed check or run: the servers' own warnings and errors, to read beside the numbers
  if (failed || bench.checks.some((c) => !c.ok)) {
    for (const run of runs) {
      for (const log of [...run.logs, ...run.signedLogs]) {
        const lines = await errorLines(log);
        if (lines.length > 0) {
          bench.notes.push(`${log.slice(tmp.length + 1)}: ${lines.join(" | ")}`);
        }
      }
    }
  }
  const primary = runs[0];
  bench.report.targets = evaluateTargets(bench.report, { primary: primary.label });
  if (multi) bench.notes.push(`the ratio targets are judged on the ${primary.label} rows`);
  if (o.workers > 1) bench.notes.push(`each Tessera node served from ${o.workers} processes`);
  if (o.wrkCpus !== undefined) bench.notes.push(`wrk pinned to CPU ${o.wrkCpus}`);
  bench.notes.push(`total run time ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const loadAtEnd = loadAverage();
  if (loadAtStart !== undefined && loadAtEnd !== undefined) {
    // other processes on the machine move req/s (and, less, CPU per request): say how busy it was
    bench.notes.push(
      `load average (1 min) ${loadAtStart.toFixed(1)} at the start, ${
        loadAtEnd.toFixed(1)
      } at the end, on ${navigator.hardwareConcurrency} CPUs`,
    );
  }
  if (o.keep || failed || o.profile) bench.notes.push(`data, logs and Lua scripts kept in ${tmp}`);
  else await Deno.remove(tmp, { recursive: true }).catch(() => {});
  if (o.json) console.log(reportJson(bench.report));
  else console.log(formatReport(bench.report));
  return failed || bench.checks.some((c) => !c.ok) ? 1 : 0;
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
