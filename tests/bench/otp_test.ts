import assert from "node:assert/strict";
import { benchKey, hotp, hotpSequence, toHex, wrongOtp } from "../../bench/lib/otp.ts";

const RFC4226_KEY = new TextEncoder().encode("12345678901234567890");
// RFC 4226 appendix D
const RFC4226 = [
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

Deno.test("hotp matches the RFC 4226 test values", () => {
  RFC4226.forEach((otp, counter) => assert.equal(hotp(RFC4226_KEY, counter), otp));
});

Deno.test("hotp with 8 digits (RFC 6238 SHA-1 value at T=1)", () => {
  // RFC 6238 appendix B: time 59 s → counter 1 → 94287082
  assert.equal(hotp(RFC4226_KEY, 1, 8), "94287082");
});

Deno.test("hotpSequence concatenates consecutive values from a start counter", () => {
  assert.equal(hotpSequence(RFC4226_KEY, 0, 3), "755224287082359152");
  const seq = hotpSequence(RFC4226_KEY, 4, 6);
  assert.equal(seq.length, 36);
  assert.equal(seq.slice(30, 36), RFC4226[9]);
  assert.equal(hotpSequence(RFC4226_KEY, 0, 0), "");
});

Deno.test("wrongOtp avoids every value of the window", () => {
  assert.equal(wrongOtp(RFC4226_KEY, 0, 10), "000000"); // not among the RFC values
  for (let i = 0; i < 200; i++) {
    const key = benchKey("t", i);
    const w = wrongOtp(key, 5, 20);
    assert.match(w, /^\d{6}$/);
    for (let c = 5; c < 25; c++) assert.notEqual(hotp(key, c), w);
  }
  // 1-digit codes: the first digit outside a small window is found …
  const taken = new Set(Array.from({ length: 5 }, (_, c) => hotp(RFC4226_KEY, c, 1)));
  const free = wrongOtp(RFC4226_KEY, 0, 5, 1);
  assert.equal(free.length, 1);
  assert.ok(!taken.has(free));
  // … and a window covering every code is refused instead of looping
  assert.throws(() => wrongOtp(RFC4226_KEY, 0, 200, 1), /every/);
});

Deno.test("benchKey is deterministic, 20 bytes, distinct per item; toHex is lower-case", () => {
  assert.deepEqual(benchKey("h", 1), benchKey("h", 1));
  assert.notDeepEqual(benchKey("h", 1), benchKey("h", 2));
  assert.notDeepEqual(benchKey("h", 1), benchKey("w", 1));
  assert.equal(benchKey("h", 1).length, 20);
  assert.equal(toHex(new Uint8Array([0, 15, 171, 255])), "000fabff");
});
