/**
 * `tessera import privacyidea` carries token groups with their tokens' memberships and
 * service IDs: a dry run writes none, the import creates them (read back over HTTP), a
 * name that exists is left as it is, and a second run changes nothing. From a SQLite
 * source (Tessera on SQLite and PostgreSQL) and from MariaDB.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { importPrivacyidea, type PiImportReport } from "../../src/domain/import/mod.ts";
import { createPiMysql, createPiSqlite, ENC_KEY } from "./_pi_fixture.ts";
import { type MariaDb, mariaDbTest } from "../mariadb_server.ts";

const LONG = "x".repeat(300);

/**
 * The fixture (group1 already in it) plus groups, memberships and service IDs, as SQL both
 * source engines run (privacyIDEA 3.12's tables: models/tokengroup.py, models/serviceid.py).
 */
const GROUP_SQL = [
  "create table tokentokengroup (id integer primary key, token_id integer, tokengroup_id integer)",
  "create table serviceid (id integer primary key, name varchar(255), Description varchar(2000))",
  "insert into tokengroup (id, name, Description) values (2, 'laptops', 'Laptops of the admins')",
  `insert into tokengroup (id, name, Description) values (3, 'long', '${LONG}')`,
  // HOTP0001 in group1 and laptops, TOTP0001 in laptops, a token that is not there
  "insert into tokentokengroup (id, token_id, tokengroup_id) values (1, 1, 1), (2, 1, 2), " +
  "(3, 2, 2), (4, 99, 2)",
  "insert into serviceid (id, name, Description) values (1, 'webservers', 'Web tier'), " +
  "(2, 'dbservers', 'from privacyIDEA')",
];

/** Builds the fixture's source database with {@link GROUP_SQL} in `dir`. */
type GroupSource = (dir: string, nowMs: number) => Promise<{ url: string; drop(): Promise<void> }>;

async function sqliteSource(dir: string, nowMs: number) {
  const made = await createPiSqlite(dir, nowMs);
  const db = new DatabaseSync(made.url.slice("sqlite:///".length));
  for (const stmt of GROUP_SQL) db.exec(stmt);
  db.close();
  return { url: made.url, drop: async () => {} };
}

function mariaDbSource(server: MariaDb): GroupSource {
  return async (dir, nowMs) => {
    const made = await createPiMysql(server, dir, nowMs);
    await server.sql(`use \`${made.database}\`; ${GROUP_SQL.join("; ")}`);
    return made;
  };
}

