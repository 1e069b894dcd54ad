/**
 * `tessera import privacyidea` carries push tokens with their keys (spec 13 §1.1): the app's
 * public key, the server's key pair (the private key a slot-1 "password" tokeninfo there,
 * encrypted with Tessera's key here) and the Firebase configuration; the app double then
 * polls, checks the server's signature with the key it got from privacyIDEA, and logs in.
 */
import assert from "node:assert/strict";
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, jsonOf } from "../test_app.ts";
import { importPrivacyidea } from "../../src/domain/import/mod.ts";
import { createPiSqlite, ENC_KEY, piEncrypt, T4 } from "./_pi_fixture.ts";
import { serveApp } from "../http/_serve_app.ts";
import { PUSH_CONFIG, PushApp } from "../http/_push_app.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { stripPem } from "../../src/domain/token/types/push.ts";

Deno.test("import privacyidea: a push token keeps its keys and the app logs in with it", async () => {
  const t = await createTestApp({ configText: PUSH_CONFIG });
  const served = serveApp(t);
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-push-" });
  try {
    const app = new PushApp(() => t.clock.now());
    const server = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      publicKeyEncoding: { type: "pkcs1", format: "pem" },
      privateKeyEncoding: { type: "pkcs1", format: "pem" },
    });
    const made = await createPiSqlite(dir, t.clock.now());
    const db = new DatabaseSync(made.url.slice("sqlite:///".length));
    db.prepare(`insert into token (id, description, serial, tokentype, otplen, pin_hash, key_enc,
      key_iv, user_pin, user_pin_iv, maxfail, active, revoked, locked, failcount, count,
      count_window, sync_window, rollout_state)
      values (901, '', 'PIPU0000AB12', 'push', 6, ?, '', '', null, null, 10, 1, 0, 0, 0, 0, 10,
      1000, 'enrolled')`).run(T4);
    const info: [string, string, string][] = [
      ["public_key_smartphone", app.pubkey(), ""],
      ["firebase_token", "", ""],
      ["push_firebase_configuration", "poll only", ""],
      ["public_key_server", server.publicKey, ""],
      [
        "private_key_server",
        piEncrypt(1, "0f".repeat(16), server.privateKey),
        "password",
      ],
    ];
    info.forEach(([k, v, type], i) => {
      db.prepare(`insert into tokeninfo values (?, ?, ?, ?, '', 901)`).run(9010 + i, k, v, type);
    });
    db.close();
    const report = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
    assert.ok(
      !report.log.some((l) => /PIPU0000AB12.*(disabled|failed|not)/.test(l)),
      report.log.join("\n"),
    );
    const token = await getTokenBySerial(t.deps, "PIPU0000AB12");
    assert.equal(token.type, "push");
    assert.equal(token.active, true);
    assert.equal(token.info.public_key_smartphone.value, app.pubkey());
    assert.equal(token.info.private_key_server.type, "password");
    assert.ok(!token.info.private_key_server.value.includes("PRIVATE KEY"), "stored encrypted");

    // the app as privacyIDEA had enrolled it
    app.serial = "PIPU0000AB12";
    app.url = `${served.url}/ttype/push`;
    app.serverKey = createPublicKey(
      `-----BEGIN RSA PUBLIC KEY-----\n${
        stripPem(server.publicKey)
      }\n-----END RSA PUBLIC KEY-----\n`,
    );
    await savePolicy(t.deps, "push_enrol", {
      scope: "enrollment",
      action: `push_firebase_configuration=poll only, push_registration_url=${app.url}`,
    });
    // the token has no owner here: checked by its serial
    const first = await jsonOf(
      await t.post("/validate/check", { serial: "PIPU0000AB12", pass: "1234" }),
    );
    assert.equal(first.body.result.authentication, "CHALLENGE", JSON.stringify(first.body));
    const [c] = (await app.poll()).body.result.value;
    assert.ok(app.isServerSigned(c), "signed with privacyIDEA's server key");
    assert.equal((await app.answer(c)).body.result.value, true);
    const done = await jsonOf(
      await t.post("/validate/check", {
        serial: "PIPU0000AB12",
        transaction_id: first.body.detail.transaction_id,
        pass: "",
      }),
    );
    assert.equal(done.body.result.value, true, JSON.stringify(done.body));
  } finally {
    await served.close();
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});
