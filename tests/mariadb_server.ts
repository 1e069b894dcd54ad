/**
 * A private MariaDB server for tests and benchmarks: `mariadb-install-db` in a
 * temporary folder, `mariadbd` in the foreground as a child of the test process
 * on a free loopback port with its own socket, data folder and pid file (never
 * the system service), stopped by its process id. A user with a password and
 * an empty database are created, and the server's URL names them, as an
 * operator's would.
 *
 * Binaries come from Debian's `mariadb-server` package (`.ci/setup-extra`
 * installs it without starting the service). When they are missing, starting
 * fails with a message that says so: the tests fail, they are never skipped.
 * As root (CI) the server runs as root (`--user=root`), as slapd does. With
 * `tls: true` it also offers TLS with a certificate for 127.0.0.1/localhost
 * signed by a test CA the helper makes with the openssl CLI.
 *
 * @module
 */
import { existsSync } from "node:fs";
import mysql from "mysql2/promise";
import { freePort } from "./ldap/_slapd.ts";
import { terminate } from "./_process.ts";

/** A running private MariaDB server. */
export interface MariaDb {
  /** `mysql://<user>:<password>@127.0.0.1:<port>/<database>`. */
  url: string;
  host: string;
  port: number;
  /** A user with a password and every privilege (may create and drop databases). */
  user: string;
  password: string;
  /** The empty database made at start. */
  database: string;
  /** The server's folder (data, socket, pid file, error log). */
  dir: string;
  /** The server's Unix socket (the same users as over TCP). */
  socket: string;
  /** With `tls`: PEM files of the CA that signed the server's certificate and of another CA. */
  tls?: { caFile: string; wrongCaFile: string };
  readonly pid: number;
  /** URL of database `name` on this server for {@link user}. */
  urlOf(name: string): string;
  /** Creates database `name` (utf8mb4) and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /**
   * Runs `text` (one or more statements separated by `;`) as {@link user} on
   * `database` (default {@link database}); resolves with the rows of the last
   * statement that returned rows ([] when none did). `values` fill `?` placeholders
   * of a single statement.
   */
  sql(
    text: string,
    options?: { database?: string; values?: unknown[] },
  ): Promise<Record<string, unknown>[]>;
  /** Stops the server (SIGTERM, then SIGKILL) and removes the folder. */
  stop(): Promise<void>;
  /** The same, synchronously (process exit). */
  stopSync(): void;
}

const SERVER_CANDIDATES = ["/usr/sbin/mariadbd", "/usr/sbin/mysqld", "/usr/libexec/mariadbd"];

