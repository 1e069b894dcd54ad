/**
 * Starting and stopping server processes (Tessera `serve` and the `hello`
 * ceiling) and reading their memory from /proc.
 *
 * @module
 */
import { parseProcStat, parseProcStatus, type ProcStat, treeCpuSeconds } from "./stats.ts";

/** A started server process. */
export interface ServerProcess {
  pid: number;
  url: string;
  logFile: string;
  /** Peak RSS so far (VmHWM), bytes. */
  peakRss(): number | undefined;
  /** CPU seconds used so far (user + system, all threads); undefined when gone. */
  cpuSeconds(): number | undefined;
  /** SIGTERM, then SIGKILL after 5 s; resolves when the process is gone. */
  stop(): Promise<void>;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/**
 * The runtime settings of `deno task start` in `startTask` (deno.json's):
 * its leading `NAME=value` environment assignments, its `--v8-flags=…` and
 * its `--no-code-cache`.
 * Every server the benchmark starts runs with them, so it measures Tessera as
 * the README's run command starts it.
 */
export function startTaskRuntime(startTask: string): {
  env: Record<string, string>;
  denoFlags: string[];
} {
  const words = startTask.trim().split(/\s+/);
  const env: Record<string, string> = {};
  let i = 0;
  for (; i < words.length && /^[A-Z_][A-Z0-9_]*=/.test(words[i]); i++) {
    const at = words[i].indexOf("=");
    env[words[i].slice(0, at)] = words[i].slice(at + 1);
  }
  const denoFlags = words.slice(i).filter((w) =>
    w.startsWith("--v8-flags=") || w === "--no-code-cache"
  );
  return { env, denoFlags };
}

/** {@link startTaskRuntime} of this checkout's deno.json. */
export function shippedRuntime(): { env: Record<string, string>; denoFlags: string[] } {
  const config = JSON.parse(
    Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)),
  ) as { tasks?: Record<string, string> };
  return startTaskRuntime(config.tasks?.start ?? "");
}

/** The command that runs `tessera <args>`: a binary, or deno run on main.ts. */
export function serverCommand(
  args: string[],
  binary?: string,
  denoFlags: string[] = [],
): { cmd: string; args: string[] } {
  if (binary) return { cmd: binary, args };
  const main = new URL("../../main.ts", import.meta.url).pathname;
  return { cmd: Deno.execPath(), args: ["run", "--allow-all", ...denoFlags, main, ...args] };
}

/** Reads /proc/<pid>/status; undefined when the process is gone. */
export function procMemory(pid: number): { peakRss?: number; rss?: number } {
  try {
    return parseProcStatus(Deno.readTextFileSync(`/proc/${pid}/status`));
  } catch {
    return {};
  }
}

/**
 * CPU seconds used so far by process `root` and its descendants (e.g. a
 * PostgreSQL server and its backends); undefined when `root` is gone.
 */
export function processTreeCpuSeconds(root: number): number | undefined {
  const stats = new Map<number, ProcStat>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const st = parseProcStat(Deno.readTextFileSync(`/proc/${entry.name}/stat`));
      if (st) stats.set(Number(entry.name), st);
    } catch { /* ended meanwhile */ }
  }
  return treeCpuSeconds(root, stats);
}

/**
 * Starts `tessera <args>` with `env`, output to `logFile`, and waits until
 * GET `readyPath` answers 200 (at most `timeoutMs`).
 */
export async function startServer(options: {
  args: string[];
  port: number;
  env?: Record<string, string>;
  logFile: string;
  binary?: string;
  /** Extra `deno run` flags (ignored with a binary). */
  denoFlags?: string[];
  readyPath: string;
  timeoutMs?: number;
  /** Called as soon as the process runs, before it is ready (to stop it on Ctrl-C). */
  onSpawn?: (server: ServerProcess) => void;
}): Promise<ServerProcess> {
  // as `deno task start` runs it (a compiled binary has its V8 flags built in)
  const shipped = shippedRuntime();
  const { cmd, args } = serverCommand(options.args, options.binary, [
    ...shipped.denoFlags,
    ...(options.denoFlags ?? []),
  ]);
  // the log first: a child spawned before a failing open would be left running
  const file = await Deno.open(options.logFile, { create: true, append: true });
  const child = new Deno.Command(cmd, {
    args,
    env: { ...shipped.env, ...options.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = file.writable.getWriter();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) await writer.write(chunk);
  };
  const pumping = Promise.all([pump(child.stdout), pump(child.stderr)])
    .finally(() => writer.close().catch(() => {}));
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const url = `http://127.0.0.1:${options.port}`;
  let lastPeak: number | undefined;
  const server: ServerProcess = {
    pid: child.pid,
    url,
    logFile: options.logFile,
    cpuSeconds() {
      // the whole process tree: `serve --workers n` runs its workers as child processes
      return processTreeCpuSeconds(child.pid);
    },
    peakRss() {
      const peak = procMemory(child.pid).peakRss;
      if (peak !== undefined) lastPeak = peak;
      return lastPeak;
    },
    async stop() {
      server.peakRss();
      if (!exited) {
        try {
          child.kill("SIGTERM");
        } catch { /* already gone */ }
        const timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch { /* already gone */ }
        }, 5000);
        await status;
        clearTimeout(timer);
      }
      await pumping;
    },
  };
  options.onSpawn?.(server);
  const deadline = Date.now() + (options.timeoutMs ?? 30000);
  for (;;) {
    if (exited) {
      await pumping;
      const log = await Deno.readTextFile(options.logFile).catch(() => "");
      throw new Error(`server exited during start (${(await status).code}):\n${log.slice(-3000)}`);
    }
    try {
      const res = await fetch(url + options.readyPath);
      await res.body?.cancel();
      if (res.status === 200) return server;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`server did not answer ${options.readyPath} within the time limit`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
