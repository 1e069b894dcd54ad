/**
 * A private PostgreSQL cluster for tests and benchmarks: `initdb` in a
 * temporary folder, `postgres` on a free loopback port (TCP only, no system
 * service), stopped by its process id. The binaries come from Debian's
 * `postgresql` package (`/usr/lib/postgresql/<major>/bin`) or the PATH.
 * As root (CI), the server runs as the `postgres` user, since PostgreSQL
 * refuses to run as root.
 *
 * @module
 */
import { existsSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { terminate } from "./_process.ts";

/** A running private cluster. */
export interface PgCluster {
  /** Superuser URL of the `postgres` database. */
  url: string;
  /** URL of database `name` on the cluster. */
  urlOf(name: string): string;
  port: number;
  dir: string;
  /** The server's process id (0 while paused). */
  readonly pid: number;
  /** Stops the server (SIGTERM, then SIGKILL) and removes the folder. */
  stop(): Promise<void>;
  /**
   * Stops the server with a fast shutdown (open sessions are cut, as in a
   * database outage) and keeps its folder, so {@link resume} can start it again.
   */
  pause(): Promise<void>;
  /** Starts a paused server again on the same folder and port; resolves once it accepts connections. */
  resume(): Promise<void>;
  /**
   * Stops the server with an immediate shutdown (SIGQUIT: every process exits at
   * once, without a checkpoint, as after a crash) and keeps its folder for {@link resume}.
   */
  crash(): Promise<void>;
  /**
   * Stops every process of the server (SIGSTOP to the postmaster and its
   * children): connections stay open and nothing answers, as on a hung host.
   */
  freeze(): Promise<void>;
  /** Lets the processes {@link freeze} stopped run again (SIGCONT). */
  thaw(): Promise<void>;
}

/** The process ids whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      // "pid (comm) state ppid …": comm may hold spaces and parentheses
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(entry.name));
    } catch { /* gone meanwhile */ }
  }
  return out;
}

/** The folder holding `initdb` and `postgres`, or undefined when PostgreSQL is not installed. */
export function pgBinDir(): string | undefined {
  const base = "/usr/lib/postgresql";
  if (existsSync(base)) {
    const majors = readdirSync(base).filter((d) => /^\d+$/.test(d)).sort((a, b) => +b - +a);
    for (const m of majors) if (existsSync(`${base}/${m}/bin/postgres`)) return `${base}/${m}/bin`;
  }
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir && existsSync(`${dir}/postgres`) && existsSync(`${dir}/initdb`)) return dir;
  }
  return undefined;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

const isRoot = () => Deno.uid() === 0;

function command(
  bin: string,
  args: string[],
  options: { stdout?: "piped" | "null"; stderr?: "piped" | "null" } = {},
) {
  // PostgreSQL refuses to run as root: run it as the postgres user then
  const [cmd, argv] = isRoot() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  return new Deno.Command(cmd, {
    args: argv,
    stdout: options.stdout ?? "piped",
    stderr: options.stderr ?? "piped",
    stdin: "null",
  });
}

/** Options of {@link startPgCluster}. */
export interface PgClusterOptions {
  /**
   * Commits are in the WAL before they are acknowledged (`synchronous_commit
   * = on`, PostgreSQL's default), so a crash of the server (an immediate
   * stop) loses none. Off by default: the tests' speed needs no such thing.
   */
  isCrashSafe?: boolean;
  /** More server settings (`name=value`, each passed as `-c`), e.g. the benchmark's statement counting. */
  settings?: string[];
}

