import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { shaCrypt } from "../../src/lib/unix_crypt.ts";

const CORNELIUS_GECOS = "Cornelius,field2,+491111111,+491234566,user@localhost.localdomain";

async function setup(t: TestApp): Promise<string> {
  return await createUsers(t.deps, {
    realm: "realm1",
    resolver: "sql1",
    users: [
      { login: "alice", password: "alice-pass", email: "alice@example.com", givenname: "Alice" },
      { login: "bob", password: "bob-pass", email: "bob@example.com", surname: "Builder" },
    ],
  });
}

async function passwd(t: TestApp, realm = "prealm"): Promise<void> {
  const path = `${t.deps.config.storage.dataDir}/passwd`;
  await Deno.writeTextFile(
    path,
    `cornelius:${shaCrypt("6", "test", "saltsalt")}:1000:1000:${CORNELIUS_GECOS}::\n`,
  );
  await t.asAdmin("POST", "/resolver/resolver1", {
    body: { type: "passwdresolver", fileName: path },
  });
  await t.asAdmin("POST", `/realm/${realm}`, { body: { resolvers: "resolver1" } });
}

async function userToken(t: TestApp, username: string, password: string): Promise<string> {
  const { status, body } = await jsonOf(await t.post("/auth", { username, password }));
  assert.equal(status, 200, JSON.stringify(body));
  return body.result.value.token;
}

Deno.test("GET /user/ lists users of all realms with realm, resolver and editable", async () => {
  const t = await createTestApp();
  try {
    await setup(t);
    await passwd(t);
    const { status, body } = await jsonOf(await t.asAdmin("GET", "/user/"));
    assert.equal(status, 200);
    const users = body.result.value as Record<string, unknown>[];
    assert.deepEqual(users.map((u) => u.username).sort(), ["alice", "bob", "cornelius"]);
    const cornelius = users.find((u) => u.username === "cornelius");
    assert.deepEqual(cornelius, {
      username: "cornelius",
      userid: "1000",
      givenname: "Cornelius",
      surname: "",
      description: CORNELIUS_GECOS,
      email: "user@localhost.localdomain",
      mobile: "+491111111",
      phone: "+491234566",
      realm: "prealm",
      resolver: "resolver1",
      editable: false,
    });
    const alice = users.find((u) => u.username === "alice")!;
    assert.equal(alice.email, "alice@example.com");
    assert.equal(alice.realm, "realm1");
    assert.equal(alice.resolver, "sql1");
    assert.equal(alice.editable, true);
    assert.equal("password" in alice, false);
    assert.equal(JSON.stringify(body).includes("{SSHA256}"), false);
  } finally {
    await t.close();
  }
});

Deno.test("GET /user/ filters: realm, resolver, username wildcard, search fields, attributes", async () => {
  const t = await createTestApp();
  try {
    await setup(t);
    await passwd(t);
    const names = async (query: Record<string, string>) =>
      ((await jsonOf(await t.asAdmin("GET", "/user/", { query }))).body.result.value as {
        username: string;
      }[]).map((u) => u.username).sort();
    assert.deepEqual(await names({ realm: "realm1" }), ["alice", "bob"]);
    assert.deepEqual(await names({ realm: "REALM1,prealm" }), ["alice", "bob", "cornelius"]);
    assert.deepEqual(await names({ realm: "nosuch" }), []);
    assert.deepEqual(await names({ resolver: "resolver1" }), ["cornelius"]);
    assert.deepEqual(await names({ resolver: "nosuch" }), []);
    assert.deepEqual(await names({ realm: "realm1", resolver: "resolver1" }), [
      "alice",
      "bob",
      "cornelius",
    ]);
    assert.deepEqual(await names({ username: "al*" }), ["alice"]);
    assert.deepEqual(await names({ user: "*o*", username: "alice" }), ["bob", "cornelius"]);
    assert.deepEqual(await names({ username: "a%" }), []);
    assert.deepEqual(await names({ email: "*@example.com" }), ["alice", "bob"]);
    assert.deepEqual(await names({ surname: "Builder" }), ["bob"]);
    assert.deepEqual(await names({ nosuchfield: "x" }), []);
    const some = await jsonOf(
      await t.asAdmin("GET", "/user/", { query: { username: "alice", attributes: "email,realm" } }),
    );
    assert.deepEqual(some.body.result.value, [{ email: "alice@example.com", realm: "realm1" }]);
  } finally {
    await t.close();
  }
});

