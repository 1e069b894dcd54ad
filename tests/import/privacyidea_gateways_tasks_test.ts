/**
 * `tessera import privacyidea` carries SMS gateway definitions (options and headers, secret
 * ones encrypted here) and periodic tasks (with their options), through the same checks as
 * `POST /smsgateway` and `POST /periodictask/`: a definition Tessera cannot use is reported
 * as failed with its reason and nothing of it is written; a name that exists is left alone;
 * a second run changes nothing.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { importPrivacyidea, type PiImportReport } from "../../src/domain/import/mod.ts";
import { createPiSqlite, ENC_KEY } from "./_pi_fixture.ts";

const HTTP = "privacyidea.lib.smsprovider.HttpSMSProvider.HttpSMSProvider";
const FIREBASE = "privacyidea.lib.smsprovider.FirebaseProvider.FirebaseProvider";

/** privacyIDEA 3.12's tables (models/smsgateway.py, models/periodictask.py) and rows. */
const SQL = [
  "create table smsgateway (id integer primary key, identifier varchar(255), " +
  "description varchar(1024), providermodule varchar(1024))",
  `create table smsgatewayoption (id integer primary key, "Key" varchar(255), "Value" text, ` +
  `"Type" varchar(100), gateway_id integer)`,
  "create table periodictask (id integer primary key, name varchar(64), active boolean, " +
  "retry_if_failed boolean, interval varchar(256), nodes varchar(256), taskmodule varchar(256), " +
  "ordering integer, last_update timestamp)",
  "create table periodictaskoption (id integer primary key, periodictask_id integer, " +
  "key varchar(255), value varchar(2000))",
  "create table periodictasklastrun (id integer primary key, periodictask_id integer, " +
  "node varchar(255), timestamp timestamp)",
  `insert into smsgateway values (1, 'sms1', 'the SMS of the helpdesk', '${HTTP}'), ` +
  `(2, 'fcm', '', '${FIREBASE}'), (3, 'custom', '', 'mycompany.sms.Provider'), ` +
  `(4, 'gw-here', 'from privacyIDEA', '${HTTP}')`,
  `insert into smsgatewayoption values ` +
  `(1, 'URL', 'https://sms.example.com/send', 'option', 1), ` +
  `(2, 'HTTP_METHOD', 'POST', 'option', 1), (3, 'text', '{otp}', 'option', 1), ` +
  `(4, 'PASSWORD', 'gateway-password', 'option', 1), ` +
  `(5, 'Authorization', 'Bearer secret-token', 'header', 1), ` +
  `(6, 'X-Client', 'pi', 'header', 1), ` +
  `(7, 'JSON config file', '/etc/privacyidea/firebase-not-here.json', 'option', 2), ` +
  `(8, 'URL', 'https://other.example.com/', 'option', 4)`,
  `insert into periodictask values ` +
  `(1, 'count logins', 1, 0, '*/5 * * * *', 'pinode1, pinode2', 'EventCounter', 2, '2026-01-01'), ` +
  `(2, 'stats', 0, 1, '0 * * * *', 'test-node', 'SimpleStats', 1, '2026-01-01'), ` +
  `(3, 'mine', 1, 1, '0 0 * * *', 'test-node', 'privacyidea.custom.Task', 3, '2026-01-01')`,
  `insert into periodictaskoption values (1, 1, 'event_counter', 'logins'), ` +
  `(2, 1, 'stats_key', 'login_count'), (3, 1, 'reset_event_counter', 'True'), ` +
  `(4, 2, 'total_tokens', 'True')`,
  `insert into periodictasklastrun values (1, 1, 'pinode1', '2026-01-01 10:00:00')`,
];

