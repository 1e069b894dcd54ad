/**
 * The `importkey` rows (migration 0027): OpenPGP key pairs for encrypted token import files.
 *
 * @module
 */
import { sql } from "kysely";
import type { Db, ImportKeyTable } from "../../db/schema.ts";

/** Every import key, oldest first. */
export async function listImportKeys(db: Db): Promise<ImportKeyTable[]> {
  return await db.selectFrom("importkey").selectAll().orderBy("created_at").orderBy("keyid")
    .execute();
}

/**
 * Stores a generated key unless a generated key exists already (a parallel first request on
 * another node keeps its own; at worst both are stored, and both are valid keys).
 */
export async function insertGeneratedKey(db: Db, row: ImportKeyTable): Promise<void> {
  await sql`insert into importkey
      (keyid, fingerprint, public_armor, private_enc, origin, created_at)
    select ${row.keyid}, ${row.fingerprint}, ${row.public_armor}, ${row.private_enc},
      ${row.origin}, cast(${row.created_at} as bigint)
    where not exists (select 1 from importkey where origin = 'generated')`.execute(db);
}

/** Stores or replaces (same key id) an operator's key; true when it was new. */
export async function upsertImportedKey(db: Db, row: ImportKeyTable): Promise<boolean> {
  const existed = await db.selectFrom("importkey").select("keyid").where("keyid", "=", row.keyid)
    .executeTakeFirst();
  await db.insertInto("importkey").values(row).onConflict((oc) =>
    oc.column("keyid").doUpdateSet({
      fingerprint: row.fingerprint,
      public_armor: row.public_armor,
      private_enc: row.private_enc,
      origin: row.origin,
    })
  ).execute();
  return !existed;
}
