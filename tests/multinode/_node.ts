/**
 * Real Tessera server processes for the multi-node tests: `main.ts serve` on
 * a loopback port the system picks, spoken to over HTTP with `fetch`, stopped
 * by process id (SIGTERM, then SIGKILL). Also the command line, HOTP values
 * and statements on the run's PostgreSQL cluster.
 *
 * Every process gets a cleared environment plus what Deno needs and
 * `--config /dev/null`, so neither the developer's `TESSERA_*` variables nor
 * a `config/tessera.toml` in the checkout change what is tested.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import { TEST_PG_URL } from "../test_db.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const REPO = new URL("../../", import.meta.url).pathname;

/** RFC 4226's test key (hex); its HOTP values are published (counter 0 → 755224). */
export const HOTP_KEY_HEX = "3132333435363738393031323334353637383930";

/** How a node or a command reaches its database and key file. */
export interface NodeSetup {
  /** The data directory (key file, signing key, initial admin password; SQLite file). */
  dataDir: string;
  /** `TESSERA_STORAGE_DATABASE_URL`; default: the SQLite file in the data directory. */
  databaseUrl?: string;
  /** More environment variables. */
  env?: Record<string, string>;
}

/** A running `tessera serve` process. */
export interface TesseraNode {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
  pid: number;
  dataDir: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Settles when the process exits (on its own or by {@link TesseraNode.stop}). */
  exited: Promise<Deno.CommandStatus>;
  /** SIGTERM, then SIGKILL after `graceMs` (default 15 s); the exit status. */
  stop(graceMs?: number): Promise<Deno.CommandStatus>;
}

function processEnv(setup: NodeSetup): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const name of ["PATH", "HOME", "DENO_DIR", "TMPDIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  env.TESSERA_STORAGE_DATABASE_URL = setup.databaseUrl ??
    `sqlite:${setup.dataDir.replace(/\/+$/, "")}/tessera.sqlite`;
  return { ...env, ...setup.env };
}

function denoArgs(setup: NodeSetup, command: string[]): string[] {
  return ["run", "-A", MAIN, "--config", "/dev/null", "--data-dir", setup.dataDir, ...command];
}

/**
 * Starts `tessera serve` on 127.0.0.1 (port chosen by the system) and resolves
 * once it listens; rejects with its output when it exits first or takes longer
 * than `timeoutMs`.
 */
export async function startNode(
  setup: NodeSetup,
  options: { timeoutMs?: number } = {},
): Promise<TesseraNode> {
  const child = new Deno.Command(Deno.execPath(), {
    args: denoArgs(setup, ["serve", "--listen", "127.0.0.1:0"]),
    cwd: REPO,
    clearEnv: true,
    env: processEnv(setup),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  let onText: (() => void) | undefined;
  // both pipes are read to the end: a full pipe would stall the server
  const pump = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      onText?.();
    }
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  const exited = pumps.then(() => child.status);
  const stop = async (graceMs = 15_000) => {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
    }, graceMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  const timeoutMs = options.timeoutMs ?? 30_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const address = await new Promise<string>((resolve, reject) => {
    onText = () => {
      const m = text.match(/Tessera listening address=(\S+)/);
      if (m) resolve(m[1]);
    };
    onText();
    timer = setTimeout(() => reject(new Error(`no "listening" within ${timeoutMs} ms`)), timeoutMs);
    exited.then((s) => reject(new Error(`exited with code ${s.code} before listening`)));
  }).catch(async (err) => {
    await stop(2_000);
    throw new Error(`Cannot start a Tessera node: ${err.message}\n${text}`);
  }).finally(() => clearTimeout(timer));
  onText = undefined;
  return {
    url: `http://${address}`,
    pid: child.pid,
    dataDir: setup.dataDir,
    output: () => text,
    exited,
    stop,
  };
}

/** Runs a `tessera` command (e.g. `["admin", "delete", "ops"]`) on a node's setup. */
export async function runCli(
  setup: NodeSetup,
  command: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: denoArgs(setup, command),
    cwd: REPO,
    clearEnv: true,
    env: processEnv(setup),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Copies the key file and the response signing key, as an operator does for a second node. */
export async function copyKeys(fromDir: string, toDir: string): Promise<void> {
  for (const name of ["encKey", "signing-key.pem", "signing-key.pem.pub"]) {
    try {
      await Deno.copyFile(`${fromDir}/${name}`, `${toDir}/${name}`);
      await Deno.chmod(`${toDir}/${name}`, 0o600);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound) || name === "encKey") throw err;
    }
  }
}

