/**
 * The `4eyes` token over HTTP (spec 14 §4): enrolment with the required realms
 * and separator, and the one-request `/validate/check` whose pass is the other
 * users' PIN+OTP values: each part is checked as a check of those tokens
 * (counter, fail counter), and every required realm needs its count of
 * distinct tokens.
 */
import assert from "node:assert/strict";
import { appWithAlice, check, enrolOk, failcount, init, listed } from "./_challenge_types.ts";
import { jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { hotp, SEED_HEX } from "../fixtures/tokens.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";

const KEY2 = "3132333435363738393031323334353637383931";

async function count(t: TestApp): Promise<number> {
  return (await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count;
}

/** alice's 4eyes token needing `need`; admins ann and ben in realm r2 with HOTP tokens. */
async function setup(need = "r2:2", separator?: string) {
  const t = await appWithAlice();
  await createUsers(t.deps, {
    realm: "r2",
    users: [{ login: "ann", password: "annpw" }, { login: "ben", password: "benpw" }],
  });
  const ann = (await enrolOk(t, {
    type: "hotp",
    otpkey: SEED_HEX,
    pin: "a1",
    user: "ann",
    realm: "r2",
  })).detail.serial as string;
  const ben = (await enrolOk(t, {
    type: "hotp",
    otpkey: KEY2,
    pin: "b2",
    user: "ben",
    realm: "r2",
  })).detail.serial as string;
  const body = await enrolOk(t, {
    type: "4eyes",
    "4eyes": need,
    ...(separator ? { separator } : {}),
    pin: "own",
    user: "alice",
    realm: "realm1",
  });
  return { t, ann, ben, serial: body.detail.serial as string };
}

Deno.test("4eyes: enrolment stores the realms and separator; bad values are refused", async () => {
  const { t, serial } = await setup("R2:2, realm1:1", "|");
  assert.match(serial, /^PI4E/);
  const token = await listed(t, serial);
  assert.equal(token.tokentype, "4eyes");
  assert.equal(token.info["4eyes"], "r2:2,realm1:1");
  assert.equal(token.info.separator, "|");
  assert.equal(token.info.tokenkind, "virtual");
  // the WebUI's object form: only selected realms
  const obj = await enrolOk(t, {
    type: "4eyes",
    "4eyes": { r2: { selected: true, count: 2 }, realm1: { selected: false, count: 1 } },
  });
  const objToken = await listed(t, obj.detail.serial);
  assert.equal(objToken.info["4eyes"], "r2:2");
  assert.equal(objToken.info.separator, " ");
  const before = await count(t);
  for (
    const [params, message] of [
      [{}, "ERR905: Missing parameter: 4eyes"],
      [{ "4eyes": "r2" }, "ERR905: Missing parameter: 4eyes"],
      [
        { "4eyes": "r2:x" },
        'ERR905: Cannot parse parameter "4eyes": expected realm:count entries, got "r2:x"',
      ],
      [
        { "4eyes": "r2:1", separator: "--" },
        "ERR905: The separator must only be one single character",
      ],
    ] as const
  ) {
    const refused = await init(t, { type: "4eyes", ...params });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.result.error.code, 905);
    assert.equal(refused.body.result.error.message, message);
  }
  assert.equal(await count(t), before, "the refused enrolments created nothing");
  await t.close();
});

Deno.test("4eyes: two admins' tokens of r2 satisfy r2:2; one is not enough", async () => {
  const { t, ann, ben, serial } = await setup();
  const one = await check(t, { user: "alice", pass: `a1${hotp(0)}` });
  assert.equal(one.status, 200);
  assert.equal(one.body.result.value, false, JSON.stringify(one.body));
  // that part was still a right check of ann's token: its OTP is used up
  assert.equal((await getTokenBySerial(t.deps, ann)).count, 1);
  // the same token twice is one token
  const twice = await check(t, { user: "alice", pass: `a1${hotp(1)} a1${hotp(2)}` });
  assert.equal(twice.body.result.value, false, JSON.stringify(twice.body));
  const ok = await check(t, { user: "alice", pass: `a1${hotp(3)} b2${hotp(0, KEY2)}` });
  assert.equal(ok.status, 200);
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.detail.serial, serial);
  assert.equal(ok.body.detail.type, "4eyes");
  assert.equal((await getTokenBySerial(t.deps, ann)).count, 4);
  assert.equal((await getTokenBySerial(t.deps, ben)).count, 1);
  await t.close();
});

