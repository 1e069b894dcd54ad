/**
 * `tessera import privacyidea` carries token containers (privacyIDEA 3.12's
 * `tokencontainer*` tables): serial, type, description, template, owner, realms, states,
 * info (server-managed entries stay server-managed), tokens, last authentication and
 * synchronisation; and the container templates. A container type Tessera lacks is refused,
 * a token its type cannot hold is left out with a note, a second run changes nothing.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { importPrivacyidea, type PiImportReport } from "../../src/domain/import/mod.ts";
import { findContainer, getTemplate, PI_INTERNAL } from "../../src/domain/container/mod.ts";
import { createPiSqlite, ENC_KEY } from "./_pi_fixture.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { ContainerApp } from "../http/_container_app.ts";
import { serveApp } from "../http/_serve_app.ts";

const PUBLIC_KEY = "-----BEGIN PUBLIC KEY-----\nMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE\n" +
  "-----END PUBLIC KEY-----";

/** privacyIDEA 3.12's container tables (models/tokencontainer.py) and rows. */
const SQL = [
  "create table tokencontainertemplate (id integer primary key, options varchar(2000), " +
  'name varchar(200), container_type varchar(100), "default" boolean)',
  "create table tokencontainer (id integer primary key, type varchar(100), " +
  "description varchar(1024), serial varchar(40) unique, last_seen timestamp, " +
  "last_updated timestamp, template_id integer)",
  "create table tokencontainerowner (id integer primary key, container_id integer, " +
  "resolver varchar(120), user_id varchar(320), realm_id integer)",
  "create table tokencontainerrealm (container_id integer, realm_id integer, " +
  "primary key (container_id, realm_id))",
  "create table tokencontainerstates (id integer primary key, container_id integer, " +
  "state varchar(100))",
  "create table tokencontainerinfo (id integer primary key, key varchar(255), value text, " +
  "type varchar(100), description varchar(2000), container_id integer)",
  "create table tokencontainertoken (token_id integer, container_id integer, " +
  "primary key (token_id, container_id))",
  `insert into tokencontainertemplate values ` +
  `(1, '{"tokens": [{"type": "hotp", "genkey": true}]}', 'office', 'generic', 1), ` +
  `(2, '{"tokens": []}', 'phones', 'smartphone', 0), ` +
  `(3, '{"tokens": [{"type": "nope"}]}', 'broken', 'generic', 0)`,
  `insert into tokencontainer values ` +
  `(1, 'generic', 'office box', 'CONT00001', '2026-01-02 03:04:05.678000', null, 1), ` +
  `(2, 'smartphone', 'phone of bob', 'SMPH00002', null, '2026-01-03 00:00:00', null), ` +
  `(3, 'hardwarebox', '', 'HW0001', null, null, null), ` +
  `(4, 'yubikey', null, 'YUBI0004', null, null, null)`,
  `insert into tokencontainerowner values (1, 1, 'users1', '1000', 1), ` +
  `(2, 2, 'users1', '1001', 1)`,
  `insert into tokencontainerrealm values (1, 1), (1, 2), (2, 1)`,
  `insert into tokencontainerstates values (1, 1, 'active'), (2, 1, 'lost'), ` +
  `(3, 2, 'disabled'), (4, 2, 'damaged')`,
  `insert into tokencontainerinfo values ` +
  `(1, 'creation_date', '2025-12-01T10:00:00+00:00', 'pi_internal', '', 1), ` +
  `(2, 'note', 'front desk', '', '', 1), ` +
  `(3, 'registration_state', 'registered', 'pi_internal', '', 2), ` +
  `(4, 'public_key_client', '${PUBLIC_KEY}', 'pi_internal', '', 2), ` +
  `(5, 'server_url', 'https://pi.example.com/', 'pi_internal', '', 2)`,
  `insert into tokencontainertoken values (1, 1), (2, 4), (99, 1)`,
];

