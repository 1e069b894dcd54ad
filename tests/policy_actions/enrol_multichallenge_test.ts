/**
 * `enroll_via_multichallenge` for the OTP types over HTTP (spec 15 §3.8,
 * spec 11 §1.4): HOTP, TOTP and daypassword enrolled with a QR code after a
 * login, email and SMS enrolled by asking for the new address (checked by
 * `email_validation`), `_text`, `_optional` with `cancel_enrollment`, the
 * token limits and a user who already has a token of the type.
 */
import assert from "node:assert/strict";
import { actionTest } from "./_registry.ts";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import {
  addPolicy,
  ALICE,
  appWithAlice,
  auditRows,
  challengeOf,
  check,
  enrolOk,
  listed,
  setConfig,
  startSmsSink,
} from "../http/_challenge_types.ts";
import { mailBody, startSmtpSink } from "../domain/event/_helpers.ts";
import { base32Decode, hotpAt, type OtpHash, totpAt } from "../../src/lib/otp.ts";
import { HTTP_PROVIDER } from "../../src/domain/smsgateway/mod.ts";

const PIN = "alice-pin";
const OATH_TEXT = "Please scan the QR code and enter the OTP value!";

/** alice with an spass token (PIN only) and, unless `auth` is null, the enrolment policy. */
async function setup(auth: Record<string, unknown> | null): Promise<TestApp> {
  const t = await appWithAlice();
  if (auth !== null) await addPolicy(t, "evm", { scope: "authentication", action: auth });
  await enrolOk(t, { type: "spass", user: "alice", realm: "realm1", pin: PIN });
  return t;
}

async function login(t: TestApp, extra: Record<string, unknown> = {}) {
  return await check(t, { user: "alice", realm: "realm1", pass: PIN, ...extra });
}

async function tokensOfAlice(t: TestApp): Promise<Json[]> {
  const res = await jsonOf(await t.asAdmin("GET", "/token/", { query: { user: "alice" } }));
  assert.equal(res.status, 200);
  return res.body.result.value.tokens;
}

/** The key, digits, hash and period of an otpauth:// link. */
function linkParts(link: string) {
  const url = new URL(link);
  const q = url.searchParams;
  return {
    key: base32Decode(q.get("secret")!),
    digits: Number(q.get("digits")),
    hash: (q.get("algorithm")?.toLowerCase() ?? "sha1") as OtpHash,
    period: q.has("period") ? Number(q.get("period")) : undefined,
    q,
  };
}

function assertPng(image: string) {
  assert.match(image, /^data:image\/png;base64,/);
  const bytes = Uint8Array.from(atob(image.split(",")[1]), (c) => c.charCodeAt(0));
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
}

actionTest(
  "authentication",
  "enroll_via_multichallenge",
  "HOTP: a login answers with the QR code of a new HOTP token; its OTP completes login and enrolment",
  async () => {
    // baseline: without the policy the login succeeds and no token is made
    let t = await setup(null);
    try {
      const res = await login(t);
      assert.equal(res.body.result.value, true);
      assert.equal(res.body.result.authentication, "ACCEPT");
      assert.equal((await tokensOfAlice(t)).length, 1);
    } finally {
      await t.close();
    }
    t = await setup({ enroll_via_multichallenge: "HOTP" });
    try {
      const res = await login(t);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const { tid, entry } = challengeOf(res.body);
      const detail = res.body.detail;
      assert.deepEqual(Object.keys(entry).sort(), [
        "client_mode",
        "image",
        "link",
        "message",
        "serial",
        "transaction_id",
        "type",
      ]);
      const serial = entry.serial as string;
      assert.match(serial, /^OATH/);
      assert.equal(entry.type, "hotp");
      assert.equal(entry.client_mode, "interactive");
      assert.equal(entry.message, OATH_TEXT);
      assertPng(entry.image);
      assert.equal(
        entry.link.replace(/secret=[A-Z2-7]+/, "secret=S"),
        `otpauth://hotp/${serial}?secret=S&counter=1&digits=6&creator=privacyidea` +
          `&issuer=privacyIDEA&serial=${serial}`,
      );
      // the entry's keys also at the top, as privacyIDEA merges them
      for (const key of ["transaction_id", "image", "link", "client_mode", "serial", "type"]) {
        assert.equal(detail[key], entry[key], key);
      }
      assert.equal(detail.message, OATH_TEXT);
      assert.deepEqual(detail.messages, [OATH_TEXT]);
      assert.deepEqual(detail.transaction_ids, [tid]);
      assert.equal(detail.enroll_via_multichallenge, true);
      assert.equal(detail.enroll_via_multichallenge_optional, false);
      const hotp = (await tokensOfAlice(t)).find((x) => x.serial === serial);
      assert.equal(hotp?.tokentype, "hotp");
      assert.equal(hotp?.active, true);
      // the audit names the new token
      const row = (await auditRows(t, "POST /validate/check"))[0];
      assert.equal(row.serial, serial);

      const { key } = linkParts(entry.link);
      const wrong = await check(t, { user: "alice", transaction_id: tid, pass: "000000" });
      assert.equal(wrong.body.result.value, false);
      const done = await check(t, { user: "alice", transaction_id: tid, pass: hotpAt(key, 0) });
      assert.equal(done.body.result.value, true, JSON.stringify(done.body));
      assert.equal(done.body.detail.message, "Found matching challenge");
      assert.equal(done.body.detail.serial, serial);
      // alice has an HOTP token now: the next login is a plain success
      const next = await login(t);
      assert.equal(next.body.result.value, true, JSON.stringify(next.body));
      assert.equal((await tokensOfAlice(t)).filter((x) => x.tokentype === "hotp").length, 1);
      // and the new token logs in with its OTP
      const own = await check(t, { user: "alice", pass: hotpAt(key, 1) });
      assert.equal(own.body.result.value, true);
    } finally {
      await t.close();
    }
  },
);

