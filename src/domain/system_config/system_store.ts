/**
 * Storage of the system configuration (`config`).
 *
 * Cache rule ({@link currentValues}): the stored entries are used while the
 * database's epoch is the one they were read under (db/direct.ts: every
 * committed write to `config`, on any process or node, moves it; a request
 * reads it afresh at its start).
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";
import { runCached } from "../../db/compiled.ts";
import { EpochCache } from "../../db/direct.ts";

/** One stored system config entry. */
export interface ConfigEntry {
  key: string;
  value: string;
  type: string;
  description: string;
}

/** Key, value and type of one stored entry. */
export interface StoredValue {
  readonly key: string;
  readonly value: string;
  readonly type: string;
}

// see the module doc for when an entry is used
const currentLoaded = new EpochCache<"config", readonly StoredValue[]>();

/**
 * Key, value and type of every stored entry, ordered by key, while they are
 * current (see the module doc): the same frozen array as long as nothing
 * changed, so callers may derive from it once.
 */
export function currentValues(db: Db): Promise<readonly StoredValue[]> {
  return currentLoaded.get(db, "config", async () => {
    const { rows } = await runCached<StoredValue>(
      db,
      "configValues",
      () => db.selectFrom("config").select(["key", "value", "type"]).orderBy("key"),
      [],
    );
    return Object.freeze(rows.map((r) => Object.freeze(r)));
  });
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
