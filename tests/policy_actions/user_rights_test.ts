/**
 * User rights (scope `user`, spec 04 §4.10): while no user policy is active a user may act on
 * their own tokens; once one is, each endpoint needs its action. Each right is shown against
 * the baseline of a user policy that grants something else. Also the user-scope values
 * `hide_tokeninfo` and `otp_pin_set_random`.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp } from "../fixtures/tokens.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { ADMIN_ENROLLED_TYPES, TOKEN_TYPES } from "../../src/domain/token/types/mod.ts";
import { actionTest } from "./_registry.ts";

interface Row {
  method: string;
  /** `{serial}` stands for alice's token. */
  path: string;
  body?: Record<string, unknown>;
  action: string;
  message?: string;
}

const ROWS: Row[] = [
  { method: "POST", path: "/token/assign", body: { serial: "FREE1" }, action: "assign" },
  { method: "POST", path: "/token/unassign", body: { serial: "{serial}" }, action: "unassign" },
  { method: "POST", path: "/token/enable/{serial}", action: "enable" },
  { method: "POST", path: "/token/disable/{serial}", action: "disable" },
  { method: "POST", path: "/token/revoke/{serial}", action: "revoke" },
  { method: "POST", path: "/token/reset/{serial}", action: "reset" },
  {
    method: "POST",
    path: "/token/resync/{serial}",
    body: { otp1: "123456", otp2: "234567" },
    action: "resync",
  },
  { method: "POST", path: "/token/setpin/{serial}", body: { otppin: "9876" }, action: "setpin" },
  { method: "POST", path: "/token/setrandompin/{serial}", action: "setrandompin" },
  {
    method: "POST",
    path: "/token/description/{serial}",
    body: { description: "mine" },
    action: "setdescription",
  },
  { method: "DELETE", path: "/token/{serial}", action: "delete" },
  { method: "GET", path: "/user/", action: "userlist" },
  { method: "PUT", path: "/user/", body: { email: "alice@example.com" }, action: "updateuser" },
];

/** alice in realm1 with one HOTP token (and an unassigned one in realm1); her JWT. */
async function setup(): Promise<{ t: TestApp; serial: string; token: string }> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "alice-pw" }] });
  const serial = await enrollHotp(t, { user: "alice", realm: "realm1" });
  await enrollHotp(t, { serial: "FREE1", realm: "realm1" });
  const login = await jsonOf(
    await t.post("/auth", { username: "alice@realm1", password: "alice-pw" }),
  );
  return { t, serial, token: login.body.result.value.token as string };
}

async function send(t: TestApp, token: string, row: Row, serial: string): Promise<Json> {
  const body = row.body
    ? JSON.parse(JSON.stringify(row.body).replaceAll("{serial}", serial))
    : undefined;
  const res = await jsonOf(
    await t.request(row.method, row.path.replace("{serial}", serial), { body, json: true, token }),
  );
  return { status: res.status, ...res.body };
}

/** Denied while a user policy grants only another action; not denied once it grants this one. */
async function checkUserRight(row: Row): Promise<void> {
  const { t, serial, token } = await setup();
  const other = row.action === "userlist" ? "enable" : "userlist";
  await savePolicy(t.deps, "u", { scope: "user", action: other });
  const before = await getTokenBySerial(t.deps, serial);
  const denied = await send(t, token, row, serial);
  assert.equal(denied.status, 403, JSON.stringify(denied));
  assert.equal(denied.result.error.code, 303);
  assert.equal(
    denied.result.error.message,
    row.message ?? `User actions are defined, but the action ${row.action} is not allowed!`,
  );
  // the refused request changed nothing
  assert.deepEqual(await getTokenBySerial(t.deps, serial), before);
  await savePolicy(t.deps, "u", { scope: "user", action: `${other}, ${row.action}` });
  const allowed = await send(t, token, row, serial);
  // granted: past the right check (a later step may still refuse, e.g. a missing webauthn
  // enrolment policy, but not with the right's denial)
  assert.notEqual(allowed.result?.error?.message, denied.result.error.message);
  await t.close();
}

