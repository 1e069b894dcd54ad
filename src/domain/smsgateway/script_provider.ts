/**
 * The script SMS provider (spec 11 §3.2): runs `<dir>/<script> <phone>` with
 * the SMS text on stdin. Only a plain file name listed in the configured
 * directory (`sms.script_dir`) runs: no paths, no `..`, no symlinks out; the
 * environment is cleared.
 *
 * @module
 */
import { join } from "node:path";
import { SmsDeliveryError } from "./http_provider.ts";

/** The parameter description of `GET /smsgateway/providers`. */
export const SCRIPT_PARAMETERS: Record<string, Record<string, unknown>> = {
  script: {
    required: true,
    description: "The script in the SMS script directory that sends the SMS.",
  },
  background: {
    required: true,
    description: "Wait for the script to complete or run it in the background.",
    values: ["wait", "background"],
  },
  REGEXP: {
    description:
      "Regular expression to modify the phone number to make it compatible with provider. Enter something like '/[\\+/]//' to remove pluses and slashes.",
  },
};

/** How long a `wait` script may run before it is killed (and the SMS counts as failed). */
const WAIT_LIMIT_MS = 30_000;

/** A file name a script may have (no path separator, no leading dot or dash). */
export const SCRIPT_NAME_REGEXP = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** The regular files of the script directory with a safe name. */
export async function listSmsScripts(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && SCRIPT_NAME_REGEXP.test(entry.name) && !entry.name.includes("..")) {
      names.push(entry.name);
    }
  }
  return names.sort();
}

/**
 * Runs the gateway's script for `phone` with `text` on stdin; with
 * `background=wait` the exit code must be 0. Throws {@link SmsDeliveryError}.
 */
export async function sendScriptSms(
  dir: string,
  options: Record<string, string>,
  phone: string,
  text: string,
  onBackgroundFailure: (code: number) => void,
): Promise<void> {
  const name = options.script ?? "";
  let known: string[];
  try {
    known = await listSmsScripts(dir);
  } catch (err) {
    throw new SmsDeliveryError(`the SMS script directory is unreadable: ${(err as Error).message}`);
  }
  if (!SCRIPT_NAME_REGEXP.test(name) || !known.includes(name)) {
    throw new SmsDeliveryError(`no script "${name.slice(0, 100)}" in the SMS script directory`);
  }
  const wait = (options.background ?? "wait") !== "background";
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(join(dir, name), {
      args: [phone],
      cwd: dir,
      stdin: "piped",
      stdout: "null",
      stderr: "null",
      clearEnv: true,
      env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
    }).spawn();
  } catch (err) {
    throw new SmsDeliveryError(`cannot start the script: ${(err as Error).message}`);
  }
  const writer = child.stdin.getWriter();
  const fed = writer.write(new TextEncoder().encode(text)).then(() => writer.close())
    // a script that exits without reading its input is not an error here
    .catch(() => undefined);
  if (!wait) {
    fed.then(() => child.status).then((s) => {
      if (!s.success) onBackgroundFailure(s.code);
    });
    return;
  }
  // a hanging script must not hold the authentication request forever
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, WAIT_LIMIT_MS);
  try {
    await fed;
    const status = await child.status;
    if (!status.success) throw new SmsDeliveryError("Error during execution of the script.");
  } finally {
    clearTimeout(timer);
  }
}
