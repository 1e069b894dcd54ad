/**
 * Command line of `deno task bench` (pure: no I/O).
 *
 * @module
 */

/** Every load scenario the benchmark knows, in run order. */
export const SCENARIOS = [
  "hello",
  "hotp",
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
  wrong: "/validate/check wrong OTP",
  unknown: "/validate/check unknown user",
  spass: "/validate/check spass",
  tokenlist: "GET /token/ (page of 15)",
  auth: "POST /auth (admin login)",
  replay: "replayed OTPs (correctness only)",
  policies: "/validate/check correct HOTP, 50 policies",
  signed: "/validate/check HOTP, signing on",
};

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
  if (chosen) {
    // the ceiling always runs; keep the canonical order
    o.scenarios = SCENARIOS.filter((s) => s === "hello" || chosen.includes(s));
  }
  return o;
}
