import assert from "node:assert/strict";
import { sql } from "kysely";
import { migrateToLatest, openDatabase } from "../../src/db/database.ts";
import { MIGRATIONS } from "../../src/db/migrations/mod.ts";

Deno.test("migrations: the audit table keeps privacyIDEA's indexes (date and user), not serial", async () => {
  const db = openDatabase(":memory:");
  try {
    const applied = await migrateToLatest(db);
    assert.deepEqual(applied, Object.keys(MIGRATIONS));
    const indexes = async () =>
      (await sql<{ name: string }>`select name from sqlite_master
        where type = 'index' and tbl_name = 'audit' and sql is not null order by name`
        .execute(db)).rows.map((r) => r.name);
    assert.deepEqual(await indexes(), ["audit_ts", "audit_user"]);
    // the down step restores the index, the up step drops it again
    await MIGRATIONS["0010_audit_serial_index"].down!(db as never);
    assert.deepEqual(await indexes(), ["audit_serial", "audit_ts", "audit_user"]);
    await MIGRATIONS["0010_audit_serial_index"].up(db as never);
    assert.deepEqual(await indexes(), ["audit_ts", "audit_user"]);
    // a search by serial still answers (by reading the table)
    await sql`insert into audit (ts, action, serial) values (1, 'POST /validate/check', 'S1')`
      .execute(db);
    const found = await db.selectFrom("audit").select("action").where("serial", "=", "S1")
      .execute();
    assert.deepEqual(found.map((r) => r.action), ["POST /validate/check"]);
  } finally {
    await db.destroy();
  }
});
