/**
 * Tessera command line: `serve` (default, `--workers N` for N processes on
 * one port), `admin add|list|delete|password`, `migrate`. Exit codes: 0 ok,
 * 1 runtime failure, 2 usage or config error.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { type Config, type ConfigOverrides, loadConfig, MAX_WORKERS } from "./src/config.ts";
import { AppError, ConfigError } from "./src/errors.ts";
import { createLogger, type Logger } from "./src/lib/logger.ts";
import { closeRuntime, openRuntime } from "./src/runtime.ts";
import type { Deps } from "./src/deps.ts";
import { createApp } from "./src/app.ts";
import { loadMetricsLibrary } from "./src/http/metrics.ts";
import {
  addAdmin,
  deleteAdmin,
  ensureInitialAdmin,
  listAdmins,
  setAdminPassword,
} from "./src/domain/admin/mod.ts";
import { VERSION } from "./src/version.ts";
import { DatabaseTooNewError, openDatabase } from "./src/db/database.ts";
import { type SqliteUserStore, sqliteUserStores } from "./src/domain/resolver/mod.ts";
import { KeyMismatchError } from "./src/domain/keys/mod.ts";
import { BackupError, backupSqlite, sqliteFileOf, userStoreCopyPath } from "./src/db/backup.ts";
import { startRadiusListener } from "./src/radius_listener/listener.ts";
import { type Scheduler, startScheduler } from "./src/domain/periodic_task/mod.ts";
import { validateCheck } from "./src/domain/validate/mod.ts";
import { runSubscriptionCommand, SUBSCRIPTION_HELP } from "./src/cli/subscription.ts";
import { IMPORT_HELP, runImportCommand } from "./src/cli/import.ts";
import { nearest } from "./src/cli/nearest.ts";
import { API_HELP, apiKeyOptions, ApiUsageError, runApiCommand } from "./src/cli/api_key.ts";
import { Hono } from "hono";

/** How long a graceful stop waits for running requests before it closes anyway. */
const SHUTDOWN_REQUESTS_WAIT_MS = 30_000;
/** A worker that exits sooner than this after its start failed to start. */
const START_GRACE_MS = 10_000;
/** Consecutive failed starts of one worker after which `serve --workers` gives up. */
const MAX_START_FAILURES = 5;
/** Pause before a worker is restarted; doubles per failed start up to the maximum. */
const RESTART_MIN_MS = 500;
const RESTART_MAX_MS = 30_000;

const HELP: Record<string, string> = {
  main: `Tessera ${VERSION}: multi-factor authentication server with privacyIDEA's API

Usage: tessera [global options] <command> [options]

Commands:
  serve                     run the HTTP API (default)
  admin add <name>          create a local admin
  admin list                list local admins
  admin delete <name>       delete a local admin
  admin password <name>     set a local admin's password
  migrate                   apply pending database migrations and exit
  backup <file>             consistent copy of the running SQLite database
  subscription keygen|sign  create a subscription signing key pair, sign a subscription file
  import privacyidea        migrate a privacyIDEA database (tokens, PINs, realms, policies, …)
  import gpgkey <key.asc>   add privacyIDEA's GnuPG key for encrypted token files
  api createtoken           issue an API key for the validate API (policy api_key_required)
  hello [--listen h:p]      serve a plain "hello" endpoint (benchmark ceiling)

Global options (on every command, they override the config file):
  --config <file>           TOML config file (else $TESSERA_CONFIG, else config/tessera.toml)
  --data-dir <dir>          data directory (database, key file)
  -h, --help                show help; "tessera <command> --help" for a command
  --version                 print the version

Every config key can also be set as TESSERA_<SECTION>_<KEY>, e.g. TESSERA_SERVER_PORT=8080.
Exit codes: 0 ok, 1 failure, 2 usage or configuration error.`,
  serve: `Usage: tessera serve [--listen <host:port>] [--workers <n>] [--config <file>]
                     [--data-dir <dir>]

Runs the HTTP API. On first start it creates the data directory, the key file
and an initial admin "admin" whose password is written to
<data-dir>/initial-admin-password (mode 0600).

SIGINT or SIGTERM stops it gracefully: no new connections, running requests
finish, queued audit rows are written (at most 30 s), the database is closed.

Options:
  --listen <host:port>      address to listen on (overrides server.host/server.port)
  --workers <n>             serve from n processes sharing the port and the
                            database (SO_REUSEPORT, Linux; overrides
                            server.workers, default 1). This process migrates,
                            starts the workers, passes signals on and restarts
                            a worker that exits; it exits 1 if a worker keeps
                            failing within ${START_GRACE_MS / 1000} s of its start.`,
  admin: `Usage: tessera admin <add|list|delete|password> [name] [options]

  admin add <name> [--email <mail>] [--password <pw>]
  admin list
  admin delete <name>
  admin password <name> [--password <pw>]

The password comes from --password, else from standard input when it is not a
terminal (first line), else from a prompt.`,
  migrate: `Usage: tessera migrate [--config <file>] [--data-dir <dir>]

Applies pending database migrations and exits.`,
  backup: `Usage: tessera backup <file> [--config <file>] [--data-dir <dir>]

Writes a consistent copy of the SQLite database to <file> while the server
keeps running: SQLite's online backup, so the copy holds every transaction
committed before it finished. The SQLite files of sqlresolvers (user stores
such as people.sqlite) are copied the same way, each to
<file without .sqlite>.resolver-<resolver>.sqlite. No copy may exist yet;
each is made with mode 0600. Prints its progress on a terminal and a line per
copy. The copies are useless without the key file (storage.key_file): back
that up separately. On PostgreSQL use its own tools (pg_dump, base backups).`,
  subscription: SUBSCRIPTION_HELP,
  import: IMPORT_HELP,
  api: API_HELP,
  hello: `Usage: tessera hello [--listen <host:port>]

Serves a plain Hono app that answers every GET with "hello" (default
127.0.0.1:8089). The benchmark (deno task bench) uses it as this machine's
ceiling, served by the same program as Tessera.`,
};