async function value(t: TestApp, path: string) {
  const res = await jsonOf(await t.asAdmin("GET", path));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

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

Deno.test("import privacyidea: SMS gateways and periodic tasks are carried, checked as their saves check them", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-gw-" });
  try {
    const url = await source(t, dir);
    const own = await jsonOf(
      await t.asAdmin("POST", "/smsgateway", {
        body: { name: "gw-here", module: HTTP, "option.URL": "https://mine.example.com/" },
      }),
    );
    assert.equal(own.status, 200, JSON.stringify(own.body));

    const dry = await importPrivacyidea(t.deps, url, { encKey: ENC_KEY, dryRun: true });
    assert.equal(dry.changed, 0);
    // what no save could take is reported by the dry run already
    assert.deepEqual(counts(dry, "SMS gateways"), [4, 2, 1, 1]);
    assert.deepEqual(counts(dry, "periodic tasks"), [3, 2, 0, 1]);
    assert.ok(
      dry.log.includes(
        'would not import: SMS gateways custom (provider module "mycompany.sms.Provider", ' +
          "which Tessera does not have)",
      ),
      dry.log.join("\n"),
    );
    assert.deepEqual((await value(t, "/smsgateway/")).map((g: { name: string }) => g.name), [
      "gw-here",
    ]);
    assert.deepEqual(await value(t, "/periodictask/"), []);

    const real = await importPrivacyidea(t.deps, url, { encKey: ENC_KEY });
    const log = real.log.join("\n");
    assert.deepEqual(counts(real, "SMS gateways"), [4, 1, 1, 2], log);
    assert.deepEqual(counts(real, "periodic tasks"), [3, 2, 0, 1], log);
    assert.doesNotMatch(log, /not imported: \d+ (SMS gateways|periodic tasks)/);
    // the service account file is on privacyIDEA's machine, not here
    assert.match(log, /failed: SMS gateways fcm: .*Can not load JSON file/);
    assert.match(log, /not imported: SMS gateways custom \(provider module/);
    assert.match(log, /not imported: periodic tasks mine \(task module "privacyidea.custom.Task"/);
    assert.match(
      log,
      /periodic tasks count logins: runs on nodes pinode1, pinode2, none of them this server \(test-node\)/,
    );

    const gateways = await value(t, "/smsgateway/");
    assert.deepEqual(gateways.map((g: { name: string }) => g.name).sort(), ["gw-here", "sms1"]);
    const sms1 = gateways.find((g: { name: string }) => g.name === "sms1");
    assert.equal(sms1.providermodule, HTTP);
    assert.equal(sms1.description, "the SMS of the helpdesk");
    assert.equal(sms1.options.URL, "https://sms.example.com/send");
    assert.equal(sms1.options.HTTP_METHOD, "POST");
    assert.equal(sms1.options.text, "{otp}");
    assert.equal(sms1.options.PASSWORD, "__CENSORED__");
    assert.equal(sms1.headers.Authorization, "__CENSORED__");
    assert.equal(sms1.headers["X-Client"], "pi");
    // the secrets are stored encrypted, not as privacyIDEA kept them
    const stored = await t.deps.db.selectFrom("smsgatewayoption").select(["key", "value"])
      .where("key", "in", ["PASSWORD", "Authorization"]).execute();
    assert.equal(stored.length, 2);
    for (const s of stored) {
      assert.doesNotMatch(s.value, /gateway-password|secret-token/);
    }
    // the existing definition is left as it is
    const here = gateways.find((g: { name: string }) => g.name === "gw-here");
    assert.equal(here.options.URL, "https://mine.example.com/");

    const tasks = await value(t, "/periodictask/");
    assert.deepEqual(tasks.map((x: { name: string }) => x.name), ["stats", "count logins"]);
    const [stats, count] = tasks;
    assert.equal(stats.active, false);
    assert.equal(stats.retry_if_failed, true);
    assert.equal(stats.interval, "0 * * * *");
    assert.deepEqual(stats.nodes, ["test-node"]);
    assert.equal(stats.taskmodule, "SimpleStats");
    assert.deepEqual(stats.options, { total_tokens: "True" });
    assert.equal(count.active, true);
    assert.equal(count.retry_if_failed, false);
    assert.equal(count.ordering, 2);
    assert.deepEqual(count.nodes, ["pinode1", "pinode2"]);
    assert.deepEqual(count.options, {
      event_counter: "logins",
      stats_key: "login_count",
      reset_event_counter: "True",
    });
    assert.deepEqual(count.last_runs, {}, "the schedule starts afresh");

    const second = await importPrivacyidea(t.deps, url, { encKey: ENC_KEY });
    assert.equal(second.changed, 0, second.log.join("\n"));
    assert.deepEqual(counts(second, "SMS gateways"), [4, 0, 2, 2]);
    assert.deepEqual(counts(second, "periodic tasks"), [3, 0, 2, 1]);
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("import privacyidea: a Firebase definition keeps its httpsproxy option, not the legacy ones", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-fcm-" });
  try {
    const file = `${dir}/service-account.json`;
    await Deno.writeTextFile(
      file,
      JSON.stringify({
        type: "service_account",
        project_id: "p",
        private_key: "unused here",
        client_email: "push@p.iam.gserviceaccount.com",
        token_uri: "https://oauth2.googleapis.com/token",
      }),
    );
    const made = await createPiSqlite(dir, t.clock.now());
    const db = new DatabaseSync(made.url.slice("sqlite:///".length));
    db.exec(SQL[0]);
    db.exec(SQL[1]);
    db.exec(`insert into smsgateway values (1, 'fcm', '', '${FIREBASE}')`);
    db.exec(
      `insert into smsgatewayoption values (1, 'JSON config file', '${file}', 'option', 1), ` +
        `(2, 'httpsproxy', 'http://proxy.example.com:3128', 'option', 1), ` +
        // options of privacyIDEA's old Firebase API, which it ignores since 3.10
        `(3, 'registration URL', 'https://fcm.googleapis.com/fcm/send', 'option', 1), ` +
        `(4, 'time to live', '10', 'option', 1), ` +
        // privacyIDEA up to 3.7 also kept the app's project and API key
        `(5, 'apikey', 'AIza-old-key', 'option', 1)`,
    );
    db.close();
    const report = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
    assert.deepEqual(counts(report, "SMS gateways"), [1, 1, 0, 0], report.log.join("\n"));
    assert.ok(
      report.log.includes(
        'SMS gateways fcm: the legacy Firebase options "registration URL", "time to live", ' +
          '"apikey" left out (privacyIDEA ignores them)',
      ),
      report.log.join("\n"),
    );
    const [fcm] = await value(t, "/smsgateway/");
    assert.equal(fcm.providermodule, FIREBASE);
    assert.deepEqual(fcm.options, {
      "JSON config file": file,
      httpsproxy: "http://proxy.example.com:3128",
    });
    const stored = await t.deps.db.selectFrom("smsgatewayoption").select("key").execute();
    assert.deepEqual(stored.map((r) => r.key).sort(), ["JSON config file", "httpsproxy"]);
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});
