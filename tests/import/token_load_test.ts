/**
 * `POST /token/load/<filename>` over HTTP: each file format imported and its
 * tokens validating; tampered MAC, wrong key and bad lines refused with
 * nothing stored; realm-limited admins only import into their realms.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { hotp, SEED_HEX, totp } from "../fixtures/tokens.ts";
import { addAdmin } from "../../src/domain/admin/mod.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { findTokenBySerial, listTokens } from "../../src/domain/token/mod.ts";
import { plainFile, T12_PSK, t12File, T17_PSK, t17File, t18File } from "./_pskc.ts";

const SECRET_B = "4142434445464748494a4b4c4d4e4f5051525354";

async function upload(
  t: TestApp,
  fields: Record<string, string>,
  file: string,
  options: { token?: string; path?: string } = {},
) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  form.set("file", new File([file], "tokens.txt"));
  const res = await t.app.request(`http://localhost${options.path ?? "/token/load/tokens.txt"}`, {
    method: "POST",
    body: form,
    headers: { "PI-Authorization": options.token ?? await t.adminToken() },
  }, { remoteAddr: { hostname: "127.0.0.1" } });
  return await jsonOf(res);
}

async function check(t: TestApp, body: Record<string, string>): Promise<boolean> {
  const res = await jsonOf(await t.post("/validate/check", body));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

async function tokenCount(t: TestApp): Promise<number> {
  return (await listTokens(t.deps, {})).count;
}

Deno.test("POST /token/load imports a PSKC file with a pre-shared key; its tokens validate", async () => {
  const t = await createTestApp();
  const res = await upload(t, { type: "pskc", psk: T12_PSK }, t12File({ secretB: SECRET_B }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.result.value, { n_imported: 2, n_not_imported: 0 });
  assert.equal(await check(t, { serial: "987654321", pass: hotp(0) }), true);
  assert.equal(await check(t, { serial: "987654321", pass: hotp(0) }), false);
  assert.equal(await check(t, { serial: "987654321", pass: hotp(1) }), true);
  // key B starts at the file's counter 3
  assert.equal(await check(t, { serial: "PSKCB0001", pass: hotp(2, SECRET_B) }), false);
  assert.equal(await check(t, { serial: "PSKCB0001", pass: hotp(3, SECRET_B) }), true);
  const a = await findTokenBySerial(t.deps, "987654321");
  assert.equal(a?.info.tokenkind.value, "hardware");
  assert.equal(a?.description, "Manufacturer");
  await t.close();
});

Deno.test("POST /token/load: a tampered MAC or a wrong key stores nothing", async () => {
  const t = await createTestApp();
  const tampered = t12File({ tamperA: true, secretB: SECRET_B });
  const hard = await upload(t, { type: "pskc", psk: T12_PSK }, tampered);
  assert.deepEqual(hard.body.result.value, { n_imported: 0, n_not_imported: 2 });
  assert.equal(await tokenCount(t), 0);
  const wrong = await upload(
    t,
    { type: "pskc", psk: "ffeeddccbbaa99887766554433221100" },
    t12File(),
  );
  assert.equal(wrong.status, 400);
  assert.match(wrong.body.result.error.message, /^ERR304: Failed to import tokendata\./);
  const none = await upload(t, { type: "pskc" }, t12File());
  assert.equal(none.status, 400);
  assert.equal(await tokenCount(t), 0);
  // soft: only the good key
  const soft = await upload(
    t,
    { type: "pskc", psk: T12_PSK, pskcValidateMAC: "check_fail_soft" },
    tampered,
  );
  assert.deepEqual(soft.body.result.value, { n_imported: 1, n_not_imported: 1 });
  assert.equal(await findTokenBySerial(t.deps, "987654321"), undefined);
  await t.close();
});

Deno.test("POST /token/load: PSKC TOTP (T17), PBKDF2 (T18) and plain (RFC 6030 figure 2)", async () => {
  const t = await createTestApp();
  const totpRes = await upload(t, { type: "pskc", psk: T17_PSK }, t17File());
  assert.deepEqual(totpRes.body.result.value, { n_imported: 1, n_not_imported: 0 });
  const token = await findTokenBySerial(t.deps, "TOTP0000TEST");
  assert.equal(token?.info.timeShift.value, "4");
  assert.equal(await check(t, { serial: "TOTP0000TEST", pass: totp(t.clock.now()) }), true);
  const pbkdf2 = await upload(t, { type: "pskc", password: "qwerty" }, t18File());
  assert.deepEqual(pbkdf2.body.result.value, { n_imported: 1, n_not_imported: 0 });
  assert.equal(await check(t, { serial: "987654322", pass: hotp(0) }), true);
  const plain = await upload(t, { type: "pskc" }, plainFile());
  assert.deepEqual(plain.body.result.value, { n_imported: 1, n_not_imported: 0 });
  assert.equal(await check(t, { serial: "987654321", pass: hotp(0, SEED_HEX, 8) }), true);
  await t.close();
});

Deno.test("POST /token/load: OATH CSV with owners; a bad line refuses the whole file", async () => {
  const t = await createTestApp();
  const resolver = await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice" }] });
  await createUsers(t.deps, { realm: "realm2", users: [{ login: "carol" }] });
  const good = await upload(
    t,
    { type: "oathcsv", tokenrealms: "realm2" },
    `# version: 2\nalice, ${resolver}, realm1, OATH0001, ${SEED_HEX}, hotp, 6, 5\n`,
  );
  assert.deepEqual(good.body.result.value, { n_imported: 1, n_not_imported: 0 });
  const token = await findTokenBySerial(t.deps, "OATH0001");
  assert.equal(token?.owner?.login, "alice");
  assert.deepEqual(token?.realms, ["realm1", "realm2"]);
  assert.equal(await check(t, { user: "alice", realm: "realm1", pass: hotp(5) }), true);
  const bad = await upload(
    t,
    { type: "OATH CSV" },
    `OATH0002,${SEED_HEX},hotp,6,0\nOATH0003,${SEED_HEX},totp,6,30\nOATH0004,${SEED_HEX},hotp,6,x\n`,
  );
  assert.equal(bad.status, 400);
  assert.equal(
    bad.body.result.error.message,
    'ERR304: Cannot import line 3: the counter of "OATH0004" is not a number: "x"',
  );
  // a type the OATH CSV format does not name refuses the file, also all or nothing
  const unknown = await upload(
    t,
    { type: "oathcsv" },
    `OATH0005,${SEED_HEX},hotp,6,0\nTIQR0001,${SEED_HEX},tiqr,6\n`,
  );
  assert.equal(unknown.status, 400);
  assert.equal(
    unknown.body.result.error.message,
    'ERR304: Cannot import line 2: unknown token type "tiqr"',
  );
  assert.equal(await tokenCount(t), 1);
  const missingUser = await upload(
    t,
    { type: "oathcsv" },
    `# version: 2\nnobody, ${resolver}, realm1, OATH0006, ${SEED_HEX}\n`,
  );
  assert.equal(missingUser.status, 400);
  assert.match(missingUser.body.result.error.message, /line 2: user "nobody" not found/);
  assert.equal(await tokenCount(t), 1);
  await t.close();
});

Deno.test("POST /token/load: Yubikey CSV OATH-HOTP slot; an existing serial is re-initialised", async () => {
  const t = await createTestApp();
  const line = `1234568,,0,${SEED_HEX},,2024-01-01T10:00:00,\n`;
  const res = await upload(t, { type: "yubikeycsv" }, line);
  assert.deepEqual(res.body.result.value, { n_imported: 1, n_not_imported: 0 });
  assert.equal(await check(t, { serial: "UBOM1234568_X", pass: hotp(0) }), true);
  // the same serial again: new key, counter from the file (0)
  const again = await upload(t, { type: "Yubikey CSV" }, line.replace(SEED_HEX, SECRET_B));
  assert.deepEqual(again.body.result.value, { n_imported: 1, n_not_imported: 0 });
  assert.equal(await check(t, { serial: "UBOM1234568_X", pass: hotp(0, SECRET_B) }), true);
  assert.equal(await tokenCount(t), 1);
  await t.close();
});

Deno.test("POST /token/load: OATH CSV TAN list (spec 12 T19)", async () => {
  const t = await createTestApp();
  const res = await upload(
    t,
    { type: "oathcsv" },
    `PITN0001, ${SEED_HEX}, tan, 111111 222222 333333\n`,
  );
  assert.deepEqual(res.body.result.value, { n_imported: 1, n_not_imported: 0 });
  assert.equal(await check(t, { serial: "PITN0001", pass: "222222" }), true);
  assert.equal(await check(t, { serial: "PITN0001", pass: "222222" }), false);
  assert.equal(await check(t, { serial: "PITN0001", pass: "444444" }), false);
  await t.close();
});

Deno.test("POST /token/load: parameter errors", async () => {
  const t = await createTestApp();
  const cases: [Record<string, string>, string, number, string][] = [
    [{}, "x", 400, "ERR905: Missing parameter: 'type'"],
    [{ type: "oathcsv" }, "", 400, "ERR905: Error loading token file. File empty!"],
    [
      { type: "pskc", psk: "abc" },
      t12File(),
      400,
      "ERR301: The Pre Shared Key must be 128 Bit hex encoded. It must be 32 characters long!",
    ],
  ];
  for (const [fields, file, status, message] of cases) {
    const res = await upload(t, fields, file);
    assert.equal(res.status, status, JSON.stringify(fields));
    assert.equal(res.body.result.error.message, message);
  }
  await t.close();
});

Deno.test("POST /token/load: realm-limited admins import only into their realms", async () => {
  const t = await createTestApp();
  const r1 = await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice" }] });
  const r2 = await createUsers(t.deps, { realm: "realm2", users: [{ login: "carol" }] });
  await savePolicy(t.deps, "all", { scope: "admin", action: "*", adminuser: "admin" });
  await savePolicy(t.deps, "sub", {
    scope: "admin",
    action: "importtokens, tokenlist",
    adminuser: "sub",
    realm: "realm1",
  });
  await savePolicy(t.deps, "other", { scope: "admin", action: "tokenlist", adminuser: "other" });
  await addAdmin(t.deps, "sub", { password: "sub-password" });
  await addAdmin(t.deps, "other", { password: "other-password" });
  const login = async (username: string, password: string) =>
    (await jsonOf(await t.post("/auth", { username, password }))).body.result.value.token;
  const sub = await login("sub", "sub-password");
  const other = await login("other", "other-password");
  const csv = (serial: string) => `${serial},${SEED_HEX},hotp,6,0\n`;
  const denied = "Admin actions are defined, but you are not allowed to upload token files.";
  const cases: [string, Record<string, string>, string, number][] = [
    [sub, { type: "oathcsv", tokenrealms: "realm2" }, csv("T2"), 403],
    [sub, { type: "oathcsv", tokenrealms: "realm1,realm2" }, csv("T3"), 403],
    // a token in no realm: only for admins not limited to realms
    [sub, { type: "oathcsv" }, csv("T4"), 403],
    // owner in another realm, named by the file
    [
      sub,
      { type: "oathcsv", tokenrealms: "realm1" },
      `# version: 2\ncarol,${r2},realm2,T5,${SEED_HEX}\n`,
      403,
    ],
    [other, { type: "oathcsv" }, csv("T6"), 403],
    [
      sub,
      { type: "oathcsv", tokenrealms: "realm1" },
      `# version: 2\nalice,${r1},realm1,T1,${SEED_HEX}\n`,
      200,
    ],
  ];
  for (const [token, fields, file, status] of cases) {
    const res = await upload(t, fields, file, { token });
    assert.equal(res.status, status, `${JSON.stringify(fields)} ${file}`);
    if (status === 403) assert.equal(res.body.result.error.message, denied);
  }
  assert.deepEqual((await listTokens(t.deps, {})).tokens.map((x) => x.serial), ["T1"]);
  await t.close();
});