class UsageError extends Error {}

/** A server that cannot start for a reason its operator can fix (printed as `Error: …`). */
class StartError extends Error {}

/**
 * Why `host:port` cannot be listened on, as an operator reads it, or
 * undefined for an error of another kind.
 */
function listenProblem(host: string, port: number, err: unknown): StartError | undefined {
  const address = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  if (err instanceof Deno.errors.AddrInUse) {
    return new StartError(
      `Cannot listen on ${address}: the address is already in use. Another program (or ` +
        `another Tessera) listens there: stop it, or set another server.port ` +
        `(TESSERA_SERVER_PORT).`,
    );
  }
  if (err instanceof Deno.errors.AddrNotAvailable) {
    return new StartError(
      `Cannot listen on ${address}: no network interface of this machine has that address; ` +
        `set another server.host (TESSERA_SERVER_HOST).`,
    );
  }
  if (err instanceof Deno.errors.PermissionDenied) {
    return new StartError(
      `Cannot listen on ${address}: permission denied (ports below 1024 need the ` +
        `CAP_NET_BIND_SERVICE capability); set another server.port (TESSERA_SERVER_PORT).`,
    );
  }
  return undefined;
}

/**
 * Fails with a readable {@link StartError} when the configured address cannot
 * be listened on, before anything is created on disk or in the database.
 */
function checkListenAddress(host: string, port: number): void {
  if (port === 0) return;
  try {
    Deno.listen({ hostname: host, port }).close();
  } catch (err) {
    throw listenProblem(host, port, err) ?? err;
  }
}

interface Parsed {
  command: string[];
  flags: Map<string, string | true>;
  /** Options that are no option of Tessera's, without their dashes (reported with the command). */
  unknown: string[];
}

