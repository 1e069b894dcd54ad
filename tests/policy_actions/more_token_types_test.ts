/**
 * Policy actions of the token types of spec 14 (motp, applspec, …) that are not covered by the
 * per-type tables (`enroll<TYPE>`, `<type>_max_token_per_user`, …): each shown against
 * the same request without it.
 */
import assert from "node:assert/strict";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { ALICE, appWithAlice } from "../http/_challenge_types.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { actionTest } from "./_registry.ts";

type Caller = "admin" | "user";

async function aliceToken(t: TestApp): Promise<string> {
  const res = await jsonOf(
    await t.post("/auth", { username: "alice@realm1", password: ALICE.password }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.token as string;
}

/** A `/token/init` as the admin (for alice) or as alice. */
async function initAs(t: TestApp, who: Caller, body: Record<string, unknown>): Promise<Json> {
  if (who === "admin") {
    return await jsonOf(
      await t.asAdmin("POST", "/token/init", {
        body: { user: ALICE.login, realm: "realm1", ...body },
        json: true,
      }),
    );
  }
  return await jsonOf(
    await t.post("/token/init", body, { token: await aliceToken(t), json: true }),
  );
}

for (const who of ["admin", "user"] as const) {
  actionTest(
    who,
    "motp_force_server_generate",
    `motp: the ${who}'s policy makes the server generate the key`,
    async () => {
      const t = await appWithAlice();
      const given = "0123456789abcdef";
      const enrol = async () => {
        const res = await initAs(t, who, { type: "motp", otpkey: given, motppin: "6666" });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return res.body.detail.motpurl.value as string;
      };
      await savePolicy(t.deps, "caller", {
        scope: who,
        action: who === "admin" ? "enrollMOTP" : "enrollMOTP, enrollHOTP",
      });
      assert.equal(await enrol(), `motp://privacyidea:mylabel?secret=${given}`);
      await savePolicy(t.deps, "caller", {
        scope: who,
        action: "enrollMOTP, motp_force_server_generate",
      });
      const generated = await enrol();
      assert.match(generated, /secret=[0-9a-f]{32}$/);
      assert.ok(!generated.endsWith(given));
      await t.close();
    },
  );
}

for (const who of ["admin", "user"] as const) {
  actionTest(
    who,
    "applspec_force_server_generate",
    `applspec: the ${who}'s policy makes the server generate the password`,
    async () => {
      const t = await appWithAlice();
      const given = "S3cret!";
      const enrol = async () => {
        const res = await initAs(t, who, { type: "applspec", otpkey: given, service_id: "mail" });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return res.body.detail.password as string;
      };
      await savePolicy(t.deps, "caller", {
        scope: who,
        action: who === "admin" ? "enrollAPPLSPEC" : "enrollAPPLSPEC, enrollHOTP",
      });
      assert.equal(await enrol(), given);
      await savePolicy(t.deps, "caller", {
        scope: who,
        action: "enrollAPPLSPEC, applspec_force_server_generate",
      });
      const generated = await enrol();
      assert.equal(generated.length, 23);
      assert.notEqual(generated, given);
      await t.close();
    },
  );
}
