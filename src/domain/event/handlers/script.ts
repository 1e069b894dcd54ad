/**
 * The `Script` handler: runs an executable from the configured script
 * directory (`events.script_dir`). The action is the file name; names with a
 * path separator or `..` are refused, so nothing outside that directory runs.
 *
 * @module
 */
import { join } from "node:path";
import type { Deps } from "../../../deps.ts";
import { ConfigAdminError } from "../../../errors.ts";
import type { ActionDefs, HandlerModule } from "../types.ts";
import { EventAbortError, isTrue, opt } from "../types.ts";
import { contextSerial, contextUser } from "../facts.ts";

const SCRIPT_NAME_REGEXP = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** The executables of the script directory (regular files with a safe name). */
export async function listScripts(deps: Deps): Promise<string[]> {
  const dir = deps.config.events.scriptDir;
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && SCRIPT_NAME_REGEXP.test(entry.name) && !entry.name.includes("..")) {
        names.push(entry.name);
      }
    }
  } catch (err) {
    throw new ConfigAdminError(`Unable to open script directory: ${(err as Error).message}`);
  }
  return names.sort();
}

function options() {
  return {
    background: opt("str", "Run the script in the background or wait for it", {
      required: true,
      value: ["background", "wait"],
    }),
    raise_error: opt("bool", "Abort the request when the script fails (only with wait)", {
      visibleIf: "background",
      visibleValue: "wait",
    }),
    sync_to_database: opt("bool", "Finish database writes before the script starts"),
    serial: opt("bool", "Add --serial <serial>"),
    user: opt("bool", "Add --user <user>"),
    realm: opt("bool", "Add --realm <realm>"),
    logged_in_user: opt("bool", "Add --logged_in_user <user>@<realm>"),
    logged_in_role: opt("bool", "Add --logged_in_role <role>"),
  };
}

/** Script / one action per file of the script directory. */
export const scriptHandler: HandlerModule = {
  id: "Script",
  positions: ["post", "pre"],
  defaultAbort: false,
  async actions(deps): Promise<ActionDefs> {
    const out: ActionDefs = {};
    for (const name of await listScripts(deps)) out[name] = options();
    return out;
  },
  async run(deps, def, ctx) {
    const name = def.action;
    const wait = def.options.background === "wait";
    const raise = wait && isTrue(def.options.raise_error);
    // only a plain file name listed in the directory may run: no paths, no "..", no symlink games
    let known: string[];
    try {
      known = await listScripts(deps);
    } catch (err) {
      deps.log.error("Script handler: script directory unreadable", { error: err as Error });
      if (raise) throw new EventAbortError("Failed to start script.");
      return { success: false };
    }
    if (!SCRIPT_NAME_REGEXP.test(name) || !known.includes(name)) {
      deps.log.warn("Script handler: no such script", { script: name });
      if (raise) throw new EventAbortError("Failed to start script.");
      return { success: false };
    }
    const args: string[] = [];
    const o = def.options;
    const user = await contextUser(deps, ctx);
    const id = ctx.request.identity;
    if (isTrue(o.serial)) args.push("--serial", contextSerial(ctx) || "none");
    if (isTrue(o.user)) args.push("--user", user?.login || "none");
    if (isTrue(o.realm)) args.push("--realm", user?.realm || "none");
    if (isTrue(o.logged_in_user)) {
      args.push("--logged_in_user", id ? `${id.username}@${id.realm}` : "none");
    }
    if (isTrue(o.logged_in_role)) args.push("--logged_in_role", id?.role ?? "none");
    const dir = deps.config.events.scriptDir;
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(join(dir, name), {
        args,
        cwd: dir,
        stdin: "null",
        stdout: "null",
        stderr: "null",
        clearEnv: true,
        env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
      }).spawn();
    } catch (err) {
      deps.log.error("Script handler: cannot start script", { script: name, error: err as Error });
      if (raise) throw new EventAbortError("Failed to start script.");
      return { success: false };
    }
    if (!wait) {
      child.status.then((s) => {
        if (!s.success) deps.log.warn("Script failed", { script: name, code: s.code });
      });
      return { success: true };
    }
    const status = await child.status;
    if (!status.success) {
      deps.log.warn("Script failed", { script: name, code: status.code });
      if (raise) throw new EventAbortError("Error during execution of the script.");
      return { success: false, details: `exit code ${status.code}` };
    }
    return { success: true };
  },
};
