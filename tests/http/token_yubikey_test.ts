/**
 * The `yubikey` token (Yubico OTP, AES mode) over HTTP (spec 11 §6): enrolment
 * and its errors, `/validate/check` with the spec 11 §13 vectors and OTPs the
 * test encrypts itself, replays and parallel use of one OTP, the import round
 * trip, and the Yubico validation protocol at `/ttype/yubikey`.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createCipheriv, createHmac } from "node:crypto";
import {
  acceptedOfParallel,
  appWithAlice,
  auditRows,
  check,
  enrolOk,
  init,
  listed,
  setConfig,
} from "./_challenge_types.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import type { TestApp } from "../test_app.ts";

const KEY_HEX = "00112233445566778899aabbccddeeff";
const UID = "0a0b0c0d0e0f";
const PUBLIC_ID = "cbcdcecfcgvv";
// spec 11 §13: usage 5, session 2 → counter 1282; session 3 → 1283
const OTP_1282 = "cbcdcecfcgvvhcictievhlejgguhebkgfjffgcfgkeed";
const OTP_1283 = "cbcdcecfcgvvlerlldgficngrknjujkjlrulkrkbjjrd";
// spec 11 §13: the protocol signature of id=1, this OTP and nonce under 20×0x01
const API_KEY_B64 = "AQEBAQEBAQEBAQEBAQEBAQEBAQE=";
const NONCE = "0123456789abcdef0123";
const SIGNED_H = "OvmR0CySLbfnGzNC/uydnn+tD18=";

const MODHEX = "cbdefghijklnrtuv";

function modhex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => MODHEX[b >> 4] + MODHEX[b & 15]).join("");
}

function crc16(bytes: Uint8Array): number {
  let crc = 0xffff;
  for (const b of bytes) {
    crc ^= b;
    for (let i = 0; i < 8; i++) crc = crc & 1 ? (crc >> 1) ^ 0x8408 : crc >> 1;
  }
  return crc;
}

/** A Yubico OTP built here: plaintext with uid, counters and CRC, AES-128-ECB under `keyHex`. */
function yubicoOtp(
  opts: { usage: number; session: number; uid?: string; keyHex?: string; publicId?: string },
): string {
  const plain = new Uint8Array(16);
  plain.set(Buffer.from(opts.uid ?? UID, "hex"), 0);
  plain[6] = opts.usage & 0xff;
  plain[7] = opts.usage >> 8;
  plain.set([0x56, 0x34, 0x12], 8);
  plain[11] = opts.session;
  plain.set([0xef, 0xbe], 12);
  const crc = ~crc16(plain.subarray(0, 14)) & 0xffff;
  plain[14] = crc & 0xff;
  plain[15] = crc >> 8;
  const cipher = createCipheriv("aes-128-ecb", Buffer.from(opts.keyHex ?? KEY_HEX, "hex"), null);
  cipher.setAutoPadding(false);
  const block = new Uint8Array(Buffer.concat([cipher.update(plain), cipher.final()]));
  return (opts.publicId ?? PUBLIC_ID) + modhex(block);
}

async function enrolYubikey(t: TestApp, extra: Record<string, unknown> = {}): Promise<string> {
  const body = await enrolOk(t, {
    type: "yubikey",
    otpkey: KEY_HEX,
    "yubikey.prefix": PUBLIC_ID,
    user: "alice",
    realm: "realm1",
    pin: "pin",
    ...extra,
  });
  return body.detail.serial as string;
}

async function tokenCount(t: TestApp): Promise<number> {
  const res = await t.asAdmin("GET", "/token/");
  return (await res.json()).result.value.count;
}

Deno.test("yubikey: the test's OTP builder reproduces the spec 11 §13 vectors", () => {
  assert.equal(yubicoOtp({ usage: 5, session: 2 }), OTP_1282);
  assert.equal(yubicoOtp({ usage: 5, session: 3 }), OTP_1283);
});

