/**
 * The `key_check` row (migration 0012): which key file the secrets in this
 * database are encrypted under.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

const NAME = "encKey";

/**
 * The recorded fingerprint, or undefined when none is recorded yet; with
 * `tableMayBeMissing` also on a database whose migrations have not made the
 * table yet.
 */
export async function readFingerprint(
  db: Db,
  options: { tableMayBeMissing?: boolean } = {},
): Promise<string | undefined> {
  if (options.tableMayBeMissing) {
    const tables = await db.introspection.getTables();
    if (!tables.some((t) => t.name === "key_check")) return undefined;
  }
  const row = await db.selectFrom("key_check").select("fingerprint").where("name", "=", NAME)
    .executeTakeFirst();
  return row?.fingerprint;
}

/** Records `fingerprint` unless one is recorded already (the first node wins). */
export async function recordFingerprint(db: Db, fingerprint: string, now: number): Promise<void> {
  await db.insertInto("key_check").values({ name: NAME, fingerprint, created_at: now })
    .onConflict((oc) => oc.column("name").doNothing()).execute();
}
