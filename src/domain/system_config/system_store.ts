import type { Db } from "../../db/schema.ts";
import { runCached } from "../../db/compiled.ts";

/** One stored system config entry. */
export interface ConfigEntry {
  key: string;
  value: string;
  type: string;
  description: string;
}

/** Key, value and type of every stored entry, ordered by key (read once per change). */
export async function allValues(
  db: Db,
): Promise<{ key: string; value: string; type: string }[]> {
  const { rows } = await runCached<{ key: string; value: string; type: string }>(
    db,
    "configValues",
    () => db.selectFrom("config").select(["key", "value", "type"]).orderBy("key"),
    [],
  );
  return rows;
}

/** Inserts or updates several entries atomically. */
export async function upsertEntries(
  db: Db,
  entries: ConfigEntry[],
): Promise<("insert" | "update")[]> {
  return await db.transaction().execute(async (trx) => {
    const out: ("insert" | "update")[] = [];
    for (const entry of entries) {
      const existing = await trx.selectFrom("config").select("key").where("key", "=", entry.key)
        .executeTakeFirst();
      await trx.insertInto("config").values(entry)
        .onConflict((oc) =>
          oc.column("key").doUpdateSet({
            value: entry.value,
            type: entry.type,
            description: entry.description,
          })
        ).execute();
      out.push(existing ? "update" : "insert");
    }
    return out;
  });
}

/** Deletes one entry; returns whether it existed. */
export async function deleteEntry(db: Db, key: string): Promise<boolean> {
  const res = await db.deleteFrom("config").where("key", "=", key).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