Deno.test("enroll_via_multichallenge=TOTP follows the user-scope totp settings and the enrolment label policies", async () => {
  const t = await setup({ enroll_via_multichallenge: "totp" });
  try {
    await addPolicy(t, "own", {
      scope: "user",
      action: { totp_otplen: "8", totp_hashlib: "sha256", totp_timestep: "60" },
    });
    await addPolicy(t, "label", {
      scope: "enrollment",
      action: { tokenissuer: "Corp", tokenlabel: "{user}@{realm}" },
    });
    const res = await login(t);
    const { tid, entry } = challengeOf(res.body);
    assert.equal(entry.type, "totp");
    const { key, digits, hash, period, q } = linkParts(entry.link);
    assert.ok(entry.link.startsWith("otpauth://totp/alice%40realm1?"), entry.link);
    assert.deepEqual([digits, hash, period, q.get("issuer")], [8, "sha256", 60, "Corp"]);
    const otp = totpAt(key, t.clock.now() / 1000, { step: 60, digits: 8, hash: "sha256" });
    const done = await check(t, { user: "alice", transaction_id: tid, pass: otp });
    assert.equal(done.body.result.value, true, JSON.stringify(done.body));
    const token = await listed(t, entry.serial);
    assert.equal(token.otplen, 8);
    assert.equal(token.info.hashlib, "sha256");
    assert.equal(token.info.timeStep, "60");
  } finally {
    await t.close();
  }
});

Deno.test("enroll_via_multichallenge=DAYPASSWORD enrols a daypassword token whose code answers", async () => {
  const t = await setup({ enroll_via_multichallenge: "DAYPASSWORD" });
  try {
    const { tid, entry } = challengeOf((await login(t)).body);
    assert.equal(entry.type, "daypassword");
    assertPng(entry.image);
    const { key, digits, hash } = linkParts(entry.link);
    const step = Math.floor(t.clock.now() / 1000 / 86400);
    const done = await check(t, {
      user: "alice",
      transaction_id: tid,
      pass: hotpAt(key, step, digits, hash),
    });
    assert.equal(done.body.result.value, true, JSON.stringify(done.body));
  } finally {
    await t.close();
  }
});