/** The password of the initial admin that the first start wrote to the data directory. */
export async function initialAdminPassword(dataDir: string): Promise<string> {
  return (await Deno.readTextFile(`${dataDir}/initial-admin-password`)).split("\n")[0];
}

/** An answer: HTTP status, parsed JSON body (undefined if none) and how long it took. */
export interface ApiResult {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
  ms: number;
}

/** Options of {@link api}. */
export interface ApiOptions {
  /** Query parameters for GET, form fields otherwise. */
  params?: Record<string, string>;
  /** JWT for `PI-Authorization`. */
  jwt?: string;
  headers?: Record<string, string>;
  /** Abort (and fail) after this long; default 15 s, so a hang fails instead of stalling. */
  timeoutMs?: number;
}

/** Sends one request to a node over HTTP. */
export async function api(
  node: { url: string },
  method: string,
  path: string,
  options: ApiOptions = {},
): Promise<ApiResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.jwt) headers["PI-Authorization"] = options.jwt;
  let url = node.url + path;
  let body: URLSearchParams | undefined;
  if (options.params) {
    if (method === "GET") url += "?" + new URLSearchParams(options.params);
    else body = new URLSearchParams(options.params);
  }
  const started = performance.now();
  const res = await fetch(url, {
    method,
    headers,
    body,
    signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed, ms };
}

/** Logs in at `/auth` and returns the JWT; fails the test when the login fails. */
export async function login(
  node: { url: string },
  username: string,
  password: string,
): Promise<string> {
  const res = await api(node, "POST", "/auth", { params: { username, password } });
  assert.equal(res.status, 200, `login of "${username}": ${JSON.stringify(res.body)}`);
  return res.body.result.value.token;
}

/** The RFC 4226 HOTP value of `keyHex` at `counter`. */
export function hotp(keyHex: string, counter: number, digits = 6): string {
  const message = new Uint8Array(8);
  new DataView(message.buffer).setBigUint64(0, BigInt(counter));
  const h = createHmac("sha1", Buffer.from(keyHex, "hex")).update(message).digest();
  const o = h[h.length - 1] & 0x0f;
  const code = ((h[o] & 0x7f) << 24 | h[o + 1] << 16 | h[o + 2] << 8 | h[o + 3]) % 10 ** digits;
  return String(code).padStart(digits, "0");
}

/** Runs `fn` on the run's PostgreSQL cluster (`postgres` database) with a connection of its own. */
export async function onPgCluster<T>(fn: (db: ReturnType<typeof openDatabase>) => Promise<T>) {
  assert.ok(TEST_PG_URL, "TEST_PG_URL is not set: this test needs the PostgreSQL run");
  const db = openDatabase(TEST_PG_URL, { poolSize: 1 });
  try {
    return await fn(db);
  } finally {
    await db.destroy();
  }
}

/** An empty PostgreSQL database (no tables) on the run's cluster, and how to drop it. */
export async function createEmptyPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `mn_${Deno.pid}_${crypto.randomUUID().slice(0, 8)}`;
  await onPgCluster((db) => sql`create database ${sql.id(name)}`.execute(db));
  const u = new URL(TEST_PG_URL!);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: () =>
      onPgCluster((db) => sql`drop database if exists ${sql.id(name)} with (force)`.execute(db))
        .then(() => {}),
  };
}
