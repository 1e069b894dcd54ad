/**
 * A stored secret is kept (left out, or sent back as `__CENSORED__`) only while
 * every key that decides where it is sent stays: for the LDAP and SQL
 * resolvers, the LDAP machine resolver, RADIUS and SMTP server definitions,
 * on save and on their test endpoints. Refused: 400 naming the keys, nothing
 * saved and nothing sent; allowed with the secret sent again, or when only
 * other keys change.
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { CENSORED, decryptSecretText } from "../../src/lib/crypto.ts";

/** A TCP port that counts the connections it gets and closes them at once. */
function tcpTrap(): { port: number; count(): number; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let count = 0;
  (async () => {
    try {
      for await (const conn of listener) {
        count++;
        conn.close();
      }
    } catch { /* closed */ }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    count: () => count,
    close: () => listener.close(),
  };
}

/** A UDP port that counts the datagrams it gets and answers none. */
async function udpTrap(): Promise<{ port: number; count(): number; close(): void }> {
  const socket = dgram.createSocket("udp4");
  let count = 0;
  socket.on("message", () => count++);
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return { port: socket.address().port, count: () => count, close: () => socket.close() };
}

async function admin(t: TestApp, method: string, path: string, body?: Json) {
  return await jsonOf(await t.asAdmin(method, path, { body, json: true }));
}

function assertRefused(res: { status: number; body: Json }, secret: string, keys: string[]) {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.result.status, false);
  assert.equal(res.body.result.error.code, 905);
  const names = keys.map((k) => `"${k}"`).join(", ");
  assert.equal(
    res.body.result.error.message,
    `ERR905: Cannot keep the stored "${secret}": send "${secret}" again when you change ${names} ` +
      `(where it is sent)`,
  );
}

async function resolverRow(t: TestApp, name: string) {
  return await t.deps.db.selectFrom("resolver").selectAll().where("name", "=", name)
    .executeTakeFirstOrThrow();
}

async function storedConfig(t: TestApp, name: string): Promise<Record<string, string>> {
  const row = await resolverRow(t, name);
  return JSON.parse(String(row.config));
}

function ldapResolver(uri: string, overrides: Record<string, string> = {}) {
  return {
    type: "ldapresolver",
    LDAPURI: uri,
    LDAPBASE: "ou=people,dc=example,dc=com",
    BINDDN: "cn=reader,dc=example,dc=com",
    BINDPW: "bind-secret",
    LOGINNAMEATTRIBUTE: "uid",
    LDAPSEARCHFILTER: "(objectClass=inetOrgPerson)",
    USERINFO: JSON.stringify({ username: "uid" }),
    UIDTYPE: "entryUUID",
    TIMEOUT: "2",
    ...overrides,
  };
}

Deno.test("ldapresolver: a stored BINDPW is not kept when LDAPURI changes", async () => {
  const t = await createTestApp();
  const trap = tcpTrap();
  try {
    const legit = "ldap://127.0.0.1:1";
    assert.equal((await admin(t, "POST", "/resolver/ldap1", ldapResolver(legit))).status, 200);
    const before = await resolverRow(t, "ldap1");
    const evil = `ldap://127.0.0.1:${trap.port}`;
    for (
      const body of [
        { type: "ldapresolver", LDAPURI: evil },
        { type: "ldapresolver", LDAPURI: evil, BINDPW: CENSORED },
        { type: "ldapresolver", LDAPURI: evil, BINDDN: "cn=other", BINDPW: CENSORED },
      ]
    ) {
      assertRefused(await admin(t, "POST", "/resolver/ldap1", body), "BINDPW", ["LDAPURI"]);
    }
    assert.deepEqual(await resolverRow(t, "ldap1"), before, "nothing saved");
    // the test endpoint with the stored password and another server: refused, nothing sent
    const test = await admin(t, "POST", "/resolver/test", {
      ...ldapResolver(evil, { BINDPW: CENSORED }),
      resolver: "ldap1",
    });
    assertRefused(test, "BINDPW", ["LDAPURI"]);
    assert.equal(trap.count(), 0);

    // only other keys change (BINDDN included: the same servers): the stored password stays
    const other = await admin(t, "POST", "/resolver/ldap1", {
      type: "ldapresolver",
      BINDDN: "cn=other,dc=example,dc=com",
      TIMEOUT: "3",
      BINDPW: CENSORED,
    });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    const kept = await storedConfig(t, "ldap1");
    assert.equal(decryptSecretText(t.deps.keys.config, kept.BINDPW), "bind-secret");
    assert.equal(kept.BINDDN, "cn=other,dc=example,dc=com");

    // the password sent again with the new server: taken, and the test goes there
    const moved = await admin(t, "POST", "/resolver/ldap1", {
      type: "ldapresolver",
      LDAPURI: evil,
      BINDPW: "new-secret",
    });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    const after = await storedConfig(t, "ldap1");
    assert.equal(after.LDAPURI, evil);
    assert.equal(decryptSecretText(t.deps.keys.config, after.BINDPW), "new-secret");
    const tested = await admin(t, "POST", "/resolver/test", {
      ...ldapResolver(evil, { BINDPW: "new-secret" }),
      resolver: "ldap1",
    });
    assert.equal(tested.status, 200, JSON.stringify(tested.body));
    assert.ok(trap.count() >= 1, "the test connected to the new server");
  } finally {
    trap.close();
    await t.close();
  }
});

