/**
 * SQL of token containers (`tokencontainer*` tables, migration 0025). No cache: containers are
 * read by the container routes, the token list and (last_seen) successful checks only.
 *
 * @module
 */
import { type Expression, type ExpressionBuilder, sql, type SqlBool } from "kysely";
import type { Database, Db } from "../../db/schema.ts";
import { likePattern } from "../../db/like.ts";
import { runCached } from "../../db/compiled.ts";
import { EpochCache, type PendingCommits } from "../../db/direct.ts";

/** One container row (without its tokens, owner, realms, states and info). */
export interface ContainerRow {
  id: number;
  serial: string;
  type: string;
  description: string;
  lastSeen: number | null;
  lastUpdated: number | null;
  templateId: number | null;
  createdAt: number;
}

/** The owner of a container as stored. */
export interface OwnerRow {
  uid: string;
  resolver: string;
  realm: string;
  login: string;
}

/** One container info entry. */
export interface InfoRow {
  key: string;
  value: string;
  type: string;
  description: string;
}

/** What belongs to a container besides its row. */
export interface ContainerDetails {
  owner: OwnerRow | undefined;
  realms: string[];
  states: string[];
  info: InfoRow[];
  tokens: { id: number; serial: string }[];
  templateName: string;
}

/** One template row; `options` is JSON text. */
export interface TemplateRow {
  id: number;
  name: string;
  containerType: string;
  options: string;
  isDefault: boolean;
}

/** The filters of the container list; string filters take `*` as wildcard. */
export interface ContainerListFilter {
  /** Exact owner (uid, realm, resolver). */
  owner?: { uid: string; realm: string; resolver?: string };
  serial?: string;
  type?: string;
  tokenSerial?: string;
  realm?: string;
  /** Only containers with one of these realms (undefined: all). */
  allowedRealms?: string[];
  template?: string;
  description?: string;
  assigned?: boolean;
  resolver?: string;
  infoKey?: string;
  infoValue?: string;
  /** Only containers whose last authentication is after this time (ms). */
  lastSeenAfter?: number;
  /** Only containers whose last synchronisation is after this time (ms). */
  lastUpdatedAfter?: number;
  state?: string;
}

/** Sortable container columns (`sortby`); anything else sorts by serial. */
export const CONTAINER_SORT_COLUMNS = [
  "id",
  "serial",
  "type",
  "description",
  "last_seen",
  "last_updated",
  "template_id",
] as const;

/** A sortable column. */
export type ContainerSortColumn = typeof CONTAINER_SORT_COLUMNS[number];

// deno-lint-ignore no-explicit-any
function toRow(r: any): ContainerRow {
  return {
    id: Number(r.id),
    serial: r.serial,
    type: r.type,
    description: r.description,
    lastSeen: r.last_seen === null ? null : Number(r.last_seen),
    lastUpdated: r.last_updated === null ? null : Number(r.last_updated),
    templateId: r.template_id === null ? null : Number(r.template_id),
    createdAt: Number(r.created_at),
  };
}

/** `column` equals `value` without regard to case, or matches it as a `*` pattern. */
function matchNoCase(column: string, value: string): Expression<SqlBool> {
  return value.includes("*")
    ? sql<SqlBool>`lower(${sql.ref(column)}) like ${likePattern(value.toLowerCase())} escape '\\'`
    : sql<SqlBool>`lower(${sql.ref(column)}) = ${value.toLowerCase()}`;
}

/** `column` equals `value` (case-sensitive), or matches it as a `*` pattern. */
function matchCase(column: string, value: string): Expression<SqlBool> {
  return value.includes("*")
    ? sql<SqlBool>`${sql.ref(column)} like ${likePattern(value)} escape '\\'`
    : sql<SqlBool>`${sql.ref(column)} = ${value}`;
}

/** The container with `serial` (case-insensitive). */
export async function findBySerial(db: Db, serial: string): Promise<ContainerRow | undefined> {
  const r = await db.selectFrom("tokencontainer").selectAll()
    .where(sql<SqlBool>`lower(serial) = ${serial.toLowerCase()}`).executeTakeFirst();
  return r ? toRow(r) : undefined;
}

