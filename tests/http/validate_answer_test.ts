/**
 * The `detail` of a right answer to a challenge is privacyIDEA's: `message`,
 * `serial` and `threadid` (no `type`, no `otplen`), for HOTP, TOTP, email and
 * sms tokens; a PIN+OTP success keeps its `type` and `otplen`.
 */
import assert from "node:assert/strict";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { hotp, SEED_HEX, totp } from "../fixtures/tokens.ts";
import { mailBody, startSmtpSink } from "../domain/event/_helpers.ts";
import {
  addPolicy,
  ALICE,
  appWithAlice,
  challengeOf,
  check,
  enrolOk,
  setConfig,
  startSmsSink,
} from "./_challenge_types.ts";
import { HTTP_PROVIDER } from "../../src/domain/smsgateway/mod.ts";

/** Asserts privacyIDEA's answer to a right challenge response for `serial`. */
function assertAnswered(body: Json, serial: string) {
  assert.equal(body.result.status, true, JSON.stringify(body));
  assert.equal(body.result.value, true, JSON.stringify(body));
  assert.equal(body.result.authentication, "ACCEPT");
  assert.deepEqual(Object.keys(body.detail).sort(), ["message", "serial", "threadid"]);
  assert.equal(body.detail.message, "Found matching challenge");
  assert.equal(body.detail.serial, serial);
}

async function answer(t: TestApp, pass: string, code: () => string): Promise<Json> {
  const { tid } = challengeOf((await check(t, { user: "alice", pass })).body);
  const res = await check(t, { user: "alice", transaction_id: tid, pass: code() });
  assert.equal(res.status, 200);
  return res.body;
}

Deno.test("challenge answer detail: HOTP and TOTP answer message and serial only", async () => {
  const t = await appWithAlice();
  await addPolicy(t, "cr", { scope: "authentication", action: "challenge_response=hotp totp" });
  const h = await enrolOk(t, {
    type: "hotp",
    otpkey: SEED_HEX,
    pin: "hpin",
    user: "alice",
    realm: "realm1",
  });
  assertAnswered(await answer(t, "hpin", () => hotp(0)), h.detail.serial);
  // a PIN+OTP success still names type and otplen, as privacyIDEA's does
  const direct = await check(t, { user: "alice", pass: "hpin" + hotp(1) });
  assert.deepEqual(Object.keys(direct.body.detail).sort(), [
    "message",
    "otplen",
    "serial",
    "threadid",
    "type",
  ]);
  assert.equal(direct.body.detail.type, "hotp");
  assert.equal(direct.body.detail.otplen, 6);
  const tt = await enrolOk(t, {
    type: "totp",
    otpkey: SEED_HEX,
    pin: "tpin",
    user: "alice",
    realm: "realm1",
  });
  assertAnswered(await answer(t, "tpin", () => totp(t.clock.now())), tt.detail.serial);
  await t.close();
});

Deno.test("challenge answer detail: email answers message and serial only", async () => {
  const t = await appWithAlice();
  const sink = startSmtpSink();
  try {
    const res = await jsonOf(
      await t.asAdmin("POST", "/smtpserver/mail", {
        body: { server: "127.0.0.1", port: String(sink.port), sender: "otp@example.com" },
      }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const e = await enrolOk(t, {
      type: "email",
      email: ALICE.email,
      "email.identifier": "mail",
      pin: "epin",
      user: "alice",
      realm: "realm1",
    });
    const body = await answer(t, "epin", () => {
      const m = mailBody(sink.mails[0].data).match(/\d{6}/);
      assert.ok(m);
      return m[0];
    });
    assertAnswered(body, e.detail.serial);
  } finally {
    sink.close();
    await t.close();
  }
});

Deno.test("challenge answer detail: sms answers message and serial only", async () => {
  const t = await appWithAlice();
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
    const s = await enrolOk(t, {
      type: "sms",
      phone: "+49 160 5550123",
      pin: "spin",
      user: "alice",
      realm: "realm1",
    });
    const body = await answer(t, "spin", () => sink.requests[0].url.searchParams.get("text")!);
    assertAnswered(body, s.detail.serial);
  } finally {
    await sink.close();
    await t.close();
  }
});