Deno.test("4eyes: a wrong OTP of one part fails and raises that token's fail counter", async () => {
  const { t, ann, ben, serial } = await setup();
  const bad = await check(t, { user: "alice", pass: `a1${hotp(0)} b2000000` });
  assert.equal(bad.body.result.value, false, JSON.stringify(bad.body));
  assert.equal(bad.body.detail.message, "wrong otp value");
  assert.equal(await failcount(t, ben), 1);
  assert.equal(await failcount(t, ann), 0);
  assert.equal(await failcount(t, serial), 1, "the 4eyes token failed too");
  // a wrong PIN of a part: no fail counter of that realm's tokens (IncFailCountOnFalsePin off)
  await t.asAdmin("POST", "/system/setConfig", { body: { IncFailCountOnFalsePin: "0" } });
  const badPin = await check(t, { user: "alice", pass: `xx${hotp(1)} b2${hotp(0, KEY2)}` });
  assert.equal(badPin.body.result.value, false);
  assert.equal(await failcount(t, ann), 0);
  await t.close();
});

Deno.test("4eyes: a reused OTP is refused; a separator of the token's own", async () => {
  const { t, ann } = await setup("r2:2", "|");
  const pass = `a1${hotp(0)}|b2${hotp(0, KEY2)}`;
  const ok = await check(t, { user: "alice", pass });
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  const again = await check(t, { user: "alice", pass });
  assert.equal(again.body.result.value, false, JSON.stringify(again.body));
  assert.equal(await failcount(t, ann), 1, "the reused OTP is a wrong OTP of ann's token");
  // a space does not separate for this token
  const spaced = await check(t, { user: "alice", pass: `a1${hotp(1)} b2${hotp(1, KEY2)}` });
  assert.equal(spaced.body.result.value, false);
  await t.close();
});

Deno.test("4eyes: the token PIN starts a collection of one PIN+OTP per request", async () => {
  const { t, ann, ben, serial } = await setup();
  const start = await check(t, { user: "alice", pass: "own" });
  assert.equal(start.body.result.value, false, JSON.stringify(start.body));
  assert.equal(start.body.result.authentication, "CHALLENGE");
  const message = "Please authenticate with another token from either realm: r2.";
  assert.equal(start.body.detail.message, message);
  const tid1 = start.body.detail.transaction_id as string;
  const first = await check(t, { user: "alice", pass: `a1${hotp(0)}`, transaction_id: tid1 });
  assert.equal(first.body.result.authentication, "CHALLENGE", JSON.stringify(first.body));
  assert.equal(first.body.detail.message, message);
  const tid2 = first.body.detail.transaction_id as string;
  assert.notEqual(tid2, tid1);
  assert.equal((await getTokenBySerial(t.deps, ann)).count, 1);
  // the first transaction is used up
  const replay = await check(t, {
    user: "alice",
    pass: `b2${hotp(0, KEY2)}`,
    transaction_id: tid1,
  });
  assert.equal(replay.body.result.value, false);
  // the same token again does not count, and is a failed answer of the 4eyes token
  const failsBefore = await failcount(t, serial);
  const same = await check(t, { user: "alice", pass: `a1${hotp(1)}`, transaction_id: tid2 });
  assert.equal(same.body.result.value, false, JSON.stringify(same.body));
  assert.equal(same.body.detail.message, "Response did not match the challenge.");
  assert.equal(await failcount(t, serial), failsBefore + 1);
  const done = await check(t, { user: "alice", pass: `b2${hotp(1, KEY2)}`, transaction_id: tid2 });
  assert.equal(done.body.result.value, true, JSON.stringify(done.body));
  assert.equal(done.body.detail.serial, serial);
  assert.equal((await getTokenBySerial(t.deps, ben)).count, 2);
  await t.close();
});