/** The container with `id`. */
export async function findById(db: Db, id: number): Promise<ContainerRow | undefined> {
  const r = await db.selectFrom("tokencontainer").selectAll().where("id", "=", id)
    .executeTakeFirst();
  return r ? toRow(r) : undefined;
}

/** How many containers have `type`. */
export async function countOfType(db: Db, type: string): Promise<number> {
  const r = await db.selectFrom("tokencontainer").select((eb) => eb.fn.countAll<number>().as("n"))
    .where("type", "=", type).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Inserts a container with its states, info and realms, in one transaction; its id. */
export async function insertContainer(
  db: Db,
  row: Omit<ContainerRow, "id" | "lastSeen" | "lastUpdated">,
  extra: { states: string[]; info: InfoRow[]; realms: string[] },
): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    const created = await trx.insertInto("tokencontainer").values({
      serial: row.serial,
      type: row.type,
      description: row.description,
      template_id: row.templateId,
      created_at: row.createdAt,
      last_seen: null,
      last_updated: null,
    }).returning("id").executeTakeFirstOrThrow();
    const id = Number(created.id);
    for (const state of extra.states) {
      await trx.insertInto("tokencontainerstates").values({ container_id: id, state }).execute();
    }
    for (const i of extra.info) await upsertInfo(trx, id, i);
    for (const realm of extra.realms) await addRealm(trx, id, realm);
    return id;
  });
}

