import assert from "node:assert/strict";
import {
  hashCryptPassword,
  md5Crypt,
  shaCrypt,
  verifyCryptHash,
  WRITABLE_HASH_TYPES,
} from "../../src/lib/crypt.ts";

// reference values produced by `openssl passwd` and Python's hashlib
const VECTORS: [string, string][] = [
  [
    "Hello world!",
    "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1",
  ],
  ["Hello world!", "$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"],
  ["Hello world!", "$5$rounds=10000$saltstring$zY4WhW6dya5uGVNotd0y2Lk.E4rItnX94Q0R1OCQl40"],
  [
    "secret",
    "$6$rounds=1000$abc$MqEcPZUYRGGcOeq7PhMpfjfu/F0HrVEI0OlZBijWvO8mSG77iNUDP5MqFceKpJTBc8iITVtNyLiNTRNCxv6oh0",
  ],
  ["Hello world!", "$1$saltstri$YMyguxXMBpd2TEZ.vS/3q1"],
  ["x", "$2b$04$qIlb/oZ7Y4gPISdSg07Lpu.frGScwtzNfqbQ8NrSIt9aYbdf1sIdy"],
  ["x", "$2y$04$qIlb/oZ7Y4gPISdSg07Lpu.frGScwtzNfqbQ8NrSIt9aYbdf1sIdy"],
  ["secret", "{SSHA}+RFhsab2AfzZ0VfEdyknXtUT06RhYmNk"],
  ["secret", "{ssha256}qGSW+oNILJZzP8XfwAqm8oHb1pUlXul/o4P6T5F9dC5hYmNk"],
  [
    "secret",
    "{SSHA512}gpIcMUqzt0RlQondmbeEc/HmIdV69pfARsPgzg5Vtsfw0BMT4rcfl70xxlEukHYl5CkaIgLmipghMxv+WTEta2FiY2Q=",
  ],
  ["secret", "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ="],
  ["secret", "1|{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ="],
  ["secret", "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"],
];

Deno.test("shaCrypt and md5Crypt match openssl passwd", () => {
  assert.equal(shaCrypt("6", "Hello world!", "saltstring"), VECTORS[0][1]);
  assert.equal(shaCrypt("5", "Hello world!", "saltstring"), VECTORS[1][1]);
  assert.equal(shaCrypt("5", "Hello world!", "saltstring", 10000), VECTORS[2][1]);
  assert.equal(md5Crypt("Hello world!", "saltstri"), VECTORS[4][1]);
});

Deno.test("verifyCryptHash accepts the right password for every supported format", async () => {
  for (const [password, hash] of VECTORS) {
    assert.equal(await verifyCryptHash(hash, password), true, hash);
    assert.equal(await verifyCryptHash(hash, password + "x"), false, hash);
  }
});

Deno.test("verifyCryptHash never accepts locked, empty or unknown hashes", async () => {
  for (const hash of ["", "x", "*", "!$6$abc$def", "{MD4}abc", "{SSHA}!!!", "plain", "$7$x$y"]) {
    assert.equal(await verifyCryptHash(hash, ""), false, hash);
    assert.equal(await verifyCryptHash(hash, hash), false, hash);
  }
});

Deno.test("hashCryptPassword writes every type in a form verifyCryptHash accepts", async () => {
  const salt = crypto.getRandomValues(new Uint8Array(22));
  for (const type of WRITABLE_HASH_TYPES) {
    const hash = hashCryptPassword(type, "pässword", salt);
    assert.equal(await verifyCryptHash(hash, "pässword"), true, type);
    assert.equal(await verifyCryptHash(hash, "password"), false, type);
  }
  assert.match(hashCryptPassword("SSHA256", "a", salt), /^\{SSHA256\}/);
  assert.match(hashCryptPassword("SHA512CRYPT", "a", salt), /^\$6\$/);
  assert.match(hashCryptPassword("BCRYPT", "a", salt), /^\$2b\$10\$/);
});