Deno.test("GET /user/ masks a same-named user of a lower-priority resolver", async () => {
  const t = await createTestApp();
  try {
    await createUsers(t.deps, {
      realm: "r",
      resolver: "a-first",
      users: [{ login: "x", email: "a@x.y" }],
    });
    await createUsers(t.deps, {
      realm: "r",
      resolver: "b-second",
      users: [{ login: "x", email: "b@x.y" }],
    });
    const list = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "r" } }));
    assert.equal(list.body.result.value.length, 1);
    assert.equal(list.body.result.value[0].resolver, "a-first");
  } finally {
    await t.close();
  }
});

Deno.test("POST /user/ creates users; duplicates and non-editable resolvers are refused", async () => {
  const t = await createTestApp();
  try {
    await setup(t);
    await passwd(t);
    const created = await jsonOf(
      await t.asAdmin("POST", "/user/", {
        body: { user: "carol", resolver: "sql1", password: "carol-pass", email: "c@example.com" },
      }),
    );
    assert.equal(created.status, 200);
    assert.equal(typeof created.body.result.value, "string");
    const list = await jsonOf(
      await t.asAdmin("GET", "/user/", { query: { username: "carol" } }),
    );
    assert.equal(list.body.result.value[0].email, "c@example.com");
    assert.equal(list.body.result.value[0].userid, created.body.result.value);
    // the new user can log in
    assert.ok(await userToken(t, "carol@realm1", "carol-pass"));

    const cases: [Record<string, string>, number, number, RegExp][] = [
      [{ user: "carol", resolver: "sql1" }, 400, 904, /already exists/],
      [{ user: "dave", resolver: "resolver1" }, 400, 907, /not editable/],
      [{ user: "dave", resolver: "nosuch" }, 400, 907, /no such resolver/],
      [{ resolver: "sql1" }, 400, 905, /Missing parameter: user/],
      [{ user: "dave" }, 400, 905, /Missing parameter: resolver/],
    ];
    for (const [body, status, code, message] of cases) {
      const res = await jsonOf(await t.asAdmin("POST", "/user/", { body }));
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(res.body.result.error.code, code, JSON.stringify(res.body));
      assert.match(res.body.result.error.message, message);
    }
  } finally {
    await t.close();
  }
});

Deno.test("PUT /user/ updates attributes and password; unknown user 904, non-editable refused", async () => {
  const t = await createTestApp();
  try {
    await setup(t);
    await passwd(t);
    const res = await jsonOf(
      await t.asAdmin("PUT", "/user/", {
        body: { user: "alice", resolver: "sql1", email: "new@example.com", password: "new-pass" },
      }),
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.result.value, true);
    const list = await jsonOf(await t.asAdmin("GET", "/user/", { query: { username: "alice" } }));
    assert.equal(list.body.result.value[0].email, "new@example.com");
    assert.ok(await userToken(t, "alice@realm1", "new-pass"));
    const old = await jsonOf(
      await t.post("/auth", { username: "alice@realm1", password: "alice-pass" }),
    );
    assert.equal(old.status, 401);

    // rename by userid
    const uid = list.body.result.value[0].userid;
    const renamed = await jsonOf(
      await t.asAdmin("PUT", "/user/", { body: { user: "alicia", userid: uid, resolver: "sql1" } }),
    );
    assert.equal(renamed.body.result.value, true);
    const after = await jsonOf(await t.asAdmin("GET", "/user/", { query: { username: "ali*" } }));
    assert.deepEqual(after.body.result.value.map((u: { username: string }) => u.username), [
      "alicia",
    ]);

    const unknown = await jsonOf(
      await t.asAdmin("PUT", "/user/", { body: { user: "nobody", resolver: "sql1", email: "x" } }),
    );
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.result.error.code, 904);
    const fixed = await jsonOf(
      await t.asAdmin("PUT", "/user/", {
        body: { user: "cornelius", resolver: "resolver1", email: "x" },
      }),
    );
    assert.equal(fixed.status, 400);
    assert.equal(fixed.body.result.error.code, 907);
    assert.match(fixed.body.result.error.message, /not editable/);
  } finally {
    await t.close();
  }
});