const VALUE_FLAGS = new Set([
  "config",
  "data-dir",
  "listen",
  "password",
  "email",
  "out",
  "vendor",
  "key",
  "format",
  "bits",
  "workers",
  // internal: `serve --worker <i>` is worker i of a `serve --workers N` parent
  "worker",
  // internal: where the workers' metrics sockets are (`serve --workers N` with metrics on)
  "metrics-dir",
  "database",
  "database-file",
  "enckey",
  "enckey-password-file",
  "pepper-file",
  // import gpgkey
  "passphrase-file",
  // api createtoken
  "username",
  "realm",
  "role",
  "days",
]);
const BOOL_FLAGS = new Set(["help", "version", "dry-run", "replace"]);
/** Options every command takes. */
const GLOBAL_FLAGS = ["config", "data-dir", "help", "version"];
/** The options of each command besides the global ones. */
const COMMAND_FLAGS: Readonly<Record<string, readonly string[]>> = {
  serve: ["listen", "workers", "worker", "metrics-dir"],
  hello: ["listen"],
  admin: ["password", "email"],
  migrate: [],
  backup: [],
  subscription: ["vendor", "bits", "out", "key", "format"],
  import: [
    "database",
    "database-file",
    "enckey",
    "enckey-password-file",
    "pepper-file",
    "dry-run",
    "replace",
    "passphrase-file",
  ],
  api: ["username", "realm", "role", "days"],
};
/** The options a mistyped one may be suggested as (not the internal ones). */
const PUBLIC_FLAGS = [...VALUE_FLAGS, ...BOOL_FLAGS].filter((f) =>
  f !== "worker" && f !== "metrics-dir"
);

function parseArgs(args: string[]): Parsed {
  const command: string[] = [];
  const flags = new Map<string, string | true>();
  const unknown: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "-h") {
      flags.set("help", true);
    } else if (arg.startsWith("--")) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
      if (BOOL_FLAGS.has(name)) flags.set(name, true);
      else if (VALUE_FLAGS.has(name)) {
        const value = inline ?? args[++i];
        if (value === undefined) throw new UsageError(`Option --${name} needs a value`);
        flags.set(name, value);
      } else unknown.push(name);
    } else command.push(arg);
  }
  return { command, flags, unknown };
}

/** The message for a mistyped word: the nearest known one and its help, else `help`. */
function unknownWord(what: string, nearby: string | undefined, help: string): string {
  return nearby === undefined
    ? `${what}\n\n${help}`
    : `${what}; did you mean ${nearby}?\n\n${help}`;
}

function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value);
  if (!m || Number(m[3]) > 65535) {
    throw new UsageError(`Cannot parse --listen "${value}": expected host:port`);
  }
  return { host: m[1] ?? (m[2] || "0.0.0.0"), port: Number(m[3]) };
}

function readConfig(flags: Parsed["flags"]): Config {
  const overrides: ConfigOverrides = {};
  if (typeof flags.get("data-dir") === "string") {
    overrides.dataDir = flags.get("data-dir") as string;
  }
  if (typeof flags.get("listen") === "string") {
    Object.assign(overrides, parseListen(flags.get("listen") as string));
  }
  let path = flags.get("config") as string | undefined ?? Deno.env.get("TESSERA_CONFIG");
  let explicit = path !== undefined;
  if (path === undefined) {
    path = "config/tessera.toml";
    explicit = false;
  }
  let fileText: string | undefined;
  try {
    fileText = Deno.readTextFileSync(path);
  } catch (err) {
    if (explicit || !(err instanceof Deno.errors.NotFound)) {
      throw new ConfigError([`Cannot read config file "${path}": ${(err as Error).message}`]);
    }
  }
  return loadConfig({ env: Deno.env.toObject(), fileText, fileName: path, overrides });
}

async function readPassword(flags: Parsed["flags"], label: string): Promise<string> {
  const given = flags.get("password");
  if (typeof given === "string") return given;
  if (!Deno.stdin.isTerminal()) {
    const text = await new Response(Deno.stdin.readable).text();
    const line = text.split(/\r?\n/)[0];
    if (!line) throw new UsageError("No password on standard input");
    return line;
  }
  const first = await promptHidden(`${label}: `);
  const second = await promptHidden("Repeat password: ");
  if (first !== second) throw new UsageError("The passwords do not match");
  return first;
}

async function promptHidden(label: string): Promise<string> {
  const enc = new TextEncoder();
  await Deno.stdout.write(enc.encode(label));
  Deno.stdin.setRaw(true);
  const chars: string[] = [];
  const buf = new Uint8Array(1);
  try {
    for (;;) {
      const n = await Deno.stdin.read(buf);
      if (n === null || buf[0] === 13 || buf[0] === 10) break;
      if (buf[0] === 3) throw new UsageError("Cancelled");
      if (buf[0] === 127 || buf[0] === 8) chars.pop();
      else chars.push(String.fromCharCode(buf[0]));
    }
  } finally {
    Deno.stdin.setRaw(false);
    await Deno.stdout.write(enc.encode("\n"));
  }
  return chars.join("");
}

