/**
 * The `motp` token over HTTP (spec 14 §2): enrolment with the mOTP PIN (required,
 * stored encrypted, never listed), the spec's vectors at /validate/check with the
 * token PIN in front, the ±2·count_window step search, replay refused, and a
 * client-sent `initTime` ignored.
 */
import assert from "node:assert/strict";
import { appWithAlice, check, enrolOk, init, listed } from "./_challenge_types.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { jsonOf } from "../test_app.ts";
import { decryptSecretText } from "../../src/lib/crypto.ts";

// spec 14 §2.3: key 0123456789abcdef, mOTP PIN 6666, t = 129612120 (10 s steps) → 6ed4e4
const T_VECTOR = 129612120 * 10_000;

async function setup() {
  const t = await appWithAlice();
  t.clock.set(T_VECTOR);
  const body = await enrolOk(t, {
    type: "motp",
    otpkey: "0123456789abcdef",
    motppin: "6666",
    pin: "pin",
    user: "alice",
    realm: "realm1",
  });
  return { t, serial: body.detail.serial as string, body };
}

Deno.test("motp: enrolment needs motppin, keeps it encrypted and never lists it", async () => {
  const { t, serial, body } = await setup();
  assert.match(serial, /^PIMO/);
  assert.equal(
    body.detail.motpurl.value,
    "motp://privacyidea:mylabel?secret=0123456789abcdef",
  );
  const token = await listed(t, serial);
  assert.equal(token.tokentype, "motp");
  assert.equal(token.info.motppin, undefined);
  assert.equal(token.info["motppin.type"], undefined);
  const stored = (await getTokenBySerial(t.deps, serial)).info.motppin;
  assert.equal(stored.type, "password");
  assert.match(stored.value, /^g1:/);
  assert.equal(decryptSecretText(t.deps.keys.token, stored.value), "6666");
  assert.equal((await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count, 1);

  const missing = await init(t, { type: "motp", otpkey: "0123456789abcdef" });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.result.error.code, 905);
  assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: motppin");
  assert.equal((await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count, 1);

  // without otpkey a 16-byte key (32 hex characters) is generated
  const gen = await enrolOk(t, { type: "motp", motppin: "1", user: "alice", realm: "realm1" });
  assert.match(gen.detail.motpurl.value, /secret=[0-9a-f]{32}$/);
  await t.close();
});

Deno.test("motp: the spec's vectors authenticate once; a wrong token PIN fails", async () => {
  const { t, serial } = await setup();
  const ok = await check(t, { user: "alice", pass: "pin6ed4e4" });
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.detail.serial, serial);
  assert.equal((await getTokenBySerial(t.deps, serial)).count, 129612120);
  // replay of the same value
  assert.equal((await check(t, { user: "alice", pass: "pin6ed4e4" })).body.result.value, false);
  // the next step's value (spec vector) is accepted
  t.clock.set(T_VECTOR + 10_000);
  assert.equal((await check(t, { user: "alice", pass: "pin502a59" })).body.result.value, true);
  // wrong token PIN
  t.clock.set(T_VECTOR + 100_000);
  assert.equal((await check(t, { serial, pass: "pinx6ed4e4" })).body.result.value, false);
  await t.close();
});

Deno.test("motp: own vector; steps from now−20 to now+19; initTime is ignored", async () => {
  const t = await appWithAlice();
  const body = await enrolOk(t, {
    type: "motp",
    otpkey: "909a4d4ba980b2c6",
    motppin: "1234",
    pin: "",
  });
  const serial = body.detail.serial as string;
  // 05cdc7 is step 170000000: accepted up to 20 steps later, not 21
  t.clock.set(1700000210_000);
  const far = await check(t, { serial, pass: "05cdc7", initTime: "170000000" });
  assert.equal(far.body.result.value, false, "a client-sent initTime does not move the window");
  t.clock.set(1700000200_000);
  assert.equal((await check(t, { serial, pass: "05cdc7" })).body.result.value, true);
  // 7684c6 (step 170000001) is accepted from 19 steps before, not 20
  t.clock.set(1699999810_000);
  assert.equal((await check(t, { serial, pass: "7684c6" })).body.result.value, false);
  t.clock.set(1699999820_000);
  assert.equal((await check(t, { serial, pass: "7684c6" })).body.result.value, true);
  await t.close();
});
