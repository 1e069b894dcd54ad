import assert from "node:assert/strict";
import { createTestApp } from "../../test_app.ts";
import { checkRight, rightsOf, savePolicy } from "../../../src/domain/policy/mod.ts";

const ADMIN = { role: "admin" as const, username: "admin", realm: "" };
const ALICE = { role: "user" as const, username: "alice", realm: "r1", resolver: "res1" };

Deno.test("checkRight: no active policy in the scope allows everything", async () => {
  const t = await createTestApp();
  assert.deepEqual(await checkRight(t.deps, ADMIN, "delete"), []);
  await savePolicy(t.deps, "u", { scope: "user", action: "enable" });
  assert.deepEqual(
    await checkRight(t.deps, ADMIN, "delete"),
    [],
    "a user policy does not configure admin",
  );
  await savePolicy(t.deps, "off", { scope: "admin", action: "enable", active: false });
  assert.deepEqual(await checkRight(t.deps, ADMIN, "delete"), [], "inactive policies do not count");
  await t.close();
});

Deno.test("checkRight: once the scope is configured, only granted actions pass", async () => {
  const t = await createTestApp();
  await savePolicy(t.deps, "a", { scope: "admin", action: "enable, disable", user: "bob" });
  assert.deepEqual(await checkRight(t.deps, ADMIN, "enable", { user: "bob" }), ["a"]);
  assert.deepEqual(
    await checkRight(t.deps, ADMIN, "enable"),
    ["a"],
    "no user in the request does not filter",
  );
  await assert.rejects(
    () => checkRight(t.deps, ADMIN, "enable", { user: "carol" }),
    (e: Error & { code: number }) =>
      e.code === 303 &&
      e.message === "Admin actions are defined, but the action enable is not allowed!",
  );
  await assert.rejects(
    () =>
      checkRight(t.deps, ADMIN, "enrollHOTP", {
        message: "Admin actions are defined, but you are not allowed to enroll this token type!",
      }),
    /you are not allowed to enroll this token type/,
  );
  // a policy limited to another client still makes the scope configured
  await savePolicy(t.deps, "u", { scope: "user", action: "enable", client: "10.0.0.1" });
  await assert.rejects(
    () => checkRight(t.deps, ALICE, "enable", { client: "127.0.0.1" }),
    (e: Error) => e.message === "User actions are defined, but the action enable is not allowed!",
  );
  assert.deepEqual(await checkRight(t.deps, ALICE, "enable", { client: "10.0.0.1" }), ["u"]);
  await t.close();
});

Deno.test("checkRight: user callers match on their own name, realm and resolver", async () => {
  const t = await createTestApp();
  await savePolicy(t.deps, "u", { scope: "user", action: "disable", user: "alice" });
  assert.deepEqual(await checkRight(t.deps, ALICE, "disable", { user: "mallory" }), ["u"]);
  await assert.rejects(() => checkRight(t.deps, { ...ALICE, username: "bob" }, "disable"));
  await t.close();
});

Deno.test("rightsOf: every action without policies, the granted ones with", async () => {
  const t = await createTestApp();
  const all = await rightsOf(t.deps, ADMIN);
  assert.ok(all.includes("policywrite") && all.includes("enrollHOTP") && all.includes("delete"));
  await savePolicy(t.deps, "a", {
    scope: "admin",
    action: "enable, enrollHOTP, hide_tokeninfo=a b",
    adminuser: "admin",
  });
  await savePolicy(t.deps, "b", { scope: "admin", action: "*, -delete", adminuser: "other" });
  const mine = await rightsOf(t.deps, ADMIN);
  assert.ok(mine.includes("enable"));
  assert.ok(mine.includes("enrollHOTP"));
  assert.ok(mine.includes("hide_tokeninfo=a b"));
  assert.ok(!mine.includes("disable"));
  const other = await rightsOf(t.deps, { ...ADMIN, username: "other" });
  assert.ok(other.includes("disable") && !other.includes("delete"));
  const user = await rightsOf(t.deps, ALICE);
  assert.ok(user.includes("enrollHOTP") && user.includes("setpin"));
  await t.close();
});