function onPath(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir && existsSync(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  return undefined;
}

/** Paths of `mariadbd`, `mariadb-install-db` and the `mariadb` client, or undefined when MariaDB is not installed. */
export function mariaDbBinaries():
  | { server: string; installDb: string; client: string }
  | undefined {
  const server = SERVER_CANDIDATES.find((p) => existsSync(p)) ?? onPath("mariadbd");
  const installDb = onPath("mariadb-install-db") ??
    (existsSync("/usr/bin/mariadb-install-db") ? "/usr/bin/mariadb-install-db" : undefined);
  const client = onPath("mariadb") ?? onPath("mysql");
  if (!server || !installDb || !client) return undefined;
  return { server, installDb, client };
}

const isRoot = () => Deno.uid() === 0;

/** Options every `mariadbd` run of the folder gets (the bootstrap of install-db too). */
function serverOptions(dir: string): string[] {
  return [
    // small and fast: a test server holds little and need not survive a crash
    "--innodb-log-file-size=8M",
    "--innodb-buffer-pool-size=32M",
    "--innodb-flush-log-at-trx-commit=0",
    "--skip-log-bin",
    "--skip-name-resolve",
    "--character-set-server=utf8mb4",
    "--collation-server=utf8mb4_general_ci",
    `--tmpdir=${dir}`,
    ...(isRoot() ? ["--user=root"] : []),
  ];
}

async function output(cmd: string, args: string[], cwd?: string): Promise<Deno.CommandOutput> {
  try {
    return await new Deno.Command(cmd, {
      args,
      cwd,
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).output();
  } catch (err) {
    throw new Error(`Cannot run ${cmd}: ${(err as Error).message}`);
  }
}

const text = (out: Deno.CommandOutput) =>
  (new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout)).trim();

/** A user name, password and database name for the server's account. */
const USER = "tessera";
const DATABASE = "tessera_test";

/** Makes `ca.pem`, `wrong-ca.pem` and a server certificate for 127.0.0.1/localhost in `dir`. */
async function makeCertificates(dir: string): Promise<void> {
  const ssl = async (args: string[]) => {
    const out = await output("openssl", args, dir);
    if (!out.success) throw new Error(`openssl ${args[0]} failed: ${text(out).slice(0, 1000)}`);
  };
  const key = ["-newkey", "rsa:2048", "-nodes"];
  await ssl([
    "req",
    "-x509",
    ...key,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=Tessera Test CA",
  ]);
  await ssl([
    "req",
    "-x509",
    ...key,
    "-keyout",
    "wrong-ca.key",
    "-out",
    "wrong-ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=Some Other CA",
  ]);
  await ssl([
    "req",
    ...key,
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=localhost",
  ]);
  await Deno.writeTextFile(
    `${dir}/server.ext`,
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n" +
      "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
  );
  await ssl([
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "server.ext",
  ]);
}

/** Options of {@link startMariaDb}. */
export interface MariaDbOptions {
  /** Offer TLS (see the module doc). */
  tls?: boolean;
}

/**
 * Starts a private MariaDB server with a user `tessera` (a random password)
 * and an empty database `tessera_test`. Throws with a clear message when
 * MariaDB is not installed or the server does not start.
 */
export async function startMariaDb(options: MariaDbOptions = {}): Promise<MariaDb> {
  const bin = mariaDbBinaries();
  if (!bin) {
    throw new Error(
      "MariaDB is not installed (no mariadbd/mariadb-install-db/mariadb found), so the MariaDB " +
        "tests cannot run: apt-get install mariadb-server (.ci/setup-extra does this without " +
        "starting the service)",
    );
  }
  const dir = await Deno.makeTempDir({ prefix: "tessera-mariadb-" });
  const data = `${dir}/data`;
  const socket = `${dir}/mariadbd.sock`;
  const install = await output(bin.installDb, [
    "--no-defaults",
    `--datadir=${data}`,
    // root may log in through the socket without a password (only this folder's socket)
    "--auth-root-authentication-method=normal",
    "--skip-test-db",
    ...serverOptions(dir),
  ]);
  if (!install.success) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw new Error(`mariadb-install-db failed: ${text(install).slice(-2000)}`);
  }
  if (options.tls) {
    try {
      await makeCertificates(dir);
    } catch (err) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      throw new Error(
        `Cannot make the test certificates (openssl needed): ${(err as Error).message}`,
      );
    }
  }
  const port = await freePort();
  const host = "127.0.0.1";
  let child: Deno.ChildProcess | undefined = new Deno.Command(bin.server, {
    args: [
      "--no-defaults",
      `--datadir=${data}`,
      `--socket=${socket}`,
      `--pid-file=${dir}/mariadbd.pid`,
      `--port=${port}`,
      `--bind-address=${host}`,
      // the log goes to a file: a pipe nobody reads would fill and stall the server
      `--log-error=${dir}/error.log`,
      "--max-connections=300",
      ...(options.tls
        ? [`--ssl-ca=${dir}/ca.pem`, `--ssl-cert=${dir}/server.pem`, `--ssl-key=${dir}/server.key`]
        : []),
      ...serverOptions(dir),
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const pid = child.pid;
  let exited = false;
  child.status.then(() => exited = true);

  const stop = async () => {
    const running = child;
    child = undefined;
    if (running) await terminate(running);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const stopSync = () => {
    const running = child;
    child = undefined;
    if (running) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* gone */ }
  };

  const password = `pw-${crypto.randomUUID()}`;
  // root through the socket, as soon as the server answers there
  const setup = [
    `create database ${DATABASE} character set utf8mb4`,
    `create user '${USER}'@'%' identified by '${password}'`,
    `grant all privileges on *.* to '${USER}'@'%' with grant option`,
  ].join("; ");
  const deadline = Date.now() + 30_000;
  for (;;) {
    const out = await output(bin.client, [
      "--no-defaults",
      "-uroot",
      `--socket=${socket}`,
      "-e",
      setup,
    ]);
    if (out.success) break;
    if (exited || Date.now() > deadline) {
      const log = await Deno.readTextFile(`${dir}/error.log`).catch(() => "");
      await stop();
      throw new Error(
        `MariaDB did not start within 30 s: ${text(out).slice(0, 500)}\n${log.slice(-2000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const urlOf = (name: string) =>
    `mysql://${USER}:${encodeURIComponent(password)}@${host}:${port}/${name}`;
  const sql: MariaDb["sql"] = async (statements, options = {}) => {
    const conn = await mysql.createConnection({
      host,
      port,
      user: USER,
      password,
      database: options.database ?? DATABASE,
      multipleStatements: options.values === undefined,
    });
    try {
      const [result] = await conn.query(statements, options.values);
      // several statements answer a list of results; rows are arrays, the rest are OkPackets
      const results = Array.isArray(result) && result.some((r) => Array.isArray(r))
        ? result as unknown[]
        : [result];
      const withRows = results.filter((r) => Array.isArray(r));
      return (withRows.at(-1) ?? []) as Record<string, unknown>[];
    } finally {
      await conn.end();
    }
  };
  return {
    url: urlOf(DATABASE),
    host,
    port,
    user: USER,
    password,
    database: DATABASE,
    dir,
    socket,
    tls: options.tls ? { caFile: `${dir}/ca.pem`, wrongCaFile: `${dir}/wrong-ca.pem` } : undefined,
    get pid() {
      return child?.pid ?? 0;
    },
    urlOf,
    async createDatabase(name) {
      await sql(`create database \`${name.replaceAll("`", "``")}\` character set utf8mb4`);
      return urlOf(name);
    },
    sql,
    stop,
    stopSync,
  };
}

let shared: Promise<MariaDb> | undefined;

/**
 * The MariaDB server of this test file, started on first use and stopped after
 * the file's last test (`Deno.test.afterAll`) or, failing that, when the
 * process exits. Tests that use it must switch off Deno's op/resource
 * sanitizers (the server outlives a single test): see {@link mariaDbTest}.
 */
export function sharedMariaDb(): Promise<MariaDb> {
  if (shared === undefined) {
    shared = startMariaDb();
    shared.then((s) => globalThis.addEventListener("unload", () => s.stopSync())).catch(() => {});
  }
  return shared;
}

Deno.test.afterAll(async () => {
  if (shared === undefined) return;
  const s = await shared.catch(() => undefined);
  shared = undefined;
  await s?.stop();
});

/** `Deno.test` for tests against the shared MariaDB server (sanitizers off: it spans tests). */
export function mariaDbTest(name: string, fn: (server: MariaDb) => Promise<void>): void {
  Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => fn(await sharedMariaDb()),
  });
}
