/**
 * Storage of resolver definitions (`resolver` table).
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** A stored resolver definition; `config` values of secret keys are encrypted. */
export interface ResolverRecord {
  id: number;
  name: string;
  type: string;
  config: Record<string, string>;
  meta: Record<string, { type?: string; description?: string }>;
  updatedAt: number;
}

// deno-lint-ignore no-explicit-any
function toRecord(row: any): ResolverRecord {
  return {
    id: Number(row.id),
    name: row.name,
    type: row.type,
    config: parseObject(row.config),
    meta: parseObject(row.meta),
    updatedAt: Number(row.updated_at),
  };
}

// deno-lint-ignore no-explicit-any
function parseObject(text: string): any {
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** All resolvers ordered by name. */
export async function listResolvers(db: Db): Promise<ResolverRecord[]> {
  const rows = await db.selectFrom("resolver").selectAll().orderBy("name").execute();
  return rows.map(toRecord);
}

/** One resolver by exact name. */
export async function findResolver(db: Db, name: string): Promise<ResolverRecord | undefined> {
  const row = await db.selectFrom("resolver").selectAll().where("name", "=", name)
    .executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

/** Resolvers by exact names. */
export async function findResolvers(db: Db, names: string[]): Promise<ResolverRecord[]> {
  if (names.length === 0) return [];
  const rows = await db.selectFrom("resolver").selectAll().where("name", "in", names)
    .execute();
  return rows.map(toRecord);
}

/** Inserts a resolver; returns its id, or undefined when the name is taken. */
export async function insertResolver(
  db: Db,
  rec: Omit<ResolverRecord, "id">,
): Promise<number | undefined> {
  const res = await db.insertInto("resolver").values({
    name: rec.name,
    type: rec.type,
    config: JSON.stringify(rec.config),
    meta: JSON.stringify(rec.meta),
    updated_at: rec.updatedAt,
  }).onConflict((oc) => oc.column("name").doNothing()).executeTakeFirst();
  if (Number(res.numInsertedOrUpdatedRows ?? 0) === 0) return undefined;
  const row = await db.selectFrom("resolver").select("id").where("name", "=", rec.name)
    .executeTakeFirst();
  return row ? Number(row.id) : undefined;
}

/** Replaces config and metadata of a resolver. */
export async function updateResolver(
  db: Db,
  id: number,
  rec: Pick<ResolverRecord, "config" | "meta" | "updatedAt">,
): Promise<void> {
  await db.updateTable("resolver").set({
    config: JSON.stringify(rec.config),
    meta: JSON.stringify(rec.meta),
    updated_at: rec.updatedAt,
  }).where("id", "=", id).execute();
}

/** Names of the realms a resolver belongs to. */
export async function realmsOfResolver(db: Db, resolverId: number): Promise<string[]> {
  const rows = await db.selectFrom("realm_resolver")
    .innerJoin("realm", "realm.id", "realm_resolver.realm_id")
    .select("realm.name").where("realm_resolver.resolver_id", "=", resolverId)
    .orderBy("realm.name").execute();
  return [...new Set(rows.map((r) => r.name))];
}

/** Deletes a resolver by id; returns whether it existed. */
export async function deleteResolver(db: Db, id: number): Promise<boolean> {
  const res = await db.deleteFrom("resolver").where("id", "=", id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Runs `work` in one database transaction. */
export async function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return await db.transaction().execute(work);
}