Deno.test("DELETE /user/<resolver>/<user> deletes; unknown user 904; non-editable refused", async () => {
  const t = await createTestApp();
  try {
    await setup(t);
    await passwd(t);
    const res = await jsonOf(await t.asAdmin("DELETE", "/user/sql1/bob"));
    assert.equal(res.status, 200);
    assert.equal(res.body.result.value, true);
    const list = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "realm1" } }));
    assert.deepEqual(list.body.result.value.map((u: { username: string }) => u.username), [
      "alice",
    ]);
    const again = await jsonOf(await t.asAdmin("DELETE", "/user/sql1/bob"));
    assert.equal(again.status, 400);
    assert.equal(again.body.result.error.code, 904);
    const fixed = await jsonOf(await t.asAdmin("DELETE", "/user/resolver1/cornelius"));
    assert.equal(fixed.status, 400);
    assert.equal(fixed.body.result.error.code, 907);
  } finally {
    await t.close();
  }
});

Deno.test("a user-role caller sees and changes only himself", async () => {
  const t = await createTestApp();
  try {
    await setup(t);
    const token = await userToken(t, "alice@realm1", "alice-pass");
    const list = await jsonOf(
      await t.get("/user/", { token, query: { realm: "realm1", username: "*" } }),
    );
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.result.value.map((u: { username: string }) => u.username), [
      "alice",
    ]);
    // "updating" bob updates alice (params are forced to the caller)
    const upd = await jsonOf(
      await t.put("/user/", { user: "bob", resolver: "sql1", email: "hijack@example.com" }, {
        token,
      }),
    );
    assert.equal(upd.status, 200);
    const all = (await jsonOf(await t.asAdmin("GET", "/user/"))).body.result.value as {
      username: string;
      email: string;
    }[];
    assert.equal(all.find((u) => u.username === "bob")!.email, "bob@example.com");
    assert.equal(all.find((u) => u.username === "alice")!.email, "hijack@example.com");
    // a user may change his own password
    await t.put("/user/", { password: "alice-new" }, { token });
    assert.ok(await userToken(t, "alice@realm1", "alice-new"));
    // admin-only endpoints
    const denied: [string, string][] = [
      ["POST", "/user/"],
      ["DELETE", "/user/sql1/bob"],
      ["GET", "/resolver/"],
      ["POST", "/realm/realm1"],
    ];
    for (const [method, path] of denied) {
      const body = method === "POST"
        ? { user: "x", resolver: "sql1", resolvers: "sql1" }
        : undefined;
      const res = await jsonOf(await t.request(method, path, { token, body }));
      assert.equal(res.status, 401, path);
      assert.equal(res.body.result.error.code, 4306, path);
    }
  } finally {
    await t.close();
  }
});

