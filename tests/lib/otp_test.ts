import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { Buffer } from "node:buffer";
import {
  base32Decode,
  base32Encode,
  findHotpCounter,
  hotpAt,
  hotpRange,
  KeyedHmacSha256,
  otpEqual,
  searchHotp,
  totpAt,
  totpStepAt,
} from "../../src/lib/otp.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const SEED20 = enc("12345678901234567890");
const SEED32 = enc("12345678901234567890123456789012");
const SEED64 = enc("1234567890123456789012345678901234567890123456789012345678901234");

Deno.test("hotpAt matches the RFC 4226 appendix D test vectors", () => {
  const expected = [
    "755224",
    "287082",
    "359152",
    "969429",
    "338314",
    "254676",
    "287922",
    "162583",
    "399871",
    "520489",
  ];
  expected.forEach((otp, counter) =>
    assert.equal(hotpAt(SEED20, counter), otp, `counter ${counter}`)
  );
});

Deno.test("totpAt matches the RFC 6238 appendix B test vectors (8 digits, 3 hashes)", () => {
  const table: [number, string, string, string][] = [
    [59, "94287082", "46119246", "90693936"],
    [1111111109, "07081804", "68084774", "25091201"],
    [1111111111, "14050471", "67062674", "99943326"],
    [1234567890, "89005924", "91819424", "93441116"],
    [2000000000, "69279037", "90698825", "38618901"],
    [20000000000, "65353130", "77737706", "47863826"],
  ];
  for (const [time, sha1, sha256, sha512] of table) {
    assert.equal(totpAt(SEED20, time, { digits: 8, hash: "sha1" }), sha1, `sha1 @${time}`);
    assert.equal(totpAt(SEED32, time, { digits: 8, hash: "sha256" }), sha256, `sha256 @${time}`);
    assert.equal(totpAt(SEED64, time, { digits: 8, hash: "sha512" }), sha512, `sha512 @${time}`);
  }
});

Deno.test("totpStepAt counts 30 and 60 second steps", () => {
  assert.equal(totpStepAt(59), 1);
  assert.equal(totpStepAt(60, 60), 1);
  assert.equal(totpStepAt(1111111109), 37037036);
});

Deno.test("findHotpCounter finds a counter inside the window and nothing outside", () => {
  assert.equal(findHotpCounter(SEED20, "969429", 0, 10, 6, "sha1"), 3);
  assert.equal(findHotpCounter(SEED20, "969429", 4, 10, 6, "sha1"), -1);
  assert.equal(findHotpCounter(SEED20, "520489", 0, 9, 6, "sha1"), -1);
});

Deno.test("base32 encodes RFC 4648 vectors and round-trips", () => {
  assert.equal(base32Encode(enc("foobar"), true), "MZXW6YTBOI======");
  assert.equal(base32Encode(enc("fo")), "MZXQ");
  assert.deepEqual(base32Decode("mzxw6ytboi======"), enc("foobar"));
  assert.deepEqual(base32Decode(base32Encode(SEED64)), SEED64);
  assert.throws(() => base32Decode("MZ1W"));
});

Deno.test("hotpRange and searchHotp (Web Crypto) agree with hotpAt for every hash", async () => {
  for (const [hash, key] of [["sha1", SEED20], ["sha256", SEED32], ["sha512", SEED64]] as const) {
    const range = await hotpRange(key, 5, 10, 8, hash);
    assert.deepEqual(range, Array.from({ length: 10 }, (_, i) => hotpAt(key, 5 + i, 8, hash)));
  }
  assert.equal(await searchHotp(SEED20, "969429", 0, 10, 6, "sha1"), 3);
  assert.equal(await searchHotp(SEED20, "969429", 4, 10, 6, "sha1"), -1);
  assert.equal(await searchHotp(SEED20, "755224", -3, 4, 6, "sha1"), 0);
  assert.equal(await searchHotp(SEED20, "755224", 0, 0, 6, "sha1"), -1);
});

Deno.test("hotpRange equals node:crypto HMAC for key lengths around the block size and big counters", async () => {
  for (const hash of ["sha1", "sha256", "sha512"] as const) {
    for (const len of [1, 16, 20, 32, 63, 64, 65, 100, 128]) {
      const key = crypto.getRandomValues(new Uint8Array(len));
      for (const from of [0, 2 ** 32 - 3, 2 ** 40 + 7]) {
        const got = await hotpRange(key, from, 5, 8, hash);
        const want = Array.from({ length: 5 }, (_, i) => hotpAt(key, from + i, 8, hash));
        assert.deepEqual(got, want, `${hash} key ${len} from ${from}`);
      }
    }
  }
});

Deno.test("otpEqual compares whole strings, also non-ASCII ones of equal length", () => {
  assert.equal(otpEqual("123456", "123456"), true);
  assert.equal(otpEqual("123456", "123457"), false);
  assert.equal(otpEqual("12345", "123456"), false);
  assert.equal(otpEqual("pässwörd", "pässwörd"), true);
  // same UTF-16 length, different UTF-8 length: must be false, not an exception
  assert.equal(otpEqual("ä", "a"), false);
  assert.equal(otpEqual("€1", "ab"), false);
});

Deno.test("KeyedHmacSha256 equals node:crypto HMAC-SHA-256 for every message length up to 3 blocks", () => {
  for (const keyLen of [0, 16, 32, 64, 65, 100]) {
    const key = new Uint8Array(keyLen).map((_, i) => (i * 7 + keyLen) & 0xff);
    const mac = new KeyedHmacSha256(key);
    for (let n = 0; n <= 200; n++) {
      const data = new Uint8Array(n).map((_, i) => (i * 31 + n) & 0xff);
      const want = createHmac("sha256", key).update(data).digest("hex");
      assert.equal(Buffer.from(mac.mac(data)).toString("hex"), want, `key ${keyLen}, length ${n}`);
    }
  }
});

Deno.test("searchHotp stops at the first match and still finds every offset of the window", async () => {
  for (let offset = 0; offset < 10; offset++) {
    const otp = hotpAt(SEED20, 5 + offset, 6, "sha1");
    assert.equal(await searchHotp(SEED20, otp, 5, 10, 6, "sha1"), 5 + offset);
  }
  assert.equal(await searchHotp(SEED20, hotpAt(SEED20, 15, 6, "sha1"), 5, 10, 6, "sha1"), -1);
});
