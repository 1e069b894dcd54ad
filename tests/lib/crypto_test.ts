import assert from "node:assert/strict";
import {
  decryptSecretText,
  encryptSecret,
  hashPassword,
  hashPin,
  safeEqual,
  SCRYPT_CONCURRENCY,
  scryptInFlight,
  verifyPassword,
  verifyPin,
} from "../../src/lib/crypto.ts";
import { secureRandom } from "../../src/lib/random.ts";

Deno.test("encryptSecret round-trips and detects tampering", () => {
  const key = secureRandom.bytes(32);
  const enc = encryptSecret(key, "3132333435363738393031323334353637383930", secureRandom);
  assert.ok(!enc.includes("31323334"));
  assert.equal(decryptSecretText(key, enc), "3132333435363738393031323334353637383930");
  const flipped = enc.slice(0, -1) + (enc.endsWith("0") ? "1" : "0");
  assert.throws(() => decryptSecretText(key, flipped));
  assert.throws(() => decryptSecretText(secureRandom.bytes(32), enc));
});

Deno.test("PIN hashes are salted, keyed and verified", () => {
  const pepper = secureRandom.bytes(32);
  const a = hashPin(pepper, "1234", secureRandom);
  const b = hashPin(pepper, "1234", secureRandom);
  assert.notEqual(a, b);
  assert.ok(verifyPin(pepper, a, "1234"));
  assert.ok(!verifyPin(pepper, a, "1235"));
  assert.ok(!verifyPin(secureRandom.bytes(32), a, "1234"));
  assert.ok(!verifyPin(pepper, "garbage", "1234"));
});

Deno.test("scrypt password hashes verify only the right password", async () => {
  const h = await hashPassword("correct horse", secureRandom);
  assert.match(h, /^\$scrypt\$ln=14,r=8,p=1\$/);
  assert.equal(await verifyPassword(h, "correct horse"), true);
  assert.equal(await verifyPassword(h, "wrong horse"), false);
  assert.equal(await verifyPassword("$scrypt$ln=99,r=8,p=1$AA==$AA==", "x"), false);
  assert.equal(await verifyPassword("plain", "plain"), false);
});

Deno.test("safeEqual compares exactly", () => {
  assert.equal(safeEqual("abc", "abc"), true);
  assert.equal(safeEqual("abc", "abd"), false);
  assert.equal(safeEqual("abc", "abcd"), false);
});

Deno.test("at most SCRYPT_CONCURRENCY scrypt hashes run at once", async () => {
  const hash = await hashPassword("pw-for-limit", secureRandom);
  let peak = 0;
  const timer = setInterval(() => peak = Math.max(peak, scryptInFlight()), 1);
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) => verifyPassword(hash, i === 0 ? "pw-for-limit" : "wrong")),
  );
  clearInterval(timer);
  assert.deepEqual(results, [true, false, false, false, false, false]);
  assert.ok(peak <= SCRYPT_CONCURRENCY, `peak ${peak}`);
  assert.ok(peak >= 1);
  assert.equal(scryptInFlight(), 0);
});