function sqlResolver(port: number, overrides: Record<string, string> = {}) {
  return {
    type: "sqlresolver",
    Driver: "mysql+pymysql",
    Server: "127.0.0.1",
    Port: String(port),
    Database: "users",
    User: "reader",
    Password: "db-secret",
    Table: "users",
    Map: JSON.stringify({ userid: "id", username: "username" }),
    ...overrides,
  };
}

Deno.test("sqlresolver: a stored Password is not kept when a key of the connection URL changes", async () => {
  const t = await createTestApp();
  const trap = tcpTrap();
  try {
    assert.equal((await admin(t, "POST", "/resolver/sql1", sqlResolver(1))).status, 200);
    const before = await resolverRow(t, "sql1");
    const cases: [Record<string, string>, string[]][] = [
      [{ Server: "127.0.0.2" }, ["Server"]],
      [{ Port: String(trap.port), Password: CENSORED }, ["Port"]],
      [{ Server: "localhost", Port: String(trap.port) }, ["Server", "Port"]],
      [{ Driver: "postgresql" }, ["Driver"]],
      // the URL is the keys' text joined: a user name or database can move the server
      [{ User: `x:y@127.0.0.1:${trap.port}/` }, ["User"]],
      [{ Database: "users?unix_socket=/tmp/evil.sock" }, ["Database"]],
      [{ conParams: "unix_socket=/tmp/evil.sock" }, ["conParams"]],
    ];
    for (const [change, keys] of cases) {
      const res = await admin(t, "POST", "/resolver/sql1", { type: "sqlresolver", ...change });
      assertRefused(res, "Password", keys);
    }
    assert.deepEqual(await resolverRow(t, "sql1"), before, "nothing saved");
    const test = await admin(t, "POST", "/resolver/test", {
      ...sqlResolver(trap.port, { Password: CENSORED }),
      resolver: "sql1",
    });
    assertRefused(test, "Password", ["Port"]);
    assert.equal(trap.count(), 0);

    const other = await admin(t, "POST", "/resolver/sql1", {
      type: "sqlresolver",
      Limit: "50",
      Table: "people",
      Password: CENSORED,
    });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    const kept = await storedConfig(t, "sql1");
    assert.equal(decryptSecretText(t.deps.keys.config, kept.Password), "db-secret");
    assert.equal(kept.Table, "people");

    const moved = await admin(t, "POST", "/resolver/sql1", {
      type: "sqlresolver",
      Port: String(trap.port),
      Password: "new-secret",
    });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    const after = await storedConfig(t, "sql1");
    assert.equal(after.Port, String(trap.port));
    assert.equal(decryptSecretText(t.deps.keys.config, after.Password), "new-secret");
    const tested = await admin(t, "POST", "/resolver/test", {
      ...sqlResolver(trap.port, { Password: "new-secret" }),
      resolver: "sql1",
    });
    assert.equal(tested.status, 200, JSON.stringify(tested.body));
    assert.ok(trap.count() >= 1, "the test connected to the new server");
  } finally {
    trap.close();
    await t.close();
  }
});

