import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { upsertAttribute } from "../../src/domain/user/attribute_store.ts";
import { resolveUser } from "../../src/domain/user/mod.ts";
import { initToken } from "../../src/domain/token/mod.ts";

async function passwdResolver(t: Awaited<ReturnType<typeof createTestApp>>, name: string) {
  const path = `${t.deps.config.storage.dataDir}/${name}.passwd`;
  await Deno.writeTextFile(path, "u1:x:1:1:User One::\n");
  const res = await t.asAdmin("POST", `/resolver/${name}`, {
    body: { type: "passwdresolver", fileName: path },
  });
  assert.equal(res.status, 200);
}

Deno.test("POST /realm/<realm> adds known resolvers, reports unknown ones in failed", async () => {
  const t = await createTestApp();
  try {
    await passwdResolver(t, "r1");
    const { status, body } = await jsonOf(
      await t.asAdmin("POST", "/realm/realm1", { body: { resolvers: "r1, r2" } }),
    );
    assert.equal(status, 200);
    assert.deepEqual(body.result.value, { added: ["r1"], failed: ["r2"] });
    const list = await jsonOf(await t.asAdmin("GET", "/realm/"));
    assert.deepEqual(list.body.result.value, {
      realm1: {
        id: list.body.result.value.realm1.id,
        default: true,
        resolver: [{ name: "r1", type: "passwdresolver", priority: null, node: "" }],
      },
    });
    // a realm is created even when every resolver failed; it is not the default
    const none = await jsonOf(
      await t.asAdmin("POST", "/realm/Empty Realm", { body: { resolvers: "zz" } }),
    );
    assert.deepEqual(none.body.result.value, { added: [], failed: ["zz"] });
    const after = await jsonOf(await t.asAdmin("GET", "/realm/"));
    assert.deepEqual(after.body.result.value["empty-realm"].resolver, []);
    assert.equal(after.body.result.value["empty-realm"].default, false);
  } finally {
    await t.close();
  }
});

Deno.test("POST /realm/<realm> honours priority.<resolver> only as a JSON integer and replaces the list", async () => {
  const t = await createTestApp();
  try {
    await passwdResolver(t, "r1");
    await passwdResolver(t, "r2");
    await t.asAdmin("POST", "/realm/realm1", {
      json: true,
      body: { resolvers: ["r1", "r2"], "priority.r1": 3, "priority.r2": "2" },
    });
    let realm = (await jsonOf(await t.asAdmin("GET", "/realm/"))).body.result.value.realm1;
    assert.deepEqual(
      realm.resolver.map((r: { name: string; priority: number | null }) => [r.name, r.priority]),
      [["r1", 3], ["r2", null]],
    );
    await t.asAdmin("POST", "/realm/realm1", { body: { resolvers: "r2", "priority.r2": "5" } });
    realm = (await jsonOf(await t.asAdmin("GET", "/realm/"))).body.result.value.realm1;
    assert.deepEqual(realm.resolver.map((r: { name: string }) => r.name), ["r2"]);
    assert.equal(realm.resolver[0].priority, null);
  } finally {
    await t.close();
  }
});

Deno.test("POST /realm/<realm> refuses bad input", async () => {
  const t = await createTestApp();
  try {
    const missing = await jsonOf(await t.asAdmin("POST", "/realm/realm1", { body: {} }));
    assert.equal(missing.status, 400);
    assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: resolvers");
    const bad = await jsonOf(await t.asAdmin("POST", "/realm/a%2Fb", { body: { resolvers: "x" } }));
    assert.equal(bad.status, 400);
    assert.equal(bad.body.result.error.code, 905);
    const wrongType = await jsonOf(
      await t.asAdmin("POST", "/realm/realm1", { json: true, body: { resolvers: { a: 1 } } }),
    );
    assert.equal(wrongType.status, 400);
    assert.deepEqual((await jsonOf(await t.asAdmin("GET", "/realm/"))).body.result.value, {});
  } finally {
    await t.close();
  }
});

Deno.test("DELETE /realm/<realm>: 404 unknown, 908 with custom attributes, new default when one realm is left", async () => {
  const t = await createTestApp();
  try {
    const unknown = await jsonOf(await t.asAdmin("DELETE", "/realm/nope"));
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.result.error.message, "The requested Realm could not be found.");
    await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice" }] });
    await createUsers(t.deps, { realm: "realm2", users: [] });
    const ref = await resolveUser(t.deps, "alice", "realm1");
    assert.ok(ref);
    await upsertAttribute(t.deps.db, ref, { key: "dept", value: "it", type: "" });
    await upsertAttribute(t.deps.db, ref, { key: "b-key", value: "x", type: "" });
    const refused = await jsonOf(await t.asAdmin("DELETE", "/realm/realm1"));
    assert.equal(refused.status, 400);
    assert.equal(refused.body.result.error.code, 908);
    assert.equal(
      refused.body.result.error.message,
      "ERR908: Realm 'realm1' contains custom user attributes (b-key, dept). Deleting the realm will also delete these custom user attributes.",
    );
    const ok = await jsonOf(
      await t.asAdmin("DELETE", "/realm/realm1", { query: { delete_custom_attributes: "1" } }),
    );
    assert.equal(ok.status, 200);
    assert.equal(typeof ok.body.result.value, "number");
    const left = await jsonOf(await t.asAdmin("GET", "/realm/"));
    assert.deepEqual(Object.keys(left.body.result.value), ["realm2"]);
    assert.equal(left.body.result.value.realm2.default, true);
    const rows = await t.deps.db.selectFrom("user_attribute").selectAll().execute();
    assert.equal(rows.length, 0);
  } finally {
    await t.close();
  }
});