Deno.test("yubikey: enrolment stores prefix, tokenkind hardware, otplen 44; GET /token/ shows them", async () => {
  const t = await appWithAlice();
  const res = await init(t, {
    type: "yubikey",
    otpkey: "0011 2233 4455 6677 8899 aabb ccdd eeff",
    "yubikey.prefix": PUBLIC_ID.toUpperCase(),
    user: "alice",
    realm: "realm1",
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const serial = res.body.detail.serial;
  assert.match(serial, /^UBAM/);
  assert.equal(res.body.detail.otpkey, undefined, "a given key is not sent back");
  const token = await listed(t, serial);
  assert.equal(token.tokentype, "yubikey");
  assert.equal(token.otplen, 44);
  assert.equal(token.rollout_state, "enrolled");
  assert.equal(token.info.tokenkind, "hardware");
  assert.equal(token.info["yubikey.prefix"], PUBLIC_ID, "lower-cased");
  assert.equal(token.info["yubikey.tokenid"], undefined, "bound on first use");
  assert.ok(!JSON.stringify(token).includes(KEY_HEX));

  // genkey: a server-made 16-byte key comes back once; without a prefix otplen is 44
  const gen = await enrolOk(t, { type: "yubikey", genkey: "1" });
  assert.match(gen.detail.otpkey.value, /^seed:\/\/[0-9a-f]{32}$/);
  assert.equal((await listed(t, gen.detail.serial)).otplen, 44);
  // a 16-character public id makes a 48-character OTP
  const long = await enrolOk(t, {
    type: "yubikey",
    otpkey: KEY_HEX,
    "yubikey.prefix": "vv".repeat(8),
  });
  assert.equal((await listed(t, long.detail.serial)).otplen, 48);
  await t.close();
});

Deno.test("yubikey: enrolment errors (key length, missing key, prefix, otplen) create nothing", async () => {
  const t = await appWithAlice();
  const before = await tokenCount(t);
  const cases: [Record<string, unknown>, number, string][] = [
    [
      { otpkey: KEY_HEX.slice(2) },
      404,
      "ERR404: The otpkey must be 32 characters long for yubikey token in AES mode",
    ],
    [
      { otpkey: KEY_HEX + "00" },
      404,
      "ERR404: The otpkey must be 32 characters long for yubikey token in AES mode",
    ],
    [{ otpkey: "zz" + KEY_HEX.slice(2) }, 404, ""],
    [{}, 905, "ERR905: Missing parameter: otpkey"],
    [{ otpkey: KEY_HEX, genkey: "1" }, 344, ""],
    [{ otpkey: KEY_HEX, "yubikey.prefix": "abc" }, 905, ""],
    [{ otpkey: KEY_HEX, "yubikey.prefix": "c".repeat(18) }, 905, ""],
    [{ otpkey: KEY_HEX, otplen: "6" }, 905, ""],
    [{ otpkey: KEY_HEX, otplen: "40", "yubikey.prefix": PUBLIC_ID }, 905, ""],
    [{ otpkey: KEY_HEX, "yubikey.tokenid": "xyz" }, 905, ""],
  ];
  for (const [extra, code, message] of cases) {
    const res = await init(t, { type: "yubikey", ...extra });
    assert.equal(res.status, 400, JSON.stringify(extra));
    assert.equal(res.body.result.status, false);
    assert.equal(res.body.result.error.code, code, JSON.stringify(res.body));
    if (message) assert.equal(res.body.result.error.message, message);
  }
  assert.equal(await tokenCount(t), before);
  await t.close();
});

Deno.test("yubikey: /validate/check with the spec vectors: counters must grow, a replay fails and counts", async () => {
  const t = await appWithAlice();
  const serial = await enrolYubikey(t);
  const first = await check(t, { user: "alice", pass: "pin" + OTP_1282 });
  assert.equal(first.status, 200);
  assert.equal(first.body.result.value, true, JSON.stringify(first.body));
  assert.equal(first.body.detail.message, "matching 1 tokens");
  assert.equal(first.body.detail.type, "yubikey");
  let token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.count, 1283, "count = counter + 1");
  assert.equal(token.info["yubikey.tokenid"].value, UID, "the private uid is bound");

  assert.equal((await check(t, { user: "alice", pass: "pin" + OTP_1283 })).body.result.value, true);
  assert.equal((await getTokenBySerial(t.deps, serial)).count, 1284);

  // replaying the first (1282 < 1284) and the second (1283 < 1284): wrong otp value, fail counter
  for (const otp of [OTP_1282, OTP_1283]) {
    const replay = await check(t, { user: "alice", pass: "pin" + otp });
    assert.equal(replay.body.result.value, false);
    assert.equal(replay.body.detail.message, "wrong otp value");
  }
  token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.count, 1284, "a refused OTP moves nothing");
  assert.equal(token.failcount, 2);

  // the next power-up (usage 6, session 0) is newer; a success resets the fail counter
  const next = await check(t, { user: "alice", pass: "pin" + yubicoOtp({ usage: 6, session: 0 }) });
  assert.equal(next.body.result.value, true);
  token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.count, 6 * 256 + 1);
  assert.equal(token.failcount, 0);
  // upper case (caps lock) is the same OTP
  const upper = yubicoOtp({ usage: 6, session: 1 }).toUpperCase();
  assert.equal((await check(t, { user: "alice", pass: "pin" + upper })).body.result.value, true);
  await t.close();
});

