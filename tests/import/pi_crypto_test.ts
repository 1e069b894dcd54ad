import assert from "node:assert/strict";
import {
  decryptPassword,
  decryptPin,
  decryptTokenKey,
  parseEncKey,
} from "../../src/domain/import/pi_crypto.ts";
import { passlibScheme, verifyPasslibHash } from "../../src/lib/passlib.ts";
import { ENC_KEY, SEED_HEX, T1, T2_ENC, T3, T4, T6 } from "./_pi_fixture.ts";

const T11 =
  "d0d1d2d3d4d5d6d7d8d9dadbdcdddedf:68babbd6eb9041be26ce1210d247fddaaad99152231bb92daf3eedbd5ba41fa25459729d4db5b39c13730982cc1da3fb537c9b32962425b1853173b047c92af00b0fb415c6ccf7f0cafbfbcaf42a85bec36e525c7d9cf050f0bcaf8bf164cd93a7cf8f67696edfd48231c12142ebaff59ecb3fee1d7471d68607042f6596cc0ab7cbff12bea4128fb4feaab856c42e2608c521bcf8a0939c2f57db87c3e7ff7391251da601e25532524ec7823e681928325384a8bd0c713c38b3a293aa1b443d89cfa00a3a44613ac0f126f0cc80efd5";

Deno.test("privacyIDEA ciphers: spec 12 test vectors T1-T4 and T11", () => {
  const keys = parseEncKey(ENC_KEY);
  assert.equal(decryptTokenKey(keys, T1.enc, T1.iv), SEED_HEX);
  assert.equal(decryptTokenKey(keys, T2_ENC, T1.iv), SEED_HEX);
  assert.equal(decryptPassword(keys, T3), "Passw0rd!");
  assert.equal(decryptPin(keys, T4), "1234");
  const protectedKey = parseEncKey(new TextEncoder().encode(T11), "test");
  assert.deepEqual(protectedKey, keys);
  assert.throws(() => parseEncKey(new TextEncoder().encode(T11), "wrong"), /wrong password/);
  assert.throws(() => parseEncKey(new Uint8Array(32)), /32 bytes, expected 96/);
  // another key: the padding (or the text check) fails
  const other = parseEncKey(ENC_KEY.map((b) => b ^ 0x55));
  assert.throws(() => decryptTokenKey(other, T1.enc, T1.iv));
  assert.throws(() => decryptPassword(other, T3));
});

Deno.test("passlib hashes: pbkdf2-sha512 (T6, T16) and argon2 (T15: older argon2-cffi parameters, 16-byte output)", async () => {
  const t16 =
    "$pbkdf2-sha512$25000$AAECAwQFBgcICQoLDA0ODw$to.cRh4dYfxQgPJBjNKRYdZSII4H2JpPoP3yjOwCIHfLvZWWsfgmnJZPrWaD8atT5QDAFqKfnJdRoDEMzOPfyQ";
  const t15 = "$argon2id$v=19$m=102400,t=9,p=8$AAECAwQFBgcICQoLDA0ODw$9NKFytHtvhc/JvI29L5qaQ";
  for (const hash of [T6, t16, t15]) {
    assert.ok(await verifyPasslibHash(hash, "1234"), hash);
    if (hash.startsWith("$pbkdf2")) assert.equal(await verifyPasslibHash(hash, "1235"), false);
  }
  assert.equal(
    passlibScheme("$argon2id$m=512,t=2,p=2$AAECAwQFBgcICQoLDA0ODw$AAAAAAAAAAAAAAAAAAAAAA"),
    undefined,
  );
  assert.equal(passlibScheme("$bcrypt$x"), undefined);
  assert.equal(
    await verifyPasslibHash(
      "$argon2id$v=19$m=99999999,t=9,p=4$AAECAwQFBgcICQoLDA0ODw$AAAAAAAAAAAAAAAAAAAAAA",
      "1",
    ),
    false,
  );
});