/** How `serve` runs: one process, the parent of N workers, or worker `worker` of them. */
interface ServeMode {
  workers: number;
  worker?: number;
  /** A worker's directory of the workers' metrics sockets. */
  metricsDir?: string;
}

function parseCount(flag: string, value: string | true | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === "string" && /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= MAX_WORKERS)) {
    throw new UsageError(
      `Cannot parse --${flag} "${value}": expected an integer from 1 to ${MAX_WORKERS}`,
    );
  }
  return n;
}

/** `serve`: one process, or with `--workers N` a parent that runs N of them. */
async function serve(config: Config, log: Logger, mode: ServeMode): Promise<number> {
  if (mode.worker !== undefined) {
    return await serveProcess(config, log, { worker: mode.worker, metricsDir: mode.metricsDir });
  }
  if (mode.workers > 1) return await superviseWorkers(config, log, mode.workers);
  return await serveProcess(config, log, {});
}

async function writeInitialAdmin(deps: Deps, config: Config, log: Logger): Promise<void> {
  const initial = await ensureInitialAdmin(deps);
  if (initial !== undefined) {
    const path = `${config.storage.dataDir.replace(/\/+$/, "")}/initial-admin-password`;
    Deno.writeTextFileSync(path, initial + "\n", { mode: 0o600 });
    Deno.chmodSync(path, 0o600);
    log.info('Created initial admin "admin"; its password is in the file', { path });
  }
}

/**
 * Serves the API until SIGINT/SIGTERM, then stops gracefully: no new
 * connections, running requests finish (at most 30 s), queued audit rows are
 * written (at most 30 s, see closeRuntime), the database is closed.
 * A worker (`worker` set) shares the port with its siblings, leaves migrations
 * and first-start files to its parent, and stops when the parent is gone.
 */
async function serveProcess(
  config: Config,
  log: Logger,
  options: { worker?: number; metricsDir?: string },
): Promise<number> {
  const isWorker = options.worker !== undefined;
  // a busy port is found before the data directory, the key files or the database are touched
  if (!isWorker) checkListenAddress(config.server.host, config.server.port);
  const deps = await openRuntime(config, log, { migrate: !isWorker, checkpointOnTimer: true });
  if (!isWorker) await writeInitialAdmin(deps, config, log);
  // prom-client is loaded only by a server that counts
  if (config.metrics.enabled) await loadMetricsLibrary();
  const app = createApp(deps, {
    // a scrape reaching any worker adds up every worker's counters
    metricsPeers: options.worker !== undefined && options.metricsDir
      ? { dir: options.metricsDir, worker: options.worker }
      : undefined,
  });
  // the native RADIUS listener answers through the same validate path as /validate/check;
  // its UDP port is not shared, so of several workers the first one runs it
  const radius = config.radius.enabled && (options.worker ?? 1) === 1
    ? await startRadiusListener(deps, {
      host: config.radius.host,
      port: config.radius.port,
      clients: config.radius.clients,
      dictionary: config.radius.dictionary || undefined,
      check: validateCheck,
    })
    : undefined;
  // the signal handlers come first: a signal right after "Tessera listening" (a test, a
  // supervisor) must find them in place, not end the process with the default action
  let server: Deno.HttpServer<Deno.NetAddr> | undefined;
  let parentWatch: ReturnType<typeof setInterval> | undefined;
  let requestStop!: () => void;
  const stopRequested = new Promise<void>((resolve) => requestStop = resolve);
  let isStopping = false;
  const stop = async (reason: string) => {
    if (isStopping) return;
    isStopping = true;
    log.info("Shutting down", { reason });
    clearInterval(parentWatch);
    requestStop();
    await radius?.close();
    // no new connections; running requests finish (and queue their audit rows)
    await server?.shutdown();
  };
  const onSignal = { SIGINT: () => void stop("SIGINT"), SIGTERM: () => void stop("SIGTERM") };
  for (const [sig, handler] of Object.entries(onSignal)) {
    Deno.addSignalListener(sig as Deno.Signal, handler);
  }
  try {
    server = Deno.serve({
      hostname: config.server.host,
      port: config.server.port,
      reusePort: isWorker,
      onListen: ({ hostname, port }) =>
        log.info("Tessera listening", {
          address: `${hostname}:${port}`,
          version: VERSION,
          ...(isWorker ? { pid: Deno.pid } : {}),
        }),
    }, (req, info) =>
      // backpressure: while the audit queue is over its limit (the database has not taken
      // rows for a long time), new requests wait for room instead of growing it further
      deps.audit.isFull
        ? deps.audit.room().then(() => app.fetch(req, info))
        : app.fetch(req, info));
  } catch (err) {
    // taken since the check at start (or a worker's port held without SO_REUSEPORT)
    const problem = listenProblem(config.server.host, config.server.port, err);
    for (const [sig, handler] of Object.entries(onSignal)) {
      Deno.removeSignalListener(sig as Deno.Signal, handler);
    }
    if (problem === undefined) throw err;
    await radius?.close();
    await closeRuntime(deps);
    throw problem;
  }
  if (isStopping) void server.shutdown(); // signalled while it started
  // every process ticks; the task leases make one of those with the node's name run a due task
  const scheduler: Scheduler | undefined = config.periodicTasks.enabled && !isStopping
    ? startScheduler(deps, {
      tickMs: config.periodicTasks.tick,
      timeZone: config.periodicTasks.timeZone || undefined,
    })
    : undefined;
  // a worker whose parent died (killed with SIGKILL, say) would serve on unsupervised
  const parentPid = isWorker ? parentPidOf() : undefined;
  if (parentPid !== undefined && !isStopping) {
    parentWatch = setInterval(() => {
      if (parentPidOf() !== parentPid) void stop("parent process exited");
    }, 1000);
  }
  await Promise.race([server.finished, stopRequested]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    server.finished,
    new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        log.warn("Requests still running after the wait; closing anyway", {
          seconds: SHUTDOWN_REQUESTS_WAIT_MS / 1000,
        });
        resolve();
      }, SHUTDOWN_REQUESTS_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  clearInterval(parentWatch);
  // a task running now finishes (or gives up its lease) before the database closes
  await scheduler?.stop();
  const lost = await closeRuntime(deps);
  log.info("Stopped", lost > 0 ? { lostAuditRows: lost } : {});
  return lost > 0 ? 1 : 0;
}

