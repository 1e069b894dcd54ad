/**
 * `sqlresolver` on database servers, over Tessera's HTTP API: the same tests
 * against the private MariaDB and a private PostgreSQL cluster (spec 16 §1):
 * privacyIDEA's keys, `/resolver/test`, lists and searches, `Where`, literal
 * logins, every password hash format at `/auth`, a token at
 * `/validate/check`, editable create/update/delete with each
 * `Password_Hash_Type`, pools per resolver, and servers that are down.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { freePort, silentListener } from "../ldap/_slapd.ts";
import { closeSqlConnections } from "../../src/domain/resolver/mod.ts";
import { listResolvers } from "../../src/domain/resolver/resolver_store.ts";
import { WRITABLE_HASH_TYPES } from "../../src/lib/unix_crypt.ts";
import { startMariaDb } from "../mariadb_server.ts";
import {
  enablePgTls,
  type FixtureRow,
  PI_PASSWORD,
  PI_PASSWORD_KEY,
  PI_TLS_USER,
  serverKeys,
  stopUserServers,
  USER_SERVERS,
  type UserServer,
} from "./_sql_user_servers.ts";

Deno.test.afterAll(stopUserServers);

const MAP = {
  userid: "id",
  username: "username",
  email: "email",
  surname: "name",
  givenname: "givenname",
  phone: "phone",
  mobile: "mobile",
  password: "password",
};
// privacyIDEA reads Map as YAML: the flow form works as well as JSON
const YAML_MAP = "{userid: id, username: username, email: email, surname: name, " +
  "givenname: givenname, phone: phone, mobile: mobile, password: password}";

// one user per hash format privacyIDEA's SQL resolver reads (spec 16 §1.7), password passw0rd
const HASHES: [string, string, boolean][] = [
  ["{SHA}fGphxo74ubawYbKMNIvB7Xkhy1M=", "sha", true],
  ["{SSHA}JSkbR7Cy0mHgoFjLxwkztqpGPIEBAgME", "ssha", true],
  ["{ssha}JSkbR7Cy0mHgoFjLxwkztqpGPIEBAgME", "ssha-lower", true],
  ["{Ssha}JSkbR7Cy0mHgoFjLxwkztqpGPIEBAgME", "ssha-mixed", false],
  ["{SSHA256}bnq8JLpJDeyv2qH03x3oLO4vqnncUTxp5plaUQA3uSMBAgME", "ssha256", true],
  [
    "{SSHA256}g+7diR6cZoty6JWdgmBdkLTpsUfh6h7XHhiXktfmICAAAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=",
    "ssha256-33",
    false,
  ],
  [
    "{SSHA512}KITGyx1PNtshpKJ4rGp2Hw6+5ELBdMnpSSUtQJZIpHLy3+YdGPDFYyuWZ1EYQUYC6/HjTBJG9RxRC3X/mXJq+nNhbHRzYWx0",
    "ssha512",
    true,
  ],
  ["8f0e2f76e22b43e2855189877e7dc1e1e7d98c226c95db247cd1d547928334a9", "otrs", true],
  ["8F0E2F76E22B43E2855189877E7DC1E1E7D98C226C95DB247CD1D547928334A9", "otrs-upper", true],
  ["$P$BabcdefghZgV1QX.ynAe989yni4Kjr.", "phpass", true],
  ["$H$BabcdefghZgV1QX.ynAe989yni4Kjr.", "phpbb", true],
  ["$S$DabcdefghJVDcZ5xaKz3W0CTbcz5kwSomftJ6rwLRLQdOVmx2YG/", "drupal", true],
  ["$1$abcdefgh$T73FosRY0vxaV2A67W9Td/", "md5crypt", true],
  ["$5$abcdefghijklmnop$SbIebC7KKuo8hpaRS08Iwyye3VWTiG8TdMaoj4G2O61", "sha256crypt", true],
  [
    "$6$rounds=1000$abcdefghijklmnop$iiLU0g72S/Qv3T7x2RnW6NMxpbXmpoyEoIsowtnpigITF4nc2Pk/99AX4l9.Ae.UJLpN5g1rANz8c.UL6NqWr0",
    "sha512crypt",
    true,
  ],
  ["$2b$04$abcdefghijklmnopqrstuuKbhdst8IcVN4BCYxi8l8Qw53uKr4EiO", "bcrypt", true],
  ["$2y$04$abcdefghijklmnopqrstuuKbhdst8IcVN4BCYxi8l8Qw53uKr4EiO", "bcrypt-php", true],
  ["1|$2y$04$abcdefghijklmnopqrstuuKbhdst8IcVN4BCYxi8l8Qw53uKr4EiO", "owncloud", true],
  ["$argon2id$v=19$m=1024,t=2,p=1$c2FsdHNhbHQ$gsoZzV6IuZEu61i4volfdw", "argon2", false],
  ["{MD5}vtEoNlIWwBmYiRXtOt11+w==", "md5", false],
  ["passw0rd", "plain", false],
];

const HANS_HASH = "{SSHA}JSkbR7Cy0mHgoFjLxwkztqpGPIEBAgME";

const ROWS: FixtureRow[] = [
  {
    username: "hans",
    email: "hans@example.com",
    name: "dampf",
    givenname: "hans",
    phone: "030 123454566",
    mobile: "+49 151 123454656",
    password: HANS_HASH,
    status: "active",
  },
  { username: "nomail", email: null, password: HANS_HASH, status: "active" },
  { username: "bob", email: "bob@example.com", password: HANS_HASH, status: "disabled" },
  ...HASHES.map(([password, username]) => ({ username, password, status: "active" })),
];
const ACTIVE = ROWS.filter((r) => r.status === "active").map((r) => r.username!).sort();

async function withApp(fn: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await createTestApp();
  try {
    await fn(t);
  } finally {
    await closeSqlConnections(t.deps.db);
    await t.close();
  }
}

async function admin(
  t: TestApp,
  method: string,
  path: string,
  body?: Record<string, unknown>,
): Promise<{ status: number; body: Json; ms: number }> {
  const started = performance.now();
  const res = await jsonOf(
    // JSON: form values are percent-decoded a second time (spec 09 §1.2), JSON values are not
    await t.asAdmin(
      method,
      path,
      method === "GET" ? { query: body as never } : { body, json: true },
    ),
  );
  return { ...res, ms: performance.now() - started };
}

async function userNames(t: TestApp, query: Record<string, string>): Promise<string[]> {
  const res = await admin(t, "GET", "/user/", query);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.map((u: { username: string }) => u.username).sort();
}

let clients = 0;

async function login(t: TestApp, username: string, password: string): Promise<number> {
  // a client address of its own each time: the failed logins here would reach the per-address limit
  const remoteAddr = `10.0.${Math.floor(++clients / 250)}.${clients % 250 + 1}`;
  return (await t.post("/auth", { username, password }, { remoteAddr })).status;
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

function serverTest(name: string, fn: (server: UserServer) => Promise<void>): void {
  for (const s of USER_SERVERS) {
    Deno.test({
      name: `sqlresolver on ${s.label}: ${name}`,
      // the servers outlive one test
      sanitizeOps: false,
      sanitizeResources: false,
      fn: async () => fn(await s.start()),
    });
  }
}

serverTest(
  "privacyIDEA's keys, /resolver/test, lists, Where, literal logins, every hash at /auth, a token at /validate/check",
  async (server) => {
    const db = await server.freshDatabase(ROWS);
    await withApp(async (t) => {
      const keys = serverKeys(server, db, {
        Map: server.engine === "mysql" ? YAML_MAP : JSON.stringify(MAP),
        Where: "status == active",
      });
      // /resolver/test answers privacyIDEA's number of users
      const tested = await admin(t, "POST", "/resolver/test", keys);
      assert.equal(tested.status, 200);
      assert.equal(tested.body.result.value, ACTIVE.length, JSON.stringify(tested.body));
      assert.equal(tested.body.detail.description, `Found ${ACTIVE.length} users.`);
      const all = await admin(t, "POST", "/resolver/test", { ...keys, Where: "" });
      assert.equal(all.body.result.value, ROWS.length);
      const badWhere = await admin(t, "POST", "/resolver/test", { ...keys, Where: "nosuch == 1" });
      assert.equal(badWhere.body.result.value, -1);
      assert.match(badWhere.body.detail.description, /^Failed to retrieve users\./);
      const badDriver = await admin(t, "POST", "/resolver/test", { ...keys, Driver: "nosuch" });
      assert.equal(badDriver.body.result.value, -1);
      assert.match(badDriver.body.detail.description, /^Unable to connect to database\./);

      // saved: the password stored encrypted and listed censored
      assert.equal((await admin(t, "POST", "/resolver/sqlusers", keys)).status, 200);
      const listed = await admin(t, "GET", "/resolver/sqlusers");
      const entry = listed.body.result.value.sqlusers;
      assert.equal(entry.data.Password, "__CENSORED__");
      assert.deepEqual(entry.censor_keys, ["Password"]);
      assert.equal(entry.data.Driver, server.driver);
      const stored = (await listResolvers(t.deps.db)).find((r) => r.name === "sqlusers")!;
      assert.ok(!JSON.stringify(stored.config).includes(PI_PASSWORD_KEY), "password in clear");
      // the stored secret serves a test that names the resolver
      const again = await admin(t, "POST", "/resolver/test", {
        ...keys,
        resolver: "sqlusers",
        Password: "__CENSORED__",
      });
      assert.equal(again.body.result.value, ACTIVE.length);

      await admin(t, "POST", "/realm/sqlrealm", { resolvers: "sqlusers" });
      // lists: Where applies, * is the wildcard, email=* leaves out users without one
      assert.deepEqual(await userNames(t, { realm: "sqlrealm" }), ACTIVE);
      assert.deepEqual(
        await userNames(t, { realm: "sqlrealm", email: "*" }),
        ["hans"],
      );
      assert.deepEqual(await userNames(t, { realm: "sqlrealm", username: "ha*" }), ["hans"]);
      assert.deepEqual(await userNames(t, { realm: "sqlrealm", username: "h_ns" }), []);
      assert.deepEqual(await userNames(t, { realm: "sqlrealm", username: "%" }), []);
      assert.deepEqual(await userNames(t, { realm: "sqlrealm", username: "bob" }), []);
      // the database's collation decides about case, as with privacyIDEA's LIKE
      assert.deepEqual(
        await userNames(t, { realm: "sqlrealm", username: "Hans" }),
        server.engine === "mysql" ? ["hans"] : [],
      );
      const hans = (await admin(t, "GET", "/user/", { realm: "sqlrealm", username: "hans" }))
        .body.result.value[0];
      assert.equal(hans.email, "hans@example.com");
      assert.equal(hans.surname, "dampf");
      assert.equal(hans.givenname, "hans");
      assert.equal(hans.mobile, "+49 151 123454656");
      assert.match(hans.userid, /^\d+$/);
      assert.equal("password" in hans, false);

      // every hash format, with the right and a wrong password
      for (const [hash, username, verifies] of HASHES) {
        assert.equal(
          await login(t, `${username}@sqlrealm`, "passw0rd"),
          verifies ? 200 : 401,
          `${username}: ${hash}`,
        );
        assert.equal(await login(t, `${username}@sqlrealm`, "passw0rdx"), 401, username);
      }
      // Where hides bob; a login is never a pattern
      assert.equal(await login(t, "bob@sqlrealm", "passw0rd"), 401);
      assert.equal(await login(t, "h_ns@sqlrealm", "passw0rd"), 401);
      assert.equal(await login(t, "h%@sqlrealm", "passw0rd"), 401);
      assert.equal(await login(t, "%@sqlrealm", "passw0rd"), 401);
      assert.equal(await login(t, "hans @sqlrealm", "passw0rd"), 401);
      assert.equal(await login(t, "hans@sqlrealm", "passw0rd"), 200);

      // a token of a user of the server
      await enrollHotp(t, { user: "hans", realm: "sqlrealm" });
      const check = await jsonOf(
        await t.post("/validate/check", { user: "hans", realm: "sqlrealm", pass: hotp(0) }),
      );
      assert.equal(check.body.result.value, true, JSON.stringify(check.body));
      const replay = await jsonOf(
        await t.post("/validate/check", { user: "hans", realm: "sqlrealm", pass: hotp(0) }),
      );
      assert.equal(replay.body.result.value, false);
    });
  },
);

serverTest(
  "an editable resolver creates, updates (each Password_Hash_Type) and deletes users; a read-only one refuses",
  async (server) => {
    const db = await server.freshDatabase(ROWS.slice(0, 1));
    await withApp(async (t) => {
      const keys = serverKeys(server, db, { Map: JSON.stringify(MAP), Editable: "1" });
      await admin(t, "POST", "/resolver/editusers", keys);
      await admin(t, "POST", "/realm/editrealm", { resolvers: "editusers" });
      const listed = await admin(t, "GET", "/resolver/", { editable: "1" });
      assert.deepEqual(Object.keys(listed.body.result.value), ["editusers"]);

      const created = await admin(t, "POST", "/user/", {
        user: "neu",
        resolver: "editusers",
        password: "first-pw",
        email: "neu@example.com",
        givenname: "Neu",
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const [row] = await server.sql(
        db,
        "select id, email, password from users where username = 'neu'",
      );
      assert.equal(String(created.body.result.value), String(row.id));
      assert.equal(row.email, "neu@example.com");
      assert.match(String(row.password), /^\{SSHA256\}/);
      assert.equal(await login(t, "neu@editrealm", "first-pw"), 200);
      const duplicate = await admin(t, "POST", "/user/", { user: "neu", resolver: "editusers" });
      assert.equal(duplicate.status, 400);
      assert.match(duplicate.body.result.error.message, /already exists/);

      // every format Tessera writes is one it reads back
      const formats: Record<string, RegExp> = {
        PHPASS: /^\$P\$H/,
        SHA: /^\{SHA\}/,
        SSHA: /^\{SSHA\}/,
        SSHA256: /^\{SSHA256\}/,
        SSHA512: /^\{SSHA512\}/,
        OTRS: /^[0-9a-f]{64}$/,
        SHA256CRYPT: /^\$5\$/,
        SHA512CRYPT: /^\$6\$/,
        MD5CRYPT: /^\$1\$/,
        BCRYPT: /^\$2b\$/,
      };
      assert.deepEqual(Object.keys(formats).sort(), [...WRITABLE_HASH_TYPES].sort());
      let previous = "first-pw";
      for (const [type, format] of Object.entries(formats)) {
        await admin(t, "POST", "/resolver/editusers", {
          type: "sqlresolver",
          Password_Hash_Type: type.toLowerCase(),
        });
        const updated = await admin(t, "PUT", "/user/", {
          user: "neu",
          resolver: "editusers",
          password: `pw-${type}`,
        });
        assert.equal(updated.body.result.value, true, JSON.stringify(updated.body));
        const [{ password }] = await server.sql(
          db,
          "select password from users where username = 'neu'",
        );
        assert.match(String(password), format, type);
        assert.equal(await login(t, "neu@editrealm", `pw-${type}`), 200, type);
        assert.equal(await login(t, "neu@editrealm", previous), 401, type);
        previous = `pw-${type}`;
      }
      // a uid that is no number names nobody of an integer id column (no error, nothing changed)
      const noNumber = await admin(t, "PUT", "/user/", {
        user: "neu",
        userid: "abc",
        resolver: "editusers",
        email: "abc@example.com",
      });
      assert.equal(noNumber.status, 400, JSON.stringify(noNumber.body));
      assert.equal(noNumber.body.result.error.code, 904);
      const changed = await admin(t, "PUT", "/user/", {
        user: "neu",
        resolver: "editusers",
        email: "new@example.com",
      });
      assert.equal(changed.body.result.value, true);
      const neu = await admin(t, "GET", "/user/", { realm: "editrealm", username: "neu" });
      assert.equal(neu.body.result.value[0].email, "new@example.com");
      assert.equal(neu.body.result.value[0].editable, true);

      const deleted = await admin(t, "DELETE", "/user/editusers/neu");
      assert.equal(deleted.body.result.value, true);
      assert.deepEqual(await server.sql(db, "select id from users where username = 'neu'"), []);
      assert.equal(await login(t, "neu@editrealm", previous), 401);

      // read-only: refused, nothing written
      await admin(t, "POST", "/resolver/editusers", { type: "sqlresolver", Editable: "" });
      const refused = await admin(t, "POST", "/user/", {
        user: "other",
        resolver: "editusers",
        password: "x",
      });
      assert.equal(refused.status, 400);
      assert.match(refused.body.result.error.message, /not editable/);
      assert.equal((await admin(t, "DELETE", "/user/editusers/hans")).status, 400);
      const rows = await server.sql(db, "select username from users order by username");
      assert.deepEqual(rows.map((r) => r.username), ["hans"]);
    });
  },
);

serverTest(
  "a server that is down, hangs or refuses the login: a clear failure in bounded time, never a 500; other realms keep working",
  async (server) => {
    const db = await server.freshDatabase(ROWS.slice(0, 1));
    const silent = await silentListener();
    try {
      await withApp(async (t) => {
        await createUsers(t.deps, { realm: "localrealm", users: [{ login: "sue" }] });
        await enrollHotp(t, { user: "sue", realm: "localrealm" });
        const map = JSON.stringify(MAP);
        const closedPort = String(await freePort());
        const cases: [string, Record<string, string>, RegExp][] = [
          ["refused", { Port: closedPort }, /the server refused the connection/],
          ["badlogin", { Password: "wrong" }, /the server refused the login/],
          ["nodb", { Database: "nosuchdb" }, /refused the login|database does not exist/],
        ];
        for (const [name, extra, reason] of cases) {
          const keys = serverKeys(server, db, { Map: map, poolTimeout: "2", ...extra });
          const tested = await admin(t, "POST", "/resolver/test", keys);
          assert.equal(tested.body.result.value, -1, name);
          assert.match(tested.body.detail.description, /^Failed to retrieve users\./, name);
          assert.match(tested.body.detail.description, reason, name);
          assert.ok(tested.ms < 3000, `${name}: /resolver/test took ${tested.ms} ms`);
          await admin(t, "POST", `/resolver/${name}`, keys);
          await admin(t, "POST", `/realm/${name}realm`, { resolvers: name });
          const check = await timed(
            t.post("/validate/check", { user: "hans", realm: `${name}realm`, pass: "1" }).then(
              jsonOf,
            ),
          );
          assert.equal(check.value.status, 400, JSON.stringify(check.value.body));
          assert.match(check.value.body.result.error.message, reason, name);
          // the answer names no server; the log does
          const text = JSON.stringify(check.value.body);
          assert.ok(!text.includes(closedPort) && !text.includes(String(server.port)), text);
          assert.ok(check.ms < 3000, `${name}: /validate/check took ${check.ms} ms`);
          const refusedLogin = await login(t, `hans@${name}realm`, "passw0rd");
          assert.ok(refusedLogin === 400 || refusedLogin === 401, `${name}: /auth ${refusedLogin}`);
        }

        // a server that accepts connections and never answers: bounded by poolTimeout
        const silentPort = new URL(silent.url).port;
        const hanging = serverKeys(server, db, { Map: map, Port: silentPort, poolTimeout: "2" });
        const tested = await admin(t, "POST", "/resolver/test", hanging);
        assert.equal(tested.body.result.value, -1);
        assert.match(tested.body.detail.description, /the server did not answer/);
        assert.ok(tested.ms >= 1500 && tested.ms < 6000, `/resolver/test took ${tested.ms} ms`);
        await admin(t, "POST", "/resolver/hanging", hanging);
        await admin(t, "POST", "/realm/hangrealm", { resolvers: "hanging" });
        let isHangingDone = false;
        const hangingCheck = timed(
          t.post("/validate/check", { user: "hans", realm: "hangrealm", pass: "1" }).then(jsonOf),
        ).finally(() => isHangingDone = true);
        const local = await timed(
          t.post("/validate/check", { user: "sue", realm: "localrealm", pass: hotp(0) }).then(
            jsonOf,
          ),
        );
        assert.equal(local.value.body.result.value, true, JSON.stringify(local.value.body));
        assert.equal(isHangingDone, false, "the local realm waited for the hanging server");
        const failed = await hangingCheck;
        assert.equal(failed.value.status, 400, JSON.stringify(failed.value.body));
        assert.match(failed.value.body.result.error.message, /the server did not answer/);
        assert.ok(failed.ms >= 1500 && failed.ms < 6000, `/validate/check took ${failed.ms} ms`);
        assert.ok(t.log.lines.some((l) => l.includes(`127.0.0.1:${silentPort}`)));
        // a list skips the resolver that fails and answers with the others
        await admin(t, "POST", "/realm/mixed", { resolvers: "refused,sql-localrealm" });
        assert.deepEqual(await userNames(t, { realm: "mixed" }), ["sue"]);
      });
    } finally {
      await silent.close();
    }
  },
);

serverTest(
  "one pool per resolver, closed when the resolver changes or is deleted; a Unix socket; drivers Tessera cannot serve are refused",
  async (server) => {
    const db = await server.freshDatabase(ROWS.slice(0, 2));
    await withApp(async (t) => {
      const keys = serverKeys(server, db, { Map: JSON.stringify(MAP) });
      await admin(t, "POST", "/resolver/pooled", keys);
      await admin(t, "POST", "/realm/poolrealm", { resolvers: "pooled" });
      const before = await server.piConnections();
      assert.deepEqual(await userNames(t, { realm: "poolrealm" }), ["hans", "nomail"]);
      assert.equal(await login(t, "hans@poolrealm", "passw0rd"), 200);
      assert.equal(await server.piConnections(), before + 1);
      // a change opens a new pool and closes the old one
      await admin(t, "POST", "/resolver/pooled", { type: "sqlresolver", Limit: "1" });
      assert.deepEqual(await userNames(t, { realm: "poolrealm" }), ["hans"]);
      await waitFor(async () => (await server.piConnections()) === before + 1, "old pool closed");
      await admin(t, "DELETE", "/realm/poolrealm");
      assert.equal((await admin(t, "DELETE", "/resolver/pooled")).status, 200);
      await waitFor(async () => (await server.piConnections()) === before, "pool closed");

      // the server's Unix socket instead of TCP
      const socket = server.engine === "mysql"
        ? { Server: "", Port: "", conParams: `unix_socket=${server.socket}` }
        : { Server: "", Port: String(server.port), conParams: `host=${server.socket}` };
      const overSocket = await admin(t, "POST", "/resolver/test", { ...keys, ...socket });
      assert.equal(overSocket.body.result.value, 2, JSON.stringify(overSocket.body));

      // a conParams key Tessera does not know, and a driver it does not serve: 400, nothing saved
      for (
        const [extra, message] of [
          [{ conParams: "foo=bar" }, /conParams "foo" is not supported/],
          [
            { Driver: "mssql+pyodbc" },
            /driver "mssql\+pyodbc" is not supported; Tessera serves these drivers: sqlite; mysql.*postgresql/,
          ],
          [{ Driver: "oracle" }, /driver "oracle" is not supported/],
          [{ poolSize: "many" }, /poolSize must be a whole number/],
        ] as const
      ) {
        const refused = await admin(t, "POST", "/resolver/refused", { ...keys, ...extra });
        assert.equal(refused.status, 400, JSON.stringify(refused.body));
        assert.equal(refused.body.result.error.code, 905);
        assert.match(refused.body.result.error.message, message);
      }
      assert.deepEqual((await admin(t, "GET", "/resolver/")).body.result.value, {});
      // privacyIDEA's URL rules: a password with @ and : must be percent-encoded
      const unencoded = await admin(t, "POST", "/resolver/test", {
        ...keys,
        Password: PI_PASSWORD,
      });
      assert.equal(unencoded.body.result.value, -1);
      assert.match(unencoded.body.detail.description, /must be written %3A and %40/);
      const tested = await admin(t, "POST", "/resolver/test", { ...keys, Driver: "oracle" });
      assert.equal(tested.body.result.value, -1);
      assert.match(tested.body.detail.description, /^Unable to connect to database\. .*oracle/);
    });
  },
);

serverTest(
  "Encoding decodes byte values (latin1 by default, as privacyIDEA); one that does not decode reads decoding_error",
  async (server) => {
    const db = await server.freshDatabase(ROWS.slice(0, 1));
    const binary = server.engine === "mysql" ? "varbinary(64)" : "bytea";
    await server.sql(db, `alter table users add column descr ${binary}`);
    await server.sql(
      db,
      server.engine === "mysql"
        ? "update users set descr = x'4DE9' where username = 'hans'"
        : "update users set descr = '\\x4de9'::bytea where username = 'hans'",
    );
    await withApp(async (t) => {
      const map = JSON.stringify({ userid: "id", username: "username", description: "descr" });
      for (const [encoding, expected] of [["", "M\u00e9"], ["utf8", "decoding_error"]]) {
        await admin(
          t,
          "POST",
          "/resolver/bytes",
          serverKeys(server, db, { Map: map, Encoding: encoding }),
        );
        await admin(t, "POST", "/realm/bytesrealm", { resolvers: "bytes" });
        const listed = await admin(t, "GET", "/user/", { realm: "bytesrealm" });
        assert.equal(listed.body.result.value[0].description, expected, encoding);
      }
      const refused = await admin(
        t,
        "POST",
        "/resolver/bytes",
        serverKeys(server, db, { Map: map, Encoding: "klingon" }),
      );
      assert.equal(refused.status, 400);
      assert.match(refused.body.result.error.message, /Encoding "klingon" is unknown/);
    });
  },
);

/** /resolver/test of `keys`: privacyIDEA's number and the description. */
async function tested(
  t: TestApp,
  keys: Record<string, string>,
): Promise<{ value: number; description: string }> {
  const res = await admin(t, "POST", "/resolver/test", keys);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { value: res.body.result.value, description: res.body.detail.description };
}

