/**
 * Drives FreeRADIUS' `radclient` (Debian package freeradius-utils), the RADIUS
 * peer nobody here wrote. Tests that need it are skipped with a message when it
 * is missing, except in CI (`CI` set), where a missing radclient is an error.
 *
 * @module
 */

async function available(): Promise<boolean> {
  try {
    await new Deno.Command("radclient", { args: ["-v"], stdout: "null", stderr: "null" }).output();
    return true;
  } catch {
    return false;
  }
}

/** True when radclient can be run. */
export const HAS_RADCLIENT: boolean = await available();

if (!HAS_RADCLIENT) {
  if (Deno.env.get("CI")) {
    throw new Error("radclient (freeradius-utils) is required in CI; .ci/setup-extra installs it");
  }
  console.warn("SKIPPING radclient tests: radclient not found (apt-get install freeradius-utils)");
}

/** Options of {@link radclient}. */
export interface RadclientOptions {
  /** `auth` (default) or `status`. */
  command?: string;
  /** Seconds to wait per try (default 1). */
  timeout?: number;
}

/**
 * Sends one request (`attrs` in radclient's `Attr = value, …` syntax) to
 * 127.0.0.1:`port`; returns the exit code and the verbose (-x) output.
 */
export async function radclient(
  port: number,
  secret: string,
  attrs: string,
  options: RadclientOptions = {},
): Promise<{ code: number; out: string }> {
  const child = new Deno.Command("radclient", {
    args: [
      "-x",
      "-r",
      "1",
      "-t",
      String(options.timeout ?? 1),
      `127.0.0.1:${port}`,
      options.command ?? "auth",
      secret,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(attrs + "\n"));
  await w.close();
  const res = await child.output();
  const dec = new TextDecoder();
  return { code: res.code, out: dec.decode(res.stdout) + dec.decode(res.stderr) };
}
