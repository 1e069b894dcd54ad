/**
 * Storage of local administrators.
 *
 * Cache rule (credential versions, read by every admin request): an entry is
 * used only while the database's epoch (db/direct.ts) is the one it was read
 * under. Every committed write to `admin` moves the epoch, on any process or
 * node: on SQLite this connection's own writes at once and another
 * connection's or process's commits through `PRAGMA data_version`; on
 * PostgreSQL the `cache_epoch` row its trigger moves (migration 0013). Each
 * request reads the epoch afresh at its start. So a deleted admin or a changed
 * password is seen by the next request on every process and node.
 *
 * @module
 */
import { EpochCache } from "../../db/direct.ts";
import type { Db } from "../../db/schema.ts";

/** A local administrator as stored. */
export interface AdminRecord {
  id: number;
  username: string;
  email: string;
  passwordHash: string;
  createdAt: number;
  /** Changes with the credentials; the admin's JWTs carry it. */
  credentialVersion: string;
}

/** Finds one admin by exact user name. */
export async function findAdmin(db: Db, username: string): Promise<AdminRecord | undefined> {
  const row = await db.selectFrom("admin").selectAll().where("username", "=", username)
    .executeTakeFirst();
  return row && toRecord(row);
}

// see the module doc for when an entry is used
const credentialVersions = new EpochCache<string, string | undefined>();

/** The credential version of an admin, or undefined when no admin has that name. */
export async function findCredentialVersion(
  db: Db,
  username: string,
): Promise<string | undefined> {
  return await credentialVersions.get(db, username, async () => {
    const row = await db.selectFrom("admin").select("credential_version")
      .where("username", "=", username).executeTakeFirst();
    return row?.credential_version;
  });
}

/** All admins ordered by name. */
export async function listAdmins(db: Db): Promise<AdminRecord[]> {
  const rows = await db.selectFrom("admin").selectAll().orderBy("username").execute();
  return rows.map(toRecord);
}

/** Inserts an admin; returns false when the name is taken. */
export async function insertAdmin(
  db: Db,
  admin: {
    username: string;
    email: string;
    passwordHash: string;
    createdAt: number;
    credentialVersion: string;
  },
): Promise<boolean> {
  const res = await db.insertInto("admin").values({
    username: admin.username,
    email: admin.email,
    password_hash: admin.passwordHash,
    created_at: admin.createdAt,
    credential_version: admin.credentialVersion,
  }).onConflict((oc) => oc.column("username").doNothing()).executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * Replaces an admin's password hash and credential version in one statement;
 * returns false for an unknown name.
 */
export async function updateAdminPassword(
  db: Db,
  username: string,
  change: { passwordHash: string; credentialVersion: string },
): Promise<boolean> {
  const res = await db.updateTable("admin").set({
    password_hash: change.passwordHash,
    credential_version: change.credentialVersion,
  }).where("username", "=", username).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Replaces an admin's password hash only if it is still `oldHash` (the
 * credential version stays: a re-hash of the same password); returns whether it changed.
 */
export async function replacePasswordHash(
  db: Db,
  username: string,
  oldHash: string,
  newHash: string,
): Promise<boolean> {
  const res = await db.updateTable("admin").set({ password_hash: newHash })
    .where("username", "=", username).where("password_hash", "=", oldHash).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Deletes an admin; returns false for an unknown name. */
export async function deleteAdmin(db: Db, username: string): Promise<boolean> {
  const res = await db.deleteFrom("admin").where("username", "=", username).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Number of admins. */
export async function countAdmins(db: Db): Promise<number> {
  const row = await db.selectFrom("admin").select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function toRecord(row: {
  id: number;
  username: string;
  email: string;
  password_hash: string;
  created_at: number;
  credential_version: string;
}): AdminRecord {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    passwordHash: row.password_hash,
    createdAt: Number(row.created_at),
    credentialVersion: row.credential_version,
  };
}
