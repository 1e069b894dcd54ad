/**
 * OpenPGP-encrypted token files (spec 12 §1.8) over HTTP: `GET /system/gpgkeys` lists the
 * import key (generated once, kept encrypted in the database), a file encrypted to it is
 * imported by `POST /token/load`, a file for another key or broken armour is refused with
 * ERR304 and nothing imported; an operator's own key (privacyIDEA's, exported by GnuPG)
 * decrypts too.
 */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { hotp, SEED_HEX } from "../fixtures/tokens.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { findTokenBySerial, listTokens } from "../../src/domain/token/mod.ts";
import { createUsers } from "../fixtures/users.ts";
import { addAdmin } from "../../src/domain/admin/mod.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";

const OATH_CSV = `# version: 1
GPG0001, ${SEED_HEX}, hotp, 6
GPG0002, ${SEED_HEX}, totp, 8, 60
`;

async function userToken(t: TestApp): Promise<string> {
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "realm1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  return token;
}

async function upload(t: TestApp, type: string, file: string, token?: string) {
  const form = new FormData();
  form.set("type", type);
  form.set("file", new File([file], "tokens.asc"));
  const res = await t.app.request("http://localhost/token/load/tokens.asc", {
    method: "POST",
    body: form,
    headers: { "PI-Authorization": token ?? await t.adminToken() },
  }, { remoteAddr: { hostname: "127.0.0.1" } });
  return await jsonOf(res);
}

async function encryptTo(armoredKey: string, text: string): Promise<string> {
  return await openpgp.encrypt({
    message: await openpgp.createMessage({ text }),
    encryptionKeys: await openpgp.readKey({ armoredKey }),
  });
}

async function gpgKeys(t: TestApp) {
  const res = await jsonOf(await t.asAdmin("GET", "/system/gpgkeys"));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value as Record<string, { armor: string; fingerprint: string }>;
}

Deno.test("GET /system/gpgkeys: one import key, generated once, stored encrypted; any logged-in user reads it, no JWT 401", async () => {
  const t = await createTestApp();
  try {
    const keys = await gpgKeys(t);
    const ids = Object.keys(keys);
    assert.equal(ids.length, 1);
    const [keyid] = ids;
    assert.match(keyid, /^[0-9A-F]{16}$/);
    assert.match(keys[keyid].fingerprint, /^[0-9A-F]{40}$/);
    assert.ok(keys[keyid].fingerprint.endsWith(keyid));
    assert.match(keys[keyid].armor, /^-----BEGIN PGP PUBLIC KEY BLOCK-----/);
    const key = await openpgp.readKey({ armoredKey: keys[keyid].armor });
    assert.equal(key.isPrivate(), false);
    assert.equal(key.getFingerprint().toUpperCase(), keys[keyid].fingerprint);
    // the same key on the next request (and for a user: privacyIDEA asks for a login only)
    assert.deepEqual(await gpgKeys(t), keys);
    const asUser = await jsonOf(
      await t.request("GET", "/system/gpgkeys", { token: await userToken(t) }),
    );
    assert.equal(asUser.status, 200);
    assert.deepEqual(asUser.body.result.value, keys);
    const anonymous = await jsonOf(await t.request("GET", "/system/gpgkeys"));
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.result.status, false);
    // the private key is in the database encrypted, never in the clear
    const rows = await t.deps.db.selectFrom("importkey").selectAll().execute();
    assert.equal(rows.length, 1);
    assert.match(rows[0].private_enc, /^g1:/);
    assert.ok(!rows[0].private_enc.includes("PRIVATE KEY"));
    assert.ok(!JSON.stringify(asUser.body).includes("PRIVATE KEY"));
  } finally {
    await t.close();
  }
});

