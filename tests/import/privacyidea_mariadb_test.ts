/**
 * `tessera import privacyidea` from a privacyIDEA 3.12 database kept in
 * MariaDB (the private server of tests/mariadb_server.ts; the schema and rows
 * of tests/import/_pi_fixture.ts as MySQL DDL, utf8 tables, with encrypted
 * secrets and every PIN format): the scenario of the other engines, the same
 * Tessera state as the SQLite import, and the refusals (wrong password,
 * unreachable or hung server, unknown database, a database that is not
 * privacyIDEA's) that name the server, never the password, and write nothing.
 */
import assert from "node:assert/strict";
import { createServer, type Socket } from "node:net";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { importPrivacyidea, type PiImportReport } from "../../src/domain/import/mod.ts";
import { findTokenBySerial, listTokens, tokenSecret } from "../../src/domain/token/mod.ts";
import { listAdmins } from "../../src/domain/admin/mod.ts";
import { listPolicies } from "../../src/domain/policy/mod.ts";
import { toHex } from "../../src/lib/random.ts";
import { decryptSecretText, isEncrypted } from "../../src/lib/crypto.ts";
import { freePort } from "../ldap/_slapd.ts";
import { type MariaDb, mariaDbTest, startMariaDb } from "../mariadb_server.ts";
import { serverDatabase } from "../cli/_server.ts";
import { createPiMysql, createPiSqlite, ENC_KEY } from "./_pi_fixture.ts";
import { migrationScenario } from "./_pi_scenario.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

mariaDbTest(
  "import privacyidea from MariaDB (mysql+pymysql:// as in pi.cfg): the scenario of SQLite and PostgreSQL",
  async (server) => {
    await migrationScenario((dir, nowMs) => createPiMysql(server, dir, nowMs));
  },
);

/** `value` with every value encrypted by Tessera (a random IV each time) decrypted. */
function decrypted(t: TestApp, value: unknown): unknown {
  if (typeof value === "string" && isEncrypted(value)) {
    for (const key of [t.deps.keys.config, t.deps.keys.token]) {
      try {
        return `decrypted:${decryptSecretText(key, value)}`;
      } catch { /* the other key */ }
    }
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => decrypted(t, v));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decrypted(t, v)]));
  }
  return value;
}

/** What an import left in Tessera, as the API and the token store show it. */
async function stateOf(t: TestApp): Promise<Record<string, unknown>> {
  const get = async (path: string, query?: Record<string, string>) => {
    const res = await jsonOf(await t.asAdmin("GET", path, { query }));
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    return res.body.result.value;
  };
  const tokens = [];
  for (const view of (await listTokens(t.deps, { pagesize: 100 })).tokens) {
    const tk = (await findTokenBySerial(t.deps, String(view.serial)))!;
    tokens.push({
      ...tk,
      keyEnc: undefined,
      secret: toHex(tokenSecret(t.deps, tk)),
      // a PIN converted from privacyIDEA's encrypted form is hashed with a random salt
      pinHash: tk.pinHash.replace(/^hmac256\$.*/, "hmac256$…"),
    });
  }
  return decrypted(t, {
    tokens,
    tokenList: await get("/token/", { pagesize: "100" }),
    policies: await get("/policy/"),
    realms: await get("/realm/"),
    resolvers: await get("/resolver/"),
    system: await get("/system/"),
    events: await get("/event/"),
    machineResolvers: await get("/machineresolver/"),
    radius: await get("/radiusserver/"),
    smtp: await get("/smtpserver/"),
    machineTokens: await get("/machine/token", { serial: "LEGA0001" }),
    admins: (await listAdmins(t.deps)).map((a) => [a.username, a.email]),
  }) as Record<string, unknown>;
}

