/**
 * `tessera import privacyidea` with tiqr tokens: an enrolled one arrives enabled with its
 * key and suite and answers the TiQR app's OCRA response (spec 14 §7 vector); one whose app
 * enrolment is still open keeps its session (plain tokeninfo in privacyIDEA), so the app can
 * finish it here; one with a suite the app cannot answer arrives disabled, with the reason.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { importPrivacyidea } from "../../src/domain/import/mod.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import type { Random } from "../../src/lib/random.ts";
import { createPiSqlite, ENC_KEY, piEncrypt, T4 } from "./_pi_fixture.ts";

const KEY20_HEX = "3132333435363738393031323334353637383930";
const SESSION = "c1c6664ab32f70b1dff792ac1525e7b06ea9d125";

/** A tiqr token row (PIN T4 = "1234", slot-0 encrypted key when given) with tokeninfo. */
function addTiqr(
  db: DatabaseSync,
  id: number,
  serial: string,
  key: string | undefined,
  info: [string, string][],
) {
  const enc = key === undefined ? ["", ""] : piEncrypt(0, "a0".repeat(16), key).split(":");
  db.prepare(`insert into token (id, description, serial, tokentype, otplen, pin_hash, key_enc,
    key_iv, user_pin, user_pin_iv, maxfail, active, revoked, locked, failcount, count,
    count_window, sync_window, rollout_state)
    values (?, '', ?, 'tiqr', 6, ?, ?, ?, null, null, 10, 1, 0, 0, 0, 0, 10, 1000, '')`)
    .run(id, serial, T4, enc[1], enc[0]);
  info.forEach(([k, v], i) => {
    db.prepare(`insert into tokeninfo values (?, ?, ?, '', '', ?)`).run(id * 10 + i, k, v, id);
  });
}

async function importTiqr(t: TestApp) {
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-tiqr-" });
  try {
    const made = await createPiSqlite(dir, t.clock.now());
    const db = new DatabaseSync(made.url.slice("sqlite:///".length));
    const suite: [string, string] = ["ocrasuite", "OCRA-1:HOTP-SHA1-6:QN10"];
    addTiqr(db, 901, "TiQR0001", KEY20_HEX, [suite, ["tokenkind", "software"]]);
    addTiqr(db, 902, "TiQR0002", undefined, [suite, ["session", SESSION]]);
    addTiqr(db, 903, "TiQR0003", KEY20_HEX, [["ocrasuite", "OCRA-1:HOTP-SHA1-6:C-QN10"]]);
    db.close();
    return await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("import privacyidea: tiqr tokens arrive enabled with key and suite and answer the app; an open enrolment can be finished; an unusable suite is disabled", async () => {
  const t = await createTestApp();
  try {
    const report = await importTiqr(t);
    const log = report.log.join("\n");
    assert.doesNotMatch(log, /TiQR000[12].*(disabled|failed)/, log);
    assert.match(log, /TiQR0003.*OCRA suite needs a counter, PIN, session or time input/);
    const one = await getTokenBySerial(t.deps, "TiQR0001");
    assert.equal(one.type, "tiqr");
    assert.equal(one.active, true);
    assert.equal(one.info.ocrasuite?.value, "OCRA-1:HOTP-SHA1-6:QN10");
    assert.equal((await getTokenBySerial(t.deps, "TiQR0003")).active, false);

    // the PIN starts the challenge; with every random draw 0, 1, 2, … the question is 0123456789
    const saved = t.deps.random;
    (t.deps as { random: Random }).random = {
      bytes: (n) => Uint8Array.from({ length: n }, (_, i) => i % 10),
    };
    const ch = await jsonOf(await t.post("/validate/check", { serial: "TiQR0001", pass: "1234" }));
    (t.deps as { random: Random }).random = saved;
    const tid = ch.body.detail.transaction_id;
    assert.match(ch.body.detail.attributes.value, new RegExp(`/${tid}/0123456789/privacyIDEA$`));
    const answer = await t.post("/ttype/tiqr", {
      userId: "x",
      sessionKey: tid,
      response: "618126",
      operation: "login",
    });
    assert.equal(await answer.text(), "OK");
    const ok = await jsonOf(
      await t.post("/validate/check", { serial: "TiQR0001", transaction_id: tid, pass: "" }),
    );
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));

    // the open enrolment: the app posts its secret with the session privacyIDEA gave it
    const enrol = await t.post("/ttype/tiqr", {
      action: "enrollment",
      serial: "TiQR0002",
      session: SESSION,
      secret: KEY20_HEX,
    });
    assert.equal(await enrol.text(), "OK");
    const two = await getTokenBySerial(t.deps, "TiQR0002");
    assert.notEqual(two.keyEnc, "");
    assert.equal(two.info.session, undefined);
  } finally {
    await t.close();
  }
});