function counts(report: PiImportReport, what: string): number[] | undefined {
  const r = report.summary.find((s) => s.what === what);
  return r && [r.found, r.imported, r.existing, r.failed];
}

async function source(t: TestApp, dir: string): Promise<string> {
  const made = await createPiSqlite(dir, t.clock.now());
  const db = new DatabaseSync(made.url.slice("sqlite:///".length));
  for (const stmt of SQL) db.exec(stmt);
  db.close();
  return made.url;
}

Deno.test("import privacyidea: token containers and their templates are carried", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-cont-" });
  try {
    const url = await source(t, dir);
    const dry = await importPrivacyidea(t.deps, url, { encKey: ENC_KEY, dryRun: true });
    assert.equal(dry.changed, 0);
    assert.deepEqual(counts(dry, "token containers"), [4, 3, 0, 1]);
    assert.ok(
      dry.log.includes(
        'would not import: token container HW0001 (container type "hardwarebox", which ' +
          "Tessera does not have)",
      ),
      dry.log.join("\n"),
    );
    assert.equal(await findContainer(t.deps, "CONT00001"), undefined);

    const real = await importPrivacyidea(t.deps, url, { encKey: ENC_KEY });
    const log = real.log.join("\n");
    assert.deepEqual(counts(real, "token containers"), [4, 3, 0, 1], log);
    assert.deepEqual(counts(real, "container templates"), [3, 2, 0, 1], log);
    assert.doesNotMatch(log, /not imported: \d+ token containers/);
    assert.match(log, /failed: container templates broken: Unsupported token type nope/);
    assert.match(log, /token container YUBI0004: token TOTP0001 not put in: Token type totp/);

    const office = (await findContainer(t.deps, "cont00001"))!;
    assert.equal(office.serial, "CONT00001");
    assert.equal(office.type, "generic");
    assert.equal(office.description, "office box");
    assert.equal(office.templateName, "office");
    assert.equal(office.owner?.login, "alice");
    assert.equal(office.owner?.uid, "1000");
    assert.equal(office.owner?.resolver, "users1");
    assert.deepEqual(office.realms, ["realm1", "realm2"]);
    assert.deepEqual([...office.states].sort(), ["active", "lost"]);
    assert.deepEqual(office.tokens.map((x) => x.serial), ["HOTP0001"]);
    assert.equal(office.lastSeen, Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    assert.equal(office.lastUpdated, null);
    const info = new Map(office.info.map((i) => [i.key, i]));
    assert.equal(info.get("creation_date")?.value, "2025-12-01T10:00:00+00:00");
    assert.equal(info.get("creation_date")?.type, PI_INTERNAL);
    assert.equal(info.get("note")?.value, "front desk");
    assert.equal(info.get("note")?.type, "");

    // and as the API lists it
    const listed = await jsonOf(
      await t.asAdmin("GET", "/container/", { query: { container_serial: "CONT00001" } }),
    );
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const view = listed.body.result.value.containers[0];
    assert.equal(view.last_authentication, "2026-01-02T03:04:05.678000+00:00");
    assert.equal(view.template, "office");
    assert.deepEqual(view.users.map((u: { user_name: string }) => u.user_name), ["alice"]);
    assert.deepEqual(view.tokens.map((x: { serial: string }) => x.serial), ["HOTP0001"]);
    assert.equal(view.info.note, "front desk");

    const phone = (await findContainer(t.deps, "SMPH00002"))!;
    assert.equal(phone.type, "smartphone");
    assert.equal(phone.owner?.login, "bob");
    assert.deepEqual(phone.realms, ["realm1"]);
    assert.deepEqual([...phone.states].sort(), ["damaged", "disabled"]);
    assert.equal(phone.lastUpdated, Date.UTC(2026, 0, 3));
    // the registration is carried: the app's key and state stay server-managed
    const pinfo = new Map(phone.info.map((i) => [i.key, i]));
    assert.equal(pinfo.get("registration_state")?.value, "registered");
    assert.equal(pinfo.get("public_key_client")?.value, PUBLIC_KEY);
    assert.equal(pinfo.get("public_key_client")?.type, PI_INTERNAL);
    assert.equal(pinfo.get("server_url")?.value, "https://pi.example.com/");

    const yubi = (await findContainer(t.deps, "YUBI0004"))!;
    assert.equal(yubi.description, "");
    assert.deepEqual(yubi.tokens, []);
    assert.deepEqual(yubi.states, []);
    assert.equal(yubi.owner, undefined);
    assert.equal(await findContainer(t.deps, "HW0001"), undefined);

    const template = (await getTemplate(t.deps, "office"))!;
    assert.equal(template.container_type, "generic");
    assert.equal(template.default, true);
    assert.deepEqual(template.template_options.tokens, [{ type: "hotp", genkey: true }]);
    assert.equal((await getTemplate(t.deps, "phones"))?.container_type, "smartphone");
    assert.equal(await getTemplate(t.deps, "broken"), undefined);

    const second = await importPrivacyidea(t.deps, url, { encKey: ENC_KEY });
    assert.equal(second.changed, 0, second.log.join("\n"));
    assert.deepEqual(counts(second, "token containers"), [4, 0, 3, 1]);
    assert.deepEqual(counts(second, "container templates"), [3, 0, 2, 1]);
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("import privacyidea: a database without container tables imports as before", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-cont-" });
  try {
    const made = await createPiSqlite(dir, t.clock.now());
    const report = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
    assert.equal(counts(report, "token containers"), undefined);
    assert.ok(report.changed > 0);
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("import privacyidea: a registered smartphone synchronises with Tessera afterwards", async () => {
  const t = await createTestApp();
  const served = serveApp(t);
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-cont-" });
  try {
    const app = new ContainerApp(() => t.clock.now());
    app.serial = "SMPH0SYNC";
    app.serverUrl = `${served.url}/`;
    const made = await createPiSqlite(dir, t.clock.now());
    const db = new DatabaseSync(made.url.slice("sqlite:///".length));
    for (const stmt of SQL.slice(0, 7)) db.exec(stmt);
    db.exec(
      "insert into tokencontainer values (1, 'smartphone', 'phone', 'SMPH0SYNC', null, null, null)",
    );
    db.exec("insert into tokencontainerowner values (1, 1, 'users1', '1000', 1)");
    db.exec("insert into tokencontainerstates values (1, 1, 'active')");
    const insert = db.prepare(
      "insert into tokencontainerinfo (key, value, type, description, container_id) " +
        "values (?, ?, 'pi_internal', '', 1)",
    );
    for (
      const [key, value] of [
        ["registration_state", "registered"],
        ["public_key_client", app.publicKeyPem()],
        ["server_url", `${served.url}/`],
        ["challenge_ttl", "2"],
        ["device", "XY ABC123"],
        ["key_algorithm", "secp384r1"],
        ["hash_algorithm", "SHA256"],
      ]
    ) insert.run(key, value);
    db.close();
    await savePolicy(t.deps, "phone", {
      scope: "container",
      action: `privacyIDEA_server_url=${served.url}/`,
    });
    const report = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
    assert.deepEqual(counts(report, "token containers"), [1, 1, 0, 0], report.log.join("\n"));
    // the app signs with the key it registered at privacyIDEA; Tessera verifies it
    const sync = await app.synchronize();
    assert.equal(sync.status, 200, JSON.stringify(sync.body));
    assert.equal(app.lastSync.container.serial, "SMPH0SYNC");
    assert.ok((await findContainer(t.deps, "SMPH0SYNC"))!.lastUpdated !== null);
    // another key is refused: the carried one is what counts
    const other = new ContainerApp(() => t.clock.now());
    other.serial = "SMPH0SYNC";
    other.serverUrl = app.serverUrl;
    const forged = await other.synchronize();
    assert.equal(forged.status, 400);
    assert.equal(forged.body.result.error.code, 3002);
  } finally {
    await served.close();
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});
