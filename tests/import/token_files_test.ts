import assert from "node:assert/strict";
import { parseTokenFile } from "../../src/domain/import/mod.ts";
import { parseOathCsv, parseYubikeyCsv } from "../../src/domain/import/csv_files.ts";
import { parsePskc } from "../../src/domain/import/pskc.ts";
import { AppError, errorMessageOf } from "../../src/errors.ts";
import { plainFile, T12_PSK, t12File, T17_PSK, t17File, t18File } from "./_pskc.ts";

const SEED = "3132333435363738393031323334353637383930";
const enc = (s: string) => new TextEncoder().encode(s);

async function messageOf(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return errorMessageOf(err);
  }
  throw new Error("expected an error");
}

Deno.test("parseOathCsv reads spec 12 T19: owners, hashlib by key length, TANs", () => {
  const v2 = parseOathCsv(
    "# version: 2\n" +
      `alice, resolver1, realm1, OATH0001, ${SEED}, hotp, 6, 5\n` +
      `bob, resolver1, realm1, TOTP0001, ${"ab".repeat(32)}, totp, 8, 60\n`,
  );
  assert.deepEqual(v2.map((r) => [r.serial, r.type, r.hashlib, r.otplen]), [
    ["OATH0001", "hotp", "sha1", "6"],
    ["TOTP0001", "totp", "sha256", "8"],
  ]);
  assert.deepEqual(v2[0].owner, { login: "alice", resolver: "resolver1", realm: "realm1" });
  assert.equal(v2[0].counter, "5");
  assert.equal(v2[1].timeStep, "60");
  const tan = parseOathCsv(`# comment\n\nPITN0001, ${SEED}, tan, 111111 222222 333333\n`);
  assert.deepEqual(tan[0].tans, ["111111", "222222", "333333"]);
  assert.equal(tan[0].otplen, "6");
  assert.equal(tan[0].owner, undefined);
  // two fields: hotp
  assert.equal(parseOathCsv(`X1,${SEED}\n`)[0].type, "hotp");
});

Deno.test("parseOathCsv names the line of a bad record", async () => {
  assert.equal(
    await messageOf(() => parseOathCsv(`A1,${SEED},hotp,6,0\nA2,${SEED},hotp,6,x\n`)),
    'ERR304: Cannot import line 2: the counter of "A2" is not a number: "x"',
  );
  assert.equal(
    await messageOf(() => parseOathCsv(`A1,zz${SEED},hotp\n`)),
    'ERR304: Cannot import line 1: the key of "A1" is not a hex string',
  );
  assert.equal(
    await messageOf(() => parseOathCsv(`A1,${SEED},foo\n`)),
    'ERR304: Cannot import line 1: unknown token type "foo"',
  );
});

Deno.test("parseYubikeyCsv reads spec 12 T14 and T20", () => {
  const t14 = parseYubikeyCsv(
    "Yubico OTP,12/11/2013 11:10,1,vvgutbiedkvi,ab86c04de6a3,d26a7c0f85fdda28bd816e406342b214,,,0,0,0,0,0,0,0,0,0,0\n",
  );
  assert.deepEqual(
    [t14[0].serial, t14[0].type, t14[0].otplen, t14[0].description],
    ["UBAM280782705994231_1", "yubikey", "44", "vvgutbiedkvi"],
  );
  const t20 = parseYubikeyCsv([
    "Yubico OTP,12/11/2013 11:10,1,cbdefghijkln,0a0b0c0d0e0f,00112233445566778899aabbccddeeff,,,0,0,0,0,0,0,0,0,0,0",
    "1234567,cbdefghijkln,0a0b0c0d0e0f,00112233445566778899aabbccddeeff,,2024-01-01T10:00:00,",
    `1234568,,0,${SEED},,2024-01-01T10:00:00,`,
    "Static Password,12/11/2013 11:10,2,,,,",
  ].join("\n"));
  assert.deepEqual(t20.map((r) => [r.serial, r.type, r.otplen, r.description]), [
    ["UBAM1250999896491_1", "yubikey", "44", "cbdefghijkln"],
    ["UBAM1234567_X", "yubikey", "44", "cbdefghijkln"],
    ["UBOM1234568_X", "hotp", "6", ""],
  ]);
});

Deno.test("parsePskc: plain value (RFC 6030 figure 2)", async () => {
  const { records } = await parsePskc(plainFile());
  assert.equal(records.length, 1);
  assert.deepEqual(
    { ...records[0], where: undefined },
    {
      serial: "987654321",
      type: "hotp",
      otpkey: SEED,
      otplen: "8",
      hashlib: "sha1",
      description: "Manufacturer",
      counter: "0",
      where: undefined,
    },
  );
});

