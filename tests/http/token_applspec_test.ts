/**
 * The `applspec` token over HTTP (spec 14 §6): enrolment with a required
 * `service_id`, the password given or generated (`applspec.length`,
 * `applspec.contents`), and `/validate/check` that considers the token only when
 * the request names its `service_id` (case-insensitively).
 */
import assert from "node:assert/strict";
import { appWithAlice, check, enrolOk, failcount, init, listed } from "./_challenge_types.ts";
import { jsonOf, type TestApp } from "../test_app.ts";
import { hotp } from "../fixtures/tokens.ts";

async function count(t: TestApp): Promise<number> {
  return (await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count;
}

async function setup() {
  const t = await appWithAlice();
  const body = await enrolOk(t, {
    type: "applspec",
    otpkey: "S3cret!",
    service_id: "mail",
    pin: "pin",
    user: "alice",
    realm: "realm1",
  });
  return { t, serial: body.detail.serial as string, body };
}

Deno.test("applspec: enrolment needs service_id; the password is given or generated", async () => {
  const { t, serial, body } = await setup();
  assert.match(serial, /^ASPW/);
  assert.equal(body.detail.password, "S3cret!");
  const token = await listed(t, serial);
  assert.equal(token.tokentype, "applspec");
  assert.equal(token.otplen, 7);
  assert.equal(token.info.service_id, "mail");

  for (
    const [params, message] of [
      [{}, "ERR905: Missing parameter: service_id"],
      [{ service_id: "" }, "ERR905: Missing parameter: service_id"],
      [
        { service_id: "mail", "applspec.contents": "x" },
        'ERR905: Cannot parse parameter "applspec.contents": unknown character specifier "x"',
      ],
      [
        { service_id: "mail", "applspec.length": "0" },
        'ERR905: Cannot parse parameter "applspec.length": expected 1 to 200',
      ],
    ] as const
  ) {
    const refused = await init(t, { type: "applspec", user: "alice", realm: "realm1", ...params });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.result.error.code, 905);
    assert.equal(refused.body.result.error.message, message);
  }
  assert.equal(await count(t), 1, "the refused enrolments created nothing");

  // generated: 23 characters of letters, digits and punctuation, at least one letter and digit
  const gen = await enrolOk(t, { type: "applspec", service_id: "vpn" });
  const password = gen.detail.password as string;
  assert.equal(password.length, 23);
  assert.match(password, /[A-Za-z]/);
  assert.match(password, /[0-9]/);
  assert.equal((await listed(t, gen.detail.serial)).otplen, 23);
  const own = await enrolOk(t, {
    type: "applspec",
    service_id: "vpn",
    "applspec.length": "10",
    "applspec.contents": "[ab]",
  });
  assert.match(own.detail.password, /^[ab]{10}$/);
  await t.close();
});

Deno.test("applspec: accepted only with the token's service_id", async () => {
  const { t, serial } = await setup();
  // with the service id (any case) the PIN and password authenticate
  for (const service_id of ["mail", "MAIL"]) {
    const ok = await check(t, { user: "alice", pass: "pinS3cret!", service_id });
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    assert.equal(ok.body.detail.serial, serial);
    assert.equal(ok.body.detail.type, "applspec");
  }
  // without it, or with another one, the token does not take part: nothing is counted
  for (const extra of [{}, { service_id: "vpn" }, { service_id: "" }]) {
    const res = await check(t, { user: "alice", pass: "pinS3cret!", ...extra });
    assert.equal(res.status, 200);
    assert.equal(res.body.result.value, false, JSON.stringify(res.body));
    assert.equal(res.body.detail.message, "No suitable token found for authentication.");
    const bySerial = await check(t, { serial, pass: "pinS3cret!", ...extra });
    assert.equal(bySerial.body.result.value, false, JSON.stringify(bySerial.body));
  }
  assert.equal(await failcount(t, serial), 0);
  // a wrong password with the right service is a wrong OTP value of that token
  const wrong = await check(t, { user: "alice", pass: "pinS3cret?", service_id: "mail" });
  assert.equal(wrong.body.result.value, false);
  assert.equal(wrong.body.detail.message, "wrong otp value");
  assert.equal(wrong.body.detail.serial, serial);
  assert.equal(await failcount(t, serial), 1);
  await t.close();
});

Deno.test("applspec: other types ignore service_id; the applspec token is left out beside them", async () => {
  const { t, serial } = await setup();
  const key = "3132333435363738393031323334353637383930";
  const other = await enrolOk(t, {
    type: "hotp",
    otpkey: key,
    pin: "hp",
    user: "alice",
    realm: "realm1",
  });
  const noService = await check(t, { user: "alice", pass: `hp${hotp(0, key)}` });
  assert.equal(noService.body.result.value, true, JSON.stringify(noService.body));
  assert.equal(noService.body.detail.serial, other.detail.serial);
  const withService = await check(t, {
    user: "alice",
    pass: `hp${hotp(1, key)}`,
    service_id: "mail",
  });
  assert.equal(withService.body.result.value, true, JSON.stringify(withService.body));
  // the applspec password without service_id meets only the hotp token: wrong PIN
  const res = await check(t, { user: "alice", pass: "pinS3cret!" });
  assert.equal(res.body.result.value, false);
  assert.equal(res.body.detail.message, "wrong otp pin");
  assert.equal(await failcount(t, serial), 0);
  await t.close();
});