Deno.test("yubikey: a foreign uid, a bad CRC, another key, wrong length or a wrong PIN fail and move no counter", async () => {
  const t = await appWithAlice();
  const serial = await enrolYubikey(t);
  assert.equal((await check(t, { user: "alice", pass: "pin" + OTP_1282 })).body.result.value, true);
  const tampered = OTP_1283.slice(0, -1) + (OTP_1283.endsWith("d") ? "e" : "d");
  const cases: [string, string][] = [
    ["another device's uid", "pin" + yubicoOtp({ usage: 9, session: 0, uid: "0a0b0c0d0e00" })],
    ["a bad CRC (tampered ciphertext)", "pin" + tampered],
    ["another key", "pin" + yubicoOtp({ usage: 9, session: 0, keyHex: "ff".repeat(16) })],
    ["not modhex", "pin" + OTP_1283.slice(0, -1) + "a"],
    ["too short", "pin" + OTP_1283.slice(1)],
  ];
  for (const [name, pass] of cases) {
    const res = await check(t, { user: "alice", pass });
    assert.equal(res.status, 200, name);
    assert.equal(res.body.result.value, false, name);
  }
  const wrongPin = await check(t, { user: "alice", pass: "nip" + OTP_1283 });
  assert.equal(wrongPin.body.detail.message, "wrong otp pin");
  const token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.count, 1283);
  assert.equal(token.info["yubikey.tokenid"].value, UID);
  assert.equal(token.failcount, cases.length + 1);
  // the untouched next OTP still works
  await t.asAdmin("POST", "/token/reset", { body: { serial } });
  assert.equal((await check(t, { user: "alice", pass: "pin" + OTP_1283 })).body.result.value, true);
  await t.close();
});

Deno.test("yubikey: the same OTP sent in parallel is accepted once", async () => {
  const t = await appWithAlice();
  const serial = await enrolYubikey(t);
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "100" } });
  const otp = yubicoOtp({ usage: 7, session: 4 });
  assert.equal(await acceptedOfParallel(t, { user: "alice", pass: "pin" + otp }, 12), 1);
  assert.equal((await getTokenBySerial(t.deps, serial)).count, 7 * 256 + 5);
  await t.close();
});

Deno.test("yubikey: challenge-response with policy challenge_response=yubikey", async () => {
  const t = await appWithAlice();
  const serial = await enrolYubikey(t);
  const pol = await t.asAdmin("POST", "/policy/cr", {
    body: { scope: "authentication", action: "challenge_response=yubikey" },
    json: true,
  });
  assert.equal(pol.status, 200);
  const res = await check(t, { user: "alice", pass: "pin" });
  assert.equal(res.body.result.authentication, "CHALLENGE");
  const tid = res.body.detail.transaction_id;
  const answer = await check(t, { user: "alice", transaction_id: tid, pass: OTP_1282 });
  assert.equal(answer.body.result.value, true, JSON.stringify(answer.body));
  assert.equal((await getTokenBySerial(t.deps, serial)).count, 1283);
  await t.close();
});

