import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { sql } from "kysely";
import { migrateToLatest, openDatabase } from "../../src/db/database.ts";
import { backupSqlite, sqliteFileOf } from "../../src/db/backup.ts";

Deno.test("backupSqlite: a copy made under write load opens and holds every token committed before it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-backup-" });
  const file = join(dir, "tessera.sqlite");
  const db = openDatabase(`sqlite:${file}`);
  await migrateToLatest(db);
  const insert = (n: number) =>
    sql`insert into token (serial, tokentype, created_at)
      values (${`BK${String(n).padStart(6, "0")}`}, 'hotp', ${Date.now()})`.execute(db);
  for (let i = 0; i < 2000; i++) await insert(i);
  // a writer that keeps committing while the copy runs
  let written = 2000;
  let stop = false;
  const writer = (async () => {
    while (!stop) {
      await insert(written++);
      await new Promise((r) => setTimeout(r, 0));
    }
  })();
  const copy = join(dir, "copy.sqlite");
  const seen: number[] = [];
  const pages = await backupSqlite(file, copy, {
    pagesPerStep: 5,
    onProgress: (p) => seen.push(p.remainingPages),
  });
  const committedBefore = written - 1;
  stop = true;
  await writer;
  assert.ok(pages > 0);
  assert.ok(seen.length > 1, "it reported progress");
  const restored = new DatabaseSync(copy, { readOnly: true });
  assert.equal(
    (restored.prepare("PRAGMA integrity_check").get() as { integrity_check: string })
      .integrity_check,
    "ok",
  );
  const n = Number((restored.prepare("select count(*) as n from token").get() as { n: number }).n);
  // every token committed before the copy finished is in it, none from after it
  assert.ok(n >= 2000 && n <= written, `${n} tokens, ${written} written`);
  assert.ok(n >= committedBefore - 1, `${n} tokens, ${committedBefore} committed before the end`);
  restored.close();
  await assert.rejects(() => backupSqlite(file, copy), /the file exists/);
  await assert.rejects(() => backupSqlite(join(dir, "none.sqlite"), join(dir, "x")), /no such/);
  assert.equal(sqliteFileOf("postgres://x/y"), undefined);
  assert.equal(sqliteFileOf(`sqlite:${file}`), file);
  await db.destroy();
  await Deno.remove(dir, { recursive: true });
});
