/**
 * Effect tests of enrollment-scope policy actions (spec 15 §5), over HTTP: each
 * compares the request without the policy with the same request under it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { actionTest } from "./_registry.ts";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { hotp, SEED_HEX } from "../fixtures/tokens.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { findTokenBySerial } from "../../src/domain/token/mod.ts";
import { decryptSecretText } from "../../src/lib/crypto.ts";
import { fromHex, toHex } from "../../src/lib/random.ts";
import { pbkdf2Sync } from "node:crypto";

type Res = Awaited<ReturnType<typeof jsonOf>>;

async function admin(
  t: TestApp,
  method: string,
  path: string,
  body?: Record<string, unknown>,
): Promise<Res> {
  return await jsonOf(await t.asAdmin(method, path, body ? { body, json: true } : {}));
}

/** An app with alice (password "alicepw") and bob in realm r1. */
async function appWithUsers(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "r1",
    users: [
      { login: "alice", password: "alicepw", givenname: "Alice", surname: "Liddell" },
      { login: "bob", password: "bobpw" },
    ],
  });
  return t;
}

async function userToken(t: TestApp, username: string, password: string): Promise<string> {
  const res = await jsonOf(await t.post("/auth", { username, password }));
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return res.body.result.value.token;
}

async function asUser(
  t: TestApp,
  token: string,
  method: string,
  path: string,
  body?: Record<string, unknown>,
): Promise<Res> {
  return await jsonOf(await t.request(method, path, { token, body, json: true }));
}

function ok(res: Res): Res {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res;
}

// ---------------------------------------------------------------------------
// /token/lost

async function lostSetup(): Promise<TestApp> {
  const t = await appWithUsers();
  for (const serial of ["L1", "L2", "L3"]) {
    ok(
      await admin(t, "POST", "/token/init", {
        serial,
        otpkey: SEED_HEX,
        pin: "pin",
        user: "alice",
        realm: "r1",
      }),
    );
  }
  return t;
}