for (const row of ROWS) {
  actionTest("user", row.action, `${row.method} ${row.path} needs the user right`, async () => {
    await checkUserRight(row);
  });
}

actionTest(
  "user",
  "enroll{TYPE}",
  "POST /token/init of each type needs the user right",
  async () => {
    for (const type of Object.keys(TOKEN_TYPES).filter((x) => !ADMIN_ENROLLED_TYPES.has(x))) {
      await checkUserRight({
        method: "POST",
        path: "/token/init",
        body: { type, genkey: 1 },
        action: `enroll${type.toUpperCase()}`,
        message: "User actions are defined, but you are not allowed to enroll this token type!",
      });
    }
  },
  { types: "all" },
);

actionTest(
  "user",
  "hide_tokeninfo",
  "token info keys are hidden from the user's token list",
  async () => {
    const { t, serial, token } = await setup();
    await jsonOf(await t.asAdmin("POST", `/token/info/${serial}/room`, { body: { value: "12" } }));
    const info = async () =>
      (await jsonOf(await t.get("/token/", { token }))).body.result.value.tokens[0].info;
    assert.equal((await info()).room, "12");
    assert.equal((await info()).hashlib, "sha1");
    await savePolicy(t.deps, "u", { scope: "user", action: "hide_tokeninfo=room hashlib" });
    const hidden = await info();
    assert.equal(hidden.room, undefined);
    assert.equal(hidden.hashlib, undefined);
    // the admin's list is not the user's policy's business
    const admin = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
    assert.equal(admin.body.result.value.tokens[0].info.room, "12");
    await t.close();
  },
);

actionTest(
  "user",
  "otp_pin_set_random",
  "gives a user's /token/setrandompin its PIN length",
  async () => {
    const { t, serial, token } = await setup();
    const none = await jsonOf(await t.post(`/token/setrandompin/${serial}`, {}, { token }));
    assert.equal(none.status, 400, JSON.stringify(none.body));
    await savePolicy(t.deps, "u", { scope: "user", action: "setrandompin, otp_pin_set_random=9" });
    const res = await jsonOf(await t.post(`/token/setrandompin/${serial}`, {}, { token }));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.detail.pin.length, 9);
    await t.close();
  },
);

Deno.test("types only administrators enroll (pw, registration, remote, ocra, 4eyes) have no user enroll action: a user policy cannot name one, and a user with every listed enroll right cannot enroll them", async () => {
  const { t, token } = await setup();
  const defs = await jsonOf(await t.asAdmin("GET", "/policy/defs/user"));
  const userActions = Object.keys(defs.body.result.value);
  for (const type of ADMIN_ENROLLED_TYPES) {
    assert.equal(userActions.includes(`enroll${type.toUpperCase()}`), false, type);
    const refused = await jsonOf(
      await t.asAdmin("POST", "/policy/u-admin-type", {
        body: { scope: "user", action: `enroll${type.toUpperCase()}`, realm: "realm1" },
      }),
    );
    assert.equal(refused.status, 400, `${type}: ${JSON.stringify(refused.body)}`);
  }
  assert.ok(userActions.includes("enrollHOTP"));
  const every = userActions.filter((a) => a.startsWith("enroll")).join(", ");
  await savePolicy(t.deps, "u", { scope: "user", action: every, realm: "realm1" });
  const before = (await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count;
  for (const type of ADMIN_ENROLLED_TYPES) {
    const res = await jsonOf(await t.post("/token/init", { type, genkey: 1 }, { token }));
    assert.equal(res.status, 403, `${type}: ${JSON.stringify(res.body)}`);
  }
  const after = (await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count;
  assert.equal(after, before, "no token was made");
  await t.close();
});