Deno.test("/defaultrealm: get, set (404 unknown), delete returns the previous id or 0", async () => {
  const t = await createTestApp();
  try {
    assert.deepEqual((await jsonOf(await t.asAdmin("GET", "/defaultrealm"))).body.result.value, {});
    assert.equal((await jsonOf(await t.asAdmin("DELETE", "/defaultrealm"))).body.result.value, 0);
    await passwdResolver(t, "r1");
    await t.asAdmin("POST", "/realm/realm1", { body: { resolvers: "r1" } });
    await t.asAdmin("POST", "/realm/realm2", { body: { resolvers: "r1" } });
    const first = await jsonOf(await t.asAdmin("GET", "/defaultrealm"));
    assert.deepEqual(Object.keys(first.body.result.value), ["realm1"]);
    assert.equal(first.body.result.value.realm1.default, true);
    const set = await jsonOf(await t.asAdmin("POST", "/defaultrealm/ REALM2 "));
    assert.equal(set.status, 200);
    const realms = (await jsonOf(await t.asAdmin("GET", "/realm/"))).body.result.value;
    assert.equal(set.body.result.value, realms.realm2.id);
    assert.equal(realms.realm1.default, false);
    assert.equal(realms.realm2.default, true);
    const unknown = await jsonOf(await t.asAdmin("POST", "/defaultrealm/nope"));
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.result.error.message, "The requested Realm could not be found.");
    const cleared = await jsonOf(await t.asAdmin("DELETE", "/defaultrealm"));
    assert.equal(cleared.body.result.value, realms.realm2.id);
    assert.deepEqual((await jsonOf(await t.asAdmin("GET", "/defaultrealm"))).body.result.value, {});
  } finally {
    await t.close();
  }
});

Deno.test("GET /realm/superuser lists the configured superuser realms", async () => {
  const t = await createTestApp({ configText: '[auth]\nsuperuser_realms = ["SuperRealm"]\n' });
  try {
    const { body } = await jsonOf(await t.asAdmin("GET", "/realm/superuser"));
    assert.deepEqual(body.result.value, ["superrealm"]);
  } finally {
    await t.close();
  }
});

Deno.test("DELETE /realm/<realm> is refused while a user of the realm owns a token", async () => {
  const t = await createTestApp();
  try {
    await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice" }] });
    const ref = await resolveUser(t.deps, "alice", "realm1");
    assert.ok(ref);
    await initToken(t.deps, { type: "spass", serial: "SPASS1", pin: "1234" }, { user: ref });
    const { status, body } = await jsonOf(await t.asAdmin("DELETE", "/realm/realm1"));
    assert.equal(status, 400);
    assert.equal(body.result.error.code, 904);
    assert.equal(
      body.result.error.message,
      "ERR904: Realm can not be deleted, because a user of this realm is still assigned to a token.",
    );
    assert.deepEqual(
      Object.keys((await jsonOf(await t.asAdmin("GET", "/realm/"))).body.result.value),
      [
        "realm1",
      ],
    );
  } finally {
    await t.close();
  }
});

Deno.test("POST /realm/<realm>/node/<node> pins resolvers to this node; general updates keep them", async () => {
  const t = await createTestApp();
  try {
    const general = await createUsers(t.deps, {
      realm: "r1",
      resolver: "general",
      users: [{ login: "x" }],
    });
    await createUsers(t.deps, { realm: "other", resolver: "pinned", users: [{ login: "x" }] });
    const res = await jsonOf(
      await t.asAdmin("POST", "/realm/r1/node/test-node", {
        json: true,
        body: { resolver: [{ name: "pinned", priority: 1 }, { name: "nosuch" }] },
      }),
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.result.value, { added: ["pinned"], failed: ["nosuch"] });
    // the pinned resolver has priority 1 on this node, so it wins
    assert.equal((await resolveUser(t.deps, "x", "r1"))?.resolver, "pinned");
    await t.asAdmin("POST", "/realm/r1", { body: { resolvers: general } });
    const realm = (await jsonOf(await t.asAdmin("GET", "/realm/"))).body.result.value.r1;
    assert.deepEqual(
      realm.resolver.map((
        r: { name: string; node: string; priority: number | null },
      ) => [r.name, r.node, r.priority]),
      [["general", "", null], ["pinned", "test-node", 1]],
    );
    const unknown = await jsonOf(
      await t.asAdmin("POST", "/realm/r1/node/other-node", { json: true, body: { resolver: [] } }),
    );
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.result.error.message, "ERR905: The given node does not exist!");
    for (
      const body of [{}, { resolver: "pinned" }, { resolver: [{ name: 1 }] }, {
        resolver: [{ name: "a", priority: "1" }],
      }]
    ) {
      const bad = await jsonOf(
        await t.asAdmin("POST", "/realm/r1/node/test-node", { json: true, body }),
      );
      assert.equal(bad.status, 400, JSON.stringify(body));
      assert.equal(bad.body.result.error.message, "ERR905: Could not verify data in request!");
    }
  } finally {
    await t.close();
  }
});