Deno.test("yubikey: a Yubikey CSV import authenticates and is found by its public id", async () => {
  const t = await appWithAlice();
  // spec 12 T20: public id cbdefghijkln, private uid 0a0b0c0d0e0f, the key above
  const line =
    `Yubico OTP,12/11/2013 11:10,1,cbdefghijkln,${UID},${KEY_HEX},,,0,0,0,0,0,0,0,0,0,0\n`;
  const form = new FormData();
  form.set("type", "yubikeycsv");
  form.set("file", new File([line], "yubikeys.csv"));
  const res = await t.app.request("http://localhost/token/load/yubikeys.csv", {
    method: "POST",
    body: form,
    headers: { "PI-Authorization": await t.adminToken() },
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(body.result.value, { n_imported: 1, n_not_imported: 0 });
  const serial = "UBAM1250999896491_1";
  const token = await listed(t, serial);
  assert.equal(token.tokentype, "yubikey");
  assert.equal(token.otplen, 44);
  assert.equal(token.info["yubikey.prefix"], "cbdefghijkln");
  assert.equal(token.info.tokenkind, "hardware");
  const otp = yubicoOtp({ usage: 1, session: 0, publicId: "cbdefghijkln" });
  assert.equal((await check(t, { serial, pass: otp })).body.result.value, true);
  // before any /validate/check, the protocol endpoint finds it by the imported prefix
  await setConfig(t, { "yubikey.apiid.1": API_KEY_B64 });
  const next = yubicoOtp({ usage: 1, session: 1, publicId: "cbdefghijkln" });
  const answer = parseAnswer(
    await (await t.get(`/ttype/yubikey?id=1&otp=${next}&nonce=${NONCE}`)).text(),
  );
  assert.equal(answer.status, "OK");
  await t.close();
});

// --- /ttype/yubikey

function parseAnswer(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const i = line.indexOf("=");
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

/** The answer's signature computed here: nonce, otp, status, timestamp sorted, HMAC-SHA1. */
function answerSignature(a: Record<string, string>, keyB64 = API_KEY_B64): string {
  const text = ["nonce", "otp", "status", "timestamp"].map((k) => `${k}=${a[k]}`).join("&");
  return createHmac("sha1", Buffer.from(keyB64, "base64")).update(text).digest("base64");
}

function requestSignature(params: Record<string, string>, keyB64 = API_KEY_B64): string {
  const text = Object.keys(params).sort().map((k) => `${k}=${params[k]}`).join("&");
  return createHmac("sha1", Buffer.from(keyB64, "base64")).update(text).digest("base64");
}

async function protocol(
  t: TestApp,
  params: Record<string, string>,
  method: "GET" | "POST" = "GET",
): Promise<{ status: number; type: string; text: string; a: Record<string, string> }> {
  const res = method === "GET"
    ? await t.get(`/ttype/yubikey?${new URLSearchParams(params)}`)
    : await t.post("/ttype/yubikey", params);
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get("content-type") ?? "",
    text,
    a: parseAnswer(text),
  };
}

/** An app with a PIN-less yubikey of the spec key and API client 1. */
async function protocolApp(): Promise<{ t: TestApp; serial: string }> {
  const t = await appWithAlice();
  const serial = await enrolYubikey(t, { pin: "" });
  await setConfig(t, { "yubikey.apiid.1": API_KEY_B64 });
  return { t, serial };
}

Deno.test("GET /ttype/yubikey: the spec's signed request answers OK, signed; a replay is BAD_OTP and counts", async () => {
  const { t, serial } = await protocolApp();
  const sent = { id: "1", otp: OTP_1282, nonce: NONCE };
  assert.equal(requestSignature(sent), SIGNED_H, "spec 11 §13");
  const ok = await protocol(t, { ...sent, h: SIGNED_H });
  assert.equal(ok.status, 200);
  assert.match(ok.type, /^text\/plain/);
  assert.deepEqual(Object.keys(ok.a), ["nonce", "otp", "status", "timestamp", "h"]);
  assert.ok(ok.text.endsWith("\n"));
  assert.equal(ok.a.status, "OK", ok.text);
  assert.equal(ok.a.nonce, NONCE);
  assert.equal(ok.a.otp, OTP_1282);
  assert.equal(ok.a.timestamp, "2026-01-01T00:00:00Z000000");
  assert.equal(ok.a.h, answerSignature(ok.a));
  let token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.count, 1283);
  assert.equal(token.info["yubikey.tokenid"].value, UID);

  const replay = await protocol(t, { ...sent, h: SIGNED_H });
  assert.equal(replay.a.status, "BAD_OTP");
  assert.equal(replay.a.h, answerSignature(replay.a));
  token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.count, 1283);
  assert.equal(token.failcount, 1, "a wrong OTP here counts as on /validate/check");

  // unsigned requests are allowed (h is optional in protocol 2.0); POST works too
  const post = await protocol(t, { id: "1", otp: OTP_1283, nonce: "abcdefABCDEF0123" }, "POST");
  assert.equal(post.a.status, "OK");
  assert.equal(post.a.h, answerSignature(post.a));
  assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 0);

  const rows = await auditRows(t, "GET /ttype/yubikey");
  assert.equal(rows.length, 2);
  assert.equal(rows[0].success, 0);
  assert.equal(rows[0].serial, serial);
  assert.equal(rows[0].user, "alice");
  assert.match(rows[0].info, /^BAD_OTP/);
  assert.equal(rows[1].success, 1);
  await t.close();
});