/** The parent process id from /proc (Linux), or undefined where it cannot be read. */
function parentPidOf(): number | undefined {
  try {
    const stat = Deno.readTextFileSync("/proc/self/stat");
    // "pid (comm) state ppid …": comm may hold spaces and parentheses
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/**
 * How to start this program again with other arguments: the runtime and its
 * flags exactly as this process was started (Deno's flags such as
 * `--v8-flags` and `--no-code-cache` included), read from /proc/self/cmdline;
 * a compiled binary has none. Elsewhere: `deno run -A <main module>`.
 */
function selfCommand(): string[] {
  // a compiled binary carries its flags; it needs `deno compile --unstable-net` for this
  if (Deno.build.standalone) return [];
  let flags = ["run", "--allow-all", Deno.mainModule];
  try {
    const argv = Deno.readTextFileSync("/proc/self/cmdline").split("\0");
    if (argv.at(-1) === "") argv.pop();
    const tail = argv.slice(argv.length - Deno.args.length);
    if (argv.length > Deno.args.length + 1 && tail.every((a, i) => a === Deno.args[i])) {
      flags = argv.slice(1, argv.length - Deno.args.length);
    }
  } catch {
    // not Linux: the fallback above
  }
  // Deno.serve({ reusePort: true }) is still behind --unstable-net
  if (!flags.some((f) => f === "--unstable-net" || f === "--unstable")) {
    flags.splice(flags[0] === "run" ? 1 : 0, 0, "--unstable-net");
  }
  return flags;
}

/**
 * This process's arguments without `--workers`, `--worker`, `--listen` and
 * `--metrics-dir` (the parent sets them).
 */
function argsForWorker(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const m = /^--(workers?|listen|metrics-dir)(=.*)?$/.exec(args[i]);
    if (m === null) out.push(args[i]);
    else if (m[2] === undefined) i++;
  }
  return out;
}

/**
 * `serve --workers N`: migrates and creates the key files once, then runs N
 * worker processes of this program on the same port (SO_REUSEPORT) and
 * database. Signals are passed on to the workers; a worker that exits is
 * restarted after a pause (doubling from 0.5 s to 30 s while it keeps failing
 * at start); after {@link MAX_START_FAILURES} failed starts in a row every
 * worker is stopped and the result is 1. Resolves when all workers have ended.
 */
async function superviseWorkers(config: Config, log: Logger, workers: number): Promise<number> {
  if (Deno.build.os !== "linux") {
    log.warn("serve --workers shares the port with SO_REUSEPORT, which balances only on Linux");
  }
  checkListenAddress(config.server.host, config.server.port);
  const deps = await openRuntime(config, log);
  await writeInitialAdmin(deps, config, log);
  await closeRuntime(deps);
  let { host, port } = config.server;
  if (port === 0) {
    // every worker must bind the same port: pick it here
    const probe = Deno.listen({ hostname: host, port: 0 });
    port = (probe.addr as Deno.NetAddr).port;
    probe.close();
  }
  const listen = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  const command = selfCommand();
  const args = argsForWorker(Deno.args);
  // the workers' metrics sockets: a private directory (mode 0700), removed at the end
  const metricsDir = config.metrics.enabled
    ? await Deno.makeTempDir({ prefix: "tessera-metrics-" })
    : undefined;
  if (metricsDir) args.push("--metrics-dir", metricsDir);
  const children = new Map<number, Deno.ChildProcess>();
  const stopped = new AbortController();
  let result = 0;
  const stopAll = (signal: Deno.Signal) => {
    if (!stopped.signal.aborted) stopped.abort();
    for (const child of children.values()) {
      try {
        child.kill(signal);
      } catch {
        // already exited
      }
    }
  };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      stopped.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(sig, () => {
      if (!stopped.signal.aborted) log.info("Stopping workers", { signal: sig });
      // workers stop gracefully on SIGTERM whichever signal came here
      stopAll("SIGTERM");
    });
  }
  log.info("Starting workers", { workers, address: listen, pid: Deno.pid });

  async function runWorker(index: number): Promise<void> {
    let failedStarts = 0;
    let delayMs = RESTART_MIN_MS;
    while (!stopped.signal.aborted) {
      const startedAt = performance.now();
      const child = new Deno.Command(Deno.execPath(), {
        args: [...command, ...args, "--listen", listen, "--worker", String(index)],
        stdin: "null",
        stdout: "inherit",
        stderr: "inherit",
      }).spawn();
      children.set(index, child);
      const status = await child.status;
      children.delete(index);
      if (stopped.signal.aborted) {
        if (!status.success) {
          log.error("Worker did not stop cleanly", {
            worker: index,
            code: status.code,
            signal: status.signal ?? "",
          });
          result = 1;
        }
        return;
      }
      if (performance.now() - startedAt < START_GRACE_MS) failedStarts++;
      else {
        failedStarts = 0;
        delayMs = RESTART_MIN_MS;
      }
      if (failedStarts >= MAX_START_FAILURES) {
        log.error("Worker keeps failing at start; stopping all workers", {
          worker: index,
          failedStarts,
          code: status.code,
        });
        result = 1;
        stopAll("SIGTERM");
        return;
      }
      log.error("Worker exited; restarting it", {
        worker: index,
        pid: child.pid,
        code: status.code,
        signal: status.signal ?? "",
        restartSeconds: delayMs / 1000,
      });
      await pause(delayMs);
      delayMs = Math.min(delayMs * 2, RESTART_MAX_MS);
    }
  }

  await Promise.all(Array.from({ length: workers }, (_, i) => runWorker(i + 1)));
  if (metricsDir) await Deno.remove(metricsDir, { recursive: true }).catch(() => {});
  log.info("All workers stopped", { code: result });
  return result;
}