actionTest(
  "enrollment",
  "losttoken_PW_length",
  "sets the length of the lost token's password (default 16)",
  async () => {
    const t = await lostSetup();
    const before = ok(await admin(t, "POST", "/token/lost/L1")).body.result.value;
    assert.equal(before.password.length, 16);
    await savePolicy(t.deps, "lost", { scope: "enrollment", action: "losttoken_PW_length=24" });
    const after = ok(await admin(t, "POST", "/token/lost/L2")).body.result.value;
    assert.equal(after.password.length, 24);
    // a policy for another user does not apply
    await savePolicy(t.deps, "lost", {
      scope: "enrollment",
      action: "losttoken_PW_length=24",
      user: "bob",
    });
    const other = ok(await admin(t, "POST", "/token/lost/L3")).body.result.value;
    assert.equal(other.password.length, 16);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "losttoken_PW_contents",
  "sets the characters of the lost token's password (default Base58)",
  async () => {
    const t = await lostSetup();
    const before = ok(await admin(t, "POST", "/token/lost/L1")).body.result.value;
    assert.match(before.password, /^[1-9A-HJ-NP-Za-km-z]{16}$/);
    await savePolicy(t.deps, "lost", { scope: "enrollment", action: "losttoken_PW_contents=n" });
    const after = ok(await admin(t, "POST", "/token/lost/L2")).body.result.value;
    assert.match(after.password, /^[0-9]{16}$/);
    // the password works with the PIN of the lost token
    const check = await jsonOf(
      await t.post("/validate/check", { user: "alice", realm: "r1", pass: `pin${after.password}` }),
    );
    assert.equal(check.body.result.value, true);
    // a value naming no character set is refused and nothing changes
    await savePolicy(t.deps, "lost", { scope: "enrollment", action: "losttoken_PW_contents=xyz" });
    const bad = await admin(t, "POST", "/token/lost/L3");
    assert.equal(bad.status, 403);
    assert.equal(bad.body.result.error.code, 303);
    assert.equal(
      bad.body.result.error.message,
      'The policy action "losttoken_PW_contents" names no character set (c, C, n, s, 8): "xyz"',
    );
    assert.equal(await findTokenBySerial(t.deps, "lostL3"), undefined);
    assert.equal((await findTokenBySerial(t.deps, "L3"))?.active, true);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "losttoken_valid",
  "sets the days the lost token is valid (default 10)",
  async () => {
    const t = await lostSetup();
    const before = ok(await admin(t, "POST", "/token/lost/L1")).body.result.value;
    assert.equal(before.end_date, "2026-01-11T00:00+0000");
    await savePolicy(t.deps, "lost", {
      scope: "enrollment",
      action: "losttoken_valid=2, losttoken_PW_length=10, losttoken_PW_contents=n",
    });
    const after = ok(await admin(t, "POST", "/token/lost/L2")).body.result.value;
    assert.equal(after.end_date, "2026-01-03T00:00+0000");
    assert.match(after.password, /^[0-9]{10}$/);
    const info = (await findTokenBySerial(t.deps, "lostL2"))!.info;
    assert.equal(info.validity_period_end.value, "2026-01-03T00:00+0000");
    // after two days the replacement no longer authenticates
    t.clock.advance(3 * 86_400_000);
    const check = await jsonOf(
      await t.post("/validate/check", { user: "alice", realm: "r1", pass: `pin${after.password}` }),
    );
    assert.equal(check.body.result.value, false);
    await t.close();
  },
);

// ---------------------------------------------------------------------------
// /token/init: enrolment URLs

async function initAlice(t: TestApp, body: Record<string, unknown>): Promise<Res> {
  return ok(await admin(t, "POST", "/token/init", { user: "alice", realm: "r1", ...body }));
}

function url(res: Res): string {
  return res.body.detail.googleurl.value;
}

actionTest(
  "enrollment",
  "tokenlabel",
  "sets the label of the enrolment URLs, with tags",
  async () => {
    const t = await appWithUsers();
    const before = await initAlice(t, { type: "hotp", serial: "LB0" });
    assert.match(url(before), /^otpauth:\/\/hotp\/LB0\?secret=/);
    await savePolicy(t.deps, "label", {
      scope: "enrollment",
      action: "tokenlabel={user}@{realm} {givenname} <s>",
    });
    const after = await initAlice(t, { type: "hotp", serial: "LB1", tokenlabel: "client" });
    assert.match(url(after), /^otpauth:\/\/hotp\/alice%40r1%20Alice%20LB1\?secret=/);
    // the oathtoken URL knows only the old tags
    assert.match(
      after.body.detail.oathurl.value,
      /^oathtoken:\/\/\/addToken\?name=%7Buser%7D%40%7Brealm%7D%20%7Bgivenname%7D%20LB1&/,
    );
    // an unknown tag leaves the URLs out, as privacyIDEA does
    await savePolicy(t.deps, "label", { scope: "enrollment", action: "tokenlabel={nope}" });
    const unknown = await initAlice(t, { type: "totp", serial: "LB2" });
    assert.equal(unknown.body.detail.googleurl, undefined);
    assert.equal(unknown.body.detail.oathurl, undefined);
    assert.match(unknown.body.detail.otpkey.value, /^seed:\/\//);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "tokenissuer",
  "sets the issuer of the enrolment URL (default privacyIDEA)",
  async () => {
    const t = await appWithUsers();
    const before = await initAlice(t, { type: "totp", serial: "IS0" });
    assert.match(url(before), /&issuer=privacyIDEA&serial=IS0$/);
    await savePolicy(t.deps, "issuer", { scope: "enrollment", action: "tokenissuer=ACME {realm}" });
    const after = await initAlice(t, { type: "totp", serial: "IS1" });
    assert.match(url(after), /&issuer=ACME%20r1&serial=IS1$/);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "appimageurl",
  "adds the app image to the enrolment URLs",
  async () => {
    const t = await appWithUsers();
    const before = await initAlice(t, { type: "hotp", serial: "IM0" });
    assert.doesNotMatch(url(before), /image=/);
    await savePolicy(t.deps, "img", {
      scope: "enrollment",
      action: "appimageurl=https://x.example/logo.png",
    });
    const after = await initAlice(t, { type: "hotp", serial: "IM1" });
    assert.match(url(after), /&serial=IM1&image=https%3A\/\/x\.example\/logo\.png$/);
    assert.match(after.body.detail.oathurl.value, /&image=https%3A\/\/x\.example\/logo\.png$/);
    await t.close();
  },
);

const APP_TYPES = ["hotp", "totp", "daypassword"] as const;

actionTest(
  "enrollment",
  "{type}_force_app_pin",
  "adds pin=True and app_force_unlock=pin to the URL of that type only",
  async () => {
    const t = await appWithUsers();
    for (const type of APP_TYPES) {
      const before = await initAlice(t, { type, serial: `FP0${type}` });
      assert.doesNotMatch(url(before), /pin=True/);
      await savePolicy(t.deps, "apppin", { scope: "enrollment", action: `${type}_force_app_pin` });
      const after = await initAlice(t, { type, serial: `FP1${type}` });
      assert.match(url(after), new RegExp(`&serial=FP1${type}&pin=True&app_force_unlock=pin$`));
      // another type's policy does not apply
      const other = APP_TYPES.find((x) => x !== type)!;
      const notMine = await initAlice(t, { type: other, serial: `FP2${type}` });
      assert.doesNotMatch(url(notMine), /pin=True/);
    }
    await t.close();
  },
  { types: APP_TYPES },
);

actionTest(
  "enrollment",
  "{type}_app_force_unlock",
  "adds app_force_unlock=<value> to the URL (it wins over force_app_pin's pin)",
  async () => {
    const t = await appWithUsers();
    for (const type of APP_TYPES) {
      const before = await initAlice(t, { type, serial: `FU0${type}` });
      assert.doesNotMatch(url(before), /app_force_unlock/);
      await savePolicy(t.deps, "unlock", {
        scope: "enrollment",
        action: `${type}_app_force_unlock=biometric`,
      });
      const after = await initAlice(t, { type, serial: `FU1${type}` });
      assert.match(url(after), /&app_force_unlock=biometric$/);
      await savePolicy(t.deps, "unlock", {
        scope: "enrollment",
        action: `${type}_app_force_unlock=any, ${type}_force_app_pin`,
      });
      const both = await initAlice(t, { type, serial: `FU2${type}` });
      assert.match(url(both), /&pin=True&app_force_unlock=any$/);
    }
    await t.close();
  },
  { types: APP_TYPES },
);

// ---------------------------------------------------------------------------
// /token/init: generated codes and lists

actionTest(
  "enrollment",
  "registration.length",
  "sets the length of the registration code (default 24; the client's value is ignored)",
  async () => {
    const t = await appWithUsers();
    const before = await initAlice(t, { type: "registration", "registration.length": "5" });
    assert.match(before.body.detail.registrationcode, /^[A-Za-z0-9]{24}$/);
    await savePolicy(t.deps, "reg", { scope: "enrollment", action: "registration.length=15" });
    const after = await initAlice(t, { type: "registration", "registration.length": "5" });
    assert.equal(after.body.detail.registrationcode.length, 15);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "registration.contents",
  "sets the characters of the registration code (privacyIDEA's contents grammar)",
  async () => {
    const t = await appWithUsers();
    await savePolicy(t.deps, "reg", { scope: "enrollment", action: "registration.length=15" });
    const before = await initAlice(t, { type: "registration" });
    assert.match(before.body.detail.registrationcode, /^[A-Za-z0-9]{15}$/);
    await savePolicy(t.deps, "reg", {
      scope: "enrollment",
      action: "registration.length=15, registration.contents=-sc",
    });
    const after = await initAlice(t, { type: "registration" });
    assert.match(after.body.detail.registrationcode, /^[0-9]{15}$/);
    // the code authenticates once
    const check = await jsonOf(
      await t.post("/validate/check", {
        user: "alice",
        realm: "r1",
        pass: after.body.detail.registrationcode,
      }),
    );
    assert.equal(check.body.result.value, true);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "pw.length",
  "sets the length of a generated pw password (default 12)",
  async () => {
    const t = await appWithUsers();
    const before = await initAlice(t, { type: "pw", "pw.length": "40" });
    assert.match(before.body.detail.password, /^[A-Za-z0-9]{12}$/);
    await savePolicy(t.deps, "pw", { scope: "enrollment", action: "pw.length=20" });
    const after = await initAlice(t, { type: "pw" });
    assert.equal(after.body.detail.password.length, 20);
    // a given password is kept
    const given = await initAlice(t, { type: "pw", otpkey: "mypassword" });
    assert.equal(given.body.detail.password, "mypassword");
    await t.close();
  },
);

actionTest(
  "enrollment",
  "pw.contents",
  "sets the characters of a generated pw password; an unknown value is refused",
  async () => {
    const t = await appWithUsers();
    const before = await initAlice(t, { type: "pw", "pw.contents": "n" });
    assert.match(before.body.detail.password, /^[A-Za-z0-9]{12}$/);
    await savePolicy(t.deps, "pw", { scope: "enrollment", action: "pw.contents=-cs" });
    const after = await initAlice(t, { type: "pw" });
    assert.match(after.body.detail.password, /^[0-9]{12}$/);
    await savePolicy(t.deps, "pw", { scope: "enrollment", action: "pw.contents=+cn" });
    for (let i = 0; i < 5; i++) {
      const grouped = await initAlice(t, { type: "pw" });
      assert.match(grouped.body.detail.password, /[A-Za-z0-9]/);
    }
    await savePolicy(t.deps, "pw", { scope: "enrollment", action: "pw.contents=xyz" });
    const bad = await admin(t, "POST", "/token/init", { type: "pw", serial: "PWBAD" });
    assert.equal(bad.status, 403);
    assert.equal(
      bad.body.result.error.message,
      'The policy action "pw.contents" has an unknown character specifier: "xyz"',
    );
    assert.equal(await findTokenBySerial(t.deps, "PWBAD"), undefined);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "papertoken_count",
  "sets how many OTP values a paper token prints (over the client's count)",
  async () => {
    const t = await appWithUsers();
    const before = await initAlice(t, { type: "paper", otpkey: SEED_HEX });
    assert.equal(Object.keys(before.body.detail.otps).length, 100);
    await savePolicy(t.deps, "paper", { scope: "enrollment", action: "papertoken_count=3" });
    const after = await initAlice(t, { type: "paper", otpkey: SEED_HEX, papertoken_count: "5" });
    assert.deepEqual(after.body.detail.otps, { 0: hotp(0), 1: hotp(1), 2: hotp(2) });
    await t.close();
  },
);

actionTest(
  "enrollment",
  "tantoken_count",
  "sets how many TANs a TAN list has",
  async () => {
    const t = await appWithUsers();
    const before = await initAlice(t, { type: "tan", serial: "TAN0" });
    assert.equal(Object.keys(before.body.detail.otps).length, 100);
    await savePolicy(t.deps, "tan", { scope: "enrollment", action: "tantoken_count=4" });
    const after = await initAlice(t, { type: "tan", serial: "TAN1" });
    assert.equal(Object.keys(after.body.detail.otps).length, 4);
    const list = ok(await admin(t, "GET", "/token/?serial=TAN1"));
    assert.equal(list.body.result.value.tokens[0].info["tan.count"], 4);
    await t.close();
  },
);

// ---------------------------------------------------------------------------
// /token/init: PINs and descriptions

async function check(t: TestApp, pass: string): Promise<boolean> {
  const res = await jsonOf(await t.post("/validate/check", { user: "alice", realm: "r1", pass }));
  return res.body.result.value;
}

actionTest(
  "enrollment",
  "otp_pin_random",
  "replaces the PIN with a random one (contents from otp_pin_contents), not returned",
  async () => {
    const t = await appWithUsers();
    const before = await initAlice(t, { serial: "RP0", otpkey: SEED_HEX, pin: "x" });
    assert.equal(JSON.stringify(before.body).includes('"pin"'), false);
    assert.equal(await check(t, "x" + hotp(0)), true);
    await savePolicy(t.deps, "rnd", { scope: "enrollment", action: "otp_pin_random=8" });
    // only "a" allowed: the random PIN is "aaaaaaaa", whatever the client sent
    await savePolicy(t.deps, "adm", {
      scope: "admin",
      action: "enrollHOTP, enrollpin, tokenlist, otp_pin_contents=[a]",
    });
    const after = await initAlice(t, { serial: "RP1", otpkey: "00".repeat(20), pin: "x" });
    assert.equal(JSON.stringify(after.body).includes("aaaaaaaa"), false);
    assert.equal(await check(t, "x" + hotp(0, "00".repeat(20))), false);
    assert.equal(await check(t, "aaaaaaaa" + hotp(1, "00".repeat(20))), true);
    // without a contents policy: 8 letters and digits (the old PIN no longer works)
    await savePolicy(t.deps, "adm", { scope: "admin", action: "enrollHOTP, enrollpin, tokenlist" });
    const plain = await initAlice(t, { serial: "RP2", otpkey: "11".repeat(20), pin: "x" });
    assert.equal(plain.body.detail.serial, "RP2");
    assert.equal(await check(t, "x" + hotp(0, "11".repeat(20))), false);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "pinhandling",
  "gives a random PIN to the handler, which logs that one was set (never the PIN)",
  async () => {
    const t = await appWithUsers();
    await savePolicy(t.deps, "rnd", { scope: "enrollment", action: "otp_pin_random=12" });
    await initAlice(t, { serial: "PH0", otpkey: SEED_HEX });
    const said = () => t.log.lines.filter((l) => l.includes("A random PIN was set at enrolment"));
    assert.equal(said().length, 0);
    await savePolicy(t.deps, "rnd", {
      scope: "enrollment",
      action: "otp_pin_random=12, pinhandling=privacyidea.lib.pinhandling.base.PinHandler",
    });
    await initAlice(t, { serial: "PH1", otpkey: SEED_HEX });
    assert.equal(said().length, 1);
    assert.match(said()[0], /PH1/);
    assert.match(said()[0], /alice@r1/);
    // an unknown handler is refused before anything is made
    await savePolicy(t.deps, "rnd", {
      scope: "enrollment",
      action: "otp_pin_random=12, pinhandling=my.own.Handler",
    });
    const bad = await admin(t, "POST", "/token/init", {
      serial: "PH2",
      otpkey: SEED_HEX,
      user: "alice",
      realm: "r1",
    });
    assert.equal(bad.status, 403);
    assert.equal(
      bad.body.result.error.message,
      'Unknown PIN handler "my.own.Handler" in policy action pinhandling',
    );
    assert.equal(await findTokenBySerial(t.deps, "PH2"), undefined);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "encrypt_pin",
  "stores the PIN encrypted instead of hashed; it still authenticates",
  async () => {
    const t = await appWithUsers();
    await initAlice(t, { serial: "EP0", otpkey: SEED_HEX, pin: "1234" });
    assert.match((await findTokenBySerial(t.deps, "EP0"))!.pinHash, /^hmac256\$/);
    await savePolicy(t.deps, "enc", { scope: "enrollment", action: "encrypt_pin" });
    await initAlice(t, { serial: "EP1", otpkey: "00".repeat(20), pin: "5678" });
    const stored = (await findTokenBySerial(t.deps, "EP1"))!.pinHash;
    assert.equal(decryptSecretText(t.deps.keys.token, stored), "5678");
    assert.equal(await check(t, "5678" + hotp(0, "00".repeat(20))), true);
    assert.equal(await check(t, "5679" + hotp(1, "00".repeat(20))), false);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "require_description",
  "refuses to enrol a listed type without a description",
  async () => {
    const t = await appWithUsers();
    await initAlice(t, { type: "hotp", serial: "RD0" });
    await savePolicy(t.deps, "desc", { scope: "enrollment", action: "require_description=hotp" });
    const bad = await admin(t, "POST", "/token/init", { type: "hotp", serial: "RD1" });
    assert.equal(bad.status, 403);
    assert.equal(bad.body.result.error.code, 303);
    assert.equal(bad.body.result.error.message, "Description required for hotp token.");
    assert.equal(await findTokenBySerial(t.deps, "RD1"), undefined);
    await initAlice(t, { type: "hotp", serial: "RD2", description: "phone" });
    await initAlice(t, { type: "totp", serial: "RD3" });
    await t.close();
  },
);

actionTest(
  "enrollment",
  "verify_enrollment",
  "keeps a listed type in rollout state verify until its first OTP is given",
  async () => {
    const t = await appWithUsers();
    const before = await initAlice(t, { serial: "VE0", otpkey: SEED_HEX });
    assert.equal(before.body.detail.rollout_state, "enrolled");
    await savePolicy(t.deps, "ve", { scope: "enrollment", action: "verify_enrollment=hotp" });
    const first = await initAlice(t, { serial: "VE1", otpkey: SEED_HEX });
    assert.equal(first.body.detail.rollout_state, "verify");
    assert.deepEqual(first.body.detail.verify, {
      message: "Please enter a valid OTP value of the new token.",
    });
    const bad = await admin(t, "POST", "/token/init", { serial: "VE1", verify: "000000" });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.result.error.message, "ERR905: Verification of the new token failed.");
    assert.equal((await findTokenBySerial(t.deps, "VE1"))!.rolloutState, "verify");
    const good = ok(await admin(t, "POST", "/token/init", { serial: "VE1", verify: hotp(0) }));
    assert.equal(good.body.detail.rollout_state, "enrolled");
    await t.close();
  },
);

// ---------------------------------------------------------------------------
// next_pin_change

async function nextPinChange(t: TestApp, serial: string): Promise<string | undefined> {
  return (await findTokenBySerial(t.deps, serial))!.info.next_pin_change?.value;
}

actionTest(
  "enrollment",
  "change_pin_on_first_use",
  "an admin's enrolment or PIN makes a PIN change due now (tokeninfo next_pin_change)",
  async () => {
    const t = await appWithUsers();
    await initAlice(t, { serial: "CP0", otpkey: SEED_HEX, pin: "start" });
    assert.equal(await nextPinChange(t, "CP0"), undefined);
    await savePolicy(t.deps, "first", { scope: "enrollment", action: "change_pin_on_first_use" });
    await initAlice(t, { serial: "CP1", otpkey: SEED_HEX, pin: "start" });
    assert.equal(await nextPinChange(t, "CP1"), "2026-01-01T00:00+0000");
    // an admin setting a PIN later makes it due again
    ok(await admin(t, "POST", "/token/setpin", { serial: "CP0", otppin: "other" }));
    assert.equal(await nextPinChange(t, "CP0"), "2026-01-01T00:00+0000");
    // a user's own enrolment is not affected
    const jwt = await userToken(t, "alice", "alicepw");
    ok(await asUser(t, jwt, "POST", "/token/init", { serial: "CP2", otpkey: SEED_HEX, pin: "p" }));
    assert.equal(await nextPinChange(t, "CP2"), undefined);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "change_pin_every",
  "a user setting a PIN makes the next change due after the period",
  async () => {
    const t = await appWithUsers();
    await savePolicy(t.deps, "first", { scope: "enrollment", action: "change_pin_on_first_use" });
    await initAlice(t, { serial: "CE0", otpkey: SEED_HEX, pin: "start" });
    assert.equal(await nextPinChange(t, "CE0"), "2026-01-01T00:00+0000");
    const jwt = await userToken(t, "alice", "alicepw");
    // without change_pin_every the user's new PIN clears the due date
    ok(await asUser(t, jwt, "POST", "/token/setpin", { serial: "CE0", otppin: "mine" }));
    assert.equal(await nextPinChange(t, "CE0"), undefined);
    await savePolicy(t.deps, "every", { scope: "enrollment", action: "change_pin_every=90d" });
    ok(await asUser(t, jwt, "POST", "/token/setpin", { serial: "CE0", otppin: "mine2" }));
    assert.equal(await nextPinChange(t, "CE0"), "2026-04-01T00:00+0000");
    // the user's own enrolment with a PIN, too
    ok(await asUser(t, jwt, "POST", "/token/init", { serial: "CE1", otpkey: SEED_HEX, pin: "p" }));
    assert.equal(await nextPinChange(t, "CE1"), "2026-04-01T00:00+0000");
    await t.close();
  },
);

// ---------------------------------------------------------------------------
// two-step enrolment

function pbkdf2Key(serverHex: string, clientHex: string, rounds: number, length = 20): string {
  return toHex(new Uint8Array(pbkdf2Sync(serverHex, fromHex(clientHex), rounds, length, "sha1")));
}

async function twoStepApp(): Promise<TestApp> {
  const t = await appWithUsers();
  await savePolicy(t.deps, "adm", {
    scope: "admin",
    action: "enrollHOTP, enrollTOTP, tokenlist, hotp_2step=force, totp_2step=force",
  });
  return t;
}

actionTest(
  "enrollment",
  "{type}_2step_clientsize",
  "sets the size of the client part (checked at the second step)",
  async () => {
    const t = await twoStepApp();
    for (const type of ["hotp", "totp"]) {
      const before = await initAlice(t, { type, serial: `CS0${type}` });
      assert.equal(before.body.detail["2step_salt"], 8);
      await savePolicy(t.deps, "cs", {
        scope: "enrollment",
        action: `${type}_2step_clientsize=16`,
      });
      const first = await initAlice(t, { type, serial: `CS1${type}`, "2step_clientsize": "4" });
      assert.equal(first.body.detail["2step_salt"], 16);
      assert.match(url(first), /&2step_salt=16&2step_output=20&2step_difficulty=10000$/);
      const short = await admin(t, "POST", "/token/init", {
        type,
        serial: `CS1${type}`,
        otpkey: "01".repeat(8),
      });
      assert.equal(short.status, 400);
      assert.equal(
        short.body.result.error.message,
        "ERR905: Client Secret Size is expected to be 16, but is 8",
      );
      assert.equal((await findTokenBySerial(t.deps, `CS1${type}`))!.rolloutState, "clientwait");
      const done = ok(
        await admin(t, "POST", "/token/init", {
          type,
          serial: `CS1${type}`,
          otpkey: "01".repeat(16),
        }),
      );
      assert.equal(done.body.detail.rollout_state, "enrolled");
    }
    await t.close();
  },
  { types: ["hotp", "totp"] },
);

actionTest(
  "enrollment",
  "{type}_2step_serversize",
  "sets the size of the server part; the key keeps the hash's size",
  async () => {
    const t = await twoStepApp();
    for (const type of ["hotp", "totp"]) {
      const before = await initAlice(t, { type, serial: `SS0${type}` });
      assert.equal(before.body.detail.otpkey.value.length, "seed://".length + 40);
      await savePolicy(t.deps, "ss", {
        scope: "enrollment",
        action: `${type}_2step_serversize=32`,
      });
      const first = await initAlice(t, { type, serial: `SS1${type}` });
      const server = first.body.detail.otpkey.value.slice("seed://".length);
      assert.equal(server.length, 64);
      assert.equal(first.body.detail["2step_output"], 20);
      ok(
        await admin(t, "POST", "/token/init", {
          type,
          serial: `SS1${type}`,
          otpkey: "02".repeat(8),
        }),
      );
      if (type === "hotp") {
        const key = pbkdf2Key(server, "02".repeat(8), 10000);
        const res = await jsonOf(
          await t.post("/validate/check", { serial: `SS1${type}`, pass: hotp(0, key) }),
        );
        assert.equal(res.body.result.value, true);
      }
    }
    await t.close();
  },
  { types: ["hotp", "totp"] },
);

actionTest(
  "enrollment",
  "{type}_2step_difficulty",
  "sets the PBKDF2 rounds of the key derivation",
  async () => {
    const t = await twoStepApp();
    for (const type of ["hotp", "totp"]) {
      const before = await initAlice(t, { type, serial: `DF0${type}` });
      assert.equal(before.body.detail["2step_difficulty"], 10000);
      await savePolicy(t.deps, "df", {
        scope: "enrollment",
        action: `${type}_2step_difficulty=1200`,
      });
      const first = await initAlice(t, { type, serial: `DF1${type}`, "2step_difficulty": "5" });
      assert.equal(first.body.detail["2step_difficulty"], 1200);
      assert.match(url(first), /&2step_difficulty=1200$/);
      const server = first.body.detail.otpkey.value.slice("seed://".length);
      ok(
        await admin(t, "POST", "/token/init", {
          type,
          serial: `DF1${type}`,
          otpkey: "03".repeat(8),
        }),
      );
      if (type === "hotp") {
        const key = pbkdf2Key(server, "03".repeat(8), 1200);
        const res = await jsonOf(
          await t.post("/validate/check", { serial: `DF1${type}`, pass: hotp(0, key) }),
        );
        assert.equal(res.body.result.value, true);
      }
    }
    await t.close();
  },
  { types: ["hotp", "totp"] },
);

for (const scope of ["admin", "user"] as const) {
  actionTest(
    scope,
    "{type}_2step",
    "allow keeps the client's 2stepinit, force sets it, anything else is refused",
    async () => {
      const t = await appWithUsers();
      const jwt = await userToken(t, "alice", "alicepw");
      const init = (body: Record<string, unknown>) =>
        scope === "admin"
          ? admin(t, "POST", "/token/init", { user: "alice", realm: "r1", ...body })
          : asUser(t, jwt, "POST", "/token/init", body);
      const rights = scope === "admin"
        ? "enrollHOTP, enrollTOTP, tokenlist"
        : "enrollHOTP, enrollTOTP";
      for (const type of ["hotp", "totp"]) {
        // without the policy 2stepinit is dropped
        const none = ok(await init({ type, serial: `N${scope}${type}`, "2stepinit": "1" }));
        assert.equal(none.body.detail.rollout_state, "enrolled");
        await savePolicy(t.deps, "two", { scope, action: `${rights}, ${type}_2step=allow` });
        const allowed = ok(await init({ type, serial: `A${scope}${type}`, "2stepinit": "1" }));
        assert.equal(allowed.body.detail.rollout_state, "clientwait");
        const notAsked = ok(await init({ type, serial: `B${scope}${type}` }));
        assert.equal(notAsked.body.detail.rollout_state, "enrolled");
        await savePolicy(t.deps, "two", { scope, action: `${rights}, ${type}_2step=force` });
        const forced = ok(await init({ type, serial: `F${scope}${type}` }));
        assert.equal(forced.body.detail.rollout_state, "clientwait");
        await savePolicy(t.deps, "two", { scope, action: `${rights}, ${type}_2step=sometimes` });
        const bad = await init({ type, serial: `X${scope}${type}` });
        assert.equal(bad.status, 403);
        assert.equal(bad.body.result.error.message, "Unknown 2step policy setting: sometimes");
        assert.equal(await findTokenBySerial(t.deps, `X${scope}${type}`), undefined);
        await savePolicy(t.deps, "two", { scope, action: rights });
      }
      await t.close();
    },
    { types: ["hotp", "totp"] },
  );
}

// ---------------------------------------------------------------------------
// /validate/check: autoassignment

actionTest(
  "enrollment",
  "autoassignment",
  "any_pin: a user without tokens gets the unassigned realm token whose OTP matches",
  async () => {
    const t = await appWithUsers();
    ok(
      await admin(t, "POST", "/token/init", {
        serial: "FREE0",
        otpkey: "00".repeat(20),
        realm: "r1",
      }),
    );
    ok(await admin(t, "POST", "/token/init", { serial: "FREE1", otpkey: SEED_HEX, realm: "r1" }));
    const checkAlice = async (pass: string) =>
      await jsonOf(await t.post("/validate/check", { user: "alice", realm: "r1", pass }));
    const before = await checkAlice("mypin" + hotp(0));
    assert.equal(before.body.result.value, false);
    assert.equal(before.body.detail.message, "The user has no tokens assigned");
    assert.equal((await findTokenBySerial(t.deps, "FREE1"))!.owner, undefined);
    await savePolicy(t.deps, "auto", { scope: "enrollment", action: "autoassignment=any_pin" });
    const after = await checkAlice("mypin" + hotp(1));
    assert.equal(after.status, 200);
    assert.equal(after.body.result.value, true);
    assert.equal(after.body.detail.message, "Token assigned to user via Autoassignment");
    assert.equal(after.body.detail.serial, "FREE1");
    assert.equal(after.body.detail.otplen, 6);
    assert.equal(after.body.detail.type, "hotp");
    const owner = (await findTokenBySerial(t.deps, "FREE1"))!.owner!;
    assert.deepEqual([owner.login, owner.realm], ["alice", "r1"]);
    const audit = ok(await admin(t, "GET", "/audit/?serial=FREE1&action=*check*"));
    const row = audit.body.result.value.auditdata.find((r: Record<string, unknown>) =>
      r.info === "Token assigned via auto assignment"
    );
    assert.ok(row, JSON.stringify(audit.body.result.value.auditdata));
    assert.equal(Number(row.success), 1);
    assert.equal((await findTokenBySerial(t.deps, "FREE0"))!.owner, undefined);
    // the OTP is used up; the PIN part became the token's PIN
    assert.equal((await checkAlice("mypin" + hotp(1))).body.result.value, false);
    assert.equal((await checkAlice("mypin" + hotp(2))).body.result.value, true);
    // a user who has a token gets no other one
    ok(
      await admin(t, "POST", "/token/init", {
        serial: "BOB1",
        otpkey: "22".repeat(20),
        user: "bob",
        realm: "r1",
      }),
    );
    ok(
      await admin(t, "POST", "/token/init", {
        serial: "FREE2",
        otpkey: "33".repeat(20),
        realm: "r1",
      }),
    );
    const bob = await jsonOf(
      await t.post("/validate/check", {
        user: "bob",
        realm: "r1",
        pass: "x" + hotp(0, "33".repeat(20)),
      }),
    );
    assert.equal(bob.body.result.value, false);
    assert.equal((await findTokenBySerial(t.deps, "FREE2"))!.owner, undefined);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "autoassignment",
  "userstore: the PIN part must be the user's password; the token limits apply",
  async () => {
    const t = await appWithUsers();
    ok(await admin(t, "POST", "/token/init", { serial: "FREE1", otpkey: SEED_HEX, realm: "r1" }));
    await savePolicy(t.deps, "auto", { scope: "enrollment", action: "autoassignment=userstore" });
    const wrong = await jsonOf(
      await t.post("/validate/check", { user: "alice", realm: "r1", pass: "guess" + hotp(0) }),
    );
    assert.equal(wrong.body.result.value, false);
    assert.equal((await findTokenBySerial(t.deps, "FREE1"))!.owner, undefined);
    // a limit the assignment would break refuses it, and the token stays free
    await savePolicy(t.deps, "limit", { scope: "enrollment", action: "max_token_per_user=0" });
    const limited = await jsonOf(
      await t.post("/validate/check", { user: "alice", realm: "r1", pass: "alicepw" + hotp(1) }),
    );
    assert.equal(limited.status, 403);
    assert.equal(limited.body.result.error.code, 303);
    assert.equal((await findTokenBySerial(t.deps, "FREE1"))!.owner, undefined);
    await savePolicy(t.deps, "limit", { scope: "enrollment", action: "max_token_per_user=5" });
    const right = await jsonOf(
      await t.post("/validate/check", { user: "alice", realm: "r1", pass: "alicepw" + hotp(2) }),
    );
    assert.equal(right.body.result.value, true);
    assert.equal(right.body.detail.serial, "FREE1");
    assert.equal((await findTokenBySerial(t.deps, "FREE1"))!.owner!.login, "alice");
    await t.close();
  },
);

// ---------------------------------------------------------------------------
// yubikey_access_code: configuration for enrollment clients

actionTest(
  "enrollment",
  "yubikey_access_code",
  "an enrollment client reads the access code for a user through /policy/check",
  async () => {
    const t = await appWithUsers();
    const query = "scope=enrollment&action=yubikey_access_code&user=alice&realm=r1&client=10.0.0.1";
    const before = ok(await admin(t, "GET", `/policy/check?${query}`));
    assert.equal(before.body.result.value.allowed, false);
    await savePolicy(t.deps, "yk", {
      scope: "enrollment",
      action: "yubikey_access_code=0a0b0c0d0e0f",
      realm: "r1",
    });
    const after = ok(await admin(t, "GET", `/policy/check?${query}`));
    assert.equal(after.body.result.value.allowed, true);
    const matched = after.body.result.value.policy as { name: string; action: Json }[];
    assert.deepEqual(matched.map((p) => [p.name, p.action.yubikey_access_code]), [[
      "yk",
      "0a0b0c0d0e0f",
    ]]);
    // another realm's users do not get it
    const other = ok(
      await admin(t, "GET", `/policy/check?${query.replace("realm=r1", "realm=r2")}`),
    );
    assert.equal(other.body.result.value.allowed, false);
    await t.close();
  },
);
