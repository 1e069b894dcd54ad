import assert from "node:assert/strict";
import {
  hashCryptPassword,
  md5Crypt,
  phpassHash,
  shaCrypt,
  verifyCryptHash,
  WRITABLE_HASH_TYPES,
} from "../../src/lib/unix_crypt.ts";

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

// privacyIDEA 3.12.3's SQL resolver on these (spec 16 §1.7): password "passw0rd" unless named
const PI_VECTORS: [string, string, boolean, string?][] = [
  ["{SHA}", "{SHA}fGphxo74ubawYbKMNIvB7Xkhy1M=", true],
  ["{SHA} UTF-8", "{SHA}9Rfd8dMqES/xrVXGbRsSyzjn6Pc=", true, "pässwörd"],
  ["{SSHA} 4-byte salt", "{SSHA}JSkbR7Cy0mHgoFjLxwkztqpGPIEBAgME", true],
  ["{ssha} lower-case id", "{ssha}JSkbR7Cy0mHgoFjLxwkztqpGPIEBAgME", true],
  ["{Ssha} mixed-case id", "{Ssha}JSkbR7Cy0mHgoFjLxwkztqpGPIEBAgME", false],
  ["{SSHA} 16-byte salt", "{SSHA}2lgse8DLgYaFZD/Pknchz151TLgAAQIDBAUGBwgJCgsMDQ4P", true],
  ["{SSHA} 17-byte salt", "{SSHA}dzycs+2mqcRxx3EYHYU+Pogk30IAAQIDBAUGBwgJCgsMDQ4PEA==", false],
  ["{SSHA256} 4-byte salt", "{SSHA256}bnq8JLpJDeyv2qH03x3oLO4vqnncUTxp5plaUQA3uSMBAgME", true],
  [
    "{SSHA256} saltsalt",
    "{SSHA256}99FKWUxsg/9+hP0DOF95NodrtNcZwb53RoLMnTyD2WBzYWx0c2FsdA==",
    true,
  ],
  [
    "{SSHA256} 32-byte salt",
    "{SSHA256}mr3BNQcKx20K94AkLvczOvQNQyjXZuY7+6lcqEi97RwAAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHw==",
    true,
  ],
  [
    "{SSHA256} 33-byte salt",
    "{SSHA256}g+7diR6cZoty6JWdgmBdkLTpsUfh6h7XHhiXktfmICAAAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=",
    false,
  ],
  [
    "{SSHA512} saltsalt",
    "{SSHA512}KITGyx1PNtshpKJ4rGp2Hw6+5ELBdMnpSSUtQJZIpHLy3+YdGPDFYyuWZ1EYQUYC6/HjTBJG9RxRC3X/mXJq+nNhbHRzYWx0",
    true,
  ],
  [
    "{SSHA512} 17-byte salt",
    "{SSHA512}Xh5qPsdZb/tsUrxHPR2D7Hr/hszcCnEaxuadGcrGZpX7L3R1As6GE00fts0JkXMbyrRALubLyp9DIeGDHDMKpQABAgMEBQYHCAkKCwwNDg8Q",
    false,
  ],
  ["hex SHA-256", "8f0e2f76e22b43e2855189877e7dc1e1e7d98c226c95db247cd1d547928334a9", true],
  ["hex SHA-256 upper", "8F0E2F76E22B43E2855189877E7DC1E1E7D98C226C95DB247CD1D547928334A9", true],
  ["phpass $P$", "$P$BabcdefghZgV1QX.ynAe989yni4Kjr.", true],
  ["phpass $H$", "$H$BabcdefghZgV1QX.ynAe989yni4Kjr.", true],
  ["Drupal $S$", "$S$DabcdefghJVDcZ5xaKz3W0CTbcz5kwSomftJ6rwLRLQdOVmx2YG/", true],
  ["md5-crypt", "$1$abcdefgh$T73FosRY0vxaV2A67W9Td/", true],
  ["sha256-crypt", "$5$abcdefghijklmnop$SbIebC7KKuo8hpaRS08Iwyye3VWTiG8TdMaoj4G2O61", true],
  [
    "sha256-crypt rounds=1000",
    "$5$rounds=1000$abcdefghijklmnop$e4jfLTxpkCo668nysotR7LLSDOcMrxo7CCNZLUZnhw8",
    true,
  ],
  [
    "sha512-crypt",
    "$6$abcdefghijklmnop$qfGnOADWghtIv.7yQwSuRoz9xAzhX7V8xdKtouaLSlDsv71q5BliZyb7/6PW7Ng2360XGPTnZRyseDEZrjca40",
    true,
  ],
  [
    "sha512-crypt rounds=1000",
    "$6$rounds=1000$abcdefghijklmnop$iiLU0g72S/Qv3T7x2RnW6NMxpbXmpoyEoIsowtnpigITF4nc2Pk/99AX4l9.Ae.UJLpN5g1rANz8c.UL6NqWr0",
    true,
  ],
  ["bcrypt $2b$", "$2b$04$abcdefghijklmnopqrstuuKbhdst8IcVN4BCYxi8l8Qw53uKr4EiO", true],
  ["bcrypt $2y$", "$2y$04$abcdefghijklmnopqrstuuKbhdst8IcVN4BCYxi8l8Qw53uKr4EiO", true],
  ["bcrypt $2a$", "$2a$04$abcdefghijklmnopqrstuuKbhdst8IcVN4BCYxi8l8Qw53uKr4EiO", true],
  ["ownCloud 1|bcrypt", "1|$2y$04$abcdefghijklmnopqrstuuKbhdst8IcVN4BCYxi8l8Qw53uKr4EiO", true],
  ["argon2id", "$argon2id$v=19$m=1024,t=2,p=1$c2FsdHNhbHQ$gsoZzV6IuZEu61i4volfdw", false],
  ["{MD5}", "{MD5}vtEoNlIWwBmYiRXtOt11+w==", false],
  ["{SMD5}", "{SMD5}jRkhCqqji7Ct82Bp4vH4EAECAwQ=", false],
  ["plain text", "passw0rd", false],
  // privacyIDEA's own test table (tests/testdata/testuser.sqlite)
  [
    "uid 1 {SSHA512}",
    "{SSHA512}zMpVSq1S/iJXpTYciIxssmDi+0iUpBZFNPfWh0W9rnZFNvzQekuAhPEBEjEFqGEFsITfzo+LB0HTwcudZLcWm4meOzAn53kV",
    true,
    "dunno",
  ],
  ["uid 2 {sha}", "{sha}Lg8DuLoXOwvPkMABDprnaTp0JOA=", true, "dunno"],
  [
    "uid 3 hex",
    "772cb52221f19104310cd2f549f5131fbfd34e0f4de7590c87b1d73175812607",
    true,
    "dunno",
  ],
  [
    "uid 4 {SSHA256}",
    "{SSHA256}N/5ldHrOpA6mmaNL/We+l46eknbYbwAJqUE+NIg+F/J99MtaLNZ6kg==",
    true,
    "dunno",
  ],
  ["uid 5 {SSHA}", "{SSHA}eV5bPE1TQHSQjR6ftdCkacgfVGq6klq9AhY0Cw==", true, "dunno"],
  ["uid 6 phpass", "$P$Bz4R6lzp6VWCL0SCeTozqKHNV8DM.Q/", true, "testpassword"],
  ["uid 8 md5-crypt", "$1$27e9fa19$3kcmziS.qohx37OeX2wXh0", true, "dunno"],
  [
    "uid 9 sha512-crypt",
    "$6$c456f4138f6abd86$olCbisHE8l7h8wDQ66F5YVenwTbxpzxUiwInTyzqJAsDaBQisJ/BUtdPkPDO2woEpc8UomvK2GeY6gaRSJcM/0",
    true,
    "dunno",
  ],
  ["uid 10 bcrypt", "$2y$10$o5nv09TSzlv9LNagLhVgg.rQ18UT8UvdWCoRjWeEO4lVi56rYwU8y", true, "test"],
  [
    "uid 12 sha256-crypt",
    "$5$rounds=535000$eZ62LxFJndaxK6aP$P1LN1PUjEpGkLt1GAgn8Kqyjo1Z79irv4JEZ3NzjBS0",
    true,
    "dunno",
  ],
  ["uid 13 unknown id", "{ABCDE}/uLKGSMh", false, "dunno"],
];