/** Starts a private cluster; throws with PostgreSQL's own message when that fails. */
export async function startPgCluster(options: PgClusterOptions = {}): Promise<PgCluster> {
  const bin = pgBinDir();
  if (!bin) {
    throw new Error(
      "PostgreSQL is not installed (no initdb/postgres found): install Debian's postgresql package",
    );
  }
  const dir = await Deno.makeTempDir({ prefix: "tessera-pg-" });
  if (isRoot()) {
    const pw = new Deno.Command("id", { args: ["-u", "postgres"], stdout: "piped" }).outputSync();
    const uid = Number(new TextDecoder().decode(pw.stdout).trim());
    const gid = Number(
      new TextDecoder().decode(
        new Deno.Command("id", { args: ["-g", "postgres"], stdout: "piped" }).outputSync().stdout,
      ).trim(),
    );
    await Deno.chown(dir, uid, gid);
  }
  const data = `${dir}/data`;
  const init = await command(`${bin}/initdb`, [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C",
  ]).output();
  if (!init.success) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw new Error(`initdb failed: ${new TextDecoder().decode(init.stderr)}`);
  }
  const port = await freePort();
  const spawn = () =>
    command(`${bin}/postgres`, [
      "-D",
      data,
      "-p",
      String(port),
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      `unix_socket_directories=${dir}`,
      "-c",
      "fsync=off",
      "-c",
      `synchronous_commit=${options.isCrashSafe ? "on" : "off"}`,
      "-c",
      "full_page_writes=off",
      "-c",
      "max_connections=300",
      "-c",
      "shared_buffers=64MB",
      // the server's log goes to a file in the folder: a pipe nobody reads would fill and stall it
      "-c",
      "logging_collector=on",
      "-c",
      `log_directory=${dir}/log`,
      ...(options.settings ?? []).flatMap((setting) => ["-c", setting]),
    ], { stdout: "null", stderr: "null" }).spawn();
  let child: Deno.ChildProcess | undefined = spawn();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const postmasterPid = async () => {
    // the postmaster's pid heads postmaster.pid (the child may be runuser)
    const pidText = await Deno.readTextFile(`${data}/postmaster.pid`).catch(() => "");
    return Number(pidText.split("\n")[0]);
  };
  let frozen: number[] = [];
  const freeze = async () => {
    const postmaster = await postmasterPid();
    if (!(postmaster > 0) || frozen.length > 0) return;
    // the postmaster first, so it starts no new process meanwhile
    frozen = [postmaster, ...childrenOf(postmaster)];
    for (const pid of frozen) {
      try {
        Deno.kill(pid, "SIGSTOP");
      } catch { /* gone */ }
    }
  };
  const thaw = () => {
    for (const pid of frozen.reverse()) {
      try {
        Deno.kill(pid, "SIGCONT");
      } catch { /* gone */ }
    }
    frozen = [];
    return Promise.resolve();
  };
  const stop = async () => {
    await thaw();
    const running = child;
    child = undefined;
    if (running) {
      await terminate(running);
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  // wait until it accepts connections
  const waitReady = async () => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ready = await command(`${bin}/pg_isready`, ["-h", "127.0.0.1", "-p", String(port)], {
        stdout: "null",
      }).output();
      if (ready.success) break;
      if (Date.now() > deadline) {
        const log = await Deno.readTextFile(`${dir}/data/postmaster.log`).catch(() => "");
        await stop();
        throw new Error(`PostgreSQL did not start within 30 s ${log}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await waitReady();
  const shutdown = async (signal: "SIGINT" | "SIGQUIT") => {
    const running = child;
    if (!running) return;
    child = undefined;
    await thaw();
    // SIGINT is PostgreSQL's fast shutdown (SIGTERM waits for every session to end), SIGQUIT
    // its immediate one; either goes to the postmaster itself
    const postmaster = await postmasterPid();
    try {
      if (postmaster > 0) Deno.kill(postmaster, signal);
      else running.kill(signal);
    } catch { /* already gone */ }
    const timer = setTimeout(() => {
      try {
        running.kill("SIGKILL");
      } catch { /* gone */ }
    }, 10_000);
    await running.status;
    clearTimeout(timer);
  };
  const pause = () => shutdown("SIGINT");
  const crash = () => shutdown("SIGQUIT");
  const resume = async () => {
    if (child) return;
    child = spawn();
    await waitReady();
  };
  return {
    url,
    urlOf: (name) => `postgres://postgres@127.0.0.1:${port}/${name}`,
    port,
    dir,
    get pid() {
      return child?.pid ?? 0;
    },
    stop,
    pause,
    resume,
    crash,
    freeze,
    thaw,
  };
}
