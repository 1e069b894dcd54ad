/**
 * Storage of realms, their resolver lists and realm-wide checks.
 *
 * Cache rule ({@link currentResolversOfRealm}): a realm's resolver list is used
 * while the database's epoch is the one it was read under (db/direct.ts: every
 * committed write to `realm`, `realm_resolver` or `resolver`, on any process
 * or node, moves it; a request reads it afresh at its start).
 *
 * @module
 */
import { sql } from "kysely";
import { runCached } from "../../db/compiled.ts";
import { EpochCache } from "../../db/direct.ts";
import type { Db } from "../../db/schema.ts";
import type { ResolverRecord } from "../resolver/resolver_store.ts";

/** One resolver entry of a realm. */
export interface RealmMember {
  resolverId: number;
  name: string;
  type: string;
  priority: number | null;
  node: string;
}

/** A realm with its resolvers. */
export interface RealmRecord {
  id: number;
  name: string;
  isDefault: boolean;
  resolvers: RealmMember[];
}

/** Every realm (with resolvers), ordered by name. */
export async function listRealms(db: Db): Promise<RealmRecord[]> {
  const realms = await db.selectFrom("realm").selectAll().orderBy("name").execute();
  const members = await db.selectFrom("realm_resolver")
    .innerJoin("resolver", "resolver.id", "realm_resolver.resolver_id")
    .select([
      "realm_resolver.realm_id as realmId",
      "resolver.id as resolverId",
      "resolver.name as name",
      "resolver.type as type",
      "realm_resolver.priority as priority",
      "realm_resolver.node as node",
    ])
    .orderBy("resolver.name").execute();
  return realms.map((r) => ({
    id: Number(r.id),
    name: r.name,
    isDefault: Number(r.is_default) === 1,
    resolvers: members.filter((m) => Number(m.realmId) === Number(r.id)).map((m) => ({
      resolverId: Number(m.resolverId),
      name: m.name,
      type: m.type,
      priority: m.priority === null ? null : Number(m.priority),
      node: m.node,
    })),
  }));
}

/** A realm row by exact (normalised) name. */
export async function findRealm(
  db: Db,
  name: string,
): Promise<{ id: number; name: string; isDefault: boolean } | undefined> {
  const row = await db.selectFrom("realm").selectAll().where("name", "=", name)
    .executeTakeFirst();
  return row ? { id: Number(row.id), name: row.name, isDefault: row.is_default === 1 } : undefined;
}

/** Name of the default realm. */
export async function defaultRealmName(db: Db): Promise<string | undefined> {
  const row = await db.selectFrom("realm").select("name").where("is_default", "=", 1)
    .executeTakeFirst();
  return row?.name;
}

/** Inserts a realm if missing; returns its id and whether it was created. */
export async function ensureRealm(db: Db, name: string): Promise<{ id: number; created: boolean }> {
  const res = await db.insertInto("realm").values({ name, is_default: 0 })
    .onConflict((oc) => oc.column("name").doNothing()).executeTakeFirst();
  const row = await db.selectFrom("realm").select("id").where("name", "=", name)
    .executeTakeFirstOrThrow();
  return { id: Number(row.id), created: Number(res.numInsertedOrUpdatedRows ?? 0) > 0 };
}

