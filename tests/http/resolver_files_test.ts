/**
 * Resolver files: a passwdresolver, sqlresolver or hosts machine resolver never
 * reads Tessera's own files, and a file of the wrong kind is a 400, never a 500
 * (on save, on /resolver/test and when a saved resolver is used).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { shaCrypt } from "../../src/lib/unix_crypt.ts";

const SQL_MAP = JSON.stringify({ userid: "id", username: "username", email: "email" });

const PASSWD_TEXT =
  `cornelius:${
    shaCrypt("6", "test", "saltsalt")
  }:1000:1000:Cornelius,field2,+491111111,+491234566,user@localhost.localdomain::\n` +
  "nopass:x:1001:1001:No Pass:/home/nopass:/bin/sh\n";

// /etc/shadow lines: name:hash:lastchange:min:max:warn:inactive:expire:reserved
const SHADOW_TEXT = `root:${shaCrypt("6", "rootpw", "saltsalt")}:19000:0:99999:7:::\n` +
  "daemon:*:19000:0:99999:7:::\n";

function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  crypto.getRandomValues(out);
  out[0] = 0; // never valid UTF-8 text by accident
  return out;
}

/** POSTs a resolver and returns status and body. */
async function post(t: TestApp, path: string, body: Record<string, string>) {
  return await jsonOf(await t.asAdmin("POST", path, { body }));
}

async function resolverNames(t: TestApp): Promise<string[]> {
  return Object.keys((await jsonOf(await t.asAdmin("GET", "/resolver/"))).body.result.value);
}

function assertRefused(
  res: { status: number; body: Json },
  message: RegExp,
  what: string,
): void {
  assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.result.status, false, what);
  assert.equal(res.body.result.error.code, 905, `${what}: ${JSON.stringify(res.body)}`);
  assert.match(res.body.result.error.message, message, what);
}