actionTest(
  "authentication",
  "enroll_via_multichallenge_text",
  "the HOTP enrolment challenge says the policy's text",
  async () => {
    const t = await setup({
      enroll_via_multichallenge: "hotp",
      enroll_via_multichallenge_text: "Scan this with your app",
    });
    try {
      const { entry } = challengeOf((await login(t)).body);
      assert.equal(entry.message, "Scan this with your app");
      assert.equal(entry.type, "hotp");
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "authentication",
  "enroll_via_multichallenge_optional",
  "cancel_enrollment drops the new HOTP token only when the enrolment is optional",
  async () => {
    let t = await setup({ enroll_via_multichallenge: "hotp" });
    try {
      const res = await login(t);
      const { tid, entry } = challengeOf(res.body);
      const cancel = await login(t, { cancel_enrollment: "true", transaction_id: tid });
      assert.equal(cancel.body.result.value, false);
      assert.equal(cancel.body.detail.message, "Failed to cancel enrollment via multichallenge");
      assert.ok((await tokensOfAlice(t)).some((x) => x.serial === entry.serial));
    } finally {
      await t.close();
    }
    t = await setup({
      enroll_via_multichallenge: "hotp",
      enroll_via_multichallenge_optional: true,
    });
    try {
      const res = await login(t);
      assert.equal(res.body.detail.enroll_via_multichallenge_optional, true);
      const { tid, entry } = challengeOf(res.body);
      const cancel = await login(t, { cancel_enrollment: "true", transaction_id: tid });
      assert.equal(cancel.body.result.value, true, JSON.stringify(cancel.body));
      assert.equal(cancel.body.detail.message, "Cancelled enrollment via multichallenge");
      assert.ok(!(await tokensOfAlice(t)).some((x) => x.serial === entry.serial));
      // the transaction is used up: its OTP no longer answers
      const late = await check(t, { user: "alice", transaction_id: tid, pass: "123456" });
      assert.equal(late.body.result.value, false);
    } finally {
      await t.close();
    }
  },
);

Deno.test("enroll_via_multichallenge: a token limit keeps the plain success (the reason goes to the audit); a user with a token of the type is not asked", async () => {
  const t = await setup({ enroll_via_multichallenge: "HOTP" });
  try {
    await addPolicy(t, "limit", { scope: "enrollment", action: { max_token_per_user: "1" } });
    const limited = await login(t);
    assert.equal(limited.body.result.value, true, JSON.stringify(limited.body));
    assert.equal(limited.body.result.authentication, "ACCEPT");
    assert.equal((await tokensOfAlice(t)).length, 1);
    const row = (await auditRows(t, "POST /validate/check"))[0];
    assert.equal(row.info, "matching 1 tokens (The number of tokens for this user is limited!)");

    await jsonOf(await t.asAdmin("DELETE", "/policy/limit"));
    await enrolOk(t, { type: "hotp", genkey: "1", user: "alice", realm: "realm1" });
    const has = await login(t);
    assert.equal(has.body.result.value, true, JSON.stringify(has.body));
    assert.equal((await tokensOfAlice(t)).length, 2);
  } finally {
    await t.close();
  }
});

// --- email ------------------------------------------------------------------------------------

/** An SMTP sink and the system's SMTP definition for email tokens. */
async function withMail(t: TestApp) {
  const sink = startSmtpSink();
  const res = await jsonOf(
    await t.asAdmin("POST", "/smtpserver/mail", {
      body: { server: "127.0.0.1", port: String(sink.port), sender: "otp@example.com" },
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  await setConfig(t, { "email.identifier": "mail" });
  return sink;
}

Deno.test("enroll_via_multichallenge=EMAIL: the login asks for an address, the code goes there, and it completes the login", async () => {
  const t = await setup({ enroll_via_multichallenge: "EMAIL" });
  const sink = await withMail(t);
  try {
    const first = await login(t);
    const { tid, entry } = challengeOf(first.body);
    assert.deepEqual(entry, {
      transaction_id: tid,
      image: null,
      client_mode: "interactive",
      serial: entry.serial,
      type: "email",
      message: "Please enter your new email address!",
    });
    assert.equal(first.body.detail.image, null);
    assert.equal("messages" in first.body.detail, false);
    assert.equal(first.body.detail.enroll_via_multichallenge, true);
    assert.equal(sink.mails.length, 0, "nothing is sent before the address is known");
    const before = await listed(t, entry.serial);
    assert.equal(before.info.dynamic_email, "True");

    const second = await check(t, { user: "alice", transaction_id: tid, pass: "new@example.org" });
    const next = challengeOf(second.body);
    assert.notEqual(next.tid, tid);
    assert.equal(next.entry.serial, entry.serial);
    assert.equal(second.body.detail.message, "Enter the OTP from the Email");
    assert.equal(sink.mails.length, 1);
    assert.deepEqual(sink.mails[0].to, ["new@example.org"]);
    const token = await listed(t, entry.serial);
    assert.equal(token.info.email, "new@example.org");
    assert.equal(token.info.dynamic_email, undefined);
    // the first transaction is used up
    const replay = await check(t, { user: "alice", transaction_id: tid, pass: "x@example.org" });
    assert.equal(replay.body.result.value, false);

    const code = mailBody(sink.mails[0].data).match(/\d{6}/)![0];
    const done = await check(t, { user: "alice", transaction_id: next.tid, pass: code });
    assert.equal(done.body.result.value, true, JSON.stringify(done.body));
    assert.equal(done.body.detail.message, "Found matching challenge");
  } finally {
    sink.close();
    await t.close();
  }
});

Deno.test("enroll_via_multichallenge=EMAIL: an invalid address deletes the new token with privacyIDEA's error; the next login asks again", async () => {
  const t = await setup({ enroll_via_multichallenge: "email" });
  const sink = await withMail(t);
  try {
    const { tid, entry } = challengeOf((await login(t)).body);
    const bad = await check(t, { user: "alice", transaction_id: tid, pass: "no address" });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.result.error.code, 401);
    assert.equal(bad.body.result.error.message, "ERR401: The email address is not valid!");
    assert.ok(!(await tokensOfAlice(t)).some((x) => x.serial === entry.serial));
    assert.equal(sink.mails.length, 0);
    const again = challengeOf((await login(t)).body);
    assert.notEqual(again.entry.serial, entry.serial);
  } finally {
    sink.close();
    await t.close();
  }
});

actionTest(
  "enrollment",
  "email_validation",
  "the address of an email enrolment is checked by the named validator; one Tessera lacks refuses it",
  async () => {
    const t = await setup({ enroll_via_multichallenge: "email" });
    const sink = await withMail(t);
    try {
      // baseline: privacyIDEA's own validator (the one module Tessera has), also when named
      let { tid } = challengeOf((await login(t)).body);
      const ok = await check(t, { user: "alice", transaction_id: tid, pass: "a.b@example.org" });
      assert.equal(ok.body.result.authentication, "CHALLENGE", JSON.stringify(ok.body));
      await jsonOf(await t.asAdmin("DELETE", `/token/${ok.body.detail.serial}`));
      await addPolicy(t, "val", {
        scope: "enrollment",
        action: { email_validation: "privacyidea.lib.utils.emailvalidation" },
      });
      ({ tid } = challengeOf((await login(t)).body));
      // its rule: a top-level domain of 2 to 4 characters
      const bad = await check(t, { user: "alice", transaction_id: tid, pass: "a@example.museum" });
      assert.equal(bad.body.result.error.message, "ERR401: The email address is not valid!");

      await addPolicy(t, "val", {
        scope: "enrollment",
        action: { email_validation: "mycompany.mailcheck" },
      });
      const opened = challengeOf((await login(t)).body);
      const refused = await check(t, {
        user: "alice",
        transaction_id: opened.tid,
        pass: "a.b@example.org",
      });
      assert.equal(refused.status, 403);
      assert.equal(
        refused.body.result.error.message,
        'The policy action "email_validation" names an unknown validator: "mycompany.mailcheck"',
      );
      // nothing changed: the token still waits for its address
      const waiting = await listed(t, opened.entry.serial);
      assert.equal(waiting.info.dynamic_email, "True");
      assert.equal(sink.mails.length, 1);
    } finally {
      sink.close();
      await t.close();
    }
  },
);

// --- sms --------------------------------------------------------------------------------------

Deno.test("enroll_via_multichallenge=SMS: the login asks for a phone number, the code goes there, and it completes the login; a bad number is refused", async () => {
  const t = await setup({ enroll_via_multichallenge: "SMS" });
  const sink = startSmsSink();
  try {
    const gw = await jsonOf(
      await t.asAdmin("POST", "/smsgateway", {
        body: {
          name: "gw",
          module: HTTP_PROVIDER,
          "option.URL": sink.url,
          "option.HTTP_METHOD": "GET",
          "option.to": "{phone}",
          "option.text": "{otp}",
          "option.RETURN_SUCCESS": "SENT",
        },
      }),
    );
    assert.equal(gw.status, 200, JSON.stringify(gw.body));
    await setConfig(t, { "sms.identifier": "gw" });
    const { tid, entry } = challengeOf((await login(t)).body);
    assert.equal(entry.message, "Please enter your new phone number!");
    assert.equal(entry.image, null);
    assert.equal(sink.requests.length, 0);
    assert.equal((await listed(t, entry.serial)).info.dynamic_phone, "True");
    assert.notEqual(ALICE.mobile, "+49 160 5550199");

    const second = await check(t, { user: "alice", transaction_id: tid, pass: "+49 160 5550199" });
    const next = challengeOf(second.body);
    assert.equal(second.body.detail.message, "Enter the OTP from the SMS:");
    assert.equal(sink.requests.length, 1);
    assert.equal(sink.requests[0].url.searchParams.get("to"), "+49 160 5550199");
    const code = sink.requests[0].url.searchParams.get("text")!;
    const done = await check(t, { user: "alice", transaction_id: next.tid, pass: code });
    assert.equal(done.body.result.value, true, JSON.stringify(done.body));
    const token = await listed(t, entry.serial);
    assert.equal(token.info.phone, "+49 160 5550199");
    assert.equal(token.info.dynamic_phone, undefined);
  } finally {
    await sink.close();
    await t.close();
  }
  const u = await setup({ enroll_via_multichallenge: "sms" });
  try {
    const { tid, entry } = challengeOf((await login(u)).body);
    const bad = await check(u, { user: "alice", transaction_id: tid, pass: "call me" });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.result.error.message, "ERR401: The phone number is not valid!");
    assert.ok(!(await tokensOfAlice(u)).some((x) => x.serial === entry.serial));
  } finally {
    await u.close();
  }
});