/** `tessera hello`: the benchmark ceiling, a plain Hono app without Tessera's middleware. */
async function serveHello(parsed: Parsed): Promise<number> {
  let address = { host: "127.0.0.1", port: 8089 };
  try {
    if (parsed.command.length > 1) {
      throw new UsageError(`Unexpected argument "${parsed.command[1]}"`);
    }
    const listen = parsed.flags.get("listen");
    if (typeof listen === "string") address = parseListen(listen);
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const app = new Hono();
  app.get("*", (c) => c.text("hello"));
  const server = Deno.serve({
    hostname: address.host,
    port: address.port,
    onListen: ({ hostname, port }) => console.log(`hello listening on ${hostname}:${port}`),
  }, (req) => app.fetch(req));
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(sig, () => void server.shutdown());
  }
  await server.finished;
  return 0;
}

/** Rows under a header, each column as wide as its widest cell, two spaces apart. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [header, ...rows].map((r) =>
    r.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd()
  )
    .join("\n");
}

async function admin(config: Config, log: Logger, parsed: Parsed): Promise<void> {
  const [, action, name, ...rest] = parsed.command;
  if (rest.length > 0) throw new UsageError(`Unexpected argument "${rest[0]}"`);
  const needsName = ["add", "delete", "password"];
  if (!action) {
    throw new UsageError(
      `tessera admin needs a command: add, list, delete or password\n\n${HELP.admin}`,
    );
  }
  if (![...needsName, "list"].includes(action)) {
    const near = nearest(action, [...needsName, "list"]);
    throw new UsageError(
      unknownWord(`Unknown admin command "${action}"`, near && `"${near}"`, HELP.admin),
    );
  }
  if (needsName.includes(action) && !name) {
    throw new UsageError(`tessera admin ${action} needs a name`);
  }
  const deps = await openRuntime(config, log);
  try {
    if (action === "list") {
      const admins = await listAdmins(deps);
      if (admins.length === 0) console.log("(no admins)");
      else {console.log(
          table(
            ["NAME", "EMAIL", "CREATED"],
            admins.map((a) => [a.username, a.email, a.createdAt]),
          ),
        );}
    } else if (action === "add") {
      const password = await readPassword(parsed.flags, `Password for ${name}`);
      await addAdmin(deps, name, {
        password,
        email: parsed.flags.get("email") as string | undefined,
      });
      console.log(`Admin "${name}" created`);
    } else if (action === "delete") {
      await deleteAdmin(deps, name);
      console.log(`Admin "${name}" deleted`);
    } else {
      const password = await readPassword(parsed.flags, `New password for ${name}`);
      await setAdminPassword(deps, name, password);
      console.log(`Password of admin "${name}" changed`);
    }
  } finally {
    await closeRuntime(deps);
  }
}

async function main(args: string[]): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseArgs(args);
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${HELP.main}`);
    return 2;
  }
  const command = parsed.command[0] ?? "serve";
  if (parsed.flags.has("version")) {
    console.log(`Tessera ${VERSION}`);
    return 0;
  }
  if (!(command in HELP) || command === "main") {
    const near = nearest(command, Object.keys(HELP).filter((c) => c !== "main"));
    console.error(
      unknownWord(
        `Unknown command "${command}"`,
        near && `"${near}"`,
        near ? HELP[near] : HELP.main,
      ),
    );
    return 2;
  }
  if (parsed.unknown.length > 0) {
    const name = parsed.unknown[0];
    const near = nearest(name, PUBLIC_FLAGS);
    const help = parsed.command.length === 0 ? HELP.main : HELP[command];
    console.error(unknownWord(`Unknown option --${name}`, near && `--${near}`, help));
    return 2;
  }
  if (parsed.flags.has("help")) {
    console.log(parsed.command.length === 0 ? HELP.main : HELP[command]);
    return 0;
  }
  // an option of another command is refused, not ignored
  const foreign = [...parsed.flags.keys()].find((f) =>
    !GLOBAL_FLAGS.includes(f) && !(COMMAND_FLAGS[command] ?? []).includes(f)
  );
  if (foreign !== undefined) {
    const owners = Object.keys(COMMAND_FLAGS).filter((c) => COMMAND_FLAGS[c].includes(foreign));
    console.error(
      `--${foreign} is only valid for ${owners.join(" and ")}, not for ${command}\n\n` +
        HELP[command],
    );
    return 2;
  }
  if (command === "hello") return await serveHello(parsed);
  if (command === "subscription") {
    return await runSubscriptionCommand(parsed.command.slice(1), parsed.flags);
  }
  let apiOptions: ReturnType<typeof apiKeyOptions> | undefined;
  if (command === "api") {
    // checked before the config is read or the database opened
    try {
      apiOptions = apiKeyOptions(parsed.command.slice(1), parsed.flags);
    } catch (err) {
      if (!(err instanceof ApiUsageError)) throw err;
      console.error(err.message);
      return 2;
    }
  }
  let log: Logger = createLogger("info");
  try {
    const workers = parseCount("workers", parsed.flags.get("workers"));
    const worker = parseCount("worker", parsed.flags.get("worker"));
    const config = readConfig(parsed.flags);
    // a worker's log lines say which worker wrote them
    log = createLogger(config.log.level, {
      format: config.log.format,
      fields: worker === undefined ? undefined : { worker },
    });
    if (command === "serve") {
      if (parsed.command.length > 1) {
        throw new UsageError(`Unexpected argument "${parsed.command[1]}"`);
      }
      const metricsDir = parsed.flags.get("metrics-dir");
      return await serve(config, log, {
        workers: workers ?? config.server.workers,
        worker,
        metricsDir: typeof metricsDir === "string" ? metricsDir : undefined,
      });
    } else if (command === "admin") {
      await admin(config, log, parsed);
    } else if (command === "import") {
      return await runImportCommand(config, log, parsed.command.slice(1), parsed.flags);
    } else if (command === "backup") {
      return await runBackup(config, parsed.command.slice(1));
    } else if (command === "api") {
      return await runApiCommand(config, log, apiOptions!);
    } else {
      const deps = await openRuntime(config, log);
      await closeRuntime(deps);
      console.log("Database is up to date");
    }
    return 0;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof UsageError) {
      console.error(err.message);
      return 2;
    }
    if (
      err instanceof AppError || err instanceof DatabaseTooNewError ||
      err instanceof StartError || err instanceof KeyMismatchError || err instanceof BackupError
    ) {
      console.error(`Error: ${err.message}`);
      return 1;
    }
    log.error("Fatal error", { error: err as Error });
    return 1;
  }
}

/**
 * `backup <file>`: SQLite's online backup of the configured database, and of
 * the SQLite files of sqlresolvers beside it.
 */
