/**
 * Admin and user values read at enrolment and on custom attributes (matched on the caller):
 * `daypassword_*`, `<type>_2step`, and for users `sms_gateways`,
 * `indexedsecret_force_attribute`, `set_custom_user_attributes` and
 * `delete_custom_user_attributes`. Each is shown against the same request without it.
 */
import assert from "node:assert/strict";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { SEED_HEX } from "../fixtures/tokens.ts";
import { ALICE, appWithAlice } from "../http/_challenge_types.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { HTTP_PROVIDER } from "../../src/domain/smsgateway/mod.ts";
import { actionTest } from "./_registry.ts";

type Caller = "admin" | "user";

/** A `/token/init` as the admin or as alice (with her JWT). */
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

async function aliceToken(t: TestApp): Promise<string> {
  const res = await jsonOf(
    await t.post("/auth", { username: "alice@realm1", password: ALICE.password }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.token as string;
}

async function tokenOf(t: TestApp, serial: string): Promise<Json> {
  const res = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
  return res.body.result.value.tokens[0];
}

/** The caller's policy: for users it must also grant the enrolment itself. */
async function callerPolicy(t: TestApp, who: Caller, action: string): Promise<void> {
  await savePolicy(t.deps, "caller", {
    scope: who,
    action: who === "admin"
      ? `*, ${action}`
      : `enrollDAYPASSWORD, enrollHOTP, enrollTOTP, ${action}`,
  });
}

for (const who of ["admin", "user"] as const) {
  actionTest(
    who,
    [
      "daypassword_timestep",
      "daypassword_hashlib",
      "daypassword_otplen",
      "daypassword_force_server_generate",
    ],
    `daypassword: the ${who}'s policies set step, hash, length and a server key`,
    async () => {
      const t = await appWithAlice();
      const enrol = async () => {
        const res = await initAs(t, who, { type: "daypassword", otpkey: SEED_HEX, timeStep: "1d" });
        assert.equal(res.status, 200, JSON.stringify(res));
        return { res, token: await tokenOf(t, res.body.detail.serial) };
      };
      const plain = await enrol();
      assert.equal(plain.token.info.timeStep, "1d");
      assert.equal(plain.token.info.hashlib, "sha1");
      assert.equal(plain.token.otplen, 6);
      assert.equal(plain.res.body.detail.otpkey.value, `seed://${SEED_HEX}`);
      await callerPolicy(t, who, "daypassword_timestep=12h");
      assert.equal((await enrol()).token.info.timeStep, "12h");
      await callerPolicy(t, who, "daypassword_hashlib=sha256");
      assert.equal((await enrol()).token.info.hashlib, "sha256");
      await callerPolicy(t, who, "daypassword_otplen=8");
      assert.equal((await enrol()).token.otplen, 8);
      await callerPolicy(t, who, "daypassword_force_server_generate");
      assert.notEqual((await enrol()).res.body.detail.otpkey.value, `seed://${SEED_HEX}`);
      await t.close();
    },
  );

  actionTest(
    who,
    "{type}_2step",
    `hotp, totp: the ${who}'s policy allows or forces two-step enrolment`,
    async () => {
      const t = await appWithAlice();
      for (const type of ["hotp", "totp"]) {
        const enrol = async (body: Record<string, unknown>) => {
          const res = await initAs(t, who, { type, ...body });
          assert.equal(res.status, 200, JSON.stringify(res));
          return res.body.detail;
        };
        // without the policy 2stepinit is dropped
        await callerPolicy(t, who, "disable");
        const plain = await enrol({ genkey: 1, "2stepinit": "1" });
        assert.equal(plain.rollout_state, "enrolled", type);
        assert.equal(plain["2step_salt"], undefined);
        await callerPolicy(t, who, `${type}_2step=allow`);
        const allowed = await enrol({ genkey: 1, "2stepinit": "1" });
        assert.equal(allowed.rollout_state, "clientwait", type);
        assert.equal(allowed["2step_salt"], 8);
        assert.equal((await enrol({ genkey: 1 })).rollout_state, "enrolled", `${type}: allow only`);
        await callerPolicy(t, who, `${type}_2step=force`);
        assert.equal((await enrol({ genkey: 1 })).rollout_state, "clientwait", `${type}: force`);
      }
      await t.close();
    },
    { types: ["hotp", "totp"] },
  );
}

actionTest(
  "user",
  "sms_gateways",
  "sms: a user may choose only a gateway the policy names",
  async () => {
    const t = await appWithAlice();
    const gw = await jsonOf(
      await t.asAdmin("POST", "/smsgateway", {
        body: { name: "gw", module: HTTP_PROVIDER, "option.URL": "http://127.0.0.1:9/" },
      }),
    );
    assert.equal(gw.status, 200, JSON.stringify(gw.body));
    const body = { type: "sms", phone: "+49 170 1", "sms.identifier": "gw" };
    await savePolicy(t.deps, "u", { scope: "user", action: "enrollSMS" });
    const refused = await initAs(t, "user", body);
    assert.equal(refused.status, 403);
    assert.equal(
      refused.body.result.error.message,
      "The requested sms.identifier is not allowed to be enrolled.",
    );
    const none = await jsonOf(await t.asAdmin("GET", "/token/", { query: { type: "sms" } }));
    assert.equal(none.body.result.value.count, 0, "the refused enrolment created nothing");
    await savePolicy(t.deps, "u", { scope: "user", action: "enrollSMS, sms_gateways=gw" });
    const allowed = await initAs(t, "user", body);
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    assert.equal((await tokenOf(t, allowed.body.detail.serial)).info["sms.identifier"], "gw");
    await t.close();
  },
);

actionTest(
  "user",
  "indexedsecret_force_attribute",
  "indexedsecret: the user's attribute becomes the secret",
  async () => {
    const t = await appWithAlice();
    await savePolicy(t.deps, "u", { scope: "user", action: "enrollINDEXEDSECRET" });
    const generated = await initAs(t, "user", { type: "indexedsecret" });
    assert.equal(generated.status, 200, JSON.stringify(generated.body));
    assert.match(generated.body.detail.otpkey.value, /^seed:\/\/[0-9a-f]{40}$/);
    await savePolicy(t.deps, "u", {
      scope: "user",
      action: "enrollINDEXEDSECRET, indexedsecret_force_attribute=mobile",
    });
    const forced = await initAs(t, "user", { type: "indexedsecret", otpkey: "mine" });
    assert.equal(forced.status, 200, JSON.stringify(forced.body));
    assert.equal(forced.body.detail.otpkey.value, `seed://${ALICE.mobile}`);
    await t.close();
  },
);

actionTest(
  "user",
  [
    "set_custom_user_attributes",
    "delete_custom_user_attributes",
  ],
  "a user sets and deletes own custom attributes only as the policies allow",
  async () => {
    const t = await appWithAlice();
    const token = await aliceToken(t);
    const set = async (key: string, value: string) =>
      await jsonOf(await t.post("/user/attribute", { key, value }, { token }));
    const del = async (key: string) =>
      await jsonOf(await t.delete(`/user/attribute/${key}/alice/realm1`, { token }));
    const noSet = await set("room", "12");
    assert.equal(noSet.status, 403, JSON.stringify(noSet.body));
    assert.equal(noSet.body.result.error.code, 303);
    await savePolicy(t.deps, "u", { scope: "user", action: "set_custom_user_attributes=:room: *" });
    assert.equal((await set("room", "12")).status, 200);
    assert.equal((await set("desk", "3")).status, 403, "only the keys the policy names");
    assert.equal((await del("room")).status, 403, "setting is no right to delete");
    await savePolicy(t.deps, "u", {
      scope: "user",
      action: "set_custom_user_attributes=:room: *, delete_custom_user_attributes=room",
    });
    assert.equal((await del("room")).status, 200);
    await t.close();
  },
);