Deno.test({
  name:
    "sqlresolver on MariaDB over TLS: ssl_ca checks the server's certificate; a login that needs TLS fails without",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const server = await startMariaDb({ tls: true });
    try {
      await server.createDatabase("tlsusers");
      await server.sql(
        `create user '${PI_TLS_USER}'@'%' identified by '${PI_PASSWORD}' require ssl`,
      );
      await server.sql(`grant all privileges on tlsusers.* to '${PI_TLS_USER}'@'%'`);
      await server.sql("create table users (id int auto_increment primary key, username text)", {
        database: "tlsusers",
      });
      await server.sql("insert into users (username) values ('tina')", { database: "tlsusers" });
      await withApp(async (t) => {
        const keys = {
          type: "sqlresolver",
          Driver: "mysql+pymysql",
          Server: "127.0.0.1",
          Port: String(server.port),
          User: PI_TLS_USER,
          Password: PI_PASSWORD_KEY,
          Database: "tlsusers",
          Table: "users",
          Map: "{userid: id, username: username}",
          poolTimeout: "3",
        };
        const { caFile, wrongCaFile } = server.tls!;
        assert.equal((await tested(t, { ...keys, conParams: `ssl_ca=${caFile}` })).value, 1);
        assert.equal(
          (await tested(t, { ...keys, conParams: `ssl_ca=${caFile}&ssl_check_hostname=false` }))
            .value,
          1,
        );
        // the login requires TLS: without ssl_ca the server refuses it
        const plain = await tested(t, keys);
        assert.equal(plain.value, -1);
        assert.match(plain.description, /the server refused the login/);
        const wrong = await tested(t, { ...keys, conParams: `ssl_ca=${wrongCaFile}` });
        assert.equal(wrong.value, -1, wrong.description);
        assert.match(wrong.description, /the server's TLS certificate was not accepted/);
        // saved and used for a list
        await admin(t, "POST", "/resolver/tls", { ...keys, conParams: `ssl_ca=${caFile}` });
        await admin(t, "POST", "/realm/tlsrealm", { resolvers: "tls" });
        assert.deepEqual(await userNames(t, { realm: "tlsrealm" }), ["tina"]);
        // a CA file must be a certificate, and none of Tessera's files
        for (
          const [path, message] of [
            [`${t.deps.config.storage.dataDir}/encKey`, /Tessera's own|own/],
            ["/etc/hostname", /holds no PEM certificate/],
            ["relative.pem", /must be an absolute path/],
          ] as const
        ) {
          const refused = await admin(t, "POST", "/resolver/tls2", {
            ...keys,
            conParams: `ssl_ca=${path}`,
          });
          assert.equal(refused.status, 400, path);
          assert.match(refused.body.result.error.message, message, path);
        }
        const noCa = await admin(t, "POST", "/resolver/tls2", {
          ...keys,
          conParams: "ssl_check_hostname=false",
        });
        assert.equal(noCa.status, 400);
        assert.match(noCa.body.result.error.message, /ssl_check_hostname needs ssl_ca/);
      });
    } finally {
      await server.stop();
    }
  },
});

Deno.test({
  name:
    "sqlresolver on PostgreSQL over TLS: sslmode require and verify-full with sslrootcert; a login that needs TLS fails without",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const server = await USER_SERVERS[1].start();
    const { caFile, wrongCaFile } = await enablePgTls();
    const db = await server.freshDatabase(ROWS.slice(0, 1));
    await server.sql(db, `grant select on users to ${PI_TLS_USER}`);
    await withApp(async (t) => {
      const keys = serverKeys(server, db, {
        User: PI_TLS_USER,
        Map: "{userid: id, username: username}",
        poolTimeout: "3",
      });
      for (
        const conParams of [
          "sslmode=require",
          `sslmode=verify-full&sslrootcert=${caFile}`,
          `sslmode=verify-ca&sslrootcert=${caFile}`,
          `sslmode=require&sslrootcert=${caFile}`,
        ]
      ) {
        const ok = await tested(t, { ...keys, conParams });
        assert.equal(ok.value, 1, `${conParams}: ${ok.description}`);
      }
      for (
        const [conParams, reason] of [
          ["", /the server refused the login/],
          ["sslmode=disable", /the server refused the login/],
          [`sslmode=verify-full&sslrootcert=${wrongCaFile}`, /TLS certificate was not accepted/],
          // the certificate is not one the system trusts
          ["sslmode=verify-full", /TLS certificate was not accepted/],
        ] as const
      ) {
        const failed = await tested(t, { ...keys, conParams });
        assert.equal(failed.value, -1, conParams);
        assert.match(failed.description, reason, conParams);
      }
      const refused = await admin(t, "POST", "/resolver/tls", {
        ...keys,
        conParams: `sslrootcert=${caFile}`,
      });
      assert.equal(refused.status, 400);
      assert.match(refused.body.result.error.message, /sslrootcert needs sslmode/);
      const prefer = await admin(t, "POST", "/resolver/tls", {
        ...keys,
        conParams: "sslmode=prefer",
      });
      assert.equal(prefer.status, 400);
      assert.match(prefer.body.result.error.message, /sslmode "prefer" is not supported/);
    });
  },
});