Deno.test("machineresolver ldap: a stored BINDPW is not kept when LDAPURI changes", async () => {
  const t = await createTestApp();
  try {
    const created = await admin(t, "POST", "/machineresolver/mr1", {
      type: "ldap",
      LDAPURI: "ldap://127.0.0.1:1",
      BINDDN: "cn=reader,dc=example,dc=com",
      BINDPW: "bind-secret",
      HOSTNAMEATTRIBUTE: "cn",
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const rows = () =>
      t.deps.db.selectFrom("machineresolverconfig").select(["key", "value", "type"])
        .orderBy("key").execute();
    const before = await rows();
    for (
      const body of [
        { type: "ldap", LDAPURI: "ldap://127.0.0.1:2" },
        { type: "ldap", LDAPURI: "ldap://127.0.0.1:2", BINDPW: CENSORED },
      ]
    ) {
      assertRefused(await admin(t, "POST", "/machineresolver/mr1", body), "BINDPW", ["LDAPURI"]);
    }
    assert.deepEqual(await rows(), before, "nothing saved");

    const other = await admin(t, "POST", "/machineresolver/mr1", {
      type: "ldap",
      BINDDN: "cn=other,dc=example,dc=com",
      BINDPW: CENSORED,
    });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    const bindpw = async () => (await rows()).find((r) => r.key === "BINDPW")!.value;
    assert.equal(await bindpw(), before.find((r) => r.key === "BINDPW")!.value);

    const moved = await admin(t, "POST", "/machineresolver/mr1", {
      type: "ldap",
      LDAPURI: "ldap://127.0.0.1:2",
      BINDPW: "new-secret",
    });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(decryptSecretText(t.deps.keys.config, await bindpw()), "new-secret");
    assert.equal((await rows()).find((r) => r.key === "LDAPURI")!.value, "ldap://127.0.0.1:2");
  } finally {
    await t.close();
  }
});

Deno.test("radiusserver: a stored secret is not kept when server or port changes", async () => {
  const t = await createTestApp();
  const trap = await udpTrap();
  try {
    const base = { server: "127.0.0.1", port: "1", secret: "radius-secret", timeout: "1" };
    assert.equal((await admin(t, "POST", "/radiusserver/r1", base)).status, 200);
    const rows = () => t.deps.db.selectFrom("radiusserver").selectAll().execute();
    const before = await rows();
    const cases: [Record<string, string>, string[]][] = [
      [{ server: "127.0.0.2", port: "1" }, ["server"]],
      [{ server: "127.0.0.1", port: String(trap.port) }, ["port"]],
      // an omitted port is the default 1812: another port
      [{ server: "127.0.0.1" }, ["port"]],
      [{ server: "localhost", port: "2" }, ["server", "port"]],
    ];
    for (const [change, keys] of cases) {
      const res = await admin(t, "POST", "/radiusserver/r1", { ...change, secret: CENSORED });
      assertRefused(res, "secret", keys);
    }
    assert.deepEqual(await rows(), before, "nothing saved");
    const test = await admin(t, "POST", "/radiusserver/test_request", {
      identifier: "r1",
      server: "127.0.0.1",
      port: String(trap.port),
      secret: CENSORED,
      username: "u",
      password: "p",
      timeout: "1",
      retries: "1",
    });
    assertRefused(test, "secret", ["port"]);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(trap.count(), 0);

    const other = await admin(t, "POST", "/radiusserver/r1", {
      ...base,
      secret: CENSORED,
      description: "changed",
      timeout: "2",
    });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.equal((await rows())[0].secret, before[0].secret);
    assert.equal((await rows())[0].description, "changed");

    const moved = await admin(t, "POST", "/radiusserver/r1", {
      server: "127.0.0.1",
      port: String(trap.port),
      secret: "new-secret",
    });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(decryptSecretText(t.deps.keys.config, (await rows())[0].secret), "new-secret");
    const tested = await admin(t, "POST", "/radiusserver/test_request", {
      identifier: "r1",
      server: "127.0.0.1",
      port: String(trap.port),
      secret: CENSORED,
      username: "u",
      password: "p",
      timeout: "1",
      retries: "1",
    });
    assert.equal(tested.status, 200, JSON.stringify(tested.body));
    assert.equal(tested.body.result.value, false);
    assert.ok(trap.count() >= 1, "the stored secret went to the stored server");
  } finally {
    trap.close();
    await t.close();
  }
});

Deno.test("smtpserver: a stored password is not kept when server or port changes", async () => {
  const t = await createTestApp();
  const trap = tcpTrap();
  try {
    const base = { server: "127.0.0.1", port: "1", username: "u", password: "smtp-secret" };
    assert.equal((await admin(t, "POST", "/smtpserver/m1", base)).status, 200);
    const rows = () => t.deps.db.selectFrom("smtpserver").selectAll().execute();
    const before = await rows();
    const cases: [Record<string, string>, string[]][] = [
      [{ server: "127.0.0.2", port: "1" }, ["server"]],
      [{ server: "127.0.0.1", port: String(trap.port) }, ["port"]],
      [{ server: "127.0.0.1" }, ["port"]],
    ];
    for (const [change, keys] of cases) {
      const res = await admin(t, "POST", "/smtpserver/m1", { ...change, password: CENSORED });
      assertRefused(res, "password", keys);
    }
    assert.deepEqual(await rows(), before, "nothing saved");
    const test = await admin(t, "POST", "/smtpserver/send_test_email", {
      identifier: "m1",
      recipient: "a@example.com",
      server: "127.0.0.1",
      port: String(trap.port),
      password: CENSORED,
      timeout: "1",
    });
    assertRefused(test, "password", ["port"]);
    assert.equal(trap.count(), 0);

    const other = await admin(t, "POST", "/smtpserver/m1", {
      ...base,
      password: CENSORED,
      description: "changed",
      username: "v",
    });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.equal((await rows())[0].password, before[0].password);
    assert.equal((await rows())[0].username, "v");

    const tested = await admin(t, "POST", "/smtpserver/send_test_email", {
      identifier: "m1",
      recipient: "a@example.com",
      server: "127.0.0.1",
      port: String(trap.port),
      password: "new-secret",
      timeout: "1",
    });
    assert.equal(tested.status, 200, JSON.stringify(tested.body));
    assert.equal(tested.body.result.value, false);
    assert.ok(trap.count() >= 1, "the test mail went to the new server");
    const moved = await admin(t, "POST", "/smtpserver/m1", {
      server: "127.0.0.1",
      port: String(trap.port),
      password: "new-secret",
    });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(decryptSecretText(t.deps.keys.config, (await rows())[0].password), "new-secret");
  } finally {
    trap.close();
    await t.close();
  }
});
