/**
 * Command line of `deno task bench` (pure: no I/O).
 *
 * @module
 */

/** Every load scenario the benchmark knows, in run order. */
export const SCENARIOS = [
  "hello",
  "hotp",
  "ldap",
  "mariadb",
  "wrong",
  "unknown",
  "spass",
  "tokenlist",
  "auth",
  "replay",
  "policies",
  "signed",
] as const;

/** A scenario name. */
export type Scenario = typeof SCENARIOS[number];

/** What one scenario measures (for `--help` and the table). */
export const SCENARIO_TITLES: Record<Scenario, string> = {
  hello: "plain Hono hello (ceiling)",
  hotp: "/validate/check correct HOTP",
  ldap: "/validate/check correct HOTP, LDAP user",
  mariadb: "/validate/check correct HOTP, SQL user on MariaDB",
  wrong: "/validate/check wrong OTP",
  unknown: "/validate/check unknown user",
  spass: "/validate/check spass",
  tokenlist: "GET /token/ (page of 15)",
  auth: "POST /auth (admin login)",
  replay: "replayed OTPs (correctness only)",
  policies: "/validate/check correct HOTP, 50 policies",
  signed: "/validate/check HOTP, signing on",
};

/** Database engines the benchmark can run Tessera on. */
export const DATABASES = ["sqlite", "postgres"] as const;

/** A database engine. */
export type DatabaseEngine = typeof DATABASES[number];

/** How many Tessera processes share the database (PostgreSQL only for 2). */
export type NodeCount = 1 | 2;

/** One engine/node combination the scenarios run on. */
export interface BenchTarget {
  database: DatabaseEngine;
  nodes: NodeCount;
}

/** Parsed options. */
export interface BenchOptions {
  /** Measured seconds per load scenario. */
  durationS: number;
  /** Warm-up seconds before each measured run (same load, not counted). */
  warmupS: number;
  connections: number;
  threads: number;
  /** Users per validate scenario (each with its own token). */
  users: number;
  /** Total tokens in the database before the token-list scenario. */
  tokens: number;
  json: boolean;
  scenarios: Scenario[];
  /** Command that starts the server instead of `deno run -A main.ts` (e.g. a compiled binary). */
  binary?: string;
  /** Keep the temporary data directory. */
  keep: boolean;
  /** Run the (unsigned) server with --cpu-prof and print where its time went. */
  profile: boolean;
  /** Extra environment of the server processes (Tessera and hello), e.g. DENO_V8_FLAGS. */
  serverEnv: Record<string, string>;
  /** Engines to run on, in this order (SQLite first when both). */
  databases: DatabaseEngine[];
  /** Node counts of the PostgreSQL runs (SQLite always runs one node). */
  nodes: NodeCount[];
  /** Processes of each Tessera node (`serve --workers`). */
  workers: number;
  /** CPUs wrk is pinned to (`taskset -c`), e.g. "1"; undefined: not pinned. */
  wrkCpus?: string;
  help: boolean;
}

/** Defaults: the whole run finishes within about two minutes on the 2-core machine. */
export const DEFAULTS: BenchOptions = {
  durationS: 5,
  warmupS: 1,
  connections: 32,
  threads: 1,
  users: 200,
  tokens: 1000,
  json: false,
  scenarios: [...SCENARIOS],
  keep: false,
  profile: false,
  serverEnv: {},
  databases: ["sqlite"],
  nodes: [1],
  workers: 1,
  help: false,
};

