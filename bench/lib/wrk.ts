/**
 * Runs wrk (a separate load process on loopback) with a generated Lua script.
 *
 * @module
 */
import { luaScript, type LuaSpec } from "./lua.ts";
import { parseWrkOutput, type WrkResult } from "./stats.ts";

/** How to install wrk when it is missing. */
export const WRK_INSTALL_HINT =
  'wrk is not installed. Install it with: apt-get install -y wrk (Debian/Ubuntu package "wrk")';

/** wrk's version line, or undefined when wrk is not installed. */
export async function wrkVersion(): Promise<string | undefined> {
  try {
    const out = await new Deno.Command("wrk", { args: ["-v"], stdout: "piped", stderr: "piped" })
      .output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    return text.split("\n")[0].replace(/\s*\[.*$/, "").trim() || "wrk";
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/** The wrk command line for a run (pure, for tests and logs). */
export function wrkArgs(options: {
  url: string;
  script: string;
  seconds: number;
  connections: number;
  threads: number;
}): string[] {
  return [
    "-t",
    String(options.threads),
    "-c",
    String(options.connections),
    "-d",
    `${Math.max(1, Math.round(options.seconds))}s`,
    "--timeout",
    "10s",
    "-s",
    options.script,
    options.url,
  ];
}

/** Writes the script for `spec` to `scriptPath` and runs wrk against `url`. */
export async function runWrk(options: {
  url: string;
  spec: LuaSpec;
  scriptPath: string;
  seconds: number;
  connections: number;
  /** CPUs to pin wrk to (`taskset -c <cpus>`). */
  cpus?: string;
}): Promise<WrkResult> {
  await Deno.writeTextFile(options.scriptPath, luaScript(options.spec));
  const pin = options.cpus === undefined ? [] : ["-c", options.cpus, "wrk"];
  const out = await new Deno.Command(pin.length > 0 ? "taskset" : "wrk", {
    args: [
      ...pin,
      ...wrkArgs({
        url: options.url,
        script: options.scriptPath,
        seconds: options.seconds,
        connections: options.connections,
        threads: options.spec.threads,
      }),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`wrk failed (${out.code}): ${new TextDecoder().decode(out.stderr)}${text}`);
  }
  return parseWrkOutput(text);
}
