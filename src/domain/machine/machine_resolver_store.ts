/**
 * SQL for machine resolvers and their config entries.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** A stored machine resolver (without config). */
export interface ResolverRow {
  id: number;
  name: string;
  type: string;
}

/** One config entry of a machine resolver (value as stored, maybe encrypted). */
export interface ConfigEntry {
  key: string;
  value: string;
  type: string;
  description: string;
}

/** True when `err` is a unique-constraint violation (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  const msg = err instanceof Error ? err.message : String(err);
  return /UNIQUE constraint failed|duplicate key value|unique constraint/i.test(msg) ||
    (err as { code?: string })?.code === "23505";
}

/** The resolver named `name`, compared case-insensitively. */
export async function findByNameKey(db: Db, name: string): Promise<ResolverRow | undefined> {
  const row = await db.selectFrom("machineresolver")
    .select(["id", "name", "rtype"])
    .where("name_key", "=", name.toLowerCase())
    .executeTakeFirst();
  return row && { id: row.id, name: row.name, type: row.rtype };
}

/** The resolver named exactly `name` (case-sensitive). */
export async function findByExactName(db: Db, name: string): Promise<ResolverRow | undefined> {
  const row = await db.selectFrom("machineresolver")
    .select(["id", "name", "rtype"])
    .where("name", "=", name)
    .executeTakeFirst();
  return row && { id: row.id, name: row.name, type: row.rtype };
}

/** Every resolver in id order, optionally of one type. */
export async function listResolvers(db: Db, type?: string): Promise<ResolverRow[]> {
  let q = db.selectFrom("machineresolver").select(["id", "name", "rtype"]).orderBy("id");
  if (type !== undefined) q = q.where("rtype", "=", type);
  const rows = await q.execute();
  return rows.map((r) => ({ id: r.id, name: r.name, type: r.rtype }));
}

/** Names of resolvers by id. */
export async function namesById(db: Db, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom("machineresolver").select(["id", "name"])
    .where("id", "in", ids).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** Config entries of the resolvers `ids`, by resolver id, in key order. */
export async function configOf(db: Db, ids: number[]): Promise<Map<number, ConfigEntry[]>> {
  const out = new Map<number, ConfigEntry[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const rows = await db.selectFrom("machineresolverconfig")
    .select(["resolver_id", "key", "value", "type", "description"])
    .where("resolver_id", "in", ids)
    .orderBy("id")
    .execute();
  for (const r of rows) {
    out.get(r.resolver_id)?.push({
      key: r.key,
      value: r.value,
      type: r.type,
      description: r.description,
    });
  }
  return out;
}

/** Inserts a resolver and returns its id. */
export async function insertResolver(db: Db, name: string, type: string): Promise<number> {
  const row = await db.insertInto("machineresolver")
    .values({ name, name_key: name.toLowerCase(), rtype: type })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Inserts or overwrites config entries of resolver `id` (other keys stay). */
export async function upsertConfig(db: Db, id: number, entries: ConfigEntry[]): Promise<void> {
  for (const e of entries) {
    await db.insertInto("machineresolverconfig")
      .values({ resolver_id: id, ...e })
      .onConflict((oc) =>
        oc.columns(["resolver_id", "key"]).doUpdateSet({
          value: e.value,
          type: e.type,
          description: e.description,
        })
      )
      .execute();
  }
}

/** Deletes resolver `id` and its config entries. */
export async function deleteResolver(db: Db, id: number): Promise<void> {
  await db.deleteFrom("machineresolverconfig").where("resolver_id", "=", id).execute();
  await db.deleteFrom("machineresolver").where("id", "=", id).execute();
}