Deno.test("custom attributes are refused without a granting policy (never fail-open)", async () => {
  const t = await createTestApp();
  try {
    await setup(t);
    const set = await jsonOf(
      await t.asAdmin("POST", "/user/attribute", {
        body: { user: "alice", realm: "realm1", key: "dept", value: "it" },
      }),
    );
    assert.equal(set.status, 403);
    assert.equal(set.body.result.error.code, 303);
    assert.equal(
      set.body.result.error.message,
      "You are not allowed to set the custom user attribute dept!",
    );
    const del = await jsonOf(await t.asAdmin("DELETE", "/user/attribute/dept/alice/realm1"));
    assert.equal(del.status, 403);
    assert.equal(
      del.body.result.error.message,
      "You are not allowed to delete the custom user attribute dept!",
    );
    const editable = await jsonOf(
      await t.asAdmin("GET", "/user/editable_attributes/", { query: { user: "alice@realm1" } }),
    );
    assert.deepEqual(editable.body.result.value, { delete: [], set: {} });
    const all = await jsonOf(
      await t.asAdmin("GET", "/user/attribute", { query: { user: "alice@realm1" } }),
    );
    assert.deepEqual(all.body.result.value, {});
    const one = await jsonOf(
      await t.asAdmin("GET", "/user/attribute", { query: { user: "alice@realm1", key: "dept" } }),
    );
    assert.equal(one.body.result.value, null);
    assert.equal((await t.deps.db.selectFrom("user_attribute").selectAll().execute()).length, 0);

    const unknown = await jsonOf(
      await t.asAdmin("GET", "/user/attribute", { query: { user: "nobody@realm1" } }),
    );
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.result.error.code, 904);
    const missing = await jsonOf(
      await t.asAdmin("POST", "/user/attribute", { body: { user: "alice", key: "k" } }),
    );
    assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: value");

    const token = await userToken(t, "alice@realm1", "alice-pass");
    const other = await jsonOf(await t.delete("/user/attribute/dept/bob/realm1", { token }));
    assert.equal(other.status, 403);
    assert.equal(
      other.body.result.error.message,
      "User is not allowed to delete attributes of other users.",
    );
    const own = await jsonOf(
      await t.post("/user/attribute", { user: "bob", key: "k", value: "v" }, { token }),
    );
    assert.equal(own.status, 403);
  } finally {
    await t.close();
  }
});

Deno.test("POST /auth logs realm users in: user@realm, realm parameter, default realm", async () => {
  const t = await createTestApp();
  try {
    const resolver = await setup(t);
    for (
      const body of [
        { username: "alice@realm1", password: "alice-pass" },
        { username: "alice", password: "alice-pass", realm: "REALM1" },
        { username: "alice", password: "alice-pass" },
      ]
    ) {
      const { status, body: res } = await jsonOf(await t.post("/auth", body));
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(res.result.value.role, "user");
      assert.equal(res.result.value.username, "alice");
      assert.equal(res.result.value.realm, "realm1");
      const claims = JSON.parse(
        atob(res.result.value.token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")),
      );
      assert.equal(claims.resolver, resolver);
      assert.equal(claims.role, "user");
    }
    const wrong = await jsonOf(
      await t.post("/auth", { username: "alice@realm1", password: "bob-pass" }),
    );
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.result.error.code, 4031);
    assert.equal(wrong.body.result.error.message, "Authentication failure. Wrong credentials");
    const nobody = await jsonOf(
      await t.post("/auth", { username: "nobody@realm1", password: "x" }),
    );
    assert.deepEqual(nobody.body.result.error, wrong.body.result.error);
    const realm = await jsonOf(
      await t.post("/auth", { username: "alice", password: "alice-pass", realm: "nope" }),
    );
    assert.equal(realm.status, 401);
    assert.equal(realm.body.result.error.code, 4031);
    assert.equal(realm.body.result.error.message, "Authentication failure. Unknown realm: nope.");
  } finally {
    await t.close();
  }
});

Deno.test("POST /auth gives users of a superuser realm the admin role", async () => {
  const t = await createTestApp({ configText: '[auth]\nsuperuser_realms = ["Admins"]\n' });
  try {
    await createUsers(t.deps, {
      realm: "admins",
      users: [{ login: "root", password: "root-pass" }],
    });
    const { status, body } = await jsonOf(
      await t.post("/auth", { username: "root@admins", password: "root-pass" }),
    );
    assert.equal(status, 200);
    assert.equal(body.result.value.role, "admin");
    assert.equal(body.result.value.realm, "admins");
    const list = await jsonOf(await t.get("/resolver/", { token: body.result.value.token }));
    assert.equal(list.status, 200);
  } finally {
    await t.close();
  }
});

