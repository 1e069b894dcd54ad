/**
 * Builds the running dependencies from a config: data dir, key file, database
 * and migrations. Used by `main.ts` (serve, admin, migrate) and the benchmark.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import type { Config } from "./config.ts";
import type { Deps, ResponseSigner } from "./deps.ts";
import { createResponseSigner, loadOrCreateSigningKey } from "./domain/signing/mod.ts";
import { migrateToLatest, openDatabase, sqliteConnectionOf } from "./db/database.ts";
import { type Checkpointer, startCheckpointer } from "./db/sqlite_checkpoint.ts";
import { isPostgresUrl } from "./db/postgres.ts";
import type { Db } from "./db/schema.ts";
import { sqliteFileOf } from "./db/backup.ts";
import { AuditWriter } from "./domain/audit/mod.ts";
import { checkKeyFile, keysFromKeyFile, openKeyFile } from "./domain/keys/mod.ts";
import { systemClock } from "./lib/clock.ts";
import type { Logger } from "./lib/logger.ts";
import { secureRandom } from "./lib/random.ts";

const checkpointers = new WeakMap<Db, Checkpointer>();

/**
 * Opens everything a Tessera process needs; `migrate` runs pending migrations;
 * `checkpointOnTimer` (a server): a SQLite file's WAL is checkpointed once a
 * second, not in the commits (db/sqlite_checkpoint.ts), until {@link closeRuntime}.
 */
export async function openRuntime(
  config: Config,
  log: Logger,
  options: { migrate?: boolean; checkpointOnTimer?: boolean } = {},
): Promise<Deps> {
  // a new SQLite database needs its folder (by default the data directory); an existing one
  // does not, so a node refused below leaves no trace on disk
  const sqliteFile = sqliteFileOf(config.storage.databaseUrl);
  if (sqliteFile !== undefined && !existsSync(sqliteFile)) {
    Deno.mkdirSync(dirname(sqliteFile), { recursive: true, mode: 0o700 });
  }
  const db = openDatabase(config.storage.databaseUrl, {
    statementTimeoutMs: config.storage.statementTimeout,
  });
  let key: { bytes: Uint8Array; isCreated: boolean };
  try {
    // a node with another key file (or none) refuses before it migrates or creates anything
    await checkKeyFile(db, config.storage.keyFile);
    if (options.migrate !== false) {
      const applied = await migrate(config.storage.databaseUrl, db);
      if (applied.length > 0) {
        log.info("Applied database migrations", { migrations: applied.join(",") });
      }
    }
    // a new key file's folders are made with it, and removed again if the start is refused
    key = await openKeyFile(db, config.storage.keyFile, { random: secureRandom, now: Date.now() });
    Deno.mkdirSync(config.storage.dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    await db.destroy();
    throw err;
  }
  if (key.isCreated) log.info("Created encryption key file", { path: config.storage.keyFile });
  const sqlite = options.checkpointOnTimer ? sqliteConnectionOf(db) : undefined;
  const checkpointer = sqlite && startCheckpointer(sqlite.raw, { log });
  if (checkpointer) checkpointers.set(db, checkpointer);
  return {
    config,
    db,
    clock: systemClock,
    random: secureRandom,
    keys: keysFromKeyFile(key.bytes),
    log,
    audit: new AuditWriter(db, log),
    nodeName: config.server.nodeName || hostname(),
    signer: config.signing.enabled ? await openSigner(config.signing.keyFile, log) : undefined,
  };
}

/**
 * Runs the pending migrations: on PostgreSQL on a handle of their own without
 * the statement timeout (a migration on a large table may run for minutes, and
 * a node starting beside another waits for its migration lock); on SQLite the
 * busy timeout bounds only the wait for a lock.
 */
async function migrate(url: string, db: Db): Promise<string[]> {
  if (!isPostgresUrl(url)) return await migrateToLatest(db);
  const unbounded = openDatabase(url, { poolSize: 2, statementTimeoutMs: 0 });
  try {
    return await migrateToLatest(unbounded);
  } finally {
    await unbounded.destroy();
  }
}

/** The response signer, creating the key on first start; unsigned (logged) if it cannot load. */
async function openSigner(path: string, log: Logger): Promise<ResponseSigner | undefined> {
  try {
    const { pem, isCreated } = loadOrCreateSigningKey(path);
    if (isCreated) log.info("Created response signing key", { path });
    return await createResponseSigner(pem);
  } catch (err) {
    // spec 01 §4: a key that cannot be loaded means unsigned responses, not a failed start
    log.warn("Cannot load the response signing key; responses are not signed", {
      path,
      error: String(err),
    });
    return undefined;
  }
}

/** How long {@link closeRuntime} waits for queued audit rows by default. */
export const AUDIT_CLOSE_WAIT_MS = 30_000;

/**
 * Writes the queued audit rows (retrying while the database is busy or
 * unreachable, at most `auditWaitMs`), then closes the database. Resolves to
 * the number of audit rows it had to give up on (logged as an error).
 */
export async function closeRuntime(
  deps: Deps,
  options: { auditWaitMs?: number } = {},
): Promise<number> {
  const waitMs = options.auditWaitMs ?? AUDIT_CLOSE_WAIT_MS;
  const left = await deps.audit.close({ timeoutMs: waitMs });
  if (left > 0) {
    deps.log.error("Cannot write audit rows before closing the database; they are lost", {
      rows: left,
      waitedSeconds: waitMs / 1000,
    });
  }
  checkpointers.get(deps.db)?.stop();
  await deps.db.destroy();
  return left;
}