/** Usage text. */
export const USAGE = `Usage: deno task bench [options]

Starts Tessera on a fresh temporary data directory, enrols users and tokens
through the API, and drives each scenario with wrk from a separate process.

Options:
  --duration <t>       measured time per scenario (5s; units ms, s, m)
  --warmup <t>         warm-up per scenario, not counted (1s; 0 = none)
  --connections <n>    wrk connections (32)
  --threads <n>        wrk threads (1)
  --users <n>          users (tokens) per validate scenario (200)
  --tokens <n>         tokens in the database before GET /token/ (1000);
                       --tokens 10000 is the RSS-at-10,000-tokens run
  --scenario <name…>   run only these (space or comma separated); the hello
                       ceiling always runs. Names: ${SCENARIOS.join(", ")}
  --binary <path>      start the server as "<path> serve|hello …" instead of
                       "deno run -A main.ts serve|hello …"
  --json               print the result as JSON on stdout
  --keep               keep the temporary data directory
  --server-env <N=V>   extra environment for the server processes (repeatable),
                       e.g. MALLOC_ARENA_MAX=1 or DENO_V8_FLAGS=--max-old-space-size=64
  --profile            run the server (signing off) with --cpu-prof and print
                       where its CPU time went (combine with --scenario)
  --database <db>      sqlite (default), postgres or both: PostgreSQL runs on a
                       private cluster the benchmark starts (initdb in a
                       temporary folder) and stops at the end; it counts
                       PostgreSQL's statements and commits per request
                       (pg_stat_statements; ~20 s more per scenario)
  --nodes <n>          Tessera processes sharing the PostgreSQL database: 1
                       (default), 2, or "1,2"/"both" for a run of each; wrk
                       spreads its threads (and users) over the nodes.
                       SQLite always runs one node
  --workers <n>        processes per Tessera node (serve --workers n; 1)
  --wrk-cpus <list>    pin wrk to these CPUs (taskset -c, e.g. 1): with the
                       load generator on its own core, --workers 2 shows what a
                       second process adds
  -h, --help           this text`;

/** Thrown for bad command lines; the message is for the user. */
export class ArgsError extends Error {}