/** Deletes the container (its owner, realms, states, info and memberships go with it). */
export async function deleteContainer(db: Db, id: number): Promise<number> {
  const r = await db.deleteFrom("tokencontainer").where("id", "=", id).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Owner, realms, states, info, tokens and template name of each of `ids`. */
export async function detailsOf(db: Db, ids: number[]): Promise<Map<number, ContainerDetails>> {
  const out = new Map<number, ContainerDetails>();
  if (ids.length === 0) return out;
  for (const id of ids) {
    out.set(id, {
      owner: undefined,
      realms: [],
      states: [],
      info: [],
      tokens: [],
      templateName: "",
    });
  }
  const owners = await db.selectFrom("tokencontainerowner").selectAll()
    .where("container_id", "in", ids).execute();
  for (const o of owners) {
    out.get(Number(o.container_id))!.owner = {
      uid: o.user_id,
      resolver: o.resolver,
      realm: o.realm,
      login: o.login,
    };
  }
  const realms = await db.selectFrom("tokencontainerrealm").selectAll()
    .where("container_id", "in", ids).orderBy("realm").execute();
  for (const r of realms) out.get(Number(r.container_id))!.realms.push(r.realm);
  const states = await db.selectFrom("tokencontainerstates").selectAll()
    .where("container_id", "in", ids).orderBy("state").execute();
  for (const s of states) out.get(Number(s.container_id))!.states.push(s.state);
  const info = await db.selectFrom("tokencontainerinfo").selectAll()
    .where("container_id", "in", ids).orderBy("id").execute();
  for (const i of info) {
    out.get(Number(i.container_id))!.info.push({
      key: i.key,
      value: i.value,
      type: i.type,
      description: i.description,
    });
  }
  const tokens = await db.selectFrom("tokencontainertoken")
    .innerJoin("token", "token.id", "tokencontainertoken.token_id")
    .select(["tokencontainertoken.container_id", "token.id", "token.serial"])
    .where("tokencontainertoken.container_id", "in", ids).orderBy("token.serial").execute();
  for (const t of tokens) {
    out.get(Number(t.container_id))!.tokens.push({ id: Number(t.id), serial: t.serial });
  }
  const templates = await db.selectFrom("tokencontainer")
    .innerJoin("tokencontainertemplate", "tokencontainertemplate.id", "tokencontainer.template_id")
    .select(["tokencontainer.id", "tokencontainertemplate.name"])
    .where("tokencontainer.id", "in", ids).execute();
  for (const t of templates) out.get(Number(t.id))!.templateName = t.name;
  return out;
}

/** A page of containers matching `filter`, and how many match in all. */
export async function listContainers(
  db: Db,
  filter: ContainerListFilter,
  page: { sortby: ContainerSortColumn; desc: boolean; offset?: number; limit?: number },
): Promise<{ rows: ContainerRow[]; total: number }> {
  // deno-lint-ignore no-explicit-any
  const where = (eb: ExpressionBuilder<Database, "tokencontainer">): any => {
    const f = filter;
    const conds: Expression<SqlBool>[] = [];
    const ownerExists = (
      cond: (e: ExpressionBuilder<Database, "tokencontainerowner">) => Expression<SqlBool>,
    ) =>
      eb.exists(
        eb.selectFrom("tokencontainerowner").select("tokencontainerowner.container_id")
          .whereRef("tokencontainerowner.container_id", "=", "tokencontainer.id")
          .where(cond),
      );
    if (f.owner) {
      const o = f.owner;
      conds.push(ownerExists((e) =>
        e.and([
          e("tokencontainerowner.user_id", "=", o.uid),
          e("tokencontainerowner.realm", "=", o.realm),
          ...(o.resolver ? [e("tokencontainerowner.resolver", "=", o.resolver)] : []),
        ])
      ));
    }
    if (f.serial !== undefined) conds.push(matchNoCase("tokencontainer.serial", f.serial));
    if (f.type !== undefined) conds.push(matchNoCase("tokencontainer.type", f.type));
    if (f.description !== undefined) {
      conds.push(matchNoCase("tokencontainer.description", f.description));
    }
    if (f.tokenSerial !== undefined) {
      conds.push(eb.exists(
        eb.selectFrom("tokencontainertoken")
          .innerJoin("token", "token.id", "tokencontainertoken.token_id")
          .select("tokencontainertoken.token_id")
          .whereRef("tokencontainertoken.container_id", "=", "tokencontainer.id")
          .where(matchNoCase("token.serial", f.tokenSerial)),
      ));
    }
    const realmExists = (cond: Expression<SqlBool>) =>
      eb.exists(
        eb.selectFrom("tokencontainerrealm").select("tokencontainerrealm.container_id")
          .whereRef("tokencontainerrealm.container_id", "=", "tokencontainer.id")
          .where(cond),
      );
    if (f.realm !== undefined) {
      conds.push(realmExists(matchNoCase("tokencontainerrealm.realm", f.realm)));
    }
    if (f.allowedRealms) {
      const realms = f.allowedRealms.length ? f.allowedRealms.map((r) => r.toLowerCase()) : [""];
      conds.push(
        realmExists(sql<SqlBool>`${sql.ref("tokencontainerrealm.realm")} in (${sql.join(realms)})`),
      );
    }
    if (f.resolver !== undefined) {
      const resolver = f.resolver;
      conds.push(ownerExists(() => matchNoCase("tokencontainerowner.resolver", resolver)));
    }
    if (f.assigned !== undefined) {
      const any = ownerExists((e) => e.lit(true));
      conds.push(f.assigned ? any : eb.not(any));
    }
    if (f.template !== undefined) {
      conds.push(eb.exists(
        eb.selectFrom("tokencontainertemplate").select("tokencontainertemplate.id")
          .whereRef("tokencontainertemplate.id", "=", "tokencontainer.template_id")
          .where(matchCase("tokencontainertemplate.name", f.template)),
      ));
    }
    if (f.infoKey !== undefined || f.infoValue !== undefined) {
      const c: Expression<SqlBool>[] = [];
      if (f.infoKey !== undefined) c.push(matchCase("tokencontainerinfo.key", f.infoKey));
      if (f.infoValue !== undefined) c.push(matchNoCase("tokencontainerinfo.value", f.infoValue));
      conds.push(eb.exists(
        eb.selectFrom("tokencontainerinfo").select("tokencontainerinfo.id")
          .whereRef("tokencontainerinfo.container_id", "=", "tokencontainer.id")
          .where((e) => e.and(c)),
      ));
    }
    if (f.lastSeenAfter !== undefined) {
      conds.push(eb("tokencontainer.last_seen", ">", f.lastSeenAfter));
    }
    if (f.lastUpdatedAfter !== undefined) {
      conds.push(eb("tokencontainer.last_updated", ">", f.lastUpdatedAfter));
    }
    if (f.state !== undefined) {
      conds.push(eb.exists(
        eb.selectFrom("tokencontainerstates").select("tokencontainerstates.container_id")
          .whereRef("tokencontainerstates.container_id", "=", "tokencontainer.id")
          .where(matchNoCase("tokencontainerstates.state", f.state)),
      ));
    }
    return eb.and(conds);
  };
  let q = db.selectFrom("tokencontainer").selectAll().where(where)
    .orderBy(`tokencontainer.${page.sortby}`, page.desc ? "desc" : "asc")
    .orderBy("tokencontainer.id", "asc");
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset ?? 0);
  const rows = (await q.execute()).map(toRow);
  const total = page.limit === undefined ? rows.length : Number(
    (await db.selectFrom("tokencontainer").select((eb) => eb.fn.countAll<number>().as("n"))
      .where(where).executeTakeFirstOrThrow()).n,
  );
  return { rows, total };
}

