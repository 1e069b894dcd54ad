import assert from "node:assert/strict";
import { createTestApp } from "../../test_app.ts";
import { getResolver, saveResolver } from "../../../src/domain/resolver/mod.ts";
import { parseSqlConfig } from "../../../src/domain/resolver/sql.ts";
import { EXTERNAL_CHECK_MS } from "../../../src/db/sqlite_adapter.ts";
import { DatabaseSync } from "node:sqlite";

const MAP = JSON.stringify({ userid: "id", username: "login", email: "mail", password: "pw" });

Deno.test("parseSqlConfig resolves paths under the data dir and parses Where safely", () => {
  const cfg = parseSqlConfig("s", {
    Database: "sub/users.sqlite",
    Table: "people",
    Map: MAP,
    Where: "active == 1 AND  kind != 'bot' and name like a%",
    Editable: "True",
  }, "/data");
  assert.equal(cfg.database, "/data/sub/users.sqlite");
  assert.equal(cfg.editable, true);
  assert.equal(cfg.hashType, "SSHA256");
  // privacyIDEA's syntax: the value is the third word as written (quotes included)
  assert.deepEqual(cfg.table.where, [
    { column: "active", op: "=", value: "1" },
    { column: "kind", op: "!=", value: "'bot'" },
    { column: "name", op: "like", value: "a%" },
  ]);
  for (const Where of ["givenname == hans dampf", "a ~ b", "1 = 1", "a == 1 and"]) {
    assert.throws(
      () => parseSqlConfig("s", { Database: "a", Table: "t", Map: MAP, Where }, "/d"),
      /Where part/,
      Where,
    );
  }
  assert.throws(
    () =>
      parseSqlConfig(
        "s",
        { Database: "a", Table: "t", Map: MAP, Where: "1=1; drop table t" },
        "/d",
      ),
    /Where/,
  );
  assert.throws(
    () => parseSqlConfig("s", { Database: "a/../../b", Table: "t", Map: MAP }, "/d"),
    /\.\./,
  );
  assert.throws(
    () =>
      parseSqlConfig("s", { Database: "a", Table: "t", Map: MAP, Password_Hash_Type: "MD4" }, "/d"),
    /Password_Hash_Type/,
  );
});

Deno.test("an editable sqlresolver initialises a new SQLite file and manages users", async () => {
  const t = await createTestApp();
  try {
    await saveResolver(t.deps, "s", {
      type: "sqlresolver",
      params: {
        Database: "people.sqlite",
        Table: "people",
        Map: MAP,
        Editable: "1",
        Password_Hash_Type: "SHA512CRYPT",
      },
    });
    const r = (await getResolver(t.deps, "s"))!;
    assert.equal(r.editable, true);
    const uid = await r.addUser(
      { username: "zoe", email: "z@x.y", notmapped: "ignored" },
      "zoe-pw",
    );
    assert.equal(await r.getUserId("zoe"), uid);
    const info = await r.getUserInfo(uid);
    assert.equal(info?.email, "z@x.y");
    assert.equal("password" in info!, false);
    assert.equal(await r.checkPass(uid, "zoe-pw"), true);
    assert.equal(await r.checkPass(uid, "nope"), false);
    await assert.rejects(() => r.addUser({ username: "zoe" }), /already exists/);
    assert.equal(await r.updateUser(uid, { email: "new@x.y" }), true);
    assert.equal((await r.getUserInfo(uid))?.email, "new@x.y");
    // % and _ are literal in searches, * is the wildcard
    await r.addUser({ username: "a_b" });
    await r.addUser({ username: "axb" });
    assert.deepEqual((await r.getUserList({ username: "a_*" })).map((u) => u.username), ["a_b"]);
    assert.deepEqual((await r.getUserList({ username: "*" })).length, 3);
    assert.deepEqual(await r.getUserList({ password: "*" }), []);
    assert.deepEqual(await r.getUserList({ phone: "*" }), []);
    assert.equal(await r.deleteUser(uid), true);
    assert.equal(await r.getUserId("zoe"), undefined);
    const file = `${t.deps.config.storage.dataDir}/people.sqlite`;
    assert.ok((await Deno.stat(file)).isFile);
  } finally {
    await t.close();
  }
});

Deno.test("a non-editable sqlresolver refuses changes and honours Where", async () => {
  const t = await createTestApp();
  try {
    await saveResolver(t.deps, "w", {
      type: "sqlresolver",
      params: { Database: "w.sqlite", Table: "people", Map: MAP, Editable: "1" },
    });
    const w = (await getResolver(t.deps, "w"))!;
    await w.addUser({ username: "keep", email: "keep" });
    await w.addUser({ username: "hide", email: "hide" });
    await saveResolver(t.deps, "w", {
      type: "sqlresolver",
      params: { Editable: "", Where: "mail == keep" },
    });
    const ro = (await getResolver(t.deps, "w"))!;
    assert.equal(ro.editable, false);
    assert.deepEqual((await ro.getUserList({})).map((u) => u.username), ["keep"]);
    assert.equal(await ro.getUserId("hide"), undefined);
    await assert.rejects(() => ro.addUser({ username: "x" }), /not editable/);
    // a non-editable resolver never creates a missing database file
    await saveResolver(t.deps, "missing", {
      type: "sqlresolver",
      params: { Database: "missing.sqlite", Table: "people", Map: MAP },
    });
    const m = (await getResolver(t.deps, "missing"))!;
    await assert.rejects(() => m.getUserId("x"), /does not exist/);
  } finally {
    await t.close();
  }
});

Deno.test("an sqlresolver may not point at Tessera's own database or key file", async () => {
  const t = await createTestApp();
  try {
    t.deps.config.storage.databaseUrl = `sqlite:${t.deps.config.storage.dataDir}/tessera.sqlite`;
    for (const Database of ["tessera.sqlite", `${t.deps.config.storage.dataDir}/./encKey`]) {
      await assert.rejects(
        () =>
          saveResolver(t.deps, "own", {
            type: "sqlresolver",
            params: { Database, Table: "admin", Map: MAP },
          }),
        /own database/,
      );
    }
  } finally {
    await t.close();
  }
});

Deno.test("sqlresolver lookups are kept until the user database changes, also from another program", async () => {
  const t = await createTestApp();
  try {
    await saveResolver(t.deps, "c", {
      type: "sqlresolver",
      params: { Database: "c.sqlite", Table: "people", Map: MAP, Editable: "1" },
    });
    const r = (await getResolver(t.deps, "c"))!;
    const uid = await r.addUser({ username: "carl", email: "old@x.y" });
    assert.equal((await r.getUserInfo(uid))?.email, "old@x.y");
    assert.equal(await r.getUserId("nobody"), undefined);
    // another program writes the same file (an application that owns the user table)
    const other = new DatabaseSync(`${t.deps.config.storage.dataDir}/c.sqlite`);
    try {
      other.exec("PRAGMA busy_timeout = 5000");
      other.prepare("update people set mail = 'new@x.y' where id = ?").run(Number(uid));
      other.prepare("insert into people (login, mail) values ('nobody', 'n@x.y')").run();
    } finally {
      other.close();
    }
    await new Promise((resolve) => setTimeout(resolve, EXTERNAL_CHECK_MS + 1));
    assert.equal((await r.getUserInfo(uid))?.email, "new@x.y");
    assert.notEqual(await r.getUserId("nobody"), undefined);
    // this process's own change is seen at once
    assert.equal(await r.updateUser(uid, { email: "own@x.y" }), true);
    assert.equal((await r.getUserInfo(uid))?.email, "own@x.y");
  } finally {
    await t.close();
  }
});