Deno.test("custom attributes follow set/delete_custom_user_attributes policies (spec 03 §6)", async () => {
  const t = await createTestApp();
  try {
    await setup(t);
    const policies: [string, string][] = [
      // the first admin policy must keep policy writing and user listing allowed
      ["p0", "policywrite, policyread, userlist, resolverread, resolverwrite"],
      ["p1", "set_custom_user_attributes=:hello: one two"],
      ["p2", "set_custom_user_attributes=:hello2: * :hello: three"],
      ["p3", "set_custom_user_attributes=:*: on off, delete_custom_user_attributes=*"],
    ];
    for (const [name, action] of policies) {
      const res = await jsonOf(
        await t.asAdmin("POST", `/policy/${name}`, { body: { scope: "admin", action } }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    const editable = await jsonOf(
      await t.asAdmin("GET", "/user/editable_attributes/", {
        query: { user: "alice", realm: "realm1" },
      }),
    );
    const value = editable.body.result.value;
    assert.deepEqual(value.delete, ["*"]);
    assert.deepEqual(value.set.hello.sort(), ["one", "three", "two"]);
    assert.deepEqual(value.set.hello2, ["*"]);
    assert.deepEqual(value.set["*"].sort(), ["off", "on"]);

    const set = async (key: string, v: string) =>
      await jsonOf(
        await t.asAdmin("POST", "/user/attribute", {
          body: { user: "alice@realm1", key, value: v },
        }),
      );
    const ok1 = await set("hello", "two");
    assert.equal(ok1.status, 200);
    assert.equal(typeof ok1.body.result.value, "number");
    assert.equal((await set("hello2", "anything")).status, 200);
    assert.equal((await set("other", "on")).status, 200);
    const denied = await set("hello", "four");
    assert.equal(denied.status, 403);
    assert.equal(
      denied.body.result.error.message,
      "You are not allowed to set the custom user attribute hello!",
    );

    const all = await jsonOf(
      await t.asAdmin("GET", "/user/attribute", { query: { user: "alice@realm1" } }),
    );
    assert.deepEqual(all.body.result.value, { hello: "two", hello2: "anything", other: "on" });
    const one = await jsonOf(
      await t.asAdmin("GET", "/user/attribute", { query: { user: "alice@realm1", key: "hello" } }),
    );
    assert.equal(one.body.result.value, "two");
    // custom attributes show up in user lists and can be left out
    const list = await jsonOf(await t.asAdmin("GET", "/user/", { query: { username: "alice" } }));
    assert.equal(list.body.result.value[0].hello, "two");
    const plain = await jsonOf(
      await t.asAdmin("GET", "/user/", {
        query: { username: "alice", include_custom_attributes: "0" },
      }),
    );
    assert.equal("hello" in plain.body.result.value[0], false);

    const del = await jsonOf(await t.asAdmin("DELETE", "/user/attribute/hello/alice/realm1"));
    assert.equal(del.body.result.value, 1);
    const again = await jsonOf(await t.asAdmin("DELETE", "/user/attribute/hello/alice/realm1"));
    assert.equal(again.body.result.value, 0);

    // user scope: without a user policy a user may not set anything
    const token = await userToken(t, "alice@realm1", "alice-pass");
    const own = await jsonOf(
      await t.post("/user/attribute", { key: "hello", value: "one" }, { token }),
    );
    assert.equal(own.status, 403);
    await t.asAdmin("POST", "/policy/u1", {
      body: { scope: "user", action: "set_custom_user_attributes=:color: red blue" },
    });
    const mine = await jsonOf(
      await t.post("/user/attribute", { user: "bob", key: "color", value: "red" }, { token }),
    );
    assert.equal(mine.status, 200);
    const aliceAttrs = await jsonOf(
      await t.asAdmin("GET", "/user/attribute", { query: { user: "alice@realm1" } }),
    );
    assert.equal(aliceAttrs.body.result.value.color, "red");
    const bobAttrs = await jsonOf(
      await t.asAdmin("GET", "/user/attribute", { query: { user: "bob@realm1" } }),
    );
    assert.deepEqual(bobAttrs.body.result.value, {});
  } finally {
    await t.close();
  }
});

Deno.test("parallel creates of the same user: one wins, the others get a clean 904", async () => {
  const t = await createTestApp();
  try {
    await setup(t);
    await t.adminToken();
    const results = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          t.asAdmin("POST", "/user/", { body: { user: "race", resolver: "sql1", password: "pw" } })
            .then(jsonOf),
      ),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 1);
    for (const r of results.filter((r) => r.status !== 200)) {
      assert.equal(r.status, 400);
      assert.equal(r.body.result.error.code, 904);
    }
    const list = await jsonOf(await t.asAdmin("GET", "/user/", { query: { username: "race" } }));
    assert.equal(list.body.result.value.length, 1);
    const long = await jsonOf(
      await t.asAdmin("POST", "/user/", {
        body: { user: "long", resolver: "sql1", email: "x".repeat(3000) },
      }),
    );
    assert.equal(long.status, 400);
    assert.equal(long.body.result.error.code, 905);
  } finally {
    await t.close();
  }
});

Deno.test("GET /user/ still lists the other resolvers when one user store is broken", async () => {
  const t = await createTestApp();
  try {
    await setup(t);
    await passwd(t);
    await t.asAdmin("POST", "/realm/realm1", { body: { resolvers: "sql1,resolver1" } });
    await Deno.remove(`${t.deps.config.storage.dataDir}/passwd`);
    const { status, body } = await jsonOf(
      await t.asAdmin("GET", "/user/", { query: { realm: "realm1" } }),
    );
    assert.equal(status, 200);
    assert.deepEqual(body.result.value.map((u: { username: string }) => u.username).sort(), [
      "alice",
      "bob",
    ]);
    assert.ok(t.log.lines.some((l) => l.includes("Cannot list users of resolver")));
  } finally {
    await t.close();
  }
});

Deno.test("/user/ refuses wrongly typed JSON parameters with 905 and changes nothing", async () => {
  const t = await createTestApp();
  try {
    await setup(t);
    const cases: [string, Record<string, unknown>][] = [
      ["POST", { user: ["carol"], resolver: "sql1" }],
      ["POST", { user: "carol", resolver: "sql1", email: { a: 1 } }],
      ["POST", { user: "carol", resolver: { name: "sql1" } }],
      ["PUT", { user: "alice", resolver: "sql1", email: ["x"] }],
      ["PUT", { user: "alice", resolver: "sql1", password: { p: 1 } }],
    ];
    for (const [method, body] of cases) {
      const res = await jsonOf(await t.asAdmin(method, "/user/", { json: true, body }));
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.result.error.code, 905, JSON.stringify(res.body));
    }
    const list = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "realm1" } }));
    assert.deepEqual(list.body.result.value.map((u: { username: string }) => u.username), [
      "alice",
      "bob",
    ]);
    assert.equal(list.body.result.value[0].email, "alice@example.com");
  } finally {
    await t.close();
  }
});

