/**
 * The policy actions privacyIDEA generates for the tiqr type (`enrollTIQR` of the admin and
 * user scopes, `tiqr_max_token_per_user`, `tiqr_max_active_token_per_user`), shown with tiqr
 * enrolments that succeed (tiqr.regServer set, an owner given) against the same request
 * under the policy. The per-type tables over all types show them too.
 */
import assert from "node:assert/strict";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { ALICE, appWithAlice, setConfig } from "../http/_challenge_types.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { actionTest } from "./_registry.ts";

async function tiqrApp(): Promise<TestApp> {
  const t = await appWithAlice();
  await setConfig(t, { "tiqr.regServer": "https://tessera.example/ttype/tiqr" });
  return t;
}

async function aliceToken(t: TestApp): Promise<string> {
  const res = await jsonOf(
    await t.post("/auth", { username: "alice@realm1", password: ALICE.password }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.token as string;
}

async function initAs(t: TestApp, who: "admin" | "user"): Promise<Json> {
  if (who === "admin") {
    return await jsonOf(
      await t.asAdmin("POST", "/token/init", {
        body: { type: "tiqr", user: "alice", realm: "realm1" },
        json: true,
      }),
    );
  }
  return await jsonOf(
    await t.post("/token/init", { type: "tiqr" }, { token: await aliceToken(t), json: true }),
  );
}

async function tokenCount(t: TestApp): Promise<number> {
  return (await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count;
}

for (const who of ["admin", "user"] as const) {
  actionTest(
    who,
    "enroll{TYPE}",
    `tiqr: the ${who} enrols a tiqr token only with enrollTIQR`,
    async () => {
      const t = await tiqrApp();
      await t.adminToken();
      // the scope has a policy, but not the tiqr right
      // the admin's own token list (tokenlist) shows what was created
      const base = who === "admin" ? "enrollHOTP, tokenlist" : "enrollHOTP";
      await savePolicy(t.deps, "p", { scope: who, action: base });
      const denied = await initAs(t, who);
      assert.equal(denied.status, 403, JSON.stringify(denied.body));
      assert.equal(denied.body.result.error.code, 303);
      assert.equal(await tokenCount(t), 0, "the refused enrolment created nothing");
      await savePolicy(t.deps, "p", { scope: who, action: `${base}, enrollTIQR` });
      const allowed = await initAs(t, who);
      assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
      assert.match(allowed.body.detail.tiqrenroll.value, /^tiqrenroll:\/\//);
      await t.close();
    },
    { types: ["tiqr"] },
  );
}

for (
  const [action, words] of [
    ["{type}_max_token_per_user", "tokens"],
    ["{type}_max_active_token_per_user", "active tokens"],
  ] as const
) {
  actionTest(
    "enrollment",
    action,
    "tiqr: a third tiqr token of alice is refused at 2",
    async () => {
      const t = await tiqrApp();
      assert.equal((await initAs(t, "admin")).status, 200);
      assert.equal((await initAs(t, "admin")).status, 200, "no limit: a second one enrols");
      await savePolicy(t.deps, "lim", {
        scope: "enrollment",
        action: `${action.replace("{type}", "tiqr")}=2`,
      });
      const refused = await initAs(t, "admin");
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(
        refused.body.result.error.message,
        `The number of ${words} of type tiqr for this user is limited!`,
      );
      assert.equal(await tokenCount(t), 2, "the refused enrolment created nothing");
      await t.close();
    },
    { types: ["tiqr"] },
  );
}
