/**
 * `tessera import privacyidea` with tokens of the spec 14 types Tessera has: each
 * arrives enabled with its secret and authenticates with the spec's vectors.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { importPrivacyidea } from "../../src/domain/import/mod.ts";
import { createPiSqlite, ENC_KEY, piEncrypt, T4 } from "./_pi_fixture.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { serveApp } from "../http/_serve_app.ts";
import { VECTOR } from "../http/_u2f.ts";
import { Buffer } from "node:buffer";

/** A token row (slot-0 encrypted key and user PIN) with tokeninfo. */
function addToken(
  db: DatabaseSync,
  id: number,
  row: { serial: string; type: string; key?: string; userPin?: string; otplen?: number },
  info: [string, string][] = [],
) {
  const key = row.key === undefined ? ["", ""] : piEncrypt(0, "a0".repeat(16), row.key).split(":");
  const pin = row.userPin === undefined
    ? [null, null]
    : piEncrypt(0, "b1".repeat(16), row.userPin).split(":");
  db.prepare(`insert into token (id, description, serial, tokentype, otplen, pin_hash, key_enc,
    key_iv, user_pin, user_pin_iv, maxfail, active, revoked, locked, failcount, count,
    count_window, sync_window, rollout_state)
    values (?, '', ?, ?, ?, ?, ?, ?, ?, ?, 10, 1, 0, 0, 0, 0, 10, 1000, '')`)
    .run(id, row.serial, row.type, row.otplen ?? 6, T4, key[1], key[0], pin[1], pin[0]);
  info.forEach(([k, v], i) => {
    db.prepare(`insert into tokeninfo values (?, ?, ?, '', '', ?)`).run(id * 10 + i, k, v, id);
  });
}

