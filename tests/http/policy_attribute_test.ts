import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { actionTest } from "../policy_actions/_registry.ts";

async function policy(t: TestApp, name: string, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

actionTest(
  "admin",
  [
    "set_custom_user_attributes",
    "delete_custom_user_attributes",
  ],
  "custom attribute rights: the union of matching set/delete policies (spec 03 example)",
  async () => {
    const t = await createTestApp();
    await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "a" }] });
    const attribute = (method: string, path: string, body?: Record<string, unknown>) =>
      t.asAdmin(method, path, { body }).then(jsonOf);
    // without a policy no custom attribute may be set or deleted
    const noSet = await attribute("POST", "/user/attribute", {
      user: "alice",
      realm: "realm1",
      key: "hello",
      value: "two",
    });
    assert.equal(noSet.status, 403);
    assert.equal(noSet.body.result.error.code, 303);
    const noDelete = await attribute("DELETE", "/user/attribute/hello/alice/realm1");
    assert.equal(noDelete.status, 403);
    // the first admin policy keeps the test admin able to manage policies
    await policy(t, "p0", { scope: "admin", action: "policywrite, policyread, policydelete" });
    await policy(t, "p1", { scope: "admin", action: "set_custom_user_attributes=:hello: one two" });
    await policy(t, "p2", {
      scope: "admin",
      action:
        "set_custom_user_attributes=:hello2: * :hello: three, delete_custom_user_attributes=*",
    });
    await policy(t, "p3", { scope: "admin", action: "set_custom_user_attributes=:*: on off" });
    await policy(t, "other", {
      scope: "admin",
      action: "set_custom_user_attributes=:secret: *",
      adminuser: "someone-else",
    });
    const editable = await jsonOf(
      await t.asAdmin("GET", "/user/editable_attributes/", { query: { user: "alice@realm1" } }),
    );
    assert.equal(editable.status, 200);
    const value = editable.body.result.value;
    assert.deepEqual(value.delete, ["*"]);
    assert.deepEqual(Object.keys(value.set).sort(), ["*", "hello", "hello2"]);
    assert.deepEqual([...value.set.hello].sort(), ["one", "three", "two"]);
    assert.deepEqual(value.set.hello2, ["*"]);
    assert.deepEqual(value.set["*"], ["on", "off"]);

    const set = async (key: string, v: string) =>
      await jsonOf(
        await t.asAdmin("POST", "/user/attribute", {
          body: { user: "alice", realm: "realm1", key, value: v },
        }),
      );
    assert.equal((await set("hello", "two")).status, 200);
    assert.equal((await set("hello2", "anything")).status, 200);
    assert.equal((await set("misc", "on")).status, 200);
    const refused = await set("hello", "four");
    assert.equal(refused.status, 403);
    assert.equal(refused.body.result.error.code, 303);
    assert.equal((await set("secret", "x")).status, 403, "another admin's policy does not apply");
    const del = await jsonOf(await t.asAdmin("DELETE", "/user/attribute/hello/alice/realm1"));
    assert.equal(del.status, 200);
    await t.close();
  },
);