Deno.test("verifyCryptHash gives privacyIDEA's SQL resolver answer for each of its vectors", async () => {
  for (const [name, hash, expected, password = "passw0rd"] of PI_VECTORS) {
    assert.equal(await verifyCryptHash(hash, password), expected, name);
    assert.equal(await verifyCryptHash(hash, password + "x"), false, `${name}: wrong password`);
  }
});

Deno.test("phpassHash rebuilds the phpass and Drupal vectors; rounds outside 7-30 are refused", () => {
  assert.equal(phpassHash("P", "passw0rd", "B", "abcdefgh"), "$P$BabcdefghZgV1QX.ynAe989yni4Kjr.");
  assert.equal(
    phpassHash("S", "passw0rd", "D", "abcdefgh"),
    "$S$DabcdefghJVDcZ5xaKz3W0CTbcz5kwSomftJ6rwLRLQdOVmx2YG/",
  );
  // a password longer than one MD5 block after the 16-byte digest
  const long = "p".repeat(100);
  const hash = phpassHash("P", long, "7", "saltsalt")!;
  assert.equal(hash.length, 34);
  assert.equal(phpassHash("P", long, "7", "saltsalt"), hash);
  assert.equal(phpassHash("P", "x", "4", "abcdefgh"), undefined);
  assert.equal(phpassHash("P", "x", "z", "abcdefgh"), undefined);
});

Deno.test("hashCryptPassword writes PHPASS as $P$H and OTRS as lower-case hex", () => {
  const salt = new Uint8Array(22).fill(7);
  assert.match(hashCryptPassword("PHPASS", "passw0rd", salt), /^\$P\$H[./0-9A-Za-z]{30}$/);
  assert.equal(
    hashCryptPassword("OTRS", "passw0rd", salt),
    "8f0e2f76e22b43e2855189877e7dc1e1e7d98c226c95db247cd1d547928334a9",
  );
});
