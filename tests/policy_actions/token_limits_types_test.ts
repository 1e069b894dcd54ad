/**
 * `<type>_max_token_per_user` and `<type>_max_active_token_per_user` for every token type:
 * with the limit at 0, an enrolment of that type for the user is refused with the typed
 * message and creates nothing; without it the same request is not refused by a limit.
 */
import assert from "node:assert/strict";
import { jsonOf, type TestApp } from "../test_app.ts";
import { appWithAlice } from "../http/_challenge_types.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { TOKEN_TYPES } from "../../src/domain/token/types/mod.ts";
import { actionTest } from "./_registry.ts";

async function initFor(t: TestApp, type: string) {
  return await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: { type, genkey: 1, user: "alice", realm: "realm1" },
      json: true,
    }),
  );
}

async function count(t: TestApp): Promise<number> {
  return (await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count;
}

for (
  const [action, words] of [
    ["{type}_max_token_per_user", "tokens"],
    ["{type}_max_active_token_per_user", "active tokens"],
  ] as const
) {
  actionTest("enrollment", action, "each type's limit refuses that type only", async () => {
    for (const type of Object.keys(TOKEN_TYPES)) {
      const t = await appWithAlice();
      const limited = `The number of ${words} of type ${type} for this user is limited!`;
      const plain = await initFor(t, type);
      assert.notEqual(plain.body.result.error?.message, limited, type);
      const before = await count(t);
      await savePolicy(t.deps, "lim", {
        scope: "enrollment",
        action: `${action.replace("{type}", type)}=0`,
      });
      const refused = await initFor(t, type);
      assert.equal(refused.status, 403, `${type}: ${JSON.stringify(refused.body)}`);
      assert.equal(refused.body.result.error.code, 303);
      assert.equal(refused.body.result.error.message, limited);
      assert.equal(await count(t), before, `${type}: the refused enrolment created nothing`);
      // another type is not limited by it
      const other = type === "hotp" ? "totp" : "hotp";
      assert.equal((await initFor(t, other)).status, 200, `${type}: ${other} still enrols`);
      await t.close();
    }
  }, { types: "all" });
}