Deno.test("GET /user/ shows a realm-restricted admin only the users of his realms", async () => {
  const t = await createTestApp();
  try {
    await createUsers(t.deps, { realm: "north", resolver: "rn", users: [{ login: "nora" }] });
    await createUsers(t.deps, { realm: "south", resolver: "rs", users: [{ login: "sam" }] });
    const before = await jsonOf(await t.asAdmin("GET", "/user/"));
    assert.deepEqual(before.body.result.value.map((u: { username: string }) => u.username).sort(), [
      "nora",
      "sam",
    ]);
    const pol = await t.asAdmin("POST", "/policy/north-admins", {
      body: { scope: "admin", action: "userlist", realm: "north" },
    });
    assert.equal(pol.status, 200);
    await pol.body?.cancel();
    const all = await jsonOf(await t.asAdmin("GET", "/user/"));
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.result.value.map((u: { username: string }) => u.username), ["nora"]);
    // asking for the other realm by name is refused by the policy itself
    const south = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "south" } }));
    assert.equal(south.status, 403);
    assert.equal(south.body.result.error.code, 303);
    const byResolver = await jsonOf(
      await t.asAdmin("GET", "/user/", { query: { resolver: "rs" } }),
    );
    assert.deepEqual(byResolver.body.result.value, []);
  } finally {
    await t.close();
  }
});