/** The container id of each of `tokenIds` that is in a container. */
export async function containerIdsOfTokens(
  db: Db,
  tokenIds: number[],
): Promise<Map<number, { id: number; serial: string }>> {
  const out = new Map<number, { id: number; serial: string }>();
  if (tokenIds.length === 0) return out;
  const rows = await db.selectFrom("tokencontainertoken")
    .innerJoin("tokencontainer", "tokencontainer.id", "tokencontainertoken.container_id")
    .select(["tokencontainertoken.token_id", "tokencontainer.id", "tokencontainer.serial"])
    .where("tokencontainertoken.token_id", "in", tokenIds).execute();
  for (const r of rows) {
    out.set(Number(r.token_id), { id: Number(r.id), serial: r.serial });
  }
  return out;
}

/**
 * Puts token `tokenId` into container `containerId`, moving it out of any other container in
 * the same statement (the token is the key); false when it already was in this one.
 */
export async function addToken(db: Db, containerId: number, tokenId: number): Promise<boolean> {
  return await db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom("tokencontainertoken").select("container_id")
      .where("token_id", "=", tokenId).executeTakeFirst();
    if (current && Number(current.container_id) === containerId) return false;
    await trx.insertInto("tokencontainertoken")
      .values({ token_id: tokenId, container_id: containerId })
      .onConflict((oc) => oc.column("token_id").doUpdateSet({ container_id: containerId }))
      .execute();
    return true;
  });
}

