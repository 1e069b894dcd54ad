/**
 * SQL for machine-token bindings (`machinetoken`) and their options.
 *
 * @module
 */
import { EpochCache } from "../../db/direct.ts";
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";
import { runCached } from "../../db/compiled.ts";

/** A binding with its token serial/type, resolver name and options. */
export interface BindingRow {
  id: number;
  tokenId: number;
  serial: string;
  tokenType: string;
  resolverId: number | null;
  /** Name of the bound resolver; null when unbound or the resolver was deleted. */
  resolverName: string | null;
  machineId: string | null;
  application: string;
  options: Record<string, string>;
}

/** Which bindings to read; every given field must match. */
export interface BindingFilter {
  tokenId?: number;
  /** Token serial (exact). */
  serial?: string;
  ids?: number[];
  application?: string;
  /** Bound to this resolver id and machine id. */
  machine?: { resolverId: number; machineId: string };
}

/** Inserts a binding with its options and returns the binding id. */
export async function insertBinding(
  db: Db,
  binding: {
    tokenId: number;
    resolverId: number | null;
    machineId: string | null;
    application: string;
  },
  options: Record<string, string>,
): Promise<number> {
  const row = await db.insertInto("machinetoken")
    .values({
      token_id: binding.tokenId,
      machineresolver_id: binding.resolverId,
      machine_id: binding.machineId,
      application: binding.application,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  const id = Number(row.id);
  await upsertOptions(db, id, options);
  return id;
}

/** Adds or overwrites options of binding `id`. */
export async function upsertOptions(
  db: Db,
  id: number,
  options: Record<string, string>,
): Promise<void> {
  for (const [key, value] of Object.entries(options)) {
    await db.insertInto("machinetokenoption")
      .values({ machinetoken_id: id, key, value })
      .onConflict((oc) => oc.columns(["machinetoken_id", "key"]).doUpdateSet({ value }))
      .execute();
  }
}

/** Deletes option `key` of binding `id`; returns how many rows went (0 or 1). */
export async function deleteOption(db: Db, id: number, key: string): Promise<number> {
  const res = await db.deleteFrom("machinetokenoption")
    .where("machinetoken_id", "=", id).where("key", "=", key).executeTakeFirst();
  return Number(res.numDeletedRows);
}

const anyOfApplication = new EpochCache<string, boolean>();

/**
 * Whether token `serial` has at least one binding for `application`: no query
 * at all while the application has no bindings (kept until the database
 * changes), else one cheap query.
 */
export async function hasBinding(db: Db, serial: string, application: string): Promise<boolean> {
  const any = await anyOfApplication.get(db, application, async () => {
    const { rows } = await runCached(
      db,
      "anyBinding",
      (app) =>
        db.selectFrom("machinetoken").select("id").where("application", "=", app as string)
          .limit(sql.lit(1)),
      [application],
    );
    return rows.length > 0;
  });
  if (!any) return false;
  const { rows } = await runCached(
    db,
    "hasBinding",
    (s, app) =>
      db.selectFrom("machinetoken as mt")
        .innerJoin("token as t", "t.id", "mt.token_id")
        .select("mt.id")
        .where("t.serial", "=", s as string)
        .where("mt.application", "=", app as string)
        .limit(sql.lit(1)),
    [serial, application],
  );
  return rows.length > 0;
}

/** Bindings matching `filter` in id order, with serial, token type, resolver name and options. */
export async function findBindings(db: Db, filter: BindingFilter = {}): Promise<BindingRow[]> {
  let q = db.selectFrom("machinetoken as mt")
    .innerJoin("token as t", "t.id", "mt.token_id")
    .leftJoin("machineresolver as r", "r.id", "mt.machineresolver_id")
    .select([
      "mt.id as id",
      "mt.token_id as token_id",
      "t.serial as serial",
      "t.tokentype as tokentype",
      "mt.machineresolver_id as resolver_id",
      "r.name as resolver_name",
      "mt.machine_id as machine_id",
      "mt.application as application",
    ])
    .orderBy("mt.id");
  if (filter.tokenId !== undefined) q = q.where("mt.token_id", "=", filter.tokenId);
  if (filter.serial !== undefined) q = q.where("t.serial", "=", filter.serial);
  if (filter.ids !== undefined) {
    if (filter.ids.length === 0) return [];
    q = q.where("mt.id", "in", filter.ids);
  }
  if (filter.application !== undefined) q = q.where("mt.application", "=", filter.application);
  if (filter.machine !== undefined) {
    q = q.where("mt.machineresolver_id", "=", filter.machine.resolverId)
      .where("mt.machine_id", "=", filter.machine.machineId);
  }
  const rows = await q.execute();
  const options = await optionsOf(db, rows.map((r) => Number(r.id)));
  return rows.map((r) => ({
    id: Number(r.id),
    tokenId: Number(r.token_id),
    serial: r.serial,
    tokenType: r.tokentype,
    resolverId: r.resolver_id === null ? null : Number(r.resolver_id),
    resolverName: r.resolver_name ?? null,
    machineId: r.machine_id,
    application: r.application,
    options: options.get(Number(r.id)) ?? {},
  }));
}

async function optionsOf(db: Db, ids: number[]): Promise<Map<number, Record<string, string>>> {
  const out = new Map<number, Record<string, string>>();
  // chunks keep the IN list within every database's parameter limit
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db.selectFrom("machinetokenoption")
      .select(["machinetoken_id", "key", "value"])
      .where("machinetoken_id", "in", ids.slice(i, i + 500))
      .orderBy("id")
      .execute();
    for (const r of rows) {
      const id = Number(r.machinetoken_id);
      if (!out.has(id)) out.set(id, {});
      out.get(id)![r.key] = r.value;
    }
  }
  return out;
}

/** Deletes bindings (and their options); returns how many bindings went. */
export async function deleteBindings(db: Db, ids: number[]): Promise<number> {
  if (ids.length === 0) return 0;
  await db.deleteFrom("machinetokenoption").where("machinetoken_id", "in", ids).execute();
  const res = await db.deleteFrom("machinetoken").where("id", "in", ids).executeTakeFirst();
  return Number(res.numDeletedRows);
}
