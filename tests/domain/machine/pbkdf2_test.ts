import assert from "node:assert/strict";
import { pbkdf2Sha512Hash, pbkdf2Sha512Verify } from "../../../src/domain/machine/mod.ts";

// computed independently with Python's hashlib.pbkdf2_hmac and passlib's ab64 alphabet
const VECTOR =
  "$pbkdf2-sha512$1000$AAECAwQFBgcICQ$/9hnUjnHVcStC/eUL64HJw0fRvgZFqNpP6Okpss5hkm8NP03sa5tYssgQaQIUOrD5bbDoq2T4l9goV5yVASq/A";

Deno.test("pbkdf2Sha512Hash writes passlib's format (reference vector)", async () => {
  const salt = Uint8Array.from({ length: 10 }, (_, i) => i);
  assert.equal(await pbkdf2Sha512Hash("test755224", salt, 1000), VECTOR);
});

Deno.test("pbkdf2Sha512Verify accepts the right password only", async () => {
  assert.equal(await pbkdf2Sha512Verify(VECTOR, "test755224"), true);
  assert.equal(await pbkdf2Sha512Verify(VECTOR, "test755225"), false);
  assert.equal(await pbkdf2Sha512Verify("$pbkdf2-sha256$1000$AA$AA", "x"), false);
  // "." stands for "+" in passlib's alphabet
  const salt = new Uint8Array([0xfb, 0xef, 0xbe, 0xfb, 0xef, 0xbe, 0xfb, 0xef, 0xbe, 0xfb]);
  const hash = await pbkdf2Sha512Hash("x", salt, 10);
  assert.match(hash.split("$")[3], /^[A-Za-z0-9./]+$/);
  assert.ok(hash.split("$")[3].includes("."));
  assert.equal(await pbkdf2Sha512Verify(hash, "x"), true);
});
