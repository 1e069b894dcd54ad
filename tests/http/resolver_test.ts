import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";
import { TEST_ENGINE } from "../test_db.ts";
import { shaCrypt } from "../../src/lib/unix_crypt.ts";

const SQL_MAP = JSON.stringify({
  userid: "id",
  username: "username",
  email: "email",
  givenname: "givenname",
  surname: "surname",
  password: "password",
});

async function passwdFile(dir: string): Promise<string> {
  const path = `${dir}/passwd`;
  await Deno.writeTextFile(
    path,
    `cornelius:${
      shaCrypt("6", "test", "saltsalt")
    }:1000:1000:Cornelius,field2,+491111111,+491234566,user@localhost.localdomain::\n` +
      "nopass:x:1001:1001:No Pass::\n",
  );
  return path;
}

Deno.test("POST /resolver/<name> creates, GET lists it censored, update keeps the secret", async () => {
  const t = await createTestApp();
  try {
    const created = await jsonOf(
      await t.asAdmin("POST", "/resolver/sql1", {
        body: {
          type: "sqlresolver",
          Database: "u.sqlite",
          Table: "users",
          Map: SQL_MAP,
          Editable: "1",
          Password: "db-secret",
          "desc.Table": "the table",
        },
      }),
    );
    assert.equal(created.status, 200);
    assert.equal(typeof created.body.result.value, "number");
    const list = await jsonOf(await t.asAdmin("GET", "/resolver/"));
    const entry = list.body.result.value.sql1;
    assert.equal(entry.resolvername, "sql1");
    assert.equal(entry.type, "sqlresolver");
    assert.deepEqual(entry.censor_keys, ["Password"]);
    assert.equal(entry.data.Password, "__CENSORED__");
    assert.equal(entry.data.Table, "users");
    assert.equal(JSON.stringify(list.body).includes("db-secret"), false);
    // the secret is stored encrypted
    const row = await t.deps.db.selectFrom("resolver").select("config").executeTakeFirstOrThrow();
    assert.equal(row.config.includes("db-secret"), false);

    // update: only changed keys; __CENSORED__ keeps the secret, "" deletes a key
    const again = await jsonOf(
      await t.asAdmin("POST", "/resolver/sql1", {
        body: { type: "sqlresolver", Password: "__CENSORED__", Limit: "50", Editable: "" },
      }),
    );
    assert.equal(again.body.result.value, created.body.result.value);
    const one = await jsonOf(await t.asAdmin("GET", "/resolver/SQL1"));
    assert.equal(one.body.result.value.sql1.data.Limit, "50");
    assert.equal(one.body.result.value.sql1.data.Password, "__CENSORED__");
    assert.equal("Editable" in one.body.result.value.sql1.data, false);
    const unknown = await jsonOf(await t.asAdmin("GET", "/resolver/nope"));
    assert.deepEqual(unknown.body.result.value, {});
  } finally {
    await t.close();
  }
});

Deno.test("GET /resolver/ filters by type and editable", async () => {
  const t = await createTestApp();
  try {
    const path = await passwdFile(t.deps.config.storage.dataDir);
    await t.asAdmin("POST", "/resolver/p1", { body: { type: "passwdresolver", fileName: path } });
    await t.asAdmin("POST", "/resolver/s1", {
      body: {
        type: "sqlresolver",
        Database: "s.sqlite",
        Table: "users",
        Map: SQL_MAP,
        Editable: "1",
      },
    });
    const byType = await jsonOf(
      await t.asAdmin("GET", "/resolver/", { query: { type: "passwdresolver" } }),
    );
    assert.deepEqual(Object.keys(byType.body.result.value), ["p1"]);
    const editable = await jsonOf(
      await t.asAdmin("GET", "/resolver/", { query: { editable: "1" } }),
    );
    assert.deepEqual(Object.keys(editable.body.result.value), ["s1"]);
    const fixed = await jsonOf(await t.asAdmin("GET", "/resolver/", { query: { editable: "0" } }));
    assert.deepEqual(Object.keys(fixed.body.result.value), ["p1"]);
  } finally {
    await t.close();
  }
});

Deno.test("POST /resolver/<name> refuses bad input without a 500", async () => {
  const t = await createTestApp();
  try {
    await t.asAdmin("POST", "/resolver/p1", {
      body: { type: "passwdresolver", fileName: "/etc/passwd" },
    });
    const cases: [string, Record<string, string>, number, RegExp][] = [
      ["/resolver/p1", { fileName: "x" }, 905, /Missing parameter: type/],
      [
        "/resolver/p1",
        { type: "sqlresolver", Database: "a", Table: "t", Map: SQL_MAP },
        907,
        /other type/,
      ],
      ["/resolver/x1", { type: "nosuchresolver" }, 907, /unknown type/],
      ["/resolver/bad%20name", { type: "passwdresolver" }, 905, /resolver name/],
      [
        "/resolver/s1",
        { type: "sqlresolver", Database: "../up.sqlite", Table: "t", Map: SQL_MAP },
        905,
        /\.\./,
      ],
      [
        "/resolver/s1",
        { type: "sqlresolver", Database: "a.sqlite", Table: "t;drop", Map: SQL_MAP },
        905,
        /Table/,
      ],
      [
        "/resolver/s1",
        { type: "sqlresolver", Database: "a.sqlite", Table: "t", Map: "{nope" },
        905,
        /Map/,
      ],
      [
        "/resolver/s1",
        {
          type: "sqlresolver",
          Database: "a.sqlite",
          Table: "t",
          Map: '{"userid":"id","username":"a b"}',
        },
        905,
        /Map/,
      ],
      [
        "/resolver/s1",
        { type: "sqlresolver", Driver: "mssql+pyodbc", Database: "a", Table: "t", Map: SQL_MAP },
        905,
        /driver "mssql\+pyodbc" is not supported; Tessera serves these drivers: sqlite; mysql.*postgresql/,
      ],
      ["/resolver/p2", { type: "passwdresolver", fileName: "../../etc/shadow" }, 905, /\.\./],
    ];
    for (const [path, body, code, message] of cases) {
      const { status, body: res } = await jsonOf(await t.asAdmin("POST", path, { body }));
      assert.equal(status, 400, path + JSON.stringify(body));
      assert.equal(res.result.error.code, code, JSON.stringify(res));
      assert.match(res.result.error.message, message);
    }
    const list = await jsonOf(await t.asAdmin("GET", "/resolver/"));
    assert.deepEqual(Object.keys(list.body.result.value), ["p1"]);
  } finally {
    await t.close();
  }
});

