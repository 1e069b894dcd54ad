/**
 * The `tan` token over HTTP (spec 11 §8): a generated or imported list of
 * one-time codes, usable in any order, each once (also in parallel and in
 * challenge-response), stored as keyed hashes, listed as `tan.count`.
 */
import assert from "node:assert/strict";
import { hotp, SEED_HEX } from "../fixtures/tokens.ts";
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

async function setup(extra: Record<string, unknown> = {}) {
  const t = await appWithAlice();
  const body = await enrolOk(t, {
    type: "tan",
    otpkey: SEED_HEX,
    tantoken_count: "5",
    pin: "pin",
    user: "alice",
    realm: "realm1",
    ...extra,
  });
  return { t, serial: body.detail.serial as string, body };
}

Deno.test("tan: enrolment lists the TANs (HOTP 0…n−1), stores keyed hashes, GET /token/ shows tan.count", async () => {
  const { t, serial, body } = await setup();
  assert.match(serial, /^PITN/);
  assert.deepEqual(body.detail.otps, {
    "0": hotp(0),
    "1": hotp(1),
    "2": hotp(2),
    "3": hotp(3),
    "4": hotp(4),
  });
  assert.deepEqual(body.detail.otps["0"], "755224", "RFC 4226 vector");
  const token = await listed(t, serial);
  assert.equal(token.info["tan.count"], 5, "an integer (spec 11 §11a)");
  assert.ok(!Object.keys(token.info).some((k) => /^tan\.tan\d/.test(k)), "the hashes are hidden");
  const stored = await getTokenBySerial(t.deps, serial);
  const hashes = Object.entries(stored.info).filter(([k]) => k.startsWith("tan.tan"));
  assert.equal(hashes.length, 5);
  for (const [, e] of hashes) {
    assert.match(e.value, /^hmac256\$[0-9a-f]{32}\$[0-9a-f]{64}$/);
    assert.ok(!Object.values(body.detail.otps).some((tan) => e.value.includes(tan as string)));
  }
  assert.equal(stored.otplen, 6);
  const initRow = (await auditRows(t, "POST /token/init"))[0];
  assert.equal(initRow.token_type, "tan");
  assert.ok(!JSON.stringify(initRow).includes(hotp(3)), "no TAN in the audit log");
  await t.close();
});

Deno.test("tan: TANs work in any order, each once; wrong ones count as failures", async () => {
  const { t, serial } = await setup();
  const ok3 = await check(t, { user: "alice", pass: "pin" + hotp(3) });
  assert.equal(ok3.body.result.value, true);
  assert.equal(ok3.body.detail.message, "matching 1 tokens");
  assert.equal((await check(t, { user: "alice", pass: "pin" + hotp(0) })).body.result.value, true);
  const replay = await check(t, { user: "alice", pass: "pin" + hotp(3) });
  assert.equal(replay.body.result.value, false);
  assert.equal(replay.body.detail.message, "wrong otp value");
  assert.equal(await failcount(t, serial), 1);
  const wrong = await check(t, { user: "alice", pass: "pin123456" });
  assert.equal(wrong.body.result.value, false);
  assert.equal(await failcount(t, serial), 2);
  assert.equal(
    (await check(t, { user: "alice", pass: "nope" + hotp(1) })).body.detail.message,
    "wrong otp pin",
  );
  assert.equal((await listed(t, serial)).info["tan.count"], 3);
  await t.close();
});

Deno.test("tan: the same TAN sent in parallel is accepted once", async () => {
  const { t, serial } = await setup();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "100" } });
  assert.equal(await acceptedOfParallel(t, { user: "alice", pass: "pin" + hotp(2) }, 15), 1);
  assert.equal((await listed(t, serial)).info["tan.count"], 4);
  await t.close();
});

Deno.test("tan: challenge-response (policy challenge_response): the transaction is answered once", async () => {
  const { t, serial } = await setup();
  await addPolicy(t, "cr", { scope: "authentication", action: "challenge_response=tan" });
  const res = await check(t, { user: "alice", pass: "pin" });
  const { tid, entry } = challengeOf(res.body);
  assert.equal(entry.type, "tan");
  assert.equal(res.body.detail.message, "please enter otp: ");
  const wrong = await check(t, { user: "alice", transaction_id: tid, pass: "000000" });
  assert.equal(wrong.body.result.value, false);
  assert.equal(await failcount(t, serial), 1);
  assert.equal(
    await acceptedOfParallel(t, { user: "alice", transaction_id: tid, pass: hotp(4) }),
    1,
  );
  // the transaction is gone and the TAN is used
  const again = await check(t, { user: "alice", transaction_id: tid, pass: hotp(1) });
  assert.equal(again.body.result.value, false);
  assert.equal((await check(t, { user: "alice", pass: "pin" + hotp(4) })).body.result.value, false);
  await t.close();
});

Deno.test("tan: imported TANs, tantoken_count policy, re-enrolment replaces the list, bad input", async () => {
  const t = await appWithAlice();
  const imported = await enrolOk(t, { type: "tan", tans: "abc123 def456\nghi789", pin: "p" });
  const serial = imported.detail.serial;
  assert.equal(imported.detail.otps, undefined);
  assert.equal((await listed(t, serial)).info["tan.count"], 3);
  assert.equal((await check(t, { serial, pass: "pdef456" })).body.result.value, true);
  // a re-enrolment of the serial replaces the old list
  await enrolOk(t, { type: "tan", serial, tans: "111111 222222" });
  assert.equal((await listed(t, serial)).info["tan.count"], 2);
  assert.equal((await check(t, { serial, pass: "pabc123" })).body.result.value, false);

  for (
    const body of [
      { type: "tan", tans: "12 345" },
      { type: "tan", tans: "12;34" },
      { type: "tan", tantoken_count: "0" },
    ]
  ) {
    assert.equal((await init(t, body)).status, 400, JSON.stringify(body));
  }

  await addPolicy(t, "tancount", { scope: "enrollment", action: "tantoken_count=3" });
  const generated = await enrolOk(t, { type: "tan", tantoken_count: "50" });
  assert.equal(Object.keys(generated.detail.otps).length, 3, "the policy wins");
  await t.close();
});