Deno.test("GET /ttype/yubikey: BAD_SIGNATURE, NO_SUCH_CLIENT, MISSING_PARAMETER change nothing", async () => {
  const { t, serial } = await protocolApp();
  const badSig = await protocol(t, {
    id: "1",
    otp: OTP_1282,
    nonce: NONCE,
    h: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=",
  });
  assert.equal(badSig.a.status, "BAD_SIGNATURE");
  assert.equal(badSig.a.h, answerSignature(badSig.a));
  // a signature over other parameters is bad too (an extra signed parameter)
  const extra = await protocol(t, { id: "1", otp: OTP_1282, nonce: NONCE, sl: "50", h: SIGNED_H });
  assert.equal(extra.a.status, "BAD_SIGNATURE");

  const noClient = await protocol(t, { id: "2", otp: OTP_1282, nonce: NONCE });
  assert.equal(noClient.a.status, "NO_SUCH_CLIENT");
  assert.equal(noClient.a.h, "");
  assert.equal((await protocol(t, { otp: OTP_1282, nonce: NONCE })).a.status, "NO_SUCH_CLIENT");

  const incomplete: Record<string, string>[] = [
    { id: "1", otp: OTP_1282 },
    { id: "1", nonce: NONCE },
    { id: "1", otp: OTP_1282, nonce: "short" },
    { id: "1", otp: OTP_1282, nonce: "0123456789abcdef-123" },
  ];
  for (const params of incomplete) {
    const res = await protocol(t, params);
    assert.equal(res.a.status, "MISSING_PARAMETER", JSON.stringify(params));
    assert.equal(res.a.h, answerSignature(res.a), "signed (spec 11 §14)");
  }
  const token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.count, 0);
  assert.equal(token.failcount, 0);
  assert.equal(token.info["yubikey.tokenid"], undefined);
  // the OTP is still good
  assert.equal((await protocol(t, { id: "1", otp: OTP_1282, nonce: NONCE })).a.status, "OK");
  await t.close();
});

Deno.test("GET /ttype/yubikey: yubikey.require_signature refuses a client's unsigned requests before any token is touched", async () => {
  const { t, serial } = await protocolApp();
  const KEY2_B64 = "AgICAgICAgICAgICAgICAgICAgI=";
  await setConfig(t, { "yubikey.apiid.2": KEY2_B64, "yubikey.require_signature.1": "True" });
  const garbage = OTP_1282.slice(0, -2) + "cc";
  const unsigned: Record<string, string>[] = [
    { id: "1", otp: garbage, nonce: NONCE },
    { id: "1", otp: OTP_1282, nonce: NONCE },
    { id: "1", otp: garbage, nonce: NONCE, h: "" },
  ];
  for (const params of unsigned) {
    const res = await protocol(t, params);
    assert.equal(res.status, 200);
    assert.equal(res.a.status, "MISSING_PARAMETER", JSON.stringify(params));
    assert.equal(res.a.h, answerSignature(res.a), "the refusal is signed");
  }
  let token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.failcount, 0, "refused unsigned requests do not count");
  assert.equal(token.count, 0);
  assert.equal(token.info["yubikey.tokenid"], undefined);
  const rows = await auditRows(t, "GET /ttype/yubikey");
  assert.equal(rows[0].success, 0);
  assert.match(rows[0].info, /^MISSING_PARAMETER: the client must sign its requests/);

  // a signed request of that client is answered
  const signed = await protocol(t, { id: "1", otp: OTP_1282, nonce: NONCE, h: SIGNED_H });
  assert.equal(signed.a.status, "OK", signed.text);
  token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.count, 1283);

  // baseline: client 2 requires nothing, its unsigned garbage is checked and counts
  const other = await protocol(t, { id: "2", otp: garbage, nonce: NONCE });
  assert.equal(other.a.status, "BAD_OTP");
  assert.equal(other.a.h, answerSignature(other.a, KEY2_B64));
  assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 1);

  // yubikey.require_signature covers every client; a client's own setting wins
  await setConfig(t, { "yubikey.require_signature": "True" });
  assert.equal(
    (await protocol(t, { id: "2", otp: garbage, nonce: NONCE })).a.status,
    "MISSING_PARAMETER",
  );
  assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 1);
  await setConfig(t, { "yubikey.require_signature.2": "False" });
  const exempt = await protocol(t, { id: "2", otp: OTP_1283, nonce: NONCE });
  assert.equal(exempt.a.status, "OK", exempt.text);
  assert.equal(
    (await protocol(t, { id: "1", otp: garbage, nonce: NONCE })).a.status,
    "MISSING_PARAMETER",
  );
  assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 0, "the OK reset it");
  await t.close();
});