Deno.test("POST /resolver/<name> refuses a passwdresolver on Tessera's own files and saves nothing", async () => {
  const outside = await Deno.makeTempDir({ prefix: "tessera-own-" });
  const t = await createTestApp({
    configText: `[signing]\nkey_file = "${outside}/sign/signing.pem"\n`,
  });
  try {
    const cfg = t.deps.config;
    const keyBytes = randomBytes(96);
    await Deno.writeFile(cfg.storage.keyFile, keyBytes, { mode: 0o600 });
    await Deno.mkdir(`${outside}/sign`);
    await Deno.writeTextFile(
      cfg.signing.keyFile,
      "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n",
    );
    // a database file outside the data directory, named by database_url
    const dbFile = `${outside}/main.sqlite`;
    new DatabaseSync(dbFile).close();
    cfg.storage.databaseUrl = `sqlite:${dbFile}`;
    await Deno.writeTextFile(`${cfg.storage.dataDir}/initial-admin-password`, "pw\n");
    await Deno.mkdir(`${cfg.storage.dataDir}/notifications`);
    await Deno.writeTextFile(`${cfg.storage.dataDir}/notifications/mail.txt`, "otp 123456\n");
    await Deno.symlink(cfg.storage.keyFile, `${outside}/innocent`);
    await Deno.link(cfg.storage.keyFile, `${outside}/hardlink`);
    await Deno.symlink(cfg.storage.dataDir, `${outside}/datadir-link`);

    const cases: [string, string][] = [
      ["the key file", cfg.storage.keyFile],
      ["the key file, relative", "encKey"],
      ["the key file, with ./", `${cfg.storage.dataDir}/./encKey`],
      ["the database file", dbFile],
      ["the database journal", `${dbFile}-wal`],
      ["the default database name", "tessera.sqlite"],
      ["the signing key", cfg.signing.keyFile],
      ["the signing key's public half", `${cfg.signing.keyFile}.pub`],
      ["a symlink to the key file", `${outside}/innocent`],
      ["a hard link to the key file", `${outside}/hardlink`],
      ["the key file through a linked directory", `${outside}/datadir-link/encKey`],
      ["the initial admin password", "initial-admin-password"],
      ["a file in the notification spool", "notifications/mail.txt"],
      ["a file in the subscription key folder", "subscription-keys/vendor.pem"],
    ];
    for (const [what, fileName] of cases) {
      const saved = await post(t, "/resolver/p1", { type: "passwdresolver", fileName });
      assertRefused(saved, /Tessera's own/, what);
      const tested = await post(t, "/resolver/test", { type: "passwdresolver", fileName });
      assertRefused(tested, /Tessera's own/, `${what} (test)`);
      assert.equal(JSON.stringify(tested.body).includes("cornelius"), false);
    }
    assert.deepEqual(await resolverNames(t), []);
    // the key file is unchanged and its bytes never came back
    assert.deepEqual(await Deno.readFile(cfg.storage.keyFile), keyBytes);
  } finally {
    await t.close();
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("POST /resolver/<name> refuses a shadow or binary file as a passwd file with a clear 400", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-files-" });
  try {
    await Deno.writeTextFile(`${dir}/shadow`, SHADOW_TEXT);
    await Deno.writeFile(`${dir}/binary`, randomBytes(200));
    await Deno.writeTextFile(`${dir}/toml`, '[storage]\nkey_file = "/x"\n');
    for (const name of ["shadow", "binary", "toml"]) {
      const fileName = `${dir}/${name}`;
      const message = new RegExp(`Cannot use file "${fileName}": it is not a passwd file`);
      assertRefused(
        await post(t, "/resolver/p1", { type: "passwdresolver", fileName }),
        message,
        name,
      );
      const tested = await post(t, "/resolver/test", { type: "passwdresolver", fileName });
      assertRefused(tested, message, `${name} (test)`);
      // nothing of the file comes back
      assert.equal(JSON.stringify(tested.body).includes("root"), false);
    }
    assert.deepEqual(await resolverNames(t), []);
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a passwdresolver on a good passwd file saves, tests and lists its users", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-files-" });
  try {
    await Deno.writeTextFile(`${dir}/passwd`, PASSWD_TEXT);
    await Deno.writeTextFile(`${t.deps.config.storage.dataDir}/users.passwd`, PASSWD_TEXT);
    for (const fileName of [`${dir}/passwd`, "users.passwd"]) {
      const tested = await post(t, "/resolver/test", { type: "passwdresolver", fileName });
      assert.equal(tested.body.result.value, true, JSON.stringify(tested.body));
      assert.match(tested.body.detail.description, /2 users/);
    }
    const saved = await post(t, "/resolver/p1", {
      type: "passwdresolver",
      fileName: `${dir}/passwd`,
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    await post(t, "/realm/r1", { resolvers: "p1" });
    const users = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "r1" } }));
    assert.deepEqual(
      users.body.result.value.map((u: { username: string }) => u.username).sort(),
      ["cornelius", "nopass"],
    );
    // a passwd file that does not exist yet may be saved (it is checked when used)
    const later = await post(t, "/resolver/p2", {
      type: "passwdresolver",
      fileName: `${dir}/later`,
    });
    assert.equal(later.status, 200, JSON.stringify(later.body));
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/** Lists realm `realm`'s users and asserts none leak; returns the log lines written meanwhile. */
async function listBroken(t: TestApp, realm: string, secret: string): Promise<string> {
  const before = t.log.lines.length;
  const res = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm } }));
  // the user list skips a broken store (logged) instead of failing for every store
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.result.value, []);
  assert.equal(JSON.stringify(res.body).includes(secret), false);
  const check = await jsonOf(
    await t.post("/validate/check", { user: secret, realm, pass: "anything" }),
  );
  // authentication against the broken store fails, never with a 500
  assert.notEqual(check.status, 500, JSON.stringify(check.body));
  assert.notEqual(check.body.result.value, true);
  assert.equal(JSON.stringify(check.body).includes(`"${secret}"`), false);
  return t.log.lines.slice(before).join("\n");
}