Deno.test("parsePskc: pre-shared key (T12, T17) and MAC modes", async () => {
  const good = await parsePskc(t12File(), { psk: T12_PSK });
  assert.equal(good.records.length, 2);
  assert.equal(good.records[0].otpkey, SEED);
  assert.equal(good.records[1].counter, "3");
  const tampered = t12File({ tamperA: true });
  assert.deepEqual(
    [
      (await parsePskc(tampered, { psk: T12_PSK })).records.length,
      (await parsePskc(tampered, { psk: T12_PSK })).notImported,
    ],
    [0, 2],
  );
  const soft = await parsePskc(tampered, { psk: T12_PSK, macMode: "check_fail_soft" });
  assert.deepEqual([soft.records.map((r) => r.serial), soft.notImported], [["PSKCB0001"], 1]);
  assert.equal(
    (await parsePskc(tampered, { psk: T12_PSK, macMode: "no_check" })).records.length,
    2,
  );
  const totp = (await parsePskc(t17File(), { psk: T17_PSK })).records[0];
  assert.deepEqual(
    [
      totp.serial,
      totp.type,
      totp.otpkey,
      totp.otplen,
      totp.hashlib,
      totp.timeStep,
      totp.timeShift,
      totp.description,
    ],
    ["TOTP0000TEST", "totp", SEED, "6", "sha1", "30", "4", "TestVendor"],
  );
});

Deno.test("parsePskc refuses a missing or wrong key with ERR304", async () => {
  assert.match(
    await messageOf(() => parsePskc(t12File())),
    /^ERR304: Failed to import tokendata\. Wrong encryption key\? /,
  );
  // a wrong key fails the padding, or at the latest the MAC of the MAC key's data
  const wrong = await messageOf(() =>
    parsePskc(t17File(), { psk: "ffeeddccbbaa99887766554433221100" })
  );
  assert.match(wrong, /^ERR304: Failed to import tokendata\. Wrong encryption key\? /);
  assert.equal(
    await messageOf(() => parseTokenFile({ type: "pskc", content: enc(t12File()), psk: "1234" })),
    "ERR301: The Pre Shared Key must be 128 Bit hex encoded. It must be 32 characters long!",
  );
});

Deno.test("parsePskc: PBKDF2 key from a password (T18)", async () => {
  const { records } = await parsePskc(t18File(), { password: "qwerty" });
  assert.deepEqual([records[0].serial, records[0].otpkey], ["987654322", SEED]);
  assert.equal(
    await messageOf(() => parsePskc(t18File())),
    "ERR304: The XML KeyContainer specifies a derived encryption key, but no password given!",
  );
  assert.match(
    await messageOf(() => parsePskc(t18File(), { password: "wrong" })),
    /Wrong encryption key/,
  );
});

Deno.test("parseTokenFile: empty, binary, unknown type, malformed XML, DOCTYPE", async () => {
  const cases: [Parameters<typeof parseTokenFile>[0], string][] = [
    [{ type: "oathcsv", content: enc("  \n") }, "ERR905: Error loading token file. File empty!"],
    [
      { type: "oathcsv", content: new Uint8Array([0xff, 0xfe, 0x00]) },
      "ERR905: Unable to convert file contents. Binary data is not supported",
    ],
    [
      { type: "csv", content: enc("x") },
      "ERR301: Unknown file type: 'csv'. Supported types are: aladdin-xml, oathcsv, OATH CSV, yubikeycsv, Yubikey CSV, pskc",
    ],
    [
      { type: "pskc", content: enc("<KeyContainer><KeyPackage></KeyContainer>") },
      "ERR304: Could not parse XML data: unexpected close tag. (line 1)",
    ],
    [
      { type: "pskc", content: enc("<Other/>") },
      "ERR304: No KeyContainer found in PSKC data. Could not import any tokens.",
    ],
  ];
  for (const [input, message] of cases) {
    assert.equal(await messageOf(() => parseTokenFile(input)), message);
  }
  const xxe = '<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n' +
    "<KeyContainer>&e;</KeyContainer>";
  assert.match(
    await messageOf(() => parseTokenFile({ type: "pskc", content: enc(xxe) })),
    /^ERR304: Could not parse XML data: documents with a DOCTYPE are not accepted/,
  );
});
