/**
 * privacyIDEA's user cache over HTTP: `UserCacheExpiration` (rows in the
 * shared database, login → resolver and uid), `DELETE /system/user-cache`
 * (answer, audit, rights) and the invalidation when a resolver is saved or
 * a user is changed through Tessera.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { addAdmin } from "../../src/domain/admin/mod.ts";

async function setup(): Promise<{ t: TestApp; resolver: string }> {
  const t = await createTestApp();
  const resolver = await createUsers(t.deps, {
    realm: "r1",
    users: [
      { login: "alice", password: "alice-pw", email: "alice@example.org" },
      { login: "bob", password: "bob-pw" },
    ],
  });
  return { t, resolver };
}

async function setConfig(t: TestApp, body: Record<string, string>) {
  const res = await jsonOf(await t.asAdmin("POST", "/system/setConfig", { body }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function login(t: TestApp, username: string, password: string) {
  return await jsonOf(await t.post("/auth", { username, realm: "r1", password }));
}

async function rows(t: TestApp) {
  const found = await t.deps.db.selectFrom("usercache")
    .select(["username", "used_login", "resolver"]).orderBy("username").execute();
  return found.map((r) => ({ ...r }));
}

/** Renames a user in the resolver's SQLite file behind Tessera's back. */
async function renameInStore(t: TestApp, resolver: string, from: string, to: string) {
  const list = await jsonOf(await t.asAdmin("GET", "/resolver/"));
  const file = `${t.deps.config.storage.dataDir}/${list.body.result.value[resolver].data.Database}`;
  const db = new DatabaseSync(file);
  try {
    const res = db.prepare("update users set username = ? where username = ?").run(to, from);
    assert.equal(Number(res.changes), 1);
  } finally {
    db.close();
  }
}

async function flush(t: TestApp, token?: string) {
  return await jsonOf(
    await t.request("DELETE", "/system/user-cache", { token: token ?? await t.adminToken() }),
  );
}

Deno.test("UserCacheExpiration: a login resolves from the cache after its store renamed the user, until DELETE /system/user-cache", async () => {
  const { t, resolver } = await setup();
  try {
    await setConfig(t, { UserCacheExpiration: "300" });
    assert.equal((await login(t, "alice", "alice-pw")).status, 200);
    assert.deepEqual(await rows(t), [{ username: "alice", used_login: "alice", resolver }]);

    await renameInStore(t, resolver, "alice", "alicia");
    // as privacyIDEA: the cached row still names the user (the uid is unchanged)
    assert.equal((await login(t, "alice", "alice-pw")).status, 200);

    const res = await flush(t);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.result, { status: true, value: { status: true, deleted: 1 } });
    assert.deepEqual(await rows(t), []);
    const refused = await login(t, "alice", "alice-pw");
    assert.equal(refused.status, 401, "the old login is asked of the store again: nobody");
    assert.equal((await login(t, "alicia", "alice-pw")).status, 200);

    await t.deps.audit.flush();
    const audit = await jsonOf(
      await t.asAdmin("GET", "/audit/", { query: { action: "*user-cache*" } }),
    );
    const entry = audit.body.result.value.auditdata[0];
    assert.equal(entry.action, "DELETE /system/user-cache");
    assert.equal(entry.info, "Deleted 1 entries from user cache");
    assert.equal(entry.success, 1);
  } finally {
    await t.close();
  }
});

Deno.test("UserCacheExpiration: off by default (nothing written); a value that is no whole number is refused", async () => {
  const { t, resolver } = await setup();
  try {
    assert.equal((await login(t, "alice", "alice-pw")).status, 200);
    assert.deepEqual(await rows(t), []);
    await renameInStore(t, resolver, "alice", "alicia");
    assert.equal((await login(t, "alice", "alice-pw")).status, 401, "no cache: the store answers");

    for (const value of ["soon", "-5"]) {
      const bad = await jsonOf(
        await t.asAdmin("POST", "/system/setConfig", { body: { UserCacheExpiration: value } }),
      );
      assert.equal(bad.status, 400, value);
      assert.match(bad.body.result.error.message, /UserCacheExpiration/);
    }
    const stored = await jsonOf(await t.asAdmin("GET", "/system/UserCacheExpiration"));
    assert.equal(stored.body.result.value, "0");
    await setConfig(t, { UserCacheExpiration: "0" });
    assert.equal((await login(t, "alicia", "alice-pw")).status, 200);
    assert.deepEqual(await rows(t), []);
  } finally {
    await t.close();
  }
});