async function value(t: TestApp, path: string, query?: Record<string, string>) {
  const res = await jsonOf(await t.asAdmin("GET", path, { query }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

async function groupsOf(t: TestApp, serial: string): Promise<string[]> {
  const tokens = (await value(t, "/token/", { serial })).tokens;
  return [...tokens[0].tokengroup].sort();
}

function counts(report: PiImportReport, what: string): number[] | undefined {
  const r = report.summary.find((s) => s.what === what);
  return r && [r.found, r.imported, r.existing, r.failed];
}

/**
 * Dry run, import and second run from `makeSource`: counts, the groups, memberships and
 * service IDs read back over HTTP, an existing name left alone.
 */
async function groupScenario(makeSource: GroupSource): Promise<void> {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-groups-" });
  const made = await makeSource(dir, t.clock.now());
  try {
    // a service ID of that name exists here already: it stays as it is
    const own = await jsonOf(
      await t.asAdmin("POST", "/serviceid/dbservers", { body: { description: "mine" } }),
    );
    assert.equal(own.status, 200, JSON.stringify(own.body));

    const dry = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY, dryRun: true });
    assert.equal(dry.changed, 0);
    assert.deepEqual(counts(dry, "token groups"), [3, 3, 0, 0]);
    assert.deepEqual(counts(dry, "token group memberships"), [3, 3, 0, 0]);
    assert.deepEqual(counts(dry, "service IDs"), [2, 1, 1, 0]);
    assert.ok(dry.log.includes("would import: token groups laptops"), dry.log.join("\n"));
    assert.ok(dry.log.includes("would import: service IDs webservers"));
    assert.ok(dry.log.includes("exists, skipped: service IDs dbservers"));
    assert.deepEqual(await value(t, "/tokengroup/"), {});
    assert.deepEqual(Object.keys(await value(t, "/serviceid/")), ["dbservers"]);
    assert.equal((await value(t, "/token/")).count, 0);

    const real = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
    const log = real.log.join("\n");
    assert.deepEqual(counts(real, "token groups"), [3, 3, 0, 0], log);
    assert.deepEqual(counts(real, "token group memberships"), [3, 3, 0, 0], log);
    assert.deepEqual(counts(real, "service IDs"), [2, 1, 1, 0], log);
    assert.doesNotMatch(log, /not imported: .*(token groups|service ids)/i);
    assert.ok(real.log.includes("token groups long: description cut to 255 characters"), log);
    const groups = await value(t, "/tokengroup/");
    assert.deepEqual(Object.keys(groups).sort(), ["group1", "laptops", "long"]);
    assert.equal(groups.laptops.description, "Laptops of the admins");
    assert.equal(groups.group1.description, "");
    assert.equal(groups.long.description, LONG.slice(0, 255));
    assert.deepEqual(await groupsOf(t, "HOTP0001"), ["group1", "laptops"]);
    assert.deepEqual(await groupsOf(t, "TOTP0001"), ["laptops"]);
    assert.deepEqual(await groupsOf(t, "LEGA0001"), []);
    const filtered = await value(t, "/token/", { tokengroup: "laptops" });
    assert.deepEqual(
      filtered.tokens.map((tk: { serial: string }) => tk.serial).sort(),
      ["HOTP0001", "TOTP0001"],
    );
    const services = await value(t, "/serviceid/");
    assert.deepEqual(Object.keys(services).sort(), ["dbservers", "webservers"]);
    assert.equal(services.webservers.description, "Web tier");
    assert.equal(services.dbservers.description, "mine");

    // a second run leaves them as they are, even a description changed here meanwhile
    const edit = await jsonOf(
      await t.asAdmin("POST", "/tokengroup/laptops", { body: { description: "edited" } }),
    );
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    const out = await jsonOf(await t.asAdmin("DELETE", "/token/group/TOTP0001/laptops"));
    assert.equal(out.status, 200, JSON.stringify(out.body));
    const second = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
    assert.equal(second.changed, 0, second.log.join("\n"));
    assert.deepEqual(counts(second, "token groups"), [3, 0, 3, 0]);
    assert.deepEqual(counts(second, "service IDs"), [2, 0, 2, 0]);
    assert.equal((await value(t, "/tokengroup/")).laptops.description, "edited");
    assert.deepEqual(await groupsOf(t, "TOTP0001"), []);
    assert.deepEqual(await groupsOf(t, "HOTP0001"), ["group1", "laptops"]);
  } finally {
    await made.drop();
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("import privacyidea: token groups with memberships and service IDs are carried", async () => {
  await groupScenario(sqliteSource);
});

mariaDbTest(
  "import privacyidea from MariaDB: token groups with memberships and service IDs are carried",
  async (server) => await groupScenario(mariaDbSource(server)),
);

Deno.test("import privacyidea: a database without the group tables imports as before", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-groups-" });
  try {
    const made = await createPiSqlite(dir, t.clock.now());
    const db = new DatabaseSync(made.url.slice("sqlite:///".length));
    db.exec("drop table tokengroup");
    db.close();
    const report = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
    assert.equal(counts(report, "token groups"), undefined);
    assert.equal(counts(report, "token group memberships"), undefined);
    assert.deepEqual(counts(report, "tokens"), [6, 6, 0, 0], report.log.join("\n"));
    assert.deepEqual(await value(t, "/tokengroup/"), {});
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});