Deno.test("GET /ttype/yubikey: a value with a line break is not echoed into the answer", async () => {
  const { t } = await protocolApp();
  const res = await protocol(t, { id: "1", otp: OTP_1282, nonce: `${NONCE}\nstatus=OK` });
  assert.equal(res.text.split("\n").filter((l) => l.startsWith("status=")).length, 1);
  assert.equal(res.a.status, "MISSING_PARAMETER");
  assert.equal(res.a.nonce, "");
  await t.close();
});

Deno.test("GET /ttype/yubikey: unknown prefix, disabled, locked or PIN-protected tokens answer BAD_OTP", async () => {
  const { t, serial } = await protocolApp();
  const ask = async (otp: string) => (await protocol(t, { id: "1", otp, nonce: NONCE })).a.status;
  assert.equal(await ask(yubicoOtp({ usage: 1, session: 0, publicId: "vvvvvvvvvvvv" })), "BAD_OTP");
  assert.equal(await ask("not-an-otp"), "BAD_OTP");

  await t.asAdmin("POST", "/token/disable", { body: { serial } });
  assert.equal(await ask(yubicoOtp({ usage: 2, session: 0 })), "BAD_OTP");
  assert.equal((await getTokenBySerial(t.deps, serial)).count, 0, "a disabled token moves nothing");
  await t.asAdmin("POST", "/token/enable", { body: { serial } });

  // a maxed fail counter locks it as on /validate/check, even for a good OTP
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "2" } });
  assert.equal(await ask(OTP_1282.slice(0, -2) + "cc"), "BAD_OTP");
  assert.equal(await ask(OTP_1282.slice(0, -2) + "cc"), "BAD_OTP");
  assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 2);
  assert.equal(await ask(yubicoOtp({ usage: 2, session: 1 })), "BAD_OTP");
  assert.equal((await getTokenBySerial(t.deps, serial)).count, 0);
  await t.asAdmin("POST", "/token/reset", { body: { serial } });
  assert.equal(await ask(yubicoOtp({ usage: 2, session: 2 })), "OK");

  // only the OTP is sent: a token with a PIN cannot be used here
  await t.asAdmin("POST", "/token/setpin", { body: { serial, otppin: "1234" } });
  assert.equal(await ask(yubicoOtp({ usage: 2, session: 3 })), "BAD_OTP");
  await t.close();
});

Deno.test("GET /ttype/yubikey: the same OTP sent in parallel is OK once", async () => {
  const { t, serial } = await protocolApp();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "100" } });
  const otp = yubicoOtp({ usage: 3, session: 9 });
  const statuses = await Promise.all(
    Array.from(
      { length: 10 },
      async () => (await protocol(t, { id: "1", otp, nonce: NONCE })).a.status,
    ),
  );
  assert.equal(statuses.filter((s) => s === "OK").length, 1, statuses.join(","));
  assert.equal((await getTokenBySerial(t.deps, serial)).count, 3 * 256 + 10);
  await t.close();
});
