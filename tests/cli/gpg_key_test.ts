/**
 * `tessera import gpgkey`: an operator's OpenPGP key (privacyIDEA's GnuPG key) becomes an import
 * key. The fixtures were made with GnuPG 2.2 (`gpg --quick-gen-key` RSA 2048 with an encryption
 * subkey, `gpg --export-secret-keys --armor` → tests/fixtures/gpg/import_key.asc, and
 * `gpg --armor -r import@tessera.test --encrypt` of a two-line OATH CSV → oath.csv.asc), so the
 * test shows GnuPG's key and message format work end to end.
 */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { gpgKeyCommand, gpgKeyInput } from "../../src/cli/gpg_key.ts";
import { hotp } from "../fixtures/tokens.ts";
import { findTokenBySerial } from "../../src/domain/token/mod.ts";
import { serverDatabase } from "./_server.ts";

const KEY_FILE = new URL("../fixtures/gpg/import_key.asc", import.meta.url).pathname;
const MESSAGE_FILE = new URL("../fixtures/gpg/oath.csv.asc", import.meta.url).pathname;
const KEY_ID = "3637465EBEAE2E0B";
const FINGERPRINT = "A5C83308438054DF6799FEEE3637465EBEAE2E0B";
const MAIN = new URL("../../main.ts", import.meta.url).pathname;

async function run(t: TestApp, file: string, flags: [string, string][] = []) {
  const lines: string[] = [];
  await gpgKeyCommand(t.deps, await gpgKeyInput(file, new Map(flags)), {
    line: (l) => lines.push(l),
  });
  return lines;
}

async function upload(t: TestApp, file: string) {
  const form = new FormData();
  form.set("type", "oathcsv");
  form.set("file", new File([file], "tokens.asc"));
  const res = await t.app.request("http://localhost/token/load/tokens.asc", {
    method: "POST",
    body: form,
    headers: { "PI-Authorization": await t.adminToken() },
  }, { remoteAddr: { hostname: "127.0.0.1" } });
  return await jsonOf(res);
}

async function keyCount(t: TestApp): Promise<number> {
  return (await t.deps.db.selectFrom("importkey").select("keyid").execute()).length;
}

Deno.test("tessera import gpgkey: GnuPG's exported key is listed and decrypts a GnuPG-encrypted OATH CSV upload", async () => {
  const t = await createTestApp();
  try {
    assert.deepEqual(await run(t, KEY_FILE), [`added: ${KEY_ID} (fingerprint ${FINGERPRINT})`]);
    const keys = await jsonOf(await t.asAdmin("GET", "/system/gpgkeys"));
    assert.equal(keys.status, 200);
    // the operator's key is the import key: none is generated beside it
    assert.deepEqual(Object.keys(keys.body.result.value), [KEY_ID]);
    assert.equal(keys.body.result.value[KEY_ID].fingerprint, FINGERPRINT);
    const pub = await openpgp.readKey({ armoredKey: keys.body.result.value[KEY_ID].armor });
    assert.equal(pub.isPrivate(), false);
    const res = await upload(t, await Deno.readTextFile(MESSAGE_FILE));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.result.value, { n_imported: 2, n_not_imported: 0 });
    assert.equal((await findTokenBySerial(t.deps, "GNUPG0002"))?.type, "totp");
    const check = await jsonOf(
      await t.post("/validate/check", { serial: "GNUPG0001", pass: hotp(0) }),
    );
    assert.equal(check.body.result.value, true);
    // again: the same key id is replaced, not added twice
    assert.deepEqual(await run(t, KEY_FILE), [`replaced: ${KEY_ID} (fingerprint ${FINGERPRINT})`]);
    assert.equal(await keyCount(t), 1);
  } finally {
    await t.close();
  }
});

Deno.test("tessera import gpgkey: a protected key needs its passphrase; a public key or garbage is refused, nothing stored", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-gpgkey-" });
  try {
    const { privateKey, publicKey } = await openpgp.generateKey({
      type: "ecc",
      userIDs: [{ name: "protected" }],
      passphrase: "correct horse",
      format: "armored",
    });
    await Deno.writeTextFile(`${dir}/protected.asc`, privateKey);
    await Deno.writeTextFile(`${dir}/public.asc`, publicKey);
    await Deno.writeTextFile(`${dir}/garbage.asc`, "not a key\n");
    await Deno.writeTextFile(`${dir}/wrong`, "wrong horse\n");
    await Deno.writeTextFile(`${dir}/right`, "correct horse\n");
    await assert.rejects(run(t, `${dir}/protected.asc`), /is protected by a passphrase/);
    await assert.rejects(
      run(t, `${dir}/protected.asc`, [["passphrase-file", `${dir}/wrong`]]),
      /Incorrect key passphrase/,
    );
    await assert.rejects(run(t, `${dir}/public.asc`), /not an armoured OpenPGP private key/);
    await assert.rejects(run(t, `${dir}/garbage.asc`), /not an armoured OpenPGP private key/);
    assert.equal(await keyCount(t), 0);
    const added = await run(t, `${dir}/protected.asc`, [["passphrase-file", `${dir}/right`]]);
    assert.match(added[0], /^added: [0-9A-F]{16} \(fingerprint [0-9A-F]{40}\)$/);
    // stored unlocked (the server has no passphrase to give) and encrypted with the key file
    const [row] = await t.deps.db.selectFrom("importkey").selectAll().execute();
    assert.equal(row.origin, "imported");
    assert.match(row.private_enc, /^g1:/);
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tessera import gpgkey as a process: usage, a bad file, the key added (run's engine)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-gpgkey-" });
  const target = await serverDatabase();
  const cli = async (...args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "--data-dir", `${dir}/data`, "import", "gpgkey", ...args],
      stdin: "null",
      env: { NO_COLOR: "1", ...target.env },
    }).output();
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
  };
  try {
    const usage = await cli();
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /^tessera import gpgkey needs one key file/);
    const foreign = await cli(KEY_FILE, "--enckey", "x");
    assert.equal(foreign.code, 2);
    assert.match(foreign.stderr, /--enckey is not an option of tessera import gpgkey/);
    const missing = await cli(`${dir}/nothing.asc`);
    assert.equal(missing.code, 1, missing.stderr);
    assert.match(missing.stderr, /^Error: No such file or directory/);
    // nothing of Tessera's was created for a file that is not there
    assert.equal(await Deno.stat(`${dir}/data`).then(() => true, () => false), false);
    const added = await cli(KEY_FILE);
    assert.equal(added.code, 0, added.stderr);
    assert.equal(added.stdout.trim(), `added: ${KEY_ID} (fingerprint ${FINGERPRINT})`);
  } finally {
    await target.drop();
    await Deno.remove(dir, { recursive: true });
  }
});
