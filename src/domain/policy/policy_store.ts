/**
 * Policy rows and the policy version counter. Every write bumps the version
 * in the same transaction, so every node sees the change on its next request.
 *
 * Cache rule ({@link currentPolicies}): the loaded policies are used while the
 * database's epoch is the one they were loaded under (db/direct.ts: every
 * committed write to `policy` or `policy_version`, on any process or node,
 * moves it; a request reads it afresh at its start). When the epoch moved,
 * the one-row version decides: the same version keeps the same loaded object
 * (so what callers compiled from it stays current), another one loads again.
 *
 * @module
 */
import { sql } from "kysely";
import { runCached } from "../../db/compiled.ts";
import { EpochCache } from "../../db/direct.ts";
import type { Db, PolicyTable } from "../../db/schema.ts";

/** A stored policy: list fields as comma-separated strings, conditions as JSON text. */
export interface PolicyRow {
  id: number;
  name: string;
  scope: string;
  action: string;
  active: boolean;
  priority: number;
  realm: string;
  resolver: string;
  user: string;
  adminrealm: string;
  adminuser: string;
  pinode: string;
  client: string;
  time: string;
  checkAllResolvers: boolean;
  userCaseInsensitive: boolean;
  conditions: string;
  description: string | null;
  userAgents: string;
}

/** Fields written on create or update (no id). */
export type PolicyFields = Omit<PolicyRow, "id">;

function fromRow(
  r: {
    [K in keyof PolicyTable]: K extends "id" ? number : PolicyTable[K];
  },
): PolicyRow {
  return {
    id: Number(r.id),
    name: r.name,
    scope: r.scope,
    action: r.action,
    active: Number(r.active) === 1,
    priority: Number(r.priority),
    realm: r.realm,
    resolver: r.resolver,
    user: r.user,
    adminrealm: r.adminrealm,
    adminuser: r.adminuser,
    pinode: r.pinode,
    client: r.client,
    time: r.time,
    checkAllResolvers: Number(r.check_all_resolvers) === 1,
    userCaseInsensitive: Number(r.user_case_insensitive) === 1,
    conditions: r.conditions,
    description: r.description,
    userAgents: r.user_agents,
  };
}

function toRow(f: PolicyFields): Omit<PolicyTable, "id"> {
  return {
    name: f.name,
    scope: f.scope,
    action: f.action,
    active: f.active ? 1 : 0,
    priority: f.priority,
    realm: f.realm,
    resolver: f.resolver,
    user: f.user,
    adminrealm: f.adminrealm,
    adminuser: f.adminuser,
    pinode: f.pinode,
    client: f.client,
    time: f.time,
    check_all_resolvers: f.checkAllResolvers ? 1 : 0,
    user_case_insensitive: f.userCaseInsensitive ? 1 : 0,
    conditions: f.conditions,
    description: f.description,
    user_agents: f.userAgents,
  };
}

async function bump(db: Db): Promise<void> {
  await db.updateTable("policy_version").set({ version: sql`version + 1` }).where("id", "=", 1)
    .execute();
}

/** The current policy version (one tiny row). */
export async function readVersion(db: Db): Promise<number> {
  // read on every request that evaluates policies: compiled once per db handle
  const { rows } = await runCached<{ version: number }>(
    db,
    "policyVersion",
    () => db.selectFrom("policy_version").select("version").where("id", "=", sql.lit(1)),
    [],
  );
  return Number(rows[0]?.version ?? 0);
}

/** Every policy in id order, with the version read in the same transaction. */
export async function loadAll(db: Db): Promise<{ version: number; rows: PolicyRow[] }> {
  return await db.transaction().execute(async (trx) => {
    const version = await readVersion(trx);
    const rows = await trx.selectFrom("policy").selectAll().orderBy("id").execute();
    return { version, rows: rows.map(fromRow) };
  });
}

/** Every policy with the version they were read at; frozen, shared between requests. */
export interface LoadedPolicies {
  readonly version: number;
  readonly rows: readonly Readonly<PolicyRow>[];
}