Deno.test("DELETE /resolver/<name>: -1 when unknown, refused while in a realm, id when deleted", async () => {
  const t = await createTestApp();
  try {
    const unknown = await jsonOf(await t.asAdmin("DELETE", "/resolver/nope"));
    assert.equal(unknown.status, 200);
    assert.equal(unknown.body.result.value, -1);
    const id = (await jsonOf(
      await t.asAdmin("POST", "/resolver/p1", {
        body: { type: "passwdresolver", fileName: "/etc/passwd" },
      }),
    )).body.result.value;
    await t.asAdmin("POST", "/realm/realm1", { body: { resolvers: "p1" } });
    const refused = await jsonOf(await t.asAdmin("DELETE", "/resolver/p1"));
    assert.equal(refused.status, 400);
    assert.equal(refused.body.result.error.code, 302);
    assert.equal(
      refused.body.result.error.message,
      "ERR302: The resolver 'p1' is still contained in realm 'realm1'.",
    );
    await t.asAdmin("DELETE", "/realm/realm1");
    const deleted = await jsonOf(await t.asAdmin("DELETE", "/resolver/p1"));
    assert.equal(deleted.body.result.value, id);
  } finally {
    await t.close();
  }
});

Deno.test("POST /resolver/test checks a configuration without storing it", async () => {
  const t = await createTestApp();
  try {
    const path = await passwdFile(t.deps.config.storage.dataDir);
    const good = await jsonOf(
      await t.asAdmin("POST", "/resolver/test", {
        body: { type: "passwdresolver", fileName: path },
      }),
    );
    assert.equal(good.status, 200);
    assert.equal(good.body.result.value, true);
    assert.match(good.body.detail.description, /2 users/);
    const bad = await jsonOf(
      await t.asAdmin("POST", "/resolver/test", {
        body: { type: "passwdresolver", fileName: `${path}-missing` },
      }),
    );
    assert.equal(bad.body.result.value, false);
    assert.equal(typeof bad.body.detail.description, "string");
    const sql = await jsonOf(
      await t.asAdmin("POST", "/resolver/test", {
        body: {
          type: "sqlresolver",
          Database: "new.sqlite",
          Table: "users",
          Map: SQL_MAP,
          Editable: "1",
        },
      }),
    );
    // on PostgreSQL a missing file is created only when the resolver is created (on that node)
    assert.equal(sql.body.result.value, TEST_ENGINE === "sqlite");
    assert.match(sql.body.detail.description, /created/);
    const list = await jsonOf(await t.asAdmin("GET", "/resolver/"));
    assert.deepEqual(list.body.result.value, {});
    const missing = await jsonOf(await t.asAdmin("POST", "/resolver/test", { body: {} }));
    assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: type");
  } finally {
    await t.close();
  }
});

Deno.test("GET /resolver/<type>/default gives the type's defaults", async () => {
  const t = await createTestApp();
  try {
    const p = await jsonOf(await t.asAdmin("GET", "/resolver/passwdresolver/default"));
    assert.deepEqual(p.body.result.value, { fileName: "/etc/passwd" });
    const s = await jsonOf(await t.asAdmin("GET", "/resolver/sqlresolver/default"));
    assert.equal(s.body.result.value.Password_Hash_Type, "SSHA256");
    assert.equal(typeof JSON.parse(s.body.result.value.Map), "object");
    const u = await jsonOf(await t.asAdmin("GET", "/resolver/nosuch/default"));
    assert.equal(u.status, 400);
  } finally {
    await t.close();
  }
});

Deno.test("/resolver/ requires an admin JWT", async () => {
  const t = await createTestApp();
  try {
    const { status, body } = await jsonOf(await t.get("/resolver/"));
    assert.equal(status, 401);
    assert.equal(body.result.error.code, 4033);
  } finally {
    await t.close();
  }
});

Deno.test("parallel POST /resolver/<name> creates one resolver; the rest update it", async () => {
  const t = await createTestApp();
  try {
    await t.adminToken();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        t.asAdmin("POST", "/resolver/p1", {
          body: { type: "passwdresolver", fileName: `/tmp/passwd-${i}` },
        }).then(jsonOf)),
    );
    assert.deepEqual(results.map((r) => r.status), [200, 200, 200, 200, 200, 200]);
    assert.equal(new Set(results.map((r) => r.body.result.value)).size, 1);
    const list = await jsonOf(await t.asAdmin("GET", "/resolver/"));
    assert.deepEqual(Object.keys(list.body.result.value), ["p1"]);
  } finally {
    await t.close();
  }
});
