/**
 * The `daypassword` token over HTTP (spec 11 §11): the code of the current
 * step (1d by default) with the spec's vectors, valid for the whole step by
 * design, rejected in the next step; challenge-response answered once.
 */
import assert from "node:assert/strict";
import { hotpAt } from "../../src/lib/otp.ts";
import { fromHex } from "../../src/lib/random.ts";
import { SEED_HEX } from "../fixtures/tokens.ts";
import {
  acceptedOfParallel,
  addPolicy,
  appWithAlice,
  auditRows,
  challengeOf,
  check,
  enrolOk,
  failcount,
  init,
  listed,
} from "./_challenge_types.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";

// spec 11 §13: key "12345678901234567890", SHA-1, 6 digits, 1d: 1700000000 → 523690
const T0 = 1700000000_000;

async function setup(extra: Record<string, unknown> = {}) {
  const t = await appWithAlice();
  t.clock.set(T0);
  const body = await enrolOk(t, {
    type: "daypassword",
    otpkey: SEED_HEX,
    pin: "pin",
    user: "alice",
    realm: "realm1",
    ...extra,
  });
  return { t, serial: body.detail.serial as string, body };
}

Deno.test("daypassword: enrolment answers otpauth://daypassword with the period; tokeninfo timeStep", async () => {
  const { t, serial, body } = await setup();
  assert.match(serial, /^DYPW/);
  const url: string = body.detail.googleurl.value;
  assert.match(url, /^otpauth:\/\/daypassword\//);
  assert.match(
    url,
    /\?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&period=86400&digits=6&creator=privacyidea&issuer=privacyIDEA&serial=/,
  );
  const token = await listed(t, serial);
  assert.equal(token.info.timeStep, "1d");
  assert.equal(token.info.hashlib, "sha1");
  assert.match((await getTokenBySerial(t.deps, serial)).keyEnc, /^g1:/);
  const hourly = await enrolOk(t, { type: "daypassword", timeStep: "1h", hashlib: "sha256" });
  assert.match(hourly.detail.googleurl.value, /algorithm=SHA256&period=3600&/);
  assert.equal((await init(t, { type: "daypassword", timeStep: "soon" })).status, 400);
  await t.close();
});

Deno.test("daypassword: the spec's code is valid the whole day, not the next; wrong codes count", async () => {
  const { t, serial } = await setup();
  const ok = await check(t, { user: "alice", pass: "pin523690" });
  assert.equal(ok.body.result.value, true);
  assert.equal(ok.body.detail.message, "matching 1 tokens");
  // (read while the admin's JWT is fresh: the clock jumps a day below)
  const rows = await auditRows(t, "POST /validate/check");
  assert.equal(rows[0].token_type, "daypassword");
  assert.equal(rows[0].success, 1);
  // the same code again later that day: a password of the day is reusable by design
  t.clock.set(1700006399_000);
  assert.equal((await check(t, { user: "alice", pass: "pin523690" })).body.result.value, true);
  const wrong = await check(t, { user: "alice", pass: "pin123456" });
  assert.equal(wrong.body.result.value, false);
  assert.equal(wrong.body.detail.message, "wrong otp value");
  assert.equal(await failcount(t, serial), 1);
  // the next day (UTC) the code is old
  t.clock.set(Math.ceil(T0 / 86_400_000) * 86_400_000);
  const stale = await check(t, { user: "alice", pass: "pin523690" });
  assert.equal(stale.body.result.value, false);
  const step = Math.floor(t.clock.now() / 86_400_000);
  const today = hotpAt(fromHex(SEED_HEX), step, 6);
  assert.equal((await check(t, { user: "alice", pass: "pin" + today })).body.result.value, true);
  await t.close();
});

Deno.test("daypassword: 1h step gives the spec's vector; the fail counter locks at maxfail", async () => {
  const { t, serial } = await setup({ timeStep: "1h" });
  assert.equal((await check(t, { serial, pass: "pin475782" })).body.result.value, true);
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "2" } });
  await check(t, { serial, pass: "pin000000" });
  await check(t, { serial, pass: "pin000000" });
  const locked = await check(t, { serial, pass: "pin475782" });
  assert.equal(locked.body.result.value, false);
  assert.equal(locked.body.detail.message, "Failcounter exceeded");
  await t.close();
});

Deno.test("daypassword: challenge-response (policy challenge_response): the transaction is answered once", async () => {
  const { t, serial } = await setup();
  await addPolicy(t, "cr", { scope: "authentication", action: "challenge_response=daypassword" });
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "100" } });
  const { tid, entry } = challengeOf((await check(t, { user: "alice", pass: "pin" })).body);
  assert.equal(entry.type, "daypassword");
  const wrong = await check(t, { user: "alice", transaction_id: tid, pass: "000000" });
  assert.equal(wrong.body.detail.message, "Response did not match the challenge.");
  assert.equal(
    await acceptedOfParallel(t, { user: "alice", transaction_id: tid, pass: "523690" }),
    1,
  );
  const replay = await check(t, { user: "alice", transaction_id: tid, pass: "523690" });
  assert.equal(replay.body.result.value, false);
  await t.close();
});

Deno.test("daypassword: admin policies set the step, hash and length and may force a server key", async () => {
  const t = await appWithAlice();
  await addPolicy(t, "dp", {
    scope: "admin",
    action:
      "*, daypassword_timestep=12h, daypassword_hashlib=sha256, daypassword_otplen=8, daypassword_force_server_generate",
  });
  const body = await enrolOk(t, { type: "daypassword", otpkey: SEED_HEX, timeStep: "1d" });
  const token = await listed(t, body.detail.serial);
  assert.equal(token.info.timeStep, "12h");
  assert.equal(token.info.hashlib, "sha256");
  assert.equal(token.otplen, 8);
  assert.notEqual(body.detail.otpkey.value, `seed://${SEED_HEX}`, "the server made the key");
  await t.close();
});