// see the module doc for when an entry is used
const currentLoaded = new EpochCache<"policies", LoadedPolicies>();
const lastLoaded = new WeakMap<object, LoadedPolicies>();

/**
 * Every policy and the version, while they are current (see the module doc):
 * the same object as long as nothing changed, so callers may compile it once.
 */
export function currentPolicies(db: Db): Promise<LoadedPolicies> {
  return currentLoaded.get(db, "policies", async () => {
    // the epoch moved (any cached table changed): the version says whether the policies did
    const version = await readVersion(db);
    const last = lastLoaded.get(db);
    if (last !== undefined && last.version === version) return last;
    const loaded = await loadAll(db);
    const frozen: LoadedPolicies = Object.freeze({
      version: loaded.version,
      rows: Object.freeze(loaded.rows.map((r) => Object.freeze(r))),
    });
    lastLoaded.set(db, frozen);
    return frozen;
  });
}

/** One policy by exact name. */
export async function findByName(db: Db, name: string): Promise<PolicyRow | undefined> {
  const row = await db.selectFrom("policy").selectAll().where("name", "=", name)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** How a policy's row is built from the stored one (undefined: a new policy). */
export type PolicyBuild = (existing: PolicyRow | undefined) => PolicyFields;

async function upsertIn(trx: Db, name: string, build: PolicyBuild): Promise<number> {
  const found = await trx.selectFrom("policy").selectAll().where("name", "=", name)
    .executeTakeFirst();
  const existing = found ? fromRow(found) : undefined;
  const fields = toRow(build(existing));
  if (existing) {
    await trx.updateTable("policy").set(fields).where("id", "=", existing.id).execute();
    return existing.id;
  }
  const res = await trx.insertInto("policy").values(fields).returning("id")
    .executeTakeFirstOrThrow();
  return Number(res.id);
}

/**
 * Inserts the policy or, when `name` exists, updates it with `build(existing)`.
 * Returns the id. Runs in one transaction with the version bump.
 */
export async function upsert(db: Db, name: string, build: PolicyBuild): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    const id = await upsertIn(trx, name, build);
    await bump(trx);
    return id;
  });
}

/** {@link upsert} of several policies in one transaction: all are written or none. */
export async function upsertAll(
  db: Db,
  policies: readonly { name: string; build: PolicyBuild }[],
): Promise<number[]> {
  return await db.transaction().execute(async (trx) => {
    const ids: number[] = [];
    for (const p of policies) ids.push(await upsertIn(trx, p.name, p.build));
    await bump(trx);
    return ids;
  });
}

/** Sets the active flag; returns the id or undefined when the name is unknown. */
export async function setActive(
  db: Db,
  name: string,
  active: boolean,
): Promise<number | undefined> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("policy").select("id").where("name", "=", name)
      .executeTakeFirst();
    if (!row) return undefined;
    await trx.updateTable("policy").set({ active: active ? 1 : 0 }).where("id", "=", row.id)
      .execute();
    await bump(trx);
    return Number(row.id);
  });
}

/** Deletes a policy; returns its id or undefined when unknown. */
export async function remove(db: Db, name: string): Promise<number | undefined> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("policy").select("id").where("name", "=", name)
      .executeTakeFirst();
    if (!row) return undefined;
    await trx.deleteFrom("policy").where("id", "=", row.id).execute();
    await bump(trx);
    return Number(row.id);
  });
}

/** Renames a policy. Returns the id, "missing" or "taken". */
export async function rename(
  db: Db,
  oldName: string,
  newName: string,
): Promise<number | "missing" | "taken"> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("policy").select("id").where("name", "=", oldName)
      .executeTakeFirst();
    if (!row) return "missing" as const;
    const taken = await trx.selectFrom("policy").select("id").where("name", "=", newName)
      .executeTakeFirst();
    if (taken && Number(taken.id) !== Number(row.id)) return "taken" as const;
    await trx.updateTable("policy").set({ name: newName }).where("id", "=", row.id).execute();
    await bump(trx);
    return Number(row.id);
  });
}