mariaDbTest(
  "import privacyidea from MariaDB leaves the same tokens, PINs, counters, policies, realms, resolvers, config, events, servers, admins and machine tokens as from SQLite",
  async (server) => {
    const dir = await Deno.makeTempDir({ prefix: "tessera-pi-maria-" });
    const fromSqlite = await createTestApp();
    const fromMaria = await createTestApp();
    // both sources in one folder: the resolver's passwd file is the same path in both
    const sqliteSource = await createPiSqlite(dir, fromSqlite.clock.now());
    const mariaSource = await createPiMysql(server, dir, fromMaria.clock.now());
    try {
      const reports: PiImportReport[] = [];
      for (
        const [t, url] of [[fromSqlite, sqliteSource.url], [fromMaria, mariaSource.url]] as const
      ) {
        reports.push(await importPrivacyidea(t.deps, url, { encKey: ENC_KEY }));
      }
      assert.deepEqual(reports[1], reports[0]);
      assert.equal(reports[0].changed, 21, JSON.stringify(reports[0].summary));
      const [a, b] = [await stateOf(fromSqlite), await stateOf(fromMaria)];
      assert.equal((a.tokens as unknown[]).length, 6);
      assert.deepEqual(b, a);
    } finally {
      await mariaSource.drop();
      await fromSqlite.close();
      await fromMaria.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

/** A TCP listener that accepts connections and never answers (a hung database host). */
async function silentListener(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const srv = createServer((s) => {
    sockets.add(s);
    s.on("error", () => {});
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", () => resolve()));
  return {
    port: (srv.address() as { port: number }).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    },
  };
}

/** The server's URL for `database` with `password` instead of the right one. */
function urlWith(server: MariaDb, database: string, password: string, port = server.port) {
  return `mysql://${server.user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

mariaDbTest(
  "import privacyidea from MariaDB: a wrong password, an unreachable or hung server, an unknown database, a database that is not privacyIDEA's: a clear error naming the server, never the password, nothing written",
  async (server) => {
    const dir = await Deno.makeTempDir({ prefix: "tessera-pi-maria-" });
    const t = await createTestApp();
    const source = await createPiMysql(server, dir, t.clock.now());
    const otherDb = `other_${crypto.randomUUID().slice(0, 8)}`;
    await server.sql(
      `create database ${otherDb}; use ${otherDb}; create table users (id int primary key, name text)`,
    );
    const hung = await silentListener();
    const refusedPort = await freePort();
    const secret = "Wr0ng-Passw0rd-xyz";
    const at = (port: number, db: string) => `mysql://${server.user}@127.0.0.1:${port}/${db}`;
    try {
      const cases: [string, RegExp][] = [
        [
          urlWith(server, source.database, secret),
          new RegExp(
            `^Cannot connect to the privacyIDEA database ${at(server.port, source.database)}: ` +
              `Access denied for user '${server.user}'@'127\\.0\\.0\\.1' \\(using password: YES\\)$`,
          ),
        ],
        [
          urlWith(server, source.database, secret, refusedPort),
          new RegExp(
            `^Cannot connect to the privacyIDEA database ${at(refusedPort, source.database)}: ` +
              `connect ECONNREFUSED 127\\.0\\.0\\.1:${refusedPort}$`,
          ),
        ],
        [
          urlWith(server, "no_such_db", server.password),
          new RegExp(
            `^Cannot connect to the privacyIDEA database ${at(server.port, "no_such_db")}: ` +
              `Unknown database 'no_such_db'$`,
          ),
        ],
        [
          urlWith(server, otherDb, server.password),
          /^The database is not a privacyIDEA database \(missing tables: token, tokeninfo, tokenrealm, realm, resolver, resolverconfig, resolverrealm, policy, config\)$/,
        ],
      ];
      for (const [url, message] of cases) {
        for (const dryRun of [true, false]) {
          await assert.rejects(
            importPrivacyidea(t.deps, url, { encKey: ENC_KEY, dryRun }),
            (err: Error) => {
              assert.match(err.message, message);
              assert.ok(!err.message.includes(secret) && !err.message.includes(server.password));
              return true;
            },
          );
        }
      }
      // a host that accepts and never answers: refused after connect_timeout, not hanging
      const started = Date.now();
      await assert.rejects(
        importPrivacyidea(
          t.deps,
          `${urlWith(server, "pi", secret, hung.port)}?connect_timeout=1`,
          { encKey: ENC_KEY },
        ),
        (err: Error) => {
          assert.equal(
            err.message,
            `Cannot connect to the privacyIDEA database ${at(hung.port, "pi")}: connect ETIMEDOUT`,
          );
          return true;
        },
      );
      const took = Date.now() - started;
      assert.ok(took >= 900 && took < 5000, `${took} ms`);
      // nothing was written
      assert.equal((await listTokens(t.deps, {})).count, 0);
      assert.deepEqual(await listPolicies(t.deps), []);
      assert.deepEqual(await listAdmins(t.deps), []);
    } finally {
      await hung.close();
      await server.sql(`drop database ${otherDb}`);
      await source.drop();
      await t.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

async function runImport(dir: string, env: Record<string, string>, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--data-dir", `${dir}/data`, "import", "privacyidea", ...args],
    stdin: "null",
    env: { NO_COLOR: "1", ...env },
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

mariaDbTest(
  "tessera import privacyidea as a process from MariaDB: a wrong password exits 1 naming the server and creates nothing; mariadb:// through the server's socket, from --database-file, imports",
  async (server) => {
    const dir = await Deno.makeTempDir({ prefix: "tessera-cli-maria-" });
    const target = await serverDatabase();
    const source = await createPiMysql(server, dir, Date.now());
    try {
      await Deno.writeFile(`${dir}/encKey`, ENC_KEY);
      const secret = "Wr0ng-Passw0rd-xyz";
      const wrong = await runImport(
        dir,
        target.env,
        "--database",
        urlWith(server, source.database, secret).replace(/^mysql:/, "mysql+pymysql:"),
        "--enckey",
        `${dir}/encKey`,
      );
      assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
      assert.equal(
        wrong.stderr,
        `Error: Cannot connect to the privacyIDEA database mysql+pymysql://${server.user}@` +
          `127.0.0.1:${server.port}/${source.database}: Access denied for user ` +
          `'${server.user}'@'127.0.0.1' (using password: YES)\n`,
      );
      assert.equal(wrong.stdout, "");
      // no data directory, key file or database was created
      assert.equal(await exists(`${dir}/data`), false);

      // the URL from a file (its password stays off the command line), through the socket
      await Deno.writeTextFile(
        `${dir}/database-url`,
        `mariadb://${server.user}:${encodeURIComponent(server.password)}@localhost/` +
          `${source.database}?unix_socket=${encodeURIComponent(server.socket)}&charset=utf8mb4\n`,
      );
      const both = await runImport(
        dir,
        target.env,
        "--database-file",
        `${dir}/database-url`,
        "--database",
        source.url,
        "--enckey",
        `${dir}/encKey`,
      );
      assert.equal(both.code, 2);
      assert.match(
        both.stderr,
        /^tessera import privacyidea needs --database or --database-file \(one of them\)$/m,
      );
      const real = await runImport(
        dir,
        target.env,
        "--database-file",
        `${dir}/database-url`,
        "--enckey",
        `${dir}/encKey`,
      );
      assert.equal(real.code, 0, real.stdout + real.stderr);
      assert.match(
        real.stdout,
        /^privacyIDEA database: schema of privacyIDEA 3\.12 \(revision 1c48d4ffb8c3\)$/m,
      );
      assert.match(real.stdout, /^tokens\s+6\s+6\s+0\s+0$/m);
      assert.ok(!real.stdout.includes(server.password));
    } finally {
      await source.drop();
      await target.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test({
  name:
    "import privacyidea from MariaDB over TLS (ssl_ca), as a user with SELECT only that the server lets in only over TLS; a CA that did not sign the server's certificate is refused",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const server = await startMariaDb({ tls: true });
    const dir = await Deno.makeTempDir({ prefix: "tessera-pi-maria-tls-" });
    const t = await createTestApp();
    try {
      const source = await createPiMysql(server, dir, t.clock.now());
      await server.sql(
        "create user 'pi_reader'@'%' identified by 'reader-pw' require ssl; " +
          `grant select on \`${source.database}\`.* to 'pi_reader'@'%'`,
      );
      const base =
        `mysql+pymysql://pi_reader:reader-pw@127.0.0.1:${server.port}/${source.database}`;
      const where = `mysql+pymysql://pi_reader@127.0.0.1:${server.port}/${source.database}`;
      const attempt = (url: string) => importPrivacyidea(t.deps, url, { encKey: ENC_KEY });
      // without TLS the server refuses this user
      await assert.rejects(attempt(base), (err: Error) => {
        assert.equal(
          err.message,
          `Cannot connect to the privacyIDEA database ${where}: Access denied for user ` +
            "'pi_reader'@'127.0.0.1' (using password: YES)",
        );
        return true;
      });
      await assert.rejects(
        attempt(`${base}?ssl_ca=${encodeURIComponent(server.tls!.wrongCaFile)}`),
        (err: Error) => {
          assert.equal(
            err.message,
            `Cannot connect to the privacyIDEA database ${where}: ` +
              "self-signed certificate in certificate chain",
          );
          return true;
        },
      );
      assert.equal((await listTokens(t.deps, {})).count, 0);
      for (
        const url of [
          `${base}?ssl_ca=${encodeURIComponent(server.tls!.caFile)}`,
          // the certificate names localhost too; the name check can be turned off
          `${base.replace("127.0.0.1", "localhost")}?ssl_ca=${
            encodeURIComponent(server.tls!.caFile)
          }&ssl_check_hostname=true`,
          `${base}?ssl_ca=${encodeURIComponent(server.tls!.caFile)}&ssl_check_hostname=false`,
        ]
      ) {
        const report = await importPrivacyidea(t.deps, url, { encKey: ENC_KEY, dryRun: true });
        assert.deepEqual(
          report.summary.find((r) => r.what === "tokens"),
          { what: "tokens", found: 6, imported: 6, existing: 0, failed: 0 },
          url,
        );
      }
      await attempt(`${base}?ssl_ca=${encodeURIComponent(server.tls!.caFile)}`);
      assert.equal((await listTokens(t.deps, {})).count, 6);
    } finally {
      await t.close();
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
