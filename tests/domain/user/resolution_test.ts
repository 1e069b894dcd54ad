import assert from "node:assert/strict";
import { createTestApp } from "../../test_app.ts";
import { createUsers } from "../../fixtures/users.ts";
import {
  checkUserPassword,
  getDefaultRealm,
  getUserInfo,
  realmExists,
  resolveUser,
  splitUser,
} from "../../../src/domain/user/mod.ts";
import { saveResolver } from "../../../src/domain/resolver/mod.ts";
import { setRealm } from "../../../src/domain/realm/mod.ts";
import { setSystemConfig } from "../../../src/domain/system_config/mod.ts";

Deno.test("createUsers builds a realm whose users resolve, carry attributes and check passwords", async () => {
  const t = await createTestApp();
  try {
    const resolver = await createUsers(t.deps, {
      realm: "Realm1",
      users: [
        { login: "alice", password: "alice-pass", email: "alice@example.com", givenname: "Alice" },
        { login: "bob", password: "bob-pass" },
      ],
    });
    assert.equal(await getDefaultRealm(t.deps), "realm1");
    assert.equal(await realmExists(t.deps, "REALM1"), true);
    assert.equal(await realmExists(t.deps, "nope"), false);
    const ref = await resolveUser(t.deps, "alice", "realm1");
    assert.ok(ref);
    assert.deepEqual({ ...ref, uid: "" }, { login: "alice", realm: "realm1", resolver, uid: "" });
    const info = await getUserInfo(t.deps, ref);
    assert.equal(info.username, "alice");
    assert.equal(info.email, "alice@example.com");
    assert.equal(info.givenname, "Alice");
    assert.equal(info.userid, ref.uid);
    assert.equal("password" in info, false);
    assert.equal(await checkUserPassword(t.deps, ref, "alice-pass"), true);
    assert.equal(await checkUserPassword(t.deps, ref, "bob-pass"), false);
    assert.equal(await resolveUser(t.deps, "carol", "realm1"), undefined);
    assert.equal(await resolveUser(t.deps, "alice", "realm1", "other"), undefined);
  } finally {
    await t.close();
  }
});

Deno.test("splitUser splits at the last @ only for existing realms and honours splitAtSign", async () => {
  const t = await createTestApp();
  try {
    assert.deepEqual(await splitUser(t.deps, "alice"), { login: "alice", realm: "" });
    await createUsers(t.deps, { realm: "r1", users: [] });
    await createUsers(t.deps, { realm: "r2", users: [] });
    assert.deepEqual(await splitUser(t.deps, "alice"), { login: "alice", realm: "r1" });
    assert.deepEqual(await splitUser(t.deps, "a@b@R2"), { login: "a@b", realm: "r2" });
    assert.deepEqual(await splitUser(t.deps, "a@nope"), { login: "a@nope", realm: "r1" });
    assert.deepEqual(await splitUser(t.deps, "r2\\bob"), { login: "bob", realm: "r2" });
    assert.deepEqual(await splitUser(t.deps, "bob@r2", "r1"), { login: "bob", realm: "r1" });
    await setSystemConfig(t.deps, { splitAtSign: "false" });
    assert.deepEqual(await splitUser(t.deps, "bob@r2"), { login: "bob@r2", realm: "r1" });
  } finally {
    await t.close();
  }
});

Deno.test("resolveUser takes the first resolver by priority, then name; a later same login is masked", async () => {
  const t = await createTestApp();
  try {
    const a = await createUsers(t.deps, {
      realm: "r",
      resolver: "b-reso",
      users: [{ login: "x" }],
    });
    const b = await createUsers(t.deps, {
      realm: "r",
      resolver: "a-reso",
      users: [{ login: "x" }],
    });
    assert.equal((await resolveUser(t.deps, "x", "r"))?.resolver, b);
    await setRealm(t.deps, "r", { resolvers: [a, b], priorities: { [a]: 1, [b]: 2 } });
    assert.equal((await resolveUser(t.deps, "x", "r"))?.resolver, a);
    assert.equal((await resolveUser(t.deps, "x", "r", b))?.resolver, b);
  } finally {
    await t.close();
  }
});

Deno.test("an sqlresolver picks up a changed Database without a restart", async () => {
  const t = await createTestApp();
  try {
    const reso = await createUsers(t.deps, { realm: "r", users: [{ login: "first" }] });
    assert.ok(await resolveUser(t.deps, "first", "r"));
    // an existing (empty) file: with PostgreSQL a missing one is never created on an update
    await Deno.writeFile(`${t.deps.config.storage.dataDir}/other.sqlite`, new Uint8Array());
    await saveResolver(t.deps, reso, {
      type: "sqlresolver",
      params: { Database: "other.sqlite" },
    });
    assert.equal(await resolveUser(t.deps, "first", "r"), undefined);
  } finally {
    await t.close();
  }
});