async function waitFor(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test({
  name:
    "sqlresolver on PostgreSQL: a uuid uid column is compared as text; a uid that is no uuid matches nobody",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const server = await USER_SERVERS[1].start();
    const db = await server.freshDatabase([]);
    await server.sql(db, "insert into users_uuid (username, password) values ('uwe', $1)", [
      HANS_HASH,
    ]);
    const [{ uid }] = await server.sql(db, "select uid::text as uid from users_uuid");
    await withApp(async (t) => {
      await admin(t, "POST", "/resolver/uuids", {
        ...serverKeys(server, db, {
          Table: "users_uuid",
          Map: "{userid: uid, username: username, password: password}",
          Editable: "1",
        }),
      });
      await admin(t, "POST", "/realm/uuidrealm", { resolvers: "uuids" });
      const users = await admin(t, "GET", "/user/", { realm: "uuidrealm" });
      assert.deepEqual(
        users.body.result.value.map((u: Record<string, string>) => [u.username, u.userid]),
        [["uwe", uid]],
      );
      assert.equal(await login(t, "uwe@uuidrealm", "passw0rd"), 200);
      // the user selected by uid: a text that is no uuid names nobody (no error)
      const notUuid = await admin(t, "PUT", "/user/", {
        user: "uwe2",
        userid: "not-a-uuid",
        resolver: "uuids",
      });
      assert.equal(notUuid.status, 400, JSON.stringify(notUuid.body));
      assert.equal(notUuid.body.result.error.code, 904);
      const renamed = await admin(t, "PUT", "/user/", {
        user: "uwe2",
        userid: String(uid),
        resolver: "uuids",
      });
      assert.equal(renamed.body.result.value, true, JSON.stringify(renamed.body));
      assert.deepEqual(await userNames(t, { realm: "uuidrealm" }), ["uwe2"]);
    });
  },
});