async function runBackup(config: Config, args: string[]): Promise<number> {
  if (args.length !== 1) throw new UsageError(`Usage: tessera backup <file>\n\n${HELP.backup}`);
  const destination = args[0];
  const source = sqliteFileOf(config.storage.databaseUrl);
  if (source === undefined) {
    throw new BackupError(
      "tessera backup copies SQLite databases; the configured database is PostgreSQL: use " +
        "pg_dump or base backups",
    );
  }
  if (!existsSync(source)) {
    throw new BackupError(`Cannot back up "${source}": no such database file`);
  }
  const db = openDatabase(config.storage.databaseUrl);
  let stores: SqliteUserStore[];
  try {
    stores = await sqliteUserStores(db, config.storage.dataDir);
  } catch (err) {
    throw new BackupError(
      `Cannot back up "${source}": cannot read its resolvers (${(err as Error).message})`,
    );
  } finally {
    await db.destroy();
  }
  const copies = [
    { what: source, from: source, to: destination },
    ...stores.map((s) => ({
      what: `the users of resolver ${s.resolvers.map((r) => `"${r}"`).join(", ")} (${s.path})`,
      from: s.path,
      to: userStoreCopyPath(destination, s.resolvers[0]),
    })),
  ];
  // every copy gets a new name: refuse before anything is written
  for (const c of copies) {
    if (existsSync(c.to)) {
      throw new BackupError(`Cannot back up to "${c.to}": the file exists (choose a new name)`);
    }
  }
  const isTerminal = Deno.stderr.isTerminal();
  for (const c of copies) {
    if (!existsSync(c.from)) {
      console.log(`Nothing to copy of ${c.what}: the file does not exist yet.`);
      continue;
    }
    const started = performance.now();
    const pages = await backupSqlite(c.from, c.to, {
      onProgress: ({ totalPages, remainingPages }) => {
        if (!isTerminal || totalPages === 0) return;
        const done = Math.round(((totalPages - remainingPages) / totalPages) * 100);
        Deno.stderr.writeSync(new TextEncoder().encode(`\rbacking up ${c.from}: ${done}%`));
      },
    });
    if (isTerminal) Deno.stderr.writeSync(new TextEncoder().encode("\n"));
    const size = (await Deno.stat(c.to)).size;
    console.log(
      `Backed up ${c.what} to ${c.to}: ${pages} pages, ${(size / 1048576).toFixed(1)} MiB in ${
        Math.round(performance.now() - started)
      } ms.`,
    );
  }
  console.log(
    `Keep the key file (${config.storage.keyFile}) with the copies, stored apart: ` +
      "without it the copies' secrets cannot be read.",
  );
  return 0;
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
