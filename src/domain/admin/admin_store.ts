import type { Db } from "../../db/schema.ts";

/** A local administrator as stored. */
export interface AdminRecord {
  id: number;
  username: string;
  email: string;
  passwordHash: string;
  createdAt: number;
}

/** Finds one admin by exact user name. */
export async function findAdmin(db: Db, username: string): Promise<AdminRecord | undefined> {
  const row = await db.selectFrom("admin").selectAll().where("username", "=", username)
    .executeTakeFirst();
  return row && toRecord(row);
}

/** All admins ordered by name. */
export async function listAdmins(db: Db): Promise<AdminRecord[]> {
  const rows = await db.selectFrom("admin").selectAll().orderBy("username").execute();
  return rows.map(toRecord);
}

/** Inserts an admin; returns false when the name is taken. */
export async function insertAdmin(
  db: Db,
  admin: { username: string; email: string; passwordHash: string; createdAt: number },
): Promise<boolean> {
  const res = await db.insertInto("admin").values({
    username: admin.username,
    email: admin.email,
    password_hash: admin.passwordHash,
    created_at: admin.createdAt,
  }).onConflict((oc) => oc.column("username").doNothing()).executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Replaces an admin's password hash; returns false for an unknown name. */
export async function updateAdminPassword(
  db: Db,
  username: string,
  passwordHash: string,
): Promise<boolean> {
  const res = await db.updateTable("admin").set({ password_hash: passwordHash })
    .where("username", "=", username).executeTakeFirst();
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
}): AdminRecord {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    passwordHash: row.password_hash,
    createdAt: Number(row.created_at),
  };
}
