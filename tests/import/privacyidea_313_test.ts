/**
 * `tessera import privacyidea` from a privacyIDEA 3.13 database (spec 17 §4),
 * on every engine privacyIDEA runs on here: SQLite, PostgreSQL (in the
 * PostgreSQL run) and MariaDB (the private server). The schema has 3.13's new
 * SMTP columns (an S/MIME-signing server is refused by name, one with the
 * columns NULL is imported), a BIGINT audit id with a 1100-character
 * signature, a policy description row without text, and pending challenges
 * with 3.13's JSON data; tokens import and work as from 3.12. The report's
 * first line names the schema's release, or says that it does not know it.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, jsonOf } from "../test_app.ts";
import { hotp } from "../fixtures/tokens.ts";
import { TEST_PG_URL } from "../test_db.ts";
import { importPrivacyidea } from "../../src/domain/import/mod.ts";
import { importCommand } from "../../src/cli/import.ts";
import { mariaDbTest } from "../mariadb_server.ts";
import { createPiMysql, createPiPostgres, createPiSqlite, ENC_KEY } from "./_pi_fixture.ts";
import { check, type PiSourceMaker } from "./_pi_scenario.ts";

const SMIME_REFUSED = "SMTP servers mail-signed (S/MIME signing (smime), which Tessera does " +
  "not have: privacyIDEA signed this server's mail and sent none unsigned)";

async function scenario313(makeSource: PiSourceMaker): Promise<void> {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi313-" });
  const made = await makeSource(dir, t.clock.now());
  try {
    const dry = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY, dryRun: true });
    assert.ok(dry.log.includes(`would not import: ${SMIME_REFUSED}`), dry.log.join("\n"));

    const real = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
    assert.equal(
      real.log[0],
      "privacyIDEA database: schema of privacyIDEA 3.13.1 to 3.13.3 (revision b1a2c3d4e5f6)",
    );
    const summary = Object.fromEntries(
      real.summary.map((r) => [r.what, [r.found, r.imported, r.failed]]),
    );
    assert.deepEqual(summary["SMTP servers"], [3, 2, 1], real.log.join("\n"));
    assert.deepEqual(summary.tokens, [6, 6, 0]);
    assert.deepEqual(summary.policies, [2, 2, 0]);
    assert.ok(real.log.includes(`not imported: ${SMIME_REFUSED}`), real.log.join("\n"));
    assert.ok(
      real.log.includes(
        "not imported: 2 pending challenges (logins waiting for their second step start again) " +
          "(table challenge)",
      ),
      real.log.join("\n"),
    );
    assert.ok(
      real.log.includes(
        "not imported: 2 audit entries (signed with privacyIDEA's audit key) (table pidea_audit)",
      ),
    );
    assert.equal(real.policiesNotImported.length, 0);

    const smtp = (await jsonOf(await t.asAdmin("GET", "/smtpserver/"))).body.result.value;
    assert.deepEqual(Object.keys(smtp).sort(), ["mail-null", "mail1"]);
    assert.equal(smtp["mail-null"].server, "127.0.0.1");
    // a description row without text (3.13 writes one for every policy) gives no description
    const policies = (await jsonOf(await t.asAdmin("GET", "/policy/"))).body.result.value;
    const list: { name: string; description?: string }[] = Array.isArray(policies)
      ? policies
      : Object.values(policies);
    const byName = Object.fromEntries(list.map((p) => [p.name, p]));
    assert.equal(byName.pol_auth.description, "PINs of realm1");
    assert.ok(!byName.pol_admin.description, JSON.stringify(byName.pol_admin));
    // tokens of a 3.13 database work as those of 3.12 (argon2 PIN, next counter 2)
    const ok = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(2) });
    assert.equal(ok.result.value, true, JSON.stringify(ok));

    const second = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
    assert.equal(second.changed, 0);
  } finally {
    await made.drop();
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("import privacyidea from a privacyIDEA 3.13 database on SQLite: new SMTP columns, S/MIME server refused by name, JSON challenges reported, tokens work", async () => {
  await scenario313(async (dir, nowMs) => ({
    ...(await createPiSqlite(dir, nowMs, { version: "3.13" })),
    drop: () => Promise.resolve(),
  }));
});

Deno.test({
  name: "import privacyidea from a privacyIDEA 3.13 database on PostgreSQL (BIGINT audit ids)",
  ignore: TEST_PG_URL === undefined,
  fn: async () =>
    await scenario313((dir, nowMs) =>
      createPiPostgres(TEST_PG_URL!, dir, nowMs, { version: "3.13" })
    ),
});

mariaDbTest("import privacyidea from a privacyIDEA 3.13 database on MariaDB", async (server) => {
  await scenario313((dir, nowMs) => createPiMysql(server, dir, nowMs, { version: "3.13" }));
});

Deno.test("import privacyidea names a schema revision it does not know, and a database without one", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi313-" });
  try {
    const { url } = await createPiSqlite(dir, t.clock.now(), { version: "3.13" });
    const db = new DatabaseSync(`${dir}/privacyidea.db`);
    // privacyIDEA 3.14dev2's head
    db.exec("update alembic_version set version_num = 'd9e0f1a2b3c4'");
    const newer = await importPrivacyidea(t.deps, url, { encKey: ENC_KEY, dryRun: true });
    assert.equal(
      newer.log[0],
      "privacyIDEA database: schema revision d9e0f1a2b3c4, not one of the releases Tessera " +
        "knows (privacyIDEA 3.10 to 3.13.3): the tables are read as 3.13 has them; check the summary",
    );
    db.exec("drop table alembic_version");
    db.close();
    const none = await importPrivacyidea(t.deps, url, { encKey: ENC_KEY, dryRun: true });
    assert.equal(
      none.log[0],
      "privacyIDEA database: no schema revision recorded (table alembic_version)",
    );
    assert.deepEqual(none.summary.find((r) => r.what === "tokens"), {
      what: "tokens",
      found: 6,
      imported: 6,
      existing: 0,
      failed: 0,
    });
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tessera import privacyidea exits with code 3 when it leaves out an object that is not a policy (an S/MIME SMTP server)", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi313-" });
  try {
    const { url } = await createPiSqlite(dir, t.clock.now(), { version: "3.13" });
    await Deno.writeFile(`${dir}/encKey`, ENC_KEY);
    const run = async (dryRun: boolean) => {
      const lines: string[] = [];
      const flags = new Map<string, string | true>([["database", url], [
        "enckey",
        `${dir}/encKey`,
      ]]);
      if (dryRun) flags.set("dry-run", true);
      const code = await importCommand(t.deps, flags, { line: (l) => lines.push(l) });
      return { code, lines };
    };
    const dry = await run(true);
    assert.equal(dry.code, 3, dry.lines.join("\n"));
    assert.equal(
      dry.lines.at(-1),
      'Would leave out 1 other object (the "failed" column): see above; exit code 3.',
    );
    const real = await run(false);
    assert.equal(real.code, 3, real.lines.join("\n"));
    assert.equal(
      real.lines.at(-1),
      'Left out 1 other object (the "failed" column): see above; exit code 3.',
    );
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});