/** Parses "10s", "500ms", "1m", "2.5" (seconds) into seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) throw new ArgsError(`Cannot parse duration "${text}": use e.g. 10s, 500ms or 1m`);
  const n = Number(m[1]);
  const seconds = m[2] === "ms" ? n / 1000 : m[2] === "m" ? n * 60 : n;
  return seconds;
}

function positiveInt(name: string, text: string | undefined): number {
  if (text === undefined || !/^\d+$/.test(text) || Number(text) < 1) {
    throw new ArgsError(`Option --${name} needs a positive whole number, got "${text ?? ""}"`);
  }
  return Number(text);
}

/** Parses the command line; throws {@link ArgsError}. */
export function parseBenchArgs(args: string[]): BenchOptions {
  const o: BenchOptions = {
    ...DEFAULTS,
    scenarios: [...DEFAULTS.scenarios],
    serverEnv: { ...DEFAULTS.serverEnv },
  };
  let chosen: Scenario[] | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [flag, inline] = arg.startsWith("--") ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined) throw new ArgsError(`Option ${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case "-h":
      case "--help":
        o.help = true;
        break;
      case "--json":
        o.json = true;
        break;
      case "--keep":
        o.keep = true;
        break;
      case "--profile":
        o.profile = true;
        break;
      case "--server-env": {
        const pair = value();
        const eq = pair.indexOf("=");
        if (eq < 1) throw new ArgsError(`--server-env needs NAME=VALUE, got "${pair}"`);
        o.serverEnv[pair.slice(0, eq)] = pair.slice(eq + 1);
        break;
      }
      case "--duration":
        o.durationS = parseDuration(value());
        if (o.durationS < 1) throw new ArgsError("--duration must be at least 1s");
        break;
      case "--warmup":
        o.warmupS = parseDuration(value());
        break;
      case "--connections":
        o.connections = positiveInt("connections", value());
        break;
      case "--threads":
        o.threads = positiveInt("threads", value());
        break;
      case "--users":
        o.users = positiveInt("users", value());
        break;
      case "--tokens":
        o.tokens = positiveInt("tokens", value());
        break;
      case "--binary":
        o.binary = value();
        break;
      case "--database":
      case "--databases":
        o.databases = parseDatabases(value());
        break;
      case "--nodes":
        o.nodes = parseNodes(value());
        break;
      case "--workers":
        o.workers = positiveInt("workers", value());
        break;
      case "--wrk-cpus": {
        const cpus = value();
        if (!/^\d+(?:[-,]\d+)*$/.test(cpus)) {
          throw new ArgsError(`Cannot parse --wrk-cpus "${cpus}": use a CPU list such as 1 or 0,1`);
        }
        o.wrkCpus = cpus;
        break;
      }
      case "--scenario":
      case "--scenarios": {
        chosen ??= [];
        const names: string[] = [];
        if (inline !== undefined) names.push(inline);
        while (i + 1 < args.length && !args[i + 1].startsWith("-")) names.push(args[++i]);
        if (names.length === 0) throw new ArgsError(`Option ${flag} needs at least one name`);
        for (const name of names.flatMap((n) => n.split(",")).filter((n) => n !== "")) {
          if (!(SCENARIOS as readonly string[]).includes(name)) {
            throw new ArgsError(`Unknown scenario "${name}"; known: ${SCENARIOS.join(", ")}`);
          }
          if (!chosen.includes(name as Scenario)) chosen.push(name as Scenario);
        }
        break;
      }
      default:
        throw new ArgsError(`Unknown option "${arg}"`);
    }
  }
  if (o.connections < o.threads) {
    throw new ArgsError("--connections must be at least --threads (wrk needs one per thread)");
  }
  if (o.nodes.includes(2) && !o.databases.includes("postgres")) {
    throw new ArgsError(
      "--nodes 2 needs --database postgres (or both): two nodes share one PostgreSQL database",
    );
  }
  if (chosen) {
    // the ceiling always runs; keep the canonical order
    o.scenarios = SCENARIOS.filter((s) => s === "hello" || chosen.includes(s));
  }
  return o;
}

/** Reads `sqlite`, `postgres`, `both` or a comma list into engines in canonical order. */
export function parseDatabases(text: string): DatabaseEngine[] {
  const names = text.split(",").map((n) => n.trim().toLowerCase()).filter((n) => n !== "");
  const wanted = new Set<string>();
  for (const n of names) {
    if (n === "both" || n === "all") DATABASES.forEach((d) => wanted.add(d));
    else if (n === "postgresql" || n === "pg") wanted.add("postgres");
    else if ((DATABASES as readonly string[]).includes(n)) wanted.add(n);
    else {
      throw new ArgsError(`Cannot parse --database "${text}": use sqlite, postgres or both`);
    }
  }
  if (wanted.size === 0) throw new ArgsError("Option --database needs sqlite, postgres or both");
  return DATABASES.filter((d) => wanted.has(d));
}

/** Reads `1`, `2`, `1,2` or `both` into node counts in ascending order. */
export function parseNodes(text: string): NodeCount[] {
  const names = text.split(",").map((n) => n.trim().toLowerCase()).filter((n) => n !== "");
  const wanted = new Set<NodeCount>();
  for (const n of names) {
    if (n === "both") {
      wanted.add(1);
      wanted.add(2);
    } else if (n === "1" || n === "2") wanted.add(Number(n) as NodeCount);
    else throw new ArgsError(`Cannot parse --nodes "${text}": use 1, 2 or 1,2`);
  }
  if (wanted.size === 0) throw new ArgsError("Option --nodes needs 1, 2 or 1,2");
  return ([1, 2] as const).filter((n) => wanted.has(n));
}

/**
 * The engine/node combinations of a run, in run order: SQLite (one node)
 * first, then PostgreSQL with each node count.
 */
export function benchTargets(o: Pick<BenchOptions, "databases" | "nodes">): BenchTarget[] {
  const out: BenchTarget[] = [];
  for (const database of o.databases) {
    if (database === "sqlite") out.push({ database, nodes: 1 });
    else for (const nodes of o.nodes) out.push({ database, nodes });
  }
  return out;
}

/** "SQLite, 1 node", "PostgreSQL, 2 nodes". */
export function targetLabel(t: BenchTarget): string {
  return `${t.database === "sqlite" ? "SQLite" : "PostgreSQL"}, ${t.nodes} node${
    t.nodes === 1 ? "" : "s"
  }`;
}