/** Takes token `tokenId` out of container `containerId`; false when it was not in it. */
export async function removeToken(db: Db, containerId: number, tokenId: number): Promise<boolean> {
  const r = await db.deleteFrom("tokencontainertoken").where("token_id", "=", tokenId)
    .where("container_id", "=", containerId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * Makes `owner` the owner of the container and adds the owner's realm to its realms, unless it
 * has an owner already (false; the container is the key, so two callers cannot both win).
 */
export async function setOwner(db: Db, containerId: number, owner: OwnerRow): Promise<boolean> {
  return await db.transaction().execute(async (trx) => {
    const r = await trx.insertInto("tokencontainerowner").values({
      container_id: containerId,
      user_id: owner.uid,
      resolver: owner.resolver,
      realm: owner.realm,
      login: owner.login,
    }).onConflict((oc) => oc.column("container_id").doNothing()).executeTakeFirst();
    if (Number(r.numInsertedOrUpdatedRows ?? 0) === 0) return false;
    if (owner.realm !== "") await addRealm(trx, containerId, owner.realm);
    return true;
  });
}

/** Removes the owner when it matches (uid, and resolver/realm when given); whether one was. */
export async function removeOwner(
  db: Db,
  containerId: number,
  match: { uid: string; resolver?: string; realm?: string },
): Promise<boolean> {
  let q = db.deleteFrom("tokencontainerowner").where("container_id", "=", containerId)
    .where("user_id", "=", match.uid);
  if (match.resolver) q = q.where("resolver", "=", match.resolver);
  if (match.realm) q = q.where("realm", "=", match.realm);
  const r = await q.executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Adds `realm` to the container's realms; false when it was there. */
export async function addRealm(db: Db, containerId: number, realm: string): Promise<boolean> {
  const r = await db.insertInto("tokencontainerrealm").values({ container_id: containerId, realm })
    .onConflict((oc) => oc.columns(["container_id", "realm"]).doNothing()).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Replaces the container's realms by `realms`, in one transaction. */
export async function replaceRealms(db: Db, containerId: number, realms: string[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("tokencontainerrealm").where("container_id", "=", containerId).execute();
    for (const realm of new Set(realms)) await addRealm(trx, containerId, realm);
  });
}

/** Replaces the container's states by `states`, in one transaction. */
export async function replaceStates(db: Db, containerId: number, states: string[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("tokencontainerstates").where("container_id", "=", containerId)
      .execute();
    for (const state of new Set(states)) {
      await trx.insertInto("tokencontainerstates").values({ container_id: containerId, state })
        .execute();
    }
  });
}

/** Sets the container's description. */
export async function setDescription(db: Db, containerId: number, description: string) {
  await db.updateTable("tokencontainer").set({ description }).where("id", "=", containerId)
    .execute();
}

/** Sets one info entry (insert or replace). */
export async function upsertInfo(db: Db, containerId: number, i: InfoRow): Promise<void> {
  await db.insertInto("tokencontainerinfo").values({
    container_id: containerId,
    key: i.key,
    value: i.value,
    type: i.type,
    description: i.description,
  }).onConflict((oc) =>
    oc.columns(["container_id", "key"]).doUpdateSet({
      value: i.value,
      type: i.type,
      description: i.description,
    })
  ).execute();
}

/**
 * Sets info entry `key` unless it is stored as internal (`pi_internal`): the write is one
 * conditional statement, so a concurrent internal write is never overwritten. Whether written.
 */
export async function upsertUserInfo(
  db: Db,
  containerId: number,
  key: string,
  value: string,
): Promise<boolean> {
  const r = await db.insertInto("tokencontainerinfo")
    .values({ container_id: containerId, key, value, type: "", description: "" })
    .onConflict((oc) =>
      oc.columns(["container_id", "key"]).doUpdateSet({ value })
        .where("tokencontainerinfo.type", "!=", "pi_internal")
    ).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Deletes info entry `key` unless it is internal; whether one was deleted. */
export async function deleteUserInfo(db: Db, containerId: number, key: string): Promise<boolean> {
  const r = await db.deleteFrom("tokencontainerinfo").where("container_id", "=", containerId)
    .where("key", "=", key).where("type", "!=", "pi_internal").executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Deletes info entries: `keys` (or all), internal ones too when `withInternal`. */
export async function deleteInfo(
  db: Db,
  containerId: number,
  opts: { keys?: string[]; withInternal?: boolean },
): Promise<number> {
  let q = db.deleteFrom("tokencontainerinfo").where("container_id", "=", containerId);
  if (opts.keys) q = q.where("key", "in", opts.keys.length ? opts.keys : [""]);
  if (!opts.withInternal) q = q.where("type", "!=", "pi_internal");
  return Number((await q.executeTakeFirst()).numDeletedRows);
}

/** Sets `last_seen` (last authentication) or `last_updated` (last synchronisation). */
export async function touch(
  db: Db,
  containerId: number,
  column: "last_seen" | "last_updated",
  ms: number | null,
): Promise<void> {
  await db.updateTable("tokencontainer").set({ [column]: ms }).where("id", "=", containerId)
    .execute();
}

const anyMember = new EpochCache<"any", boolean>();

/**
 * Whether any token is in a container; kept until the database changes (adding
 * a token to a container writes `tokencontainertoken`, which moves the epoch on
 * every engine), so a site without containers runs no container statement on a check.
 */
function anyTokenInContainer(db: Db): Promise<boolean> {
  return anyMember.get(db, "any", async () => {
    const { rows } = await runCached(
      db,
      "anyTokenInContainer",
      () => db.selectFrom("tokencontainertoken").select("token_id").limit(sql.lit(1)),
      [],
    );
    return rows.length > 0;
  });
}

/**
 * Sets `last_seen` of every container holding one of `tokenIds` (one statement,
 * compiled once per number of ids: it runs on every successful check). With
 * `pending` (the check path) its commit joins the check's write group.
 */
export async function touchLastSeenOfTokens(
  db: Db,
  tokenIds: number[],
  ms: number,
  pending?: PendingCommits,
): Promise<void> {
  if (tokenIds.length === 0 || !(await anyTokenInContainer(db))) return;
  await runCached(
    db,
    `touchLastSeenOfTokens:${tokenIds.length}`,
    (at, ...ids) =>
      db.updateTable("tokencontainer").set({ last_seen: at as number })
        .where("id", "in", (eb) =>
          eb.selectFrom("tokencontainertoken").select("container_id")
            .where("token_id", "in", ids as number[])),
    [ms, ...tokenIds],
    pending,
  );
}

// deno-lint-ignore no-explicit-any
function toTemplate(r: any): TemplateRow {
  return {
    id: Number(r.id),
    name: r.name,
    containerType: r.container_type,
    options: r.options,
    isDefault: Number(r.is_default) === 1,
  };
}

/** Templates by name and/or type, sorted by `sortby` (name, container_type, id). */
export async function listTemplates(
  db: Db,
  filter: { name?: string; containerType?: string; isDefault?: boolean },
  page: {
    sortby: "name" | "container_type" | "id";
    desc: boolean;
    offset?: number;
    limit?: number;
  },
): Promise<{ rows: TemplateRow[]; total: number }> {
  // deno-lint-ignore no-explicit-any
  const where = (eb: ExpressionBuilder<Database, "tokencontainertemplate">): any => {
    const conds: Expression<SqlBool>[] = [];
    if (filter.name !== undefined) {
      conds.push(matchCase("tokencontainertemplate.name", filter.name));
    }
    if (filter.containerType !== undefined) {
      conds.push(matchNoCase("tokencontainertemplate.container_type", filter.containerType));
    }
    if (filter.isDefault !== undefined) {
      conds.push(eb("tokencontainertemplate.is_default", "=", filter.isDefault ? 1 : 0));
    }
    return eb.and(conds);
  };
  let q = db.selectFrom("tokencontainertemplate").selectAll().where(where)
    .orderBy(`tokencontainertemplate.${page.sortby}`, page.desc ? "desc" : "asc")
    .orderBy("tokencontainertemplate.id", "asc");
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset ?? 0);
  const rows = (await q.execute()).map(toTemplate);
  const total = page.limit === undefined ? rows.length : Number(
    (await db.selectFrom("tokencontainertemplate")
      .select((eb) => eb.fn.countAll<number>().as("n")).where(where)
      .executeTakeFirstOrThrow()).n,
  );
  return { rows, total };
}

/** The template named `name`. */
export async function findTemplate(db: Db, name: string): Promise<TemplateRow | undefined> {
  const r = await db.selectFrom("tokencontainertemplate").selectAll().where("name", "=", name)
    .executeTakeFirst();
  return r ? toTemplate(r) : undefined;
}

/**
 * Creates template `name` or sets the options of the existing one (its type stays); with
 * `isDefault` it becomes the only default of its type. One transaction; its id.
 */
export async function upsertTemplate(
  db: Db,
  t: { name: string; containerType: string; options: string; isDefault: boolean },
): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom("tokencontainertemplate").selectAll()
      .where("name", "=", t.name).executeTakeFirst();
    let id: number;
    let type = t.containerType;
    if (existing) {
      id = Number(existing.id);
      type = existing.container_type;
      await trx.updateTable("tokencontainertemplate")
        .set({ options: t.options, is_default: t.isDefault ? 1 : 0 }).where("id", "=", id)
        .execute();
    } else {
      id = Number(
        (await trx.insertInto("tokencontainertemplate").values({
          name: t.name,
          container_type: t.containerType,
          options: t.options,
          is_default: t.isDefault ? 1 : 0,
        }).returning("id").executeTakeFirstOrThrow()).id,
      );
    }
    if (t.isDefault) {
      await trx.updateTable("tokencontainertemplate").set({ is_default: 0 })
        .where("container_type", "=", type).where("id", "!=", id).execute();
    }
    return id;
  });
}

/** Deletes template `name` (containers made from it keep no reference); whether it existed. */
export async function deleteTemplate(db: Db, name: string): Promise<boolean> {
  const r = await db.deleteFrom("tokencontainertemplate").where("name", "=", name)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
