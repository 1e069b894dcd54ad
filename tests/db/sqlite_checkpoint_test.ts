/**
 * WAL checkpoints on a timer (db/sqlite_checkpoint.ts): the serving
 * connection's commits no longer checkpoint (its automatic checkpoint is a
 * far backstop), the timer moves committed pages into the file between
 * requests, and stopping restores SQLite's automatic checkpoint. Real SQLite
 * files in a temporary folder.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import {
  BACKSTOP_AUTOCHECKPOINT_PAGES,
  startCheckpointer,
} from "../../src/db/sqlite_checkpoint.ts";
import { closeRuntime, openRuntime } from "../../src/runtime.ts";
import { sqliteConnectionOf } from "../../src/db/database.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/lib/logger.ts";

function autocheckpoint(db: DatabaseSync): number {
  return Number(
    (db.prepare("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number })
      .wal_autocheckpoint,
  );
}

/** A WAL file with a table and `rows` rows of 1 KB committed one by one. */
function writeRows(db: DatabaseSync, rows: number): void {
  const insert = db.prepare("insert into t (v) values (?)");
  for (let i = 0; i < rows; i++) insert.run("x".repeat(1000));
}

/** A WAL database file with table `t` in a fresh folder, removed after `fn`. */
async function withWalFile(fn: (db: DatabaseSync, path: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tessera-ckpt-" });
  const path = `${dir}/t.db`;
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("create table t (id integer primary key, v text)");
    await fn(db, path);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function waitFor(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("checkpoint timer: committed pages reach the file without a checkpoint in the commits", async () => {
  await withWalFile(async (db, path) => {
    const checkpointer = startCheckpointer(db, { intervalMs: 20 });
    assert.ok(checkpointer, "a file database gets a timer");
    assert.equal(autocheckpoint(db), BACKSTOP_AUTOCHECKPOINT_PAGES);
    const sizeBefore = Deno.statSync(path).size;
    // ~1,500 pages of WAL: SQLite's own default (1,000 pages) would have checkpointed in a commit
    writeRows(db, 1500);
    // the timer moves them into the file while the event loop runs
    await waitFor("the file to grow", () => Deno.statSync(path).size > sizeBefore + 1_000_000);
    // the rows are there, read through a fresh connection too
    const other = new DatabaseSync(path);
    assert.equal((other.prepare("select count(*) as n from t").get() as { n: number }).n, 1500);
    other.close();
    checkpointer.stop();
    checkpointer.stop(); // twice is harmless
    assert.equal(autocheckpoint(db), 1000, "SQLite's automatic checkpoint is back");
    writeRows(db, 10);
  });
});

Deno.test("checkpoint timer: without it the same commits leave the pages in the WAL", async () => {
  // the control of the test above: with the backstop value and no timer, the file stays as it was
  await withWalFile(async (db, path) => {
    db.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
    const sizeBefore = Deno.statSync(path).size;
    writeRows(db, 1500);
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(Deno.statSync(path).size < sizeBefore + 100_000);
  });
});

Deno.test("checkpoint timer: none for an in-memory database", () => {
  const db = new DatabaseSync(":memory:");
  try {
    assert.equal(startCheckpointer(db), undefined);
    assert.equal(autocheckpoint(db), 1000);
  } finally {
    db.close();
  }
});

Deno.test("checkpoint timer: a server's runtime starts it and closeRuntime stops it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-ckpt-" });
  try {
    const config = loadConfig({
      env: {
        TESSERA_STORAGE_DATA_DIR: dir,
        TESSERA_STORAGE_DATABASE_URL: `sqlite:${dir}/tessera.sqlite`,
        TESSERA_SIGNING_ENABLED: "false",
      },
    });
    const log = createLogger("error");
    const served = await openRuntime(config, log, { checkpointOnTimer: true });
    const raw = sqliteConnectionOf(served.db)!.raw;
    assert.equal(autocheckpoint(raw), BACKSTOP_AUTOCHECKPOINT_PAGES);
    // the test's sanitizers fail it if the timer outlives closeRuntime
    await closeRuntime(served);
    // a command (not a server) keeps SQLite's own checkpoint
    const command = await openRuntime(config, log);
    assert.equal(autocheckpoint(sqliteConnectionOf(command.db)!.raw), 1000);
    await closeRuntime(command);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
