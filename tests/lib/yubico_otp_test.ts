/**
 * Yubico OTP primitives against the independently computed vectors of spec 11 §13.
 */
import assert from "node:assert/strict";
import {
  decryptYubicoOtp,
  isYubicoSignature,
  modhexDecode,
  modhexEncode,
  parseYubicoReply,
  YUBICO_CRC_RESIDUE,
  yubicoCrc16,
  yubicoSignature,
} from "../../src/lib/yubico_otp.ts";
import { fromHex } from "../../src/lib/random.ts";

const KEY = fromHex("00112233445566778899aabbccddeeff");
const OTP_1282 = "cbcdcecfcgvvhcictievhlejgguhebkgfjffgcfgkeed";
const OTP_1283 = "cbcdcecfcgvvlerlldgficngrknjujkjlrulkrkbjjrd";

Deno.test("modhex: spec 11 §13 public id and ciphertext", () => {
  assert.equal(modhexEncode(fromHex("0102030405ff")), "cbcdcecfcgvv");
  assert.deepEqual(
    modhexDecode(OTP_1282.slice(12)),
    fromHex("6070d73f6a3855e63195484450459332"),
  );
  assert.deepEqual(modhexDecode("CBCD"), fromHex("0102"), "upper case is read");
  assert.equal(modhexDecode("cbc"), undefined, "odd length");
  assert.equal(modhexDecode("cbca"), undefined, "a is not modhex");
});

Deno.test("yubicoCrc16: the plaintext of spec 11 §13 has the residue 0xF0B8", () => {
  const plain = fromHex("0a0b0c0d0e0f050056341202efbe9578");
  assert.equal(yubicoCrc16(plain), YUBICO_CRC_RESIDUE);
  assert.equal(~yubicoCrc16(plain.subarray(0, 14)) & 0xffff, 0x7895);
  assert.notEqual(yubicoCrc16(fromHex("0a0b0c0d0e0f050056341202efbe9579")), YUBICO_CRC_RESIDUE);
});

Deno.test("decryptYubicoOtp: own vector (counters 1282, 1283) and Yubico's public sample", () => {
  assert.deepEqual(decryptYubicoOtp(KEY, OTP_1282.slice(12)), {
    uid: "0a0b0c0d0e0f",
    usage: 5,
    session: 2,
    counter: 1282,
  });
  assert.equal(decryptYubicoOtp(KEY, OTP_1283.slice(12))?.counter, 1283);
  const sample = "dteffujehknhfjbrjnlnldnhcujvddbikngjrtgh";
  assert.deepEqual(decryptYubicoOtp(fromHex("ecde18dbe76fbd0c33330f1c354871db"), sample.slice(8)), {
    uid: "8792ebfe26cc",
    usage: 19,
    session: 17,
    counter: 4881,
  });
  // another key decrypts to noise: the CRC residue refuses it
  assert.equal(
    decryptYubicoOtp(fromHex("ecde18dbe76fbd0c33330f1c354871db"), OTP_1282.slice(12)),
    undefined,
  );
  assert.equal(decryptYubicoOtp(KEY, "x".repeat(32)), undefined);
  assert.equal(decryptYubicoOtp(KEY, OTP_1282.slice(14)), undefined, "too short");
});

Deno.test("yubicoSignature: spec 11 §13 protocol signature", () => {
  const key = new Uint8Array(20).fill(1);
  const params = { id: "1", otp: OTP_1282, nonce: "0123456789abcdef0123" };
  assert.equal(yubicoSignature(params, key), "OvmR0CySLbfnGzNC/uydnn+tD18=");
  assert.equal(yubicoSignature({ ...params, h: "ignored" }, key), "OvmR0CySLbfnGzNC/uydnn+tD18=");
  assert.ok(isYubicoSignature(params, key, "OvmR0CySLbfnGzNC/uydnn+tD18="));
  assert.ok(!isYubicoSignature(params, key, "OvmR0CySLbfnGzNC/uydnn+tD18"));
  assert.ok(!isYubicoSignature({ ...params, id: "2" }, key, "OvmR0CySLbfnGzNC/uydnn+tD18="));
});

Deno.test("parseYubicoReply: k=v lines, CRLF, the value after the first =", () => {
  assert.deepEqual(parseYubicoReply("h=ab+c=\r\nstatus=OK\r\n\r\nnonsense\n"), {
    h: "ab+c=",
    status: "OK",
  });
});