async function importWith(
  t: TestApp,
  fill: (db: DatabaseSync) => void,
): Promise<Awaited<ReturnType<typeof importPrivacyidea>>> {
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-types-" });
  try {
    const made = await createPiSqlite(dir, t.clock.now());
    const db = new DatabaseSync(made.url.slice("sqlite:///".length));
    fill(db);
    db.close();
    return await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function tokenOf(t: TestApp, serial: string) {
  const res = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
  return res.body.result.value.tokens[0];
}

Deno.test("import privacyidea: an motp token arrives enabled with key and mOTP PIN", async () => {
  const t = await createTestApp();
  try {
    const report = await importWith(t, (db) => {
      addToken(db, 801, {
        serial: "PIMO0001",
        type: "motp",
        key: "0123456789abcdef",
        userPin: "6666",
      });
    });
    assert.ok(
      !report.log.some((l) => /PIMO0001.*(disabled|failed)/.test(l)),
      report.log.join("\n"),
    );
    const token = await tokenOf(t, "PIMO0001");
    assert.equal(token.tokentype, "motp");
    assert.equal(token.active, true);
    assert.equal(token.info.motppin, undefined);
    t.clock.set(129612120 * 10_000);
    const ok = await jsonOf(
      await t.post("/validate/check", { serial: "PIMO0001", pass: "12346ed4e4" }),
    );
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  } finally {
    await t.close();
  }
});

Deno.test("import privacyidea: ocra tokens arrive enabled with key and suite; unusable suites disabled", async () => {
  const t = await createTestApp();
  try {
    const report = await importWith(t, (db) => {
      addToken(
        db,
        802,
        { serial: "OCRA0001", type: "ocra", key: "3132333435363738393031323334353637383930" },
        [["ocrasuite", "OCRA-1:HOTP-SHA1-6:QN08"]],
      );
      addToken(
        db,
        803,
        { serial: "OCRA0002", type: "ocra", key: "3132333435363738393031323334353637383930" },
        [["ocrasuite", "OCRA-1:HOTP-SHA256-8:C-QN08-PSHA1"]],
      );
    });
    const log = report.log.join("\n");
    assert.ok(!/OCRA0001.*disabled/.test(log), log);
    assert.match(log, /OCRA0002.*OCRA suite needs a counter, PIN, session or time input/);
    assert.equal((await tokenOf(t, "OCRA0001")).active, true);
    assert.equal((await tokenOf(t, "OCRA0002")).active, false);
    // the question is 11111111 while every random byte is 1: RFC 6287 response 243178
    const saved = t.deps.random;
    (t.deps as { random: typeof saved }).random = { bytes: (n) => new Uint8Array(n).fill(1) };
    const ch = await jsonOf(await t.post("/validate/check", { serial: "OCRA0001", pass: "1234" }));
    (t.deps as { random: typeof saved }).random = saved;
    assert.equal(ch.body.detail.attributes.challenge, "11111111", JSON.stringify(ch.body));
    const ok = await jsonOf(
      await t.post("/validate/check", {
        serial: "OCRA0001",
        transaction_id: ch.body.detail.transaction_id,
        pass: "243178",
      }),
    );
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  } finally {
    await t.close();
  }
});

Deno.test("import privacyidea: vasco and daplug tokens are reported by serial, not imported", async () => {
  const t = await createTestApp();
  try {
    const report = await importWith(t, (db) => {
      addToken(db, 804, { serial: "VASC0001", type: "vasco", key: "ab".repeat(248) });
      addToken(db, 805, { serial: "DPLG0001", type: "daplug", key: "3132333435363738393031" });
    });
    const log = report.log.join("\n");
    assert.match(log, /not imported: token VASC0001 \(type "vasco": .*closed library\)/);
    assert.match(log, /not imported: token DPLG0001 \(type "daplug": .*not supported/);
    assert.doesNotMatch(log, /token (VASC|DPLG)0001: .*imported disabled/);
    for (const serial of ["VASC0001", "DPLG0001"]) {
      const res = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
      assert.equal(res.body.result.value.count, 0, serial);
    }
    const tokens = report.summary.find((r) => r.what === "tokens");
    assert.ok(tokens && tokens.failed >= 2, JSON.stringify(tokens));
  } finally {
    await t.close();
  }
});

Deno.test("import privacyidea: server definitions come along; remote tokens name them by the new id", async () => {
  const t = await createTestApp();
  const b = await createTestApp();
  await createUsers(b.deps, { realm: "realm1", users: [{ login: "bob" }] });
  await enrollHotp(b, { user: "bob", realm: "realm1", pin: "bp" });
  const served = serveApp(b);
  try {
    // an existing definition here, so the imported one gets another id than privacyIDEA's 7
    await jsonOf(
      await t.asAdmin("POST", "/privacyideaserver/here", { body: { url: "https://x.example" } }),
    );
    const report = await importWith(t, (db) => {
      db.exec(`create table privacyideaserver (id integer primary key,
        identifier varchar(255) unique, url varchar(255), tls boolean, description varchar(2000))`);
      db.prepare(`insert into privacyideaserver values (7, 'nodeB', ?, 0, 'child')`)
        .run(served.url);
      addToken(db, 806, { serial: "PIRE0001", type: "remote" }, [
        ["remote.server_id", "7"],
        ["remote.user", "bob"],
        ["remote.realm", "realm1"],
        ["remote.local_checkpin", "0"],
      ]);
      addToken(db, 807, { serial: "PIRE0002", type: "remote" }, [
        ["remote.server", "https://legacy.example"],
        ["remote.user", "bob"],
      ]);
    });
    const log = report.log.join("\n");
    const servers = report.summary.find((r) => r.what === "privacyIDEA servers");
    assert.deepEqual([servers?.found, servers?.imported], [1, 1], log);
    assert.doesNotMatch(log, /not imported: .*privacyideaserver/);
    const defs = (await jsonOf(await t.asAdmin("GET", "/privacyideaserver/"))).body.result.value;
    assert.deepEqual(
      { url: defs.nodeB.url, tls: defs.nodeB.tls, description: defs.nodeB.description },
      { url: served.url, tls: false, description: "child" },
    );
    assert.notEqual(defs.nodeB.id, 7);
    const token = await tokenOf(t, "PIRE0001");
    assert.equal(token.active, true, log);
    assert.equal(token.info["remote.server_id"], String(defs.nodeB.id));
    assert.match(log, /PIRE0002: its privacyIDEA server is not a definition/);
    assert.equal((await tokenOf(t, "PIRE0002")).active, false);
    // the imported token asks the second Tessera (imported PIN 1234 is not checked: remote PIN)
    const ok = await jsonOf(
      await t.post("/validate/check", { serial: "PIRE0001", pass: "bp" + hotp(0) }),
    );
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    assert.equal(served.seen.at(-1)?.form.get("user"), "bob");
  } finally {
    await served.close();
    await b.close();
    await t.close();
  }
});

Deno.test("import privacyidea: an applspec token arrives enabled with its password and service", async () => {
  const t = await createTestApp();
  try {
    const report = await importWith(t, (db) => {
      addToken(db, 806, { serial: "ASPW0001", type: "applspec", key: "S3cret!", otplen: 7 }, [
        ["service_id", "mail"],
      ]);
    });
    assert.ok(
      !report.log.some((l) => /ASPW0001.*(disabled|failed)/.test(l)),
      report.log.join("\n"),
    );
    const token = await tokenOf(t, "ASPW0001");
    assert.equal(token.tokentype, "applspec");
    assert.equal(token.active, true);
    assert.equal(token.info.service_id, "mail");
    // the fixture's PIN (T4) is 1234
    const ok = await jsonOf(
      await t.post("/validate/check", {
        serial: "ASPW0001",
        pass: "1234S3cret!",
        service_id: "Mail",
      }),
    );
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    const without = await jsonOf(
      await t.post("/validate/check", { serial: "ASPW0001", pass: "1234S3cret!" }),
    );
    assert.equal(without.body.result.value, false, JSON.stringify(without.body));
  } finally {
    await t.close();
  }
});

Deno.test("import privacyidea: a 4eyes token arrives enabled with its realms and separator", async () => {
  const t = await createTestApp();
  try {
    const report = await importWith(t, (db) => {
      addToken(db, 808, { serial: "PI4E0001", type: "4eyes" }, [
        ["4eyes", "Admins:1"],
        ["separator", "|"],
        ["tokenkind", "virtual"],
      ]);
    });
    assert.ok(
      !report.log.some((l) => /PI4E0001.*(disabled|failed)/.test(l)),
      report.log.join("\n"),
    );
    const token = await tokenOf(t, "PI4E0001");
    assert.equal(token.tokentype, "4eyes");
    assert.equal(token.active, true);
    assert.equal(token.info.separator, "|");
    // an admin's token in realm admins authenticates it
    await createUsers(t.deps, { realm: "admins", users: [{ login: "ann", password: "annpw" }] });
    await enrollHotp(t, { pin: "a1", user: "ann", realm: "admins" });
    const ok = await jsonOf(
      await t.post("/validate/check", { serial: "PI4E0001", pass: `|a1${hotp(0)}` }),
    );
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  } finally {
    await t.close();
  }
});

Deno.test("import privacyidea: a u2f token arrives enabled with key handle, pubKey, appId, counter and attestation, and answers the real device's vector once", async () => {
  const t = await createTestApp();
  try {
    const keyHandleHex = Buffer.from(VECTOR.keyHandle, "base64url").toString("hex");
    const report = await importWith(t, (db) => {
      addToken(db, 804, { serial: VECTOR.serial, type: "u2f", key: keyHandleHex }, [
        ["pubKey", VECTOR.pubKey],
        ["appId", VECTOR.appId],
        ["attestation_subject", VECTOR.subject],
        ["attestation_issuer", VECTOR.issuer],
        ["attestation_serial", VECTOR.certSerial],
      ]);
    });
    const log = report.log.join("\n");
    assert.ok(!new RegExp(`${VECTOR.serial}.*(disabled|failed)`).test(log), log);
    const token = await tokenOf(t, VECTOR.serial);
    assert.equal(token.tokentype, "u2f");
    assert.equal(token.active, true);
    assert.equal(token.info.appId, VECTOR.appId);
    assert.equal(token.info.attestation_subject, VECTOR.subject);
    // the stored challenge of the upstream test: the next 32-byte draw is its nonce
    const saved = t.deps.random;
    (t.deps as { random: typeof saved }).random = {
      bytes: (n) => n === 32 ? Buffer.from(VECTOR.nonceHex, "hex") : saved.bytes(n),
    };
    const ch = await jsonOf(
      await t.post("/validate/check", { serial: VECTOR.serial, pass: "1234" }),
    );
    (t.deps as { random: typeof saved }).random = saved;
    const request = ch.body.detail.attributes.u2fSignRequest;
    assert.equal(request.keyHandle, VECTOR.keyHandle, JSON.stringify(ch.body));
    assert.equal(request.challenge, VECTOR.nonceB64url);
    const answer = {
      serial: VECTOR.serial,
      pass: "",
      transaction_id: ch.body.detail.transaction_id,
      clientdata: VECTOR.clientData,
      signaturedata: VECTOR.signatureData,
    };
    const ok = await jsonOf(await t.post("/validate/check", answer));
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    assert.equal((await tokenOf(t, VECTOR.serial)).count, VECTOR.counter);
    const again = await jsonOf(await t.post("/validate/check", answer));
    assert.equal(again.body.result.value, false);
  } finally {
    await t.close();
  }
});