Deno.test("POST /token/load imports an OATH CSV file encrypted to the key of GET /system/gpgkeys", async () => {
  const t = await createTestApp();
  try {
    const [key] = Object.values(await gpgKeys(t));
    const res = await upload(t, "oathcsv", await encryptTo(key.armor, OATH_CSV));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.result.value, { n_imported: 2, n_not_imported: 0 });
    const list = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial: "GPG0002" } }));
    assert.equal(list.body.result.value.tokens[0].tokentype, "totp");
    assert.equal(list.body.result.value.tokens[0].otplen, 8);
    assert.equal((await findTokenBySerial(t.deps, "GPG0001"))?.info.tokenkind.value, "hardware");
    const check = async (serial: string, pass: string) =>
      (await jsonOf(await t.post("/validate/check", { serial, pass }))).body.result.value;
    assert.equal(await check("GPG0001", hotp(0)), true);
    assert.equal((await findTokenBySerial(t.deps, "GPG0002"))?.info.timeStep?.value, "60");
  } finally {
    await t.close();
  }
});

Deno.test("POST /token/load: a file for another key or broken armour is refused with ERR304, nothing imported", async () => {
  const t = await createTestApp();
  try {
    const other = await openpgp.generateKey({
      type: "ecc",
      userIDs: [{ name: "someone else" }],
      format: "armored",
    });
    // before any import key exists: refused, and none is generated for it
    const early = await upload(t, "oathcsv", await encryptTo(other.publicKey, OATH_CSV));
    assert.equal(early.status, 400, JSON.stringify(early.body));
    assert.equal(
      early.body.result.error.message,
      "ERR304: GPG decryption failed: there is no import key yet (GET /system/gpgkeys creates it)",
    );
    assert.equal((await t.deps.db.selectFrom("importkey").select("keyid").execute()).length, 0);
    await gpgKeys(t);
    const foreign = await upload(t, "oathcsv", await encryptTo(other.publicKey, OATH_CSV));
    assert.equal(foreign.status, 400, JSON.stringify(foreign.body));
    assert.equal(foreign.body.result.status, false);
    assert.equal(foreign.body.result.error.code, 304);
    assert.match(foreign.body.result.error.message, /^ERR304: GPG decryption failed: \S/);
    const garbage = await upload(
      t,
      "oathcsv",
      "-----BEGIN PGP MESSAGE-----\n\nbm90IGEgbWVzc2FnZQ==\n=AAAA\n-----END PGP MESSAGE-----\n",
    );
    assert.equal(garbage.status, 400, JSON.stringify(garbage.body));
    assert.match(garbage.body.result.error.message, /^ERR304: GPG decryption failed: \S/);
    assert.equal((await listTokens(t.deps, {})).count, 0);
  } finally {
    await t.close();
  }
});

Deno.test("rights: a realm-limited admin without importtokens reads the keys (no action, as privacyIDEA) but uploads no encrypted file", async () => {
  const t = await createTestApp();
  try {
    await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "pw" }] });
    await savePolicy(t.deps, "all", { scope: "admin", action: "*", adminuser: "admin" });
    await savePolicy(t.deps, "lister", {
      scope: "admin",
      action: "tokenlist",
      adminuser: "lister",
      realm: "realm1",
    });
    await addAdmin(t.deps, "lister", { password: "lister-password" });
    const login = await jsonOf(
      await t.post("/auth", { username: "lister", password: "lister-password" }),
    );
    const token = login.body.result.value.token;
    const keys = await jsonOf(await t.request("GET", "/system/gpgkeys", { token }));
    assert.equal(keys.status, 200, JSON.stringify(keys.body));
    assert.deepEqual(keys.body.result.value, await gpgKeys(t));
    const [key] = Object.values(keys.body.result.value as Record<string, { armor: string }>);
    const res = await upload(t, "oathcsv", await encryptTo(key.armor, OATH_CSV), token);
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(res.body.result.status, false);
    assert.equal((await listTokens(t.deps, {})).count, 0);
  } finally {
    await t.close();
  }
});
