/**
 * Runs `main.ts serve` as a real process for CLI tests: collects its log
 * (stderr), waits for lines, and reads the audit rows of its database (the
 * SQLite file of its data directory, or on the PostgreSQL run a test database).
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { openTestDatabase, TEST_ENGINE } from "../test_db.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** A started `tessera` process. */
export interface ServerProcess {
  child: Deno.ChildProcess;
  dataDir: string;
  /** Everything it logged so far. */
  log(): string;
  /** Waits until the log matches `pattern` (from `from` on); returns the match. */
  waitFor(
    pattern: RegExp,
    options?: { timeoutMs?: number; from?: number },
  ): Promise<RegExpMatchArray>;
  /** Resolves to the exit status, once its log has been read. */
  status: Promise<Deno.CommandStatus>;
  /** Kills it if it still runs, waits for it, removes the data directory. */
  cleanup(): Promise<void>;
}

/** Starts `deno run -A main.ts --data-dir <tmp> <args…>`. */
export async function startTessera(
  args: string[],
  options: { env?: Record<string, string>; dataDir?: string } = {},
): Promise<ServerProcess> {
  const dataDir = options.dataDir ?? `${await Deno.makeTempDir({ prefix: "tessera-cli-" })}/data`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--data-dir", dataDir, ...args],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1", TESSERA_SIGNING_ENABLED: "false", ...options.env },
  }).spawn();
  let text = "";
  const listeners = new Set<() => void>();
  const pumped = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      for (const l of listeners) l();
    }
  })();
  let hasExited = false;
  // the exit status once the log is read to its end (workers hold the pipe too: bounded wait)
  const status = child.status.then(async (s) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([pumped, new Promise((r) => timer = setTimeout(r, 10_000))]);
    clearTimeout(timer);
    hasExited = true;
    return s;
  });
  return {
    child,
    dataDir,
    log: () => text,
    async waitFor(pattern, opts = {}) {
      const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
      for (;;) {
        const m = text.slice(opts.from ?? 0).match(pattern);
        if (m) return m;
        if (Date.now() > deadline) {
          throw new Error(`No log line ${pattern} within the time:\n${text}`);
        }
        if (hasExited) {
          const last = text.slice(opts.from ?? 0).match(pattern);
          if (last) return last;
          throw new Error(`The process exited before logging ${pattern}:\n${text}`);
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, 100);
          function done() {
            clearTimeout(timer);
            listeners.delete(done);
            resolve();
          }
          listeners.add(done);
        });
      }
    },
    status,
    async cleanup() {
      if (!hasExited) {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }
      await status;
      await pumped.catch(() => {});
      await Deno.remove(dataDir.replace(/\/data$/, ""), { recursive: true }).catch(() => {});
    },
  };
}

/** The columns of an audit row the CLI tests look at. */
export interface AuditRowSeen {
  action: string;
  success: number;
  node: string;
  ts: number;
  durationMs: number;
}

/** Audit rows of the server's SQLite file, in order. */
export function auditRows(
  dataDir: string,
): AuditRowSeen[] {
  const db = new DatabaseSync(`${dataDir}/tessera.sqlite`);
  try {
    return db.prepare(
      "SELECT action, success, node, ts, duration_ms AS durationMs FROM audit ORDER BY id",
    ).all() as unknown as AuditRowSeen[];
  } finally {
    db.close();
  }
}

/** True while a process with this id exists (Linux /proc). */
export function isRunning(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // a zombie has ended; only its parent has not collected it yet
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** The database a server of a test uses: its SQLite file, or a PostgreSQL test database. */
export interface ServerDatabase {
  /** Environment that points the server at it (empty for SQLite). */
  env: Record<string, string>;
  /** Its audit rows, in order. */
  rows(dataDir: string): Promise<AuditRowSeen[]>;
  drop(): Promise<void>;
}

/** A database on the engine of the test run for a server process. */
export async function serverDatabase(): Promise<ServerDatabase> {
  if (TEST_ENGINE === "sqlite") {
    return {
      env: {},
      rows: (dataDir) => Promise.resolve(auditRows(dataDir)),
      drop: async () => {},
    };
  }
  const t = await openTestDatabase();
  return {
    env: { TESSERA_STORAGE_DATABASE_URL: t.url },
    async rows() {
      const rows = await t.db.selectFrom("audit")
        .select(["action", "success", "node", "ts", "duration_ms"])
        .orderBy("id").execute();
      return rows.map((r) => ({
        action: r.action,
        success: r.success,
        node: r.node,
        ts: Number(r.ts),
        durationMs: r.duration_ms,
      }));
    },
    drop: () => t.drop(),
  };
}
