/**
 * `tessera import privacyidea` with a local CA and a certificate token: the
 * connector comes with its CA key and certificate read from privacyIDEA's CA
 * directory (numbering and revocations of its serial file and index.txt carry
 * on), another connector type is reported, and the certificate token arrives
 * enabled with its certificate, CA and (encrypted) PIN; revoking it then
 * revokes the certificate at the imported CA.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { X509Certificate } from "node:crypto";
import { createTestApp, jsonOf } from "../test_app.ts";
import { importPrivacyidea } from "../../src/domain/import/mod.ts";
import { createPiSqlite, ENC_KEY, T4 } from "./_pi_fixture.ts";
import { makeCaDir, openssl } from "../http/_local_ca.ts";

Deno.test("import privacyidea: a local CA connector and a certificate token", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-ca-" });
  // privacyIDEA's CA had issued 1000 (revoked) and 1001; its serial file says 1002
  const ca = await makeCaDir({
    serial: "1002",
    index: "R\t270101000000Z\t260105000000Z,keyCompromise\t1000\tunknown\t/CN=old\n" +
      "V\t270101000000Z\t\t1001\tunknown\t/CN=alice\n",
  });
  try {
    const made = await createPiSqlite(dir, t.clock.now());
    await openssl([
      "req",
      "-new",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      "/CN=alice",
      "-keyout",
      `${ca.dir}/a.key`,
      "-out",
      `${ca.dir}/a.csr`,
    ]);
    await openssl([
      "x509",
      "-req",
      "-in",
      `${ca.dir}/a.csr`,
      "-CA",
      ca.cacert,
      "-CAkey",
      ca.cakey,
      "-set_serial",
      "0x1001",
      "-out",
      `${ca.dir}/a.pem`,
      "-days",
      "30",
    ]);
    const certificate = await Deno.readTextFile(`${ca.dir}/a.pem`);
    const db = new DatabaseSync(made.url.slice("sqlite:///".length));
    db.exec(
      `create table caconnector (id integer primary key, name varchar(255), catype varchar(255))`,
    );
    db.exec(`create table caconnectorconfig (id integer primary key, caconnector_id integer,
      "Key" varchar(255), "Value" varchar(2000), "Type" varchar(2000), "Description" varchar(2000))`);
    db.prepare(`insert into caconnector values (1, 'localCA', 'local'), (2, 'msca', 'microsoft')`)
      .run();
    const config: [string, string][] = [
      ["cakey", ca.cakey],
      ["cacert", ca.cacert],
      ["WorkingDir", ca.dir],
      ["CRL", "crl.pem"],
      ["CRL_Validity_Period", "30"],
      ["CRL_Overlap_Period", "5"],
      ["templates", "templates.yaml"],
      ["name", "localCA"],
    ];
    config.forEach(([k, v], i) => {
      db.prepare(`insert into caconnectorconfig values (?, 1, ?, ?, '', '')`).run(i + 1, k, v);
    });
    db.prepare(`insert into caconnectorconfig values (99, 2, 'worker', 'host:50061', '', '')`)
      .run();
    db.prepare(`insert into token (id, description, serial, tokentype, otplen, pin_hash, key_enc,
      maxfail, active, revoked, locked, failcount, count, count_window, sync_window, rollout_state)
      values (900, 'cert', 'CRT0001', 'certificate', 6, ?, '', 10, 1, 0, 0, 0, 0, 10, 1000, '')`)
      .run(T4);
    const info: [string, string][] = [["certificate", certificate], ["CA", "localCA"], [
      "tokenkind",
      "software",
    ]];
    info.forEach(([k, v], i) => {
      db.prepare(`insert into tokeninfo values (?, ?, ?, '', '', 900)`).run(9000 + i, k, v);
    });
    db.prepare(`insert into tokenowner values (900, 900, 'users1', '1000', 1)`).run();
    db.close();

    const report = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
    const row = report.summary.find((r) => r.what === "CA connectors");
    assert.deepEqual([row?.found, row?.imported, row?.failed], [2, 1, 1], report.log.join("\n"));
    assert.ok(
      report.log.some((l) => /not imported: CA connectors msca \(type "microsoft"/.test(l)),
      report.log.join("\n"),
    );
    assert.ok(!report.log.some((l) => /CRT0001.*disabled/.test(l)), report.log.join("\n"));

    const conn = await jsonOf(await t.asAdmin("GET", "/caconnector/localCA"));
    assert.equal(conn.body.result.value[0].templates.webserver.days, 750);
    const tok = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial: "CRT0001" } }));
    const token = tok.body.result.value.tokens[0];
    assert.equal(token.tokentype, "certificate");
    assert.equal(token.active, true);
    assert.equal(token.info.CA, "localCA");
    assert.equal(token.info.certificate, certificate);

    // the CA keeps numbering where privacyIDEA's serial file left off
    const issued = await jsonOf(
      await t.asAdmin("POST", "/token/init", {
        body: {
          type: "certificate",
          ca: "localCA",
          request: await Deno.readTextFile(`${ca.dir}/a.csr`),
        },
      }),
    );
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    assert.equal(new X509Certificate(issued.body.detail.certificate).serialNumber, "1002");

    // revoking the imported token revokes 1001 at the imported CA; 1000 was revoked before
    const rev = await jsonOf(
      await t.asAdmin("POST", "/token/revoke", { body: { serial: "CRT0001" } }),
    );
    assert.equal(rev.status, 200, JSON.stringify(rev.body));
    const res = await t.get("/ca/localCA/crl");
    const crl = await openssl(
      ["crl", "-inform", "DER", "-noout", "-text"],
      new Uint8Array(await res.arrayBuffer()),
    );
    assert.match(crl, /Serial Number: 1000[\s\S]*Key Compromise/);
    assert.match(crl, /Serial Number: 1001/);
    assert.doesNotMatch(crl, /Serial Number: 1002/);
  } finally {
    await ca.remove();
    await Deno.remove(dir, { recursive: true });
    await t.close();
  }
});