Deno.test("the user cache: rows expire; a resolver save empties its rows; a user changed or deleted through Tessera loses its rows", async () => {
  const { t, resolver } = await setup();
  try {
    await setConfig(t, { UserCacheExpiration: "60" });
    assert.equal((await login(t, "alice", "alice-pw")).status, 200);
    await renameInStore(t, resolver, "alice", "alicia");
    t.clock.advance(61_000);
    // the row is older than UserCacheExpiration: the store is asked
    assert.equal((await login(t, "alice", "alice-pw")).status, 401);
    await renameInStore(t, resolver, "alicia", "alice");
    assert.equal((await login(t, "alice", "alice-pw")).status, 200);
    assert.equal((await login(t, "bob", "bob-pw")).status, 200);
    assert.deepEqual((await rows(t)).map((r) => r.username), ["alice", "alice", "bob"]);

    // PUT /user/ through Tessera: alice's rows go, bob's stay
    const put = await jsonOf(
      await t.asAdmin("PUT", "/user/", {
        body: { user: "alice", resolver, email: "new@example.org" },
      }),
    );
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual((await rows(t)).map((r) => r.username), ["bob"]);

    // DELETE /user/: the user's rows go
    assert.equal((await login(t, "alice", "alice-pw")).status, 200);
    const del = await jsonOf(await t.asAdmin("DELETE", `/user/${resolver}/alice`));
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.deepEqual((await rows(t)).map((r) => r.username), ["bob"]);
    assert.equal((await login(t, "alice", "alice-pw")).status, 401);

    // saving the resolver (any change) empties its rows
    const saved = await jsonOf(
      await t.asAdmin("POST", `/resolver/${resolver}`, {
        body: { type: "sqlresolver", Limit: "400" },
      }),
    );
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.deepEqual(await rows(t), []);
  } finally {
    await t.close();
  }
});

Deno.test("DELETE /system/user-cache: any admin (privacyIDEA's admin_required), never a user or no JWT; it is no config key", async () => {
  const { t } = await setup();
  try {
    await setConfig(t, { UserCacheExpiration: "300", "user-cache": "kept" });
    assert.equal((await login(t, "bob", "bob-pw")).status, 200);
    assert.equal((await rows(t)).length, 1);

    const userJwt = (await login(t, "alice", "alice-pw")).body.result.value.token;
    const asUser = await flush(t, userJwt);
    assert.equal(asUser.status, 401);
    assert.equal(asUser.body.result.error.code, 4306);
    const anonymous = await jsonOf(await t.request("DELETE", "/system/user-cache"));
    assert.equal(anonymous.status, 401);
    assert.equal((await rows(t)).length, 2, "a refused request deletes nothing");

    // an admin whose policies grant only a token list of one realm may still empty the cache
    const policy = await jsonOf(
      await t.asAdmin("POST", "/policy/helpdesk", {
        body: { scope: "admin", action: "tokenlist", realm: "r1" },
      }),
    );
    assert.equal(policy.status, 200);
    await addAdmin(t.deps, "helpdesk", { password: "helpdesk-pw" });
    const helpdesk = (await jsonOf(
      await t.post("/auth", { username: "helpdesk", password: "helpdesk-pw" }),
    )).body.result.value.token;
    const res = await flush(t, helpdesk);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.result.value, { status: true, deleted: 2 });

    // the config key of the same name is another thing (DELETE /system/<key> is not reached)
    const key = await t.deps.db.selectFrom("config").select("value")
      .where("key", "=", "user-cache").executeTakeFirst();
    assert.equal(key?.value, "kept");
  } finally {
    await t.close();
  }
});