Deno.test("a saved passwdresolver whose file later turns into a shadow file or a key-file link is refused when read", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-files-" });
  try {
    const path = `${dir}/passwd`;
    await Deno.writeTextFile(path, PASSWD_TEXT);
    assert.equal(
      (await post(t, "/resolver/p1", { type: "passwdresolver", fileName: path })).status,
      200,
    );
    await post(t, "/realm/r1", { resolvers: "p1" });
    const list = () => t.asAdmin("GET", "/user/", { query: { realm: "r1" } });
    assert.equal((await jsonOf(await list())).body.result.value.length, 2);

    await new Promise((r) => setTimeout(r, 20));
    await Deno.writeTextFile(path, SHADOW_TEXT);
    assert.match(await listBroken(t, "r1", "daemon"), /it is not a passwd file/);

    const keyBytes = new TextEncoder().encode("alice:x:1:1::\n"); // even passwd-shaped bytes
    await Deno.writeFile(t.deps.config.storage.keyFile, keyBytes);
    await Deno.remove(path);
    await Deno.symlink(t.deps.config.storage.keyFile, path);
    assert.match(await listBroken(t, "r1", "alice"), /Tessera's own/);
    // saving it again is refused too
    const again = await post(t, "/resolver/p1", { type: "passwdresolver", fileName: path });
    assertRefused(again, /Tessera's own/, "save again");
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("POST /resolver/test and POST /resolver/<name> refuse a sqlresolver Database that is no SQLite file with 400", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-files-" });
  try {
    await Deno.writeTextFile(`${dir}/text.sqlite`, "this is not a database\n".repeat(20));
    await Deno.writeFile(`${dir}/random.sqlite`, randomBytes(4096));
    await Deno.writeFile(`${dir}/short.sqlite`, randomBytes(5));
    await Deno.mkdir(`${dir}/folder.sqlite`);
    for (const name of ["text", "random", "short", "folder"]) {
      const Database = `${dir}/${name}.sqlite`;
      for (const Editable of ["0", "1"]) {
        const body = { type: "sqlresolver", Database, Table: "users", Map: SQL_MAP, Editable };
        const message = new RegExp(`Cannot use file "${Database}": it is not a SQLite database`);
        assertRefused(await post(t, "/resolver/test", body), message, `${name} test`);
        assertRefused(await post(t, "/resolver/s1", body), message, `${name} save`);
      }
    }
    // Tessera's own files, also through /resolver/test
    await Deno.writeFile(t.deps.config.storage.keyFile, randomBytes(96));
    for (const Database of ["encKey", "tessera.sqlite", t.deps.config.storage.keyFile]) {
      const body = { type: "sqlresolver", Database, Table: "users", Map: SQL_MAP, Editable: "1" };
      assertRefused(await post(t, "/resolver/test", body), /Tessera's own/, `${Database} test`);
      assertRefused(await post(t, "/resolver/s1", body), /Tessera's own/, `${Database} save`);
    }
    assert.deepEqual(await resolverNames(t), []);
    // the files were not turned into databases
    assert.equal(
      await Deno.readTextFile(`${dir}/text.sqlite`),
      "this is not a database\n".repeat(20),
    );
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a saved sqlresolver whose file later is no SQLite database is refused when used, a good one works", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-files-" });
  try {
    const path = `${dir}/users.sqlite`;
    const db = new DatabaseSync(path);
    db.exec("create table users (id integer primary key, username text, email text)");
    db.exec("insert into users (username, email) values ('carla', 'c@x.y')");
    db.close();
    const body = { type: "sqlresolver", Database: path, Table: "users", Map: SQL_MAP };
    const tested = await post(t, "/resolver/test", body);
    // privacyIDEA answers the number of users found
    assert.equal(tested.body.result.value, 1, JSON.stringify(tested.body));
    assert.equal((await post(t, "/resolver/s1", body)).status, 200);
    await post(t, "/resolver/s2", { ...body, Database: `${dir}/other.sqlite` });
    await post(t, "/realm/r1", { resolvers: "s1" });
    await post(t, "/realm/r2", { resolvers: "s2" });
    const users = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "r1" } }));
    assert.deepEqual(users.body.result.value.map((u: { username: string }) => u.username), [
      "carla",
    ]);
    // s2's file appears only after saving, and it is not a database
    await Deno.writeFile(`${dir}/other.sqlite`, randomBytes(2048));
    assert.match(await listBroken(t, "r2", "carla"), /it is not a SQLite database/);
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("POST /machineresolver/<name> refuses a hosts resolver on Tessera's own or binary files", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-files-" });
  try {
    await Deno.writeFile(t.deps.config.storage.keyFile, randomBytes(96));
    await Deno.symlink(t.deps.config.storage.keyFile, `${dir}/hosts-link`);
    await Deno.writeFile(`${dir}/binary`, randomBytes(300));
    const cases: [string, RegExp][] = [
      ["encKey", /Tessera's own/],
      [`${dir}/hosts-link`, /Tessera's own/],
      [`${dir}/binary`, /it is not a hosts file/],
    ];
    for (const [filename, message] of cases) {
      const res = await jsonOf(
        await t.asAdmin("POST", "/machineresolver/h1", { body: { type: "hosts", filename } }),
      );
      assertRefused(res, message, filename);
    }
    const list = await jsonOf(await t.asAdmin("GET", "/machineresolver/"));
    assert.deepEqual(list.body.result.value, {});

    // a good file saves; turned into a key-file link later, listing machines answers 400
    await Deno.writeTextFile(`${dir}/hosts`, "192.168.0.1 gandalf\n");
    const ok = await jsonOf(
      await t.asAdmin("POST", "/machineresolver/h1", {
        body: { type: "hosts", filename: `${dir}/hosts` },
      }),
    );
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const machines = await jsonOf(await t.asAdmin("GET", "/machine/"));
    assert.equal(machines.status, 200, JSON.stringify(machines.body));
    await Deno.remove(`${dir}/hosts`);
    await Deno.symlink(t.deps.config.storage.keyFile, `${dir}/hosts`);
    assertRefused(
      await jsonOf(await t.asAdmin("GET", "/machine/")),
      /Tessera's own/,
      "hosts link after save",
    );
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});
