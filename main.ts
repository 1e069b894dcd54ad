/**
 * Tessera command line: `serve` (default), `admin add|list|delete|password`,
 * `migrate`. Exit codes: 0 ok, 1 runtime failure, 2 usage or config error.
 *
 * @module
 */
import { type Config, type ConfigOverrides, loadConfig } from "./src/config.ts";
import { AppError, ConfigError } from "./src/errors.ts";
import { createLogger, type Logger } from "./src/lib/logger.ts";
import { closeRuntime, openRuntime } from "./src/runtime.ts";
import { createApp } from "./src/app.ts";
import {
  addAdmin,
  deleteAdmin,
  ensureInitialAdmin,
  listAdmins,
  setAdminPassword,
} from "./src/domain/admin/mod.ts";
import { VERSION } from "./src/version.ts";
import { DatabaseTooNewError } from "./src/db/database.ts";
import { startRadiusListener } from "./src/radius/listener.ts";
import { validateCheck } from "./src/domain/validate/mod.ts";
import { runSubscriptionCommand, SUBSCRIPTION_HELP } from "./src/cli/subscription.ts";
import { Hono } from "hono";

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
  subscription keygen|sign  create a subscription signing key pair, sign a subscription file
  hello [--listen h:p]      serve a plain "hello" endpoint (benchmark ceiling)

Global options (on every command, they override the config file):
  --config <file>           TOML config file (else $TESSERA_CONFIG, else config/tessera.toml)
  --data-dir <dir>          data directory (database, key file)
  -h, --help                show help; "tessera <command> --help" for a command
  --version                 print the version

Every config key can also be set as TESSERA_<SECTION>_<KEY>, e.g. TESSERA_SERVER_PORT=8080.
Exit codes: 0 ok, 1 failure, 2 usage or configuration error.`,
  serve: `Usage: tessera serve [--listen <host:port>] [--config <file>] [--data-dir <dir>]

Runs the HTTP API. On first start it creates the data directory, the key file
and an initial admin "admin" whose password is written to
<data-dir>/initial-admin-password (mode 0600).

Options:
  --listen <host:port>      address to listen on (overrides server.host/server.port)`,
  admin: `Usage: tessera admin <add|list|delete|password> [name] [options]

  admin add <name> [--email <mail>] [--password <pw>]
  admin list
  admin delete <name>
  admin password <name> [--password <pw>]

The password comes from --password, else from standard input when it is not a
terminal (first line), else from a prompt.`,
  migrate: `Usage: tessera migrate [--config <file>] [--data-dir <dir>]

Applies pending database migrations and exits.`,
  subscription: SUBSCRIPTION_HELP,
  hello: `Usage: tessera hello [--listen <host:port>]

Serves a plain Hono app that answers every GET with "hello" (default
127.0.0.1:8089). The benchmark (deno task bench) uses it as this machine's
ceiling, served by the same program as Tessera.`,
};

class UsageError extends Error {}

interface Parsed {
  command: string[];
  flags: Map<string, string | true>;
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
]);
const BOOL_FLAGS = new Set(["help", "version"]);

function parseArgs(args: string[]): Parsed {
  const command: string[] = [];
  const flags = new Map<string, string | true>();
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
      } else throw new UsageError(`Unknown option --${name}`);
    } else command.push(arg);
  }
  return { command, flags };
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

async function serve(config: Config, log: Logger): Promise<void> {
  const deps = await openRuntime(config, log);
  const initial = await ensureInitialAdmin(deps);
  if (initial !== undefined) {
    const path = `${config.storage.dataDir.replace(/\/+$/, "")}/initial-admin-password`;
    Deno.writeTextFileSync(path, initial + "\n", { mode: 0o600 });
    Deno.chmodSync(path, 0o600);
    log.info('Created initial admin "admin"; its password is in the file', { path });
  }
  const app = createApp(deps);
  // the native RADIUS listener answers through the same validate path as /validate/check
  const radius = config.radius.enabled
    ? await startRadiusListener(deps, {
      host: config.radius.host,
      port: config.radius.port,
      clients: config.radius.clients,
      dictionary: config.radius.dictionary || undefined,
      check: validateCheck,
    })
    : undefined;
  const server = Deno.serve({
    hostname: config.server.host,
    port: config.server.port,
    onListen: ({ hostname, port }) =>
      log.info("Tessera listening", { address: `${hostname}:${port}`, version: VERSION }),
  }, (req, info) => app.fetch(req, info));
  const stop = async () => {
    log.info("Shutting down");
    await radius?.close();
    await server.shutdown();
  };
  for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => void stop());
  await server.finished;
  await closeRuntime(deps);
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

async function admin(config: Config, log: Logger, parsed: Parsed): Promise<void> {
  const [, action, name, ...rest] = parsed.command;
  if (rest.length > 0) throw new UsageError(`Unexpected argument "${rest[0]}"`);
  const needsName = ["add", "delete", "password"];
  if (!action || ![...needsName, "list"].includes(action)) {
    throw new UsageError(`Unknown admin command "${action ?? ""}"; see tessera admin --help`);
  }
  if (needsName.includes(action) && !name) {
    throw new UsageError(`tessera admin ${action} needs a name`);
  }
  const deps = await openRuntime(config, log);
  try {
    if (action === "list") {
      const admins = await listAdmins(deps);
      for (const a of admins) console.log(`${a.username}\t${a.email}\t${a.createdAt}`);
      if (admins.length === 0) console.log("(no admins)");
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
    console.error(`Unknown command "${command}"\n\n${HELP.main}`);
    return 2;
  }
  if (parsed.flags.has("help")) {
    console.log(parsed.command.length === 0 ? HELP.main : HELP[command]);
    return 0;
  }
  if (parsed.flags.has("listen") && command !== "serve" && command !== "hello") {
    console.error("--listen is only valid for serve");
    return 2;
  }
  if (command === "hello") return await serveHello(parsed);
  if (command === "subscription") {
    return await runSubscriptionCommand(parsed.command.slice(1), parsed.flags);
  }
  let log: Logger = createLogger("info");
  try {
    const config = readConfig(parsed.flags);
    log = createLogger(config.log.level);
    if (command === "serve") {
      if (parsed.command.length > 1) {
        throw new UsageError(`Unexpected argument "${parsed.command[1]}"`);
      }
      await serve(config, log);
    } else if (command === "admin") {
      await admin(config, log, parsed);
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
    if (err instanceof AppError || err instanceof DatabaseTooNewError) {
      console.error(`Error: ${err.message}`);
      return 1;
    }
    log.error("Fatal error", { error: err as Error });
    return 1;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
