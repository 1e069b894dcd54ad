/**
 * User databases on servers for the sqlresolver tests: the private MariaDB
 * (tests/mariadb_server.ts) and a private PostgreSQL cluster of this file's
 * own (pg_cluster.ts; its pg_hba asks every user but the superuser for a
 * password, so a wrong one is refused), each with a login `pi` whose password
 * `p@ss:w/rd` must be percent-encoded in the resolver's keys (spec 16 §1.11),
 * and a fresh database per test holding privacyIDEA's fixture table.
 *
 * @module
 */
import pg from "pg";
import { sharedMariaDb } from "../mariadb_server.ts";
import { type PgCluster, startPgCluster } from "../pg_cluster.ts";
import { hashCryptPassword } from "../../src/lib/unix_crypt.ts";

/** The login the resolvers use, and its password as stored and as written in `Password`. */
export const PI_USER = "pi";
export const PI_PASSWORD = "p@ss:w/rd";
export const PI_PASSWORD_KEY = "p%40ss%3Aw%2Frd";

/** One user of the fixture table. */
export interface FixtureRow {
  username: string | null;
  email?: string | null;
  name?: string;
  givenname?: string;
  phone?: string;
  mobile?: string;
  password?: string;
  status?: string;
}

/** A user database server the tests can reach. */
export interface UserServer {
  engine: "mysql" | "postgres";
  label: string;
  /** The `Driver` value (as privacyIDEA stores it). */
  driver: string;
  host: string;
  port: number;
  /** The server's Unix socket (MariaDB: the file; PostgreSQL: its folder). */
  socket: string;
  /** A new database with the fixture table `users` (and, on PostgreSQL, `users_uuid`). */
  freshDatabase(rows: FixtureRow[]): Promise<string>;
  /** Runs one statement as the administrator on `database`. */
  sql(database: string, text: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
  /** How many connections `pi` holds open (the resolvers' pools). */
  piConnections(): Promise<number>;
}

let counter = 0;

function columnsOf(row: FixtureRow): [string[], unknown[]] {
  const cols = Object.keys(row);
  return [cols, cols.map((c) => row[c as keyof FixtureRow] ?? null)];
}

async function mariaDbServer(): Promise<UserServer> {
  const server = await sharedMariaDb();
  await server.sql(
    `create user if not exists '${PI_USER}'@'%' identified by '${PI_PASSWORD}'`,
  );
  const sql: UserServer["sql"] = (database, text, values) =>
    server.sql(text, { database, values: values ?? [] });
  return {
    engine: "mysql",
    label: "MariaDB",
    driver: "mysql+pymysql",
    host: server.host,
    port: server.port,
    socket: server.socket,
    async freshDatabase(rows) {
      const name = `users_${Deno.pid}_${++counter}`;
      await server.createDatabase(name);
      await server.sql(`grant all privileges on \`${name}\`.* to '${PI_USER}'@'%'`);
      await sql(
        name,
        `create table users (id int auto_increment primary key, username varchar(64) unique,
          email varchar(255), name varchar(255), givenname varchar(255), mobile varchar(64),
          phone varchar(64), password varchar(255), status varchar(16))`,
      );
      for (const row of rows) {
        const [cols, values] = columnsOf(row);
        await sql(
          name,
          `insert into users (${cols.join(", ")}) values (${cols.map(() => "?").join(", ")})`,
          values,
        );
      }
      return name;
    },
    sql,
    async piConnections() {
      const rows = await server.sql(
        `select count(*) as n from information_schema.processlist where user = '${PI_USER}'`,
      );
      return Number(rows[0].n);
    },
  };
}

let cluster: Promise<PgCluster> | undefined;

async function pgQuery(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function postgresServer(): Promise<UserServer> {
  const c = await (cluster ??= (async () => {
    const started = await startPgCluster();
    // the superuser over TCP and everyone over the socket without a password, `pi` with one
    // `pitls` only over TLS (see enablePgTls)
    await Deno.writeTextFile(
      `${started.dir}/data/pg_hba.conf`,
      "local all all trust\nhost all postgres 127.0.0.1/32 trust\n" +
        `hostssl all ${PI_TLS_USER} 127.0.0.1/32 scram-sha-256\n` +
        `host all ${PI_TLS_USER} 127.0.0.1/32 reject\n` +
        "host all all 127.0.0.1/32 scram-sha-256\n",
    );
    await pgQuery(started.url, "select pg_reload_conf()");
    await pgQuery(started.url, `create role ${PI_USER} login password '${PI_PASSWORD}'`);
    await pgQuery(started.url, `create role ${PI_TLS_USER} login password '${PI_PASSWORD}'`);
    return started;
  })());
  const sql: UserServer["sql"] = (database, text, values) =>
    pgQuery(c.urlOf(database), text, values);
  return {
    engine: "postgres",
    label: "PostgreSQL",
    driver: "postgresql+psycopg2",
    host: "127.0.0.1",
    port: c.port,
    socket: c.dir,
    async freshDatabase(rows) {
      const name = `users_${Deno.pid}_${++counter}`;
      await pgQuery(c.url, `create database ${name} owner ${PI_USER}`);
      await sql(
        name,
        `create table users (id serial primary key, username varchar(64) unique,
          email varchar(255), name varchar(255), givenname varchar(255), mobile varchar(64),
          phone varchar(64), password varchar(255), status varchar(16))`,
      );
      await sql(
        name,
        "create table users_uuid (uid uuid primary key default gen_random_uuid(), " +
          "username text, password text)",
      );
      await sql(name, `alter table users owner to ${PI_USER}`);
      await sql(name, `alter table users_uuid owner to ${PI_USER}`);
      for (const row of rows) {
        const [cols, values] = columnsOf(row);
        await sql(
          name,
          `insert into users (${cols.join(", ")}) values (${
            cols.map((_, i) => `$${i + 1}`).join(", ")
          })`,
          values,
        );
      }
      return name;
    },
    sql,
    async piConnections() {
      const rows = await pgQuery(
        c.url,
        `select count(*)::int as n from pg_stat_activity where usename = '${PI_USER}'`,
      );
      return Number(rows[0].n);
    },
  };
}

/** A login the servers accept over TLS only (same password as {@link PI_USER}). */
export const PI_TLS_USER = "pitls";

/** CA files of a server that offers TLS: the one that signed its certificate, and another. */
export interface TestCas {
  caFile: string;
  wrongCaFile: string;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", {
    args,
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  if (!out.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** A test CA, another CA, and a server certificate for 127.0.0.1/localhost, in `dir`. */
async function makeCertificates(dir: string): Promise<TestCas> {
  const key = ["-newkey", "rsa:2048", "-nodes", "-days", "2"];
  await openssl(dir, [
    "req",
    "-x509",
    ...key,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-subj",
    "/CN=Test CA",
  ]);
  await openssl(dir, [
    "req",
    "-x509",
    ...key,
    "-keyout",
    "wrong-ca.key",
    "-out",
    "wrong-ca.pem",
    "-subj",
    "/CN=Other CA",
  ]);
  await openssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
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
  await openssl(dir, [
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
  return { caFile: `${dir}/ca.pem`, wrongCaFile: `${dir}/wrong-ca.pem` };
}

/** Turns TLS on in this file's PostgreSQL cluster (once); its CA files. */
export async function enablePgTls(): Promise<TestCas> {
  const c = await cluster!;
  const dir = `${c.dir}/tls`;
  const cas = { caFile: `${dir}/ca.pem`, wrongCaFile: `${dir}/wrong-ca.pem` };
  try {
    await Deno.stat(cas.caFile);
    return cas;
  } catch { /* first call */ }
  await Deno.mkdir(dir);
  await makeCertificates(dir);
  const data = `${c.dir}/data`;
  await Deno.copyFile(`${dir}/server.pem`, `${data}/server.crt`);
  await Deno.copyFile(`${dir}/server.key`, `${data}/server.key`);
  await Deno.chmod(`${data}/server.key`, 0o600);
  if (Deno.uid() === 0) {
    // the server runs as postgres (pg_cluster.ts) and must own its key
    const id = (flag: string) =>
      Number(
        new TextDecoder().decode(
          new Deno.Command("id", { args: [flag, "postgres"], stdout: "piped" }).outputSync().stdout,
        ).trim(),
      );
    for (const f of ["server.crt", "server.key"]) {
      await Deno.chown(`${data}/${f}`, id("-u"), id("-g"));
    }
  }
  await pgQuery(c.url, "alter system set ssl = on");
  await pgQuery(c.url, "select pg_reload_conf()");
  // the reload is asynchronous: wait until a TLS connection works
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = await pgQuery(c.url, "show ssl");
    if (rows[0]?.ssl === "on") break;
    if (Date.now() > deadline) throw new Error("PostgreSQL did not turn TLS on");
    await new Promise((r) => setTimeout(r, 100));
  }
  return cas;
}

/** Stops this file's PostgreSQL cluster (the MariaDB server stops itself after the file). */
export async function stopUserServers(): Promise<void> {
  const running = cluster;
  cluster = undefined;
  await (await running?.catch(() => undefined))?.stop();
}

/** The two servers, started on first use. */
export const USER_SERVERS: { label: string; start(): Promise<UserServer> }[] = [
  { label: "MariaDB", start: mariaDbServer },
  { label: "PostgreSQL", start: postgresServer },
];

/** The resolver keys of `database` on `server` (privacyIDEA's, password percent-encoded). */
export function serverKeys(
  server: UserServer,
  database: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    type: "sqlresolver",
    Driver: server.driver,
    Server: server.host,
    Port: String(server.port),
    User: PI_USER,
    Password: PI_PASSWORD_KEY,
    Database: database,
    Table: "users",
    ...(server.engine === "mysql" ? { conParams: "charset=utf8mb4" } : {}),
    ...extra,
  };
}

/** `passw0rd` hashed by `type` (for fixture rows). */
export function hashOf(type: Parameters<typeof hashCryptPassword>[0], password: string): string {
  return hashCryptPassword(type, password, crypto.getRandomValues(new Uint8Array(22)));
}
