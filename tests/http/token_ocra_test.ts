/**
 * The `ocra` token over HTTP (spec 14 §3): enrolment with a suite (default, RFC 6287
 * suites, unusable ones refused), the PIN alone starts a challenge without a
 * challenge_response policy (also /validate/triggerchallenge), and the RFC 6287 appendix
 * responses answer it once. The server's random source is fixed during a trigger so the
 * question is an appendix question.
 */
import assert from "node:assert/strict";
import {
  appWithAlice,
  challengeOf,
  check,
  enrolOk,
  failcount,
  init,
  listed,
} from "./_challenge_types.ts";
import { jsonOf, type TestApp } from "../test_app.ts";
import type { Random } from "../../src/lib/random.ts";

// RFC 6287 appendix C: key "12345678901234567890"
const KEY20_HEX = "3132333435363738393031323334353637383930";
const KEY32_HEX = "3132333435363738393031323334353637383930313233343536373839303132";

/** Runs `fn` with a random source whose every byte is `b` (question = digit b repeated). */
async function withQuestionDigit<T>(t: TestApp, b: number, fn: () => Promise<T>): Promise<T> {
  const saved = t.deps.random;
  (t.deps as { random: Random }).random = { bytes: (n) => new Uint8Array(n).fill(b) };
  try {
    return await fn();
  } finally {
    (t.deps as { random: Random }).random = saved;
  }
}

async function setup(suite = "OCRA-1:HOTP-SHA1-6:QN08", key = KEY20_HEX) {
  const t = await appWithAlice();
  const body = await enrolOk(t, {
    type: "ocra",
    otpkey: key,
    ocrasuite: suite,
    pin: "pin",
    user: "alice",
    realm: "realm1",
  });
  return { t, serial: body.detail.serial as string };
}

Deno.test("ocra: enrolment stores the suite; the default suite; unusable suites are refused", async () => {
  const { t, serial } = await setup();
  assert.match(serial, /^OCRA/);
  const token = await listed(t, serial);
  assert.equal(token.tokentype, "ocra");
  assert.equal(token.info.ocrasuite, "OCRA-1:HOTP-SHA1-6:QN08");
  assert.equal(token.otplen, 6);
  const plain = await enrolOk(t, { type: "ocra", genkey: 1 });
  const def = await listed(t, plain.detail.serial);
  assert.equal(def.info.ocrasuite, "OCRA-1:HOTP-SHA1-8:QH40");
  assert.equal(def.otplen, 8);
  assert.match(plain.detail.otpkey.value, /^seed:\/\/[0-9a-f]{40}$/);
  const count = async () =>
    (await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count;
  const before = await count();
  for (
    const [suite, why] of [
      ["OCRA-2:HOTP-SHA1-6:QN08", /only version OCRA-1/],
      ["OCRA-1:HOTP-SHA1-6:QN99", /between 4 and 64/],
      ["OCRA-1:HOTP-SHA256-8:QN08-PSHA1", /question only/],
      ["OCRA-1:HOTP-SHA256-8:C-QN08", /question only/],
      ["OCRA-1:HOTP-SHA512-8:QN08-T1M", /question only/],
    ] as const
  ) {
    const res = await init(t, { type: "ocra", otpkey: KEY20_HEX, ocrasuite: suite });
    assert.equal(res.status, 400, suite);
    assert.equal(res.body.result.error.code, 905, suite);
    assert.match(res.body.result.error.message, why, suite);
  }
  assert.equal(await count(), before, "refused enrolments created nothing");
  await t.close();
});

Deno.test("ocra: the PIN starts a challenge; the RFC 6287 responses answer it once", async () => {
  const { t, serial } = await setup();
  const first = await withQuestionDigit(t, 1, () => check(t, { user: "alice", pass: "pin" }));
  const { tid, entry } = challengeOf(first.body);
  assert.equal(entry.message, "Please answer the challenge");
  assert.equal(entry.serial, serial);
  assert.deepEqual(entry.attributes, { challenge: "11111111" });
  // a wrong response fails and keeps the transaction open
  const wrong = await check(t, { user: "alice", transaction_id: tid, pass: "237653" });
  assert.equal(wrong.body.result.value, false);
  assert.equal(await failcount(t, serial), 1);
  const ok = await check(t, { user: "alice", transaction_id: tid, pass: "243178" });
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.result.authentication, "ACCEPT");
  assert.equal(await failcount(t, serial), 0);
  const replay = await check(t, { user: "alice", transaction_id: tid, pass: "243178" });
  assert.equal(replay.body.result.value, false, "a transaction is answered once");
  // PIN+response without a challenge never matches
  assert.equal((await check(t, { user: "alice", pass: "pin243178" })).body.result.value, false);
  // another appendix question: 99999999 → 294470
  const again = await withQuestionDigit(t, 9, () => check(t, { user: "alice", pass: "pin" }));
  const second = challengeOf(again.body);
  assert.equal(second.entry.attributes.challenge, "99999999");
  const ok2 = await check(t, { user: "alice", transaction_id: second.tid, pass: "294470" });
  assert.equal(ok2.body.result.value, true);
  await t.close();
});

Deno.test("ocra: /validate/triggerchallenge; a hex suite with SHA-256", async () => {
  const { t, serial } = await setup("OCRA-1:HOTP-SHA256-8:QH08", KEY32_HEX);
  const res = await withQuestionDigit(t, 10, async () =>
    await jsonOf(
      await t.asAdmin("POST", "/validate/triggerchallenge", { body: { serial } }),
    ));
  assert.equal(res.body.result.value, 1, JSON.stringify(res.body));
  const tid = res.body.detail.transaction_id;
  const entry = res.body.detail.multi_challenge[0];
  assert.equal(entry.message, "Please answer the challenge");
  // byte 10 → "a" in the hex alphabet
  assert.equal(entry.attributes.challenge, "aaaaaaaa");
  // the response, computed here with Web Crypto (RFC 6287 §5: suite ‖ 00 ‖ Q padded to 128)
  const suite = new TextEncoder().encode("OCRA-1:HOTP-SHA256-8:QH08");
  const input = new Uint8Array(suite.length + 1 + 128);
  input.set(suite);
  input.set([0xaa, 0xaa, 0xaa, 0xaa], suite.length + 1);
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode("12345678901234567890123456789012"),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, input));
  const off = mac[mac.length - 1] & 0x0f;
  const bin = new DataView(mac.buffer).getUint32(off) & 0x7fffffff;
  const expected = String(bin % 1e8).padStart(8, "0");
  const ok = await check(t, { serial, transaction_id: tid, pass: expected });
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  await t.close();
});