/** Number of realms. */
export async function countRealms(db: Db): Promise<number> {
  const row = await db.selectFrom("realm").select(sql<number>`count(*)`.as("n"))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Replaces the realm's resolver entries that are not pinned to a node. */
export async function replaceResolvers(
  db: Db,
  realmId: number,
  entries: { resolverId: number; priority: number | null }[],
): Promise<void> {
  await db.deleteFrom("realm_resolver").where("realm_id", "=", realmId).where("node", "=", "")
    .execute();
  if (entries.length === 0) return;
  await db.insertInto("realm_resolver").values(entries.map((e) => ({
    realm_id: realmId,
    resolver_id: e.resolverId,
    priority: e.priority,
    node: "",
  }))).execute();
}

/** Replaces the realm's resolver entries pinned to `node`. */
export async function replaceNodeResolvers(
  db: Db,
  realmId: number,
  node: string,
  entries: { resolverId: number; priority: number | null }[],
): Promise<void> {
  await db.deleteFrom("realm_resolver").where("realm_id", "=", realmId).where("node", "=", node)
    .execute();
  if (entries.length === 0) return;
  await db.insertInto("realm_resolver").values(entries.map((e) => ({
    realm_id: realmId,
    resolver_id: e.resolverId,
    priority: e.priority,
    node,
  }))).execute();
}

/** Makes `realmId` the only default realm (undefined: no default). */
export async function setDefaultRealm(db: Db, realmId: number | undefined): Promise<void> {
  await db.updateTable("realm").set({ is_default: 0 }).where("is_default", "=", 1).execute();
  if (realmId !== undefined) {
    await db.updateTable("realm").set({ is_default: 1 }).where("id", "=", realmId).execute();
  }
}

/** Deletes a realm (its resolver entries cascade). */
export async function deleteRealm(db: Db, realmId: number): Promise<void> {
  await db.deleteFrom("realm_resolver").where("realm_id", "=", realmId).execute();
  await db.deleteFrom("realm").where("id", "=", realmId).execute();
}

/** Resolver records of a realm with their priority and node, for user resolution. */
export async function resolversOfRealm(
  db: Db,
  realm: string,
): Promise<{ record: ResolverRecord; priority: number | null; node: string }[]> {
  // read on every /validate/check: compiled once per db handle
  const { rows } = await runCached<{
    id: number;
    name: string;
    type: string;
    config: string;
    meta: string;
    updatedAt: number;
    priority: number | null;
    node: string;
  }>(db, "resolversOfRealm", (name) =>
    db.selectFrom("realm_resolver")
      .innerJoin("realm", "realm.id", "realm_resolver.realm_id")
      .innerJoin("resolver", "resolver.id", "realm_resolver.resolver_id")
      .select([
        "resolver.id as id",
        "resolver.name as name",
        "resolver.type as type",
        "resolver.config as config",
        "resolver.meta as meta",
        "resolver.updated_at as updatedAt",
        "realm_resolver.priority as priority",
        "realm_resolver.node as node",
      ])
      .where("realm.name", "=", name as string), [realm]);
  let parsed = RECORDS.get(db);
  if (parsed === undefined) RECORDS.set(db, parsed = new Map());
  return rows.map((r) => ({
    record: recordOf(parsed, r),
    priority: r.priority === null ? null : Number(r.priority),
    node: r.node,
  }));
}

/** One resolver of a realm as stored: the record, its priority and its node ("" for all). */
export interface RealmResolverEntry {
  readonly record: ResolverRecord;
  readonly priority: number | null;
  readonly node: string;
}

// see the module doc for when an entry is used
const currentResolverLists = new EpochCache<string, readonly RealmResolverEntry[]>();

/**
 * The resolvers of realm `realm` with priority and node, while they are
 * current (see the module doc): the same frozen list as long as nothing
 * changed, so callers may derive from it once.
 */
export function currentResolversOfRealm(
  db: Db,
  realm: string,
): Promise<readonly RealmResolverEntry[]> {
  return currentResolverLists.get(
    db,
    realm,
    async () => Object.freeze((await resolversOfRealm(db, realm)).map((r) => Object.freeze(r))),
  );
}

interface ResolverRow {
  id: number;
  name: string;
  type: string;
  config: string;
  meta: string;
  updatedAt: number;
}

// Parsed (frozen) records, reused while the stored row text is the same, so the
// JSON is not parsed on every check and resolver instances can be reused by identity.
const RECORDS = new WeakMap<Db, Map<number, { row: ResolverRow; record: ResolverRecord }>>();

function recordOf(
  parsed: Map<number, { row: ResolverRow; record: ResolverRecord }>,
  r: ResolverRow,
): ResolverRecord {
  const id = Number(r.id);
  const hit = parsed.get(id);
  if (
    hit !== undefined && hit.row.name === r.name && hit.row.type === r.type &&
    hit.row.config === r.config && hit.row.meta === r.meta && hit.row.updatedAt === r.updatedAt
  ) return hit.record;
  const record: ResolverRecord = Object.freeze({
    id,
    name: r.name,
    type: r.type,
    config: Object.freeze(safeParse(r.config)),
    meta: Object.freeze(safeParse(r.meta)),
    updatedAt: Number(r.updatedAt),
  });
  parsed.set(id, { row: r, record });
  return record;
}

// deno-lint-ignore no-explicit-any
function safeParse(text: string): any {
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** Runs `work` in one database transaction. */
export async function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return await db.transaction().execute(work);
}
