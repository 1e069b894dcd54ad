/**
 * SQL of the token domain: tokens, tokeninfo and token realms. Counter and
 * fail-counter changes are single conditional UPDATEs (compare-and-set).
 *
 * @module
 */
import {
  type Compilable,
  type Expression,
  type ExpressionBuilder,
  sql,
  type SqlBool,
} from "kysely";
import type { Database, Db, TokenTable } from "../../db/schema.ts";
import { matchStar } from "../../db/like.ts";
import { readCachedNow, runCached } from "../../db/compiled.ts";
import { ownerTokensNow, patchCachedToken } from "./owner_cache.ts";
import { directOf, type PendingCommits } from "../../db/direct.ts";
import { isPostgres } from "../../db/engine.ts";
import type { InfoEntry, Token, TokenInfo, TokenWithInfo } from "./model.ts";

type TokenRow = Omit<TokenTable, "id"> & { id: number };

/** Columns a token row is written with. */
export type TokenFields = Partial<Omit<TokenTable, "id">>;

function toToken(r: TokenRow): Token {
  return {
    id: Number(r.id),
    serial: r.serial,
    type: r.tokentype,
    description: r.description,
    active: Number(r.active) === 1,
    revoked: Number(r.revoked) === 1,
    locked: Number(r.locked) === 1,
    failcount: Number(r.failcount),
    maxfail: Number(r.maxfail),
    count: Number(r.count),
    countWindow: Number(r.count_window),
    syncWindow: Number(r.sync_window),
    otplen: Number(r.otplen),
    rolloutState: r.rollout_state,
    keyEnc: r.key_enc,
    pinHash: r.pin_hash,
    owner: r.user_id === "" && r.user_login === ""
      ? undefined
      : { login: r.user_login, realm: r.user_realm, resolver: r.resolver, uid: r.user_id },
    createdAt: Number(r.created_at),
  };
}

/** Inserts a token row; returns its id. */
export async function insertToken(db: Db, fields: Omit<TokenTable, "id">): Promise<number> {
  const r = await db.insertInto("token").values(fields).returning("id").executeTakeFirstOrThrow();
  return Number(r.id);
}

/** Updates columns of one token. */
export async function updateToken(db: Db, id: number, fields: TokenFields): Promise<void> {
  if (Object.keys(fields).length === 0) return;
  await db.updateTable("token").set(fields).where("id", "=", id).execute();
}

/** Updates columns of several tokens; returns how many rows matched `onlyIf`. */
export async function updateTokens(
  db: Db,
  ids: number[],
  fields: TokenFields,
  onlyIf?: (eb: ExpressionBuilder<Database, "token">) => Expression<SqlBool>,
): Promise<number> {
  if (ids.length === 0) return 0;
  let q = db.updateTable("token").set(fields).where("id", "in", ids);
  if (onlyIf) q = q.where(onlyIf);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** The token with `serial`, or undefined. */
export async function findBySerial(db: Db, serial: string): Promise<Token | undefined> {
  const { rows } = await runCached<TokenRow>(
    db,
    "findBySerial",
    (s) => db.selectFrom("token").selectAll().where("serial", "=", s as string),
    [serial],
  );
  return rows[0] ? toToken(rows[0]) : undefined;
}

/** Tokens by serial list. */
export async function findBySerials(db: Db, serials: string[]): Promise<Token[]> {
  if (serials.length === 0) return [];
  const rows = await db.selectFrom("token").selectAll().where("serial", "in", serials)
    .orderBy("serial").execute();
  return rows.map((r) => toToken(r as TokenRow));
}

/** Tokens of `type` whose tokeninfo `key` is exactly `value` (at most `limit`, by id). */
export async function findByTypeAndInfo(
  db: Db,
  query: { type: string; key: string; value: string; limit: number },
): Promise<Token[]> {
  const rows = await db.selectFrom("token").selectAll()
    .where("tokentype", "=", query.type)
    .where((eb) =>
      eb.exists(
        eb.selectFrom("tokeninfo").select("tokeninfo.token_id")
          .whereRef("tokeninfo.token_id", "=", "token.id")
          .where("tokeninfo.key", "=", query.key)
          .where("tokeninfo.value", "=", query.value),
      )
    )
    .orderBy("id").limit(query.limit).execute();
  return rows.map((r) => toToken(r as TokenRow));
}

type Owner = { realm: string; login: string; uid?: string; resolver?: string };

/** Tokens owned by a user (matched by realm and uid when known, else login). */
export async function findByOwner(db: Db, owner: Owner): Promise<Token[]> {
  return (await ownerRows(db, owner, false)).map(toToken);
}

// a token's info as one JSON array of [key, value, type] (SQLite's json_group_array)
const INFO_JSON = sql<string | null>`(select json_group_array(json_array("tokeninfo"."key",
  "tokeninfo"."value", "tokeninfo"."type")) from "tokeninfo"
  where "tokeninfo"."token_id" = "token"."id")`;
// the same on PostgreSQL, as text (pg would parse a json column on its own)
const INFO_JSON_PG = sql<string | null>`(select json_agg(json_build_array("tokeninfo"."key",
  "tokeninfo"."value", "tokeninfo"."type"))::text from "tokeninfo"
  where "tokeninfo"."token_id" = "token"."id")`;

/**
 * Tokens owned by a user with their info (no realms), in one statement (the
 * info as a JSON column: one round trip, and on SQLite half the cost of a
 * second query). On SQLite answered from the owner cache (owner_cache.ts)
 * while the token tables have not changed.
 */
export async function findByOwnerWithInfo(db: Db, owner: Owner): Promise<TokenWithInfo[]> {
  const q = ownerQuery(db, owner, true);
  if (directOf(db) === undefined) {
    // PostgreSQL, or SQLite inside a transaction (Kysely's connection)
    return (await runCached<InfoRow>(db, q.key, q.build, q.args)).rows.map(withInfoJson);
  }
  const now = ownerTokensNow(
    db,
    `${q.key}\u0000${q.args.join("\u0000")}`,
    () => readCachedNow<InfoRow>(db, q.key, q.build, q.args)?.map(withInfoJson),
  );
  if (now !== undefined) return now;
  // a transaction is open on the connection: read through Kysely, after it
  const { rows } = await runCached<InfoRow>(db, q.key, q.build, q.args);
  return rows.map(withInfoJson);
}

type InfoRow = TokenRow & { info_json?: string | null };

function withInfoJson(r: InfoRow): TokenWithInfo {
  const info: TokenInfo = {};
  for (const [key, value, type] of JSON.parse(r.info_json ?? "[]") as string[][]) {
    info[key] = { value, type } satisfies InfoEntry;
  }
  return { ...toToken(r), info, realms: [] };
}

/** The owner query: by realm and uid (and resolver) when known, else by login. */
function ownerQuery(db: Db, owner: Owner, includeInfo: boolean): {
  key: string;
  build: (...args: unknown[]) => Compilable;
  args: unknown[];
} {
  const base = () => {
    const q = db.selectFrom("token").selectAll();
    return includeInfo ? q.select((isPostgres(db) ? INFO_JSON_PG : INFO_JSON).as("info_json")) : q;
  };
  const key = includeInfo ? "findByOwner+info" : "findByOwner";
  if (owner.uid && owner.resolver) {
    return {
      key: `${key}:uid+resolver`,
      build: (realm, uid, resolver) =>
        base().where("user_realm", "=", realm as string).where("user_id", "=", uid as string)
          .where("resolver", "=", resolver as string).orderBy("serial"),
      args: [owner.realm, owner.uid, owner.resolver],
    };
  }
  if (owner.uid) {
    return {
      key: `${key}:uid`,
      build: (realm, uid) =>
        base().where("user_realm", "=", realm as string).where("user_id", "=", uid as string)
          .orderBy("serial"),
      args: [owner.realm, owner.uid],
    };
  }
  return {
    key: `${key}:login`,
    build: (realm, login) =>
      base().where("user_realm", "=", realm as string).where("user_login", "=", login as string)
        .orderBy("serial"),
    args: [owner.realm, owner.login],
  };
}

async function ownerRows(db: Db, owner: Owner, includeInfo: boolean): Promise<InfoRow[]> {
  const q = ownerQuery(db, owner, includeInfo);
  return (await runCached<InfoRow>(db, q.key, q.build, q.args)).rows;
}

/**
 * The token whose tokeninfo `credential_id_hash` is `hash` (a WebAuthn or
 * passkey credential), through the unique partial index of migration 0016:
 * the key is a literal so that PostgreSQL's generic plans use the index too.
 */
export async function findByCredentialIdHash(db: Db, hash: string): Promise<Token | undefined> {
  const rows = await db.selectFrom("token").selectAll("token")
    .innerJoin("tokeninfo", "tokeninfo.token_id", "token.id")
    .where("tokeninfo.key", "=", sql.lit("credential_id_hash"))
    .where("tokeninfo.value", "=", hash)
    .execute();
  return rows.length === 1 ? toToken(rows[0] as TokenRow) : undefined;
}

/** Number of tokens of a type (serial generation). */
export async function countOfType(db: Db, type: string): Promise<number> {
  const r = await db.selectFrom("token").select((eb) => eb.fn.countAll<number>().as("n"))
    .where("tokentype", "=", type).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Number of tokens in a realm (`max_token_per_realm`). */
export async function countInRealm(db: Db, realm: string): Promise<number> {
  const r = await db.selectFrom("token_realm")
    .select((eb) => eb.fn.count<number>("token_id").distinct().as("n"))
    .where("realm", "=", realm).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Serials of the tokens without owner that have `realm` among their token realms, oldest first. */
export async function unassignedSerialsInRealm(db: Db, realm: string): Promise<string[]> {
  const rows = await db.selectFrom("token")
    .innerJoin("token_realm", "token_realm.token_id", "token.id")
    .select(["token.serial"])
    .where("token.user_id", "=", "")
    .where("token_realm.realm", "=", realm)
    .orderBy("token.id")
    .execute();
  return rows.map((r) => r.serial);
}

/** Number of tokens assigned to users of `realm` (deleting a realm needs none). */
export async function countOfRealmUsers(db: Db, realm: string): Promise<number> {
  const row = await db.selectFrom("token").select(sql<number>`count(*)`.as("n"))
    .where("user_realm", "=", realm).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** True if a token with `serial` exists. */
export async function serialExists(db: Db, serial: string): Promise<boolean> {
  const r = await db.selectFrom("token").select("id").where("serial", "=", serial)
    .executeTakeFirst();
  return r !== undefined;
}

/** Tokeninfo of several tokens. */
export async function infoOf(db: Db, ids: number[]): Promise<Map<number, TokenInfo>> {
  const out = new Map<number, TokenInfo>(ids.map((id) => [id, {}]));
  if (ids.length === 0) return out;
  const { rows } = await runCached<{ token_id: number; key: string; value: string; type: string }>(
    db,
    `infoOf:${ids.length}`,
    (...list) =>
      db.selectFrom("tokeninfo").select(["token_id", "key", "value", "type"])
        .where("token_id", "in", list as number[]),
    ids,
  );
  for (const r of rows) {
    out.get(Number(r.token_id))![r.key] = { value: r.value, type: r.type } satisfies InfoEntry;
  }
  return out;
}

/** Token realms of several tokens. */
export async function realmsOf(db: Db, ids: number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const rows = await db.selectFrom("token_realm").select(["token_id", "realm"])
    .where("token_id", "in", ids).orderBy("realm").execute();
  for (const r of rows) out.get(Number(r.token_id))!.push(r.realm);
  return out;
}

/** The token realms of one token, sorted. */
export async function realmsOfToken(db: Db, tokenId: number): Promise<string[]> {
  const { rows } = await runCached<{ realm: string }>(
    db,
    "realmsOfToken",
    (id) =>
      db.selectFrom("token_realm").select("realm").where("token_id", "=", id as number)
        .orderBy("realm"),
    [tokenId],
  );
  return rows.map((r) => r.realm);
}

/** Tokens plus their info and realms (one extra query each for the whole set). */
export async function withInfo(
  db: Db,
  tokens: Token[],
  includeRealms = true,
): Promise<TokenWithInfo[]> {
  const ids = tokens.map((t) => t.id);
  const [info, realms] = await Promise.all([
    infoOf(db, ids),
    includeRealms ? realmsOf(db, ids) : new Map<number, string[]>(),
  ]);
  return tokens.map((t) => ({ ...t, info: info.get(t.id) ?? {}, realms: realms.get(t.id) ?? [] }));
}

/** Sets (upserts) tokeninfo entries of one token. */
export async function setInfo(
  db: Db,
  id: number,
  entries: Record<string, InfoEntry>,
): Promise<void> {
  for (const [key, e] of Object.entries(entries)) {
    await db.insertInto("tokeninfo")
      .values({ token_id: id, key, value: e.value, type: e.type })
      .onConflict((oc) =>
        oc.columns(["token_id", "key"]).doUpdateSet({ value: e.value, type: e.type })
      )
      .execute();
  }
}

/**
 * {@link setInfo} in one statement that keeps the owner cache current (the
 * written rows go into it): for info the check path writes (TOTP time shift,
 * resync and index values). With `pending`, the commit is added there.
 */
export async function setInfoOnCheck(
  db: Db,
  id: number,
  entries: Record<string, InfoEntry>,
  pending?: PendingCommits,
): Promise<void> {
  const list = Object.entries(entries);
  if (list.length === 0) return;
  const args = list.flatMap(([key, e]) => [id, key, e.value, e.type]);
  await runCached(
    db,
    `setInfoOnCheck:${list.length}`,
    (...a) =>
      db.insertInto("tokeninfo")
        .values(list.map((_, i) => ({
          token_id: a[4 * i] as number,
          key: a[4 * i + 1] as string,
          value: a[4 * i + 2] as string,
          type: a[4 * i + 3] as string,
        })))
        .onConflict((oc) =>
          oc.columns(["token_id", "key"]).doUpdateSet({
            value: sql<string>`excluded.value`,
            type: sql<string>`excluded.type`,
          })
        ),
    args,
    pending,
    // the statement writes exactly these entries
    { keepsTokenCache: true, onDirect: () => patchCachedToken(db, id, { info: entries }) },
  );
}

/** Deletes tokeninfo keys of one token; returns how many were deleted. */
export async function deleteInfo(db: Db, id: number, keys: string[]): Promise<number> {
  if (keys.length === 0) return 0;
  const res = await db.deleteFrom("tokeninfo").where("token_id", "=", id)
    .where("key", "in", keys).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Replaces the token realms of one token. */
export async function replaceRealms(db: Db, id: number, realms: string[]): Promise<void> {
  await db.deleteFrom("token_realm").where("token_id", "=", id).execute();
  if (realms.length > 0) {
    await db.insertInto("token_realm").values(realms.map((realm) => ({ token_id: id, realm })))
      .execute();
  }
}

/** Adds one token realm if missing. */
export async function addRealm(db: Db, id: number, realm: string): Promise<void> {
  await db.insertInto("token_realm").values({ token_id: id, realm })
    .onConflict((oc) => oc.columns(["token_id", "realm"]).doNothing()).execute();
}

/** Deletes tokens (info and realms cascade; deleted explicitly for portability). */
export async function deleteTokens(db: Db, ids: number[]): Promise<number> {
  if (ids.length === 0) return 0;
  return await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("tokeninfo").where("token_id", "in", ids).execute();
    await trx.deleteFrom("token_realm").where("token_id", "in", ids).execute();
    const res = await trx.deleteFrom("token").where("id", "in", ids).executeTakeFirst();
    return Number(res.numDeletedRows);
  });
}

/**
 * Deletes a one-time token (registration) after its use, with its info and
 * realms; true only for the call whose statement removed the token row, so
 * of parallel uses of one code exactly one is told it used it.
 */
export async function deleteUsedToken(db: Db, tokenId: number): Promise<boolean> {
  return await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("tokeninfo").where("token_id", "=", tokenId).execute();
    await trx.deleteFrom("token_realm").where("token_id", "=", tokenId).execute();
    const res = await trx.deleteFrom("token").where("id", "=", tokenId).executeTakeFirst();
    return Number(res.numDeletedRows) === 1;
  });
}

/**
 * Moves the OTP counter forward to `counter` only if it is still below it:
 * false when a parallel request already used this (or a later) OTP.
 */
export async function advanceCounter(
  db: Db,
  id: number,
  counter: number,
  pending?: PendingCommits,
): Promise<boolean> {
  const res = await runCached(
    db,
    "advanceCounter",
    (c, i, c2) =>
      db.updateTable("token").set({ count: c as number }).where("id", "=", i as number)
        .where("count", "<", c2 as number),
    [counter, id, counter],
    pending,
    {
      keepsTokenCache: true,
      onDirect: (r) => {
        if (Number(r.numAffectedRows ?? 0) === 1) patchCachedToken(db, id, { count: counter });
      },
    },
  );
  return Number(res.numAffectedRows ?? 0) === 1;
}

/** Moves the OTP counter one up in one statement; returns the new value (undefined: no token). */
export async function incrementCounter(db: Db, id: number): Promise<number | undefined> {
  const { rows } = await runCached<{ count: number }>(
    db,
    "incrementCounter",
    (i) =>
      db.updateTable("token").set({ count: sql`count + 1` }).where("id", "=", i as number)
        .returning("count"),
    [id],
  );
  return rows.length === 1 ? Number(rows[0].count) : undefined;
}

/**
 * Deletes one tokeninfo entry if it still exists: true only for the call
 * whose statement removed it (a one-time code is used once).
 */
export async function consumeInfo(
  db: Db,
  id: number,
  key: string,
  pending?: PendingCommits,
): Promise<boolean> {
  const res = await runCached(
    db,
    "consumeInfo",
    (i, k) =>
      db.deleteFrom("tokeninfo").where("token_id", "=", i as number).where("key", "=", k as string),
    [id, key],
    pending,
  );
  return Number(res.numAffectedRows ?? 0) === 1;
}

/**
 * Raises the fail counter of each token by one, never beyond maxfail, in one
 * statement; returns the ids whose counter reached maxfail with this increment.
 */
export async function incrementFailcount(
  db: Db,
  ids: number[],
  pending?: PendingCommits,
): Promise<number[]> {
  if (ids.length === 0) return [];
  const { rows } = await runCached<{ id: number; failcount: number; maxfail: number }>(
    db,
    `incrementFailcount:${ids.length}`,
    (...list) =>
      db.updateTable("token").set({ failcount: sql`failcount + 1` })
        .where("id", "in", list as number[]).where(sql<SqlBool>`failcount < maxfail`)
        .returning(["id", "failcount", "maxfail"]),
    ids,
    pending,
    {
      keepsTokenCache: true,
      onDirect: (r) => {
        for (const row of r.rows) {
          patchCachedToken(db, Number(row.id), { failcount: Number(row.failcount) });
        }
      },
    },
  );
  return rows.filter((r) => Number(r.failcount) >= Number(r.maxfail)).map((r) => Number(r.id));
}

/**
 * Sets the fail counter of the tokens to 0. With `pending` (the check path) the write joins
 * the check's commit (see {@link runCached}).
 */
export async function resetFailcount(
  db: Db,
  ids: number[],
  pending?: PendingCommits,
): Promise<void> {
  if (ids.length === 0) return;
  await runCached(
    db,
    `resetFailcount:${ids.length}`,
    (...list) =>
      db.updateTable("token").set({ failcount: sql<number>`0` })
        .where("id", "in", list as number[]).where(sql<SqlBool>`failcount != 0`),
    ids,
    pending,
    {
      keepsTokenCache: true,
      onDirect: () => {
        for (const id of ids) patchCachedToken(db, id, { failcount: 0 });
      },
    },
  );
}

/** Token list filter (spec 02 §5.1); every string may contain `*`. */
export interface TokenListFilter {
  serial?: string;
  serials?: string[];
  type?: string;
  typeList?: string[];
  owner?: { realm: string; login?: string; uid?: string; resolver?: string };
  /** Tokens of any user of this realm. */
  userRealm?: string;
  tokenrealm?: string;
  tokenrealms?: string[];
  resolver?: string;
  userid?: string;
  description?: string;
  assigned?: boolean;
  active?: boolean;
  rolloutState?: string;
  infoKey?: string;
  infoValue?: string;
  /** Only tokens in these realms (owner realm or token realm). */
  allowedRealms?: string[];
  /** Only tokens in this state (see {@link TokenState}). */
  state?: TokenState;
  /** Only tokens in the token group of this name. */
  tokengroup?: string;
  /** Only tokens in the container with this id; null: tokens in no container. */
  containerId?: number | null;
}

/**
 * What a token can do now: `active` (enabled, fail counter below its maximum),
 * `locked` (fail counter at its maximum: every check fails until it is reset),
 * `disabled` and `revoked`. A disabled token at its maximum is disabled and locked.
 */
export type TokenState = "active" | "locked" | "disabled" | "revoked";

/** The states of {@link TokenState}, in the order `sortby=state` sorts them. */
export const TOKEN_STATES: readonly TokenState[] = ["active", "locked", "disabled", "revoked"];

// sortby=state: active, locked, disabled, revoked (as TOKEN_STATES)
const STATE_ORDER = sql<number>`case when ${sql.ref("token.revoked")} = 1 then 3 when ${
  sql.ref("token.active")
} = 0 then 2 when ${sql.ref("token.failcount")} >= ${sql.ref("token.maxfail")} then 1 else 0 end`;

/** Sortable token columns (list `sortby`); `state` sorts by {@link TokenState}. */
export const SORT_COLUMNS: Record<string, keyof TokenTable | "state"> = {
  serial: "serial",
  id: "id",
  tokentype: "tokentype",
  type: "tokentype",
  description: "description",
  active: "active",
  revoked: "revoked",
  locked: "locked",
  failcount: "failcount",
  maxfail: "maxfail",
  count: "count",
  otplen: "otplen",
  rollout_state: "rollout_state",
  user_id: "user_id",
  resolver: "resolver",
  state: "state",
};

/** A page of the token list plus the total count. */
export async function listTokens(
  db: Db,
  filter: TokenListFilter,
  page: { sortby: keyof TokenTable | "state"; desc: boolean; offset: number; limit: number },
): Promise<{ tokens: Token[]; total: number }> {
  // deno-lint-ignore no-explicit-any
  const where = (eb: ExpressionBuilder<Database, "token">): any => {
    const conds: Expression<SqlBool>[] = [];
    const f = filter;
    if (f.serial !== undefined) conds.push(matchStar("token.serial", f.serial));
    if (f.serials) conds.push(eb("token.serial", "in", f.serials.length ? f.serials : [""]));
    if (f.type !== undefined) conds.push(matchStar("token.tokentype", f.type.toLowerCase()));
    if (f.typeList) {
      conds.push(eb("token.tokentype", "in", f.typeList.length ? f.typeList : [""]));
    }
    if (f.owner) {
      conds.push(eb("token.user_realm", "=", f.owner.realm));
      if (f.owner.uid) conds.push(eb("token.user_id", "=", f.owner.uid));
      else if (f.owner.login !== undefined) conds.push(eb("token.user_login", "=", f.owner.login));
      if (f.owner.resolver) conds.push(eb("token.resolver", "=", f.owner.resolver));
    }
    if (f.userRealm !== undefined) conds.push(eb("token.user_realm", "=", f.userRealm));
    if (f.resolver !== undefined) conds.push(matchStar("token.resolver", f.resolver));
    if (f.userid !== undefined) conds.push(matchStar("token.user_id", f.userid));
    if (f.description !== undefined) conds.push(matchStar("token.description", f.description));
    if (f.rolloutState !== undefined) {
      conds.push(matchStar("token.rollout_state", f.rolloutState));
    }
    if (f.assigned !== undefined) {
      conds.push(f.assigned ? eb("token.user_id", "!=", "") : eb("token.user_id", "=", ""));
    }
    if (f.active !== undefined) conds.push(eb("token.active", "=", f.active ? 1 : 0));
    if (f.state === "revoked") conds.push(eb("token.revoked", "=", 1));
    else if (f.state !== undefined) {
      conds.push(eb("token.revoked", "=", 0));
      if (f.state === "disabled") conds.push(eb("token.active", "=", 0));
      else if (f.state === "locked") {
        conds.push(eb("token.failcount", ">=", eb.ref("token.maxfail")));
      } else {
        conds.push(eb("token.active", "=", 1));
        conds.push(eb("token.failcount", "<", eb.ref("token.maxfail")));
      }
    }
    if (f.tokenrealm !== undefined || f.tokenrealms) {
      conds.push(eb.exists(
        eb.selectFrom("token_realm").select("token_realm.token_id")
          .whereRef("token_realm.token_id", "=", "token.id")
          .where((e2) =>
            f.tokenrealms
              ? e2("token_realm.realm", "in", f.tokenrealms.length ? f.tokenrealms : [""])
              : matchStar("token_realm.realm", f.tokenrealm!)
          ),
      ));
    }
    if (f.infoKey !== undefined) {
      conds.push(eb.exists(
        eb.selectFrom("tokeninfo").select("tokeninfo.token_id")
          .whereRef("tokeninfo.token_id", "=", "token.id")
          .where(matchStar("tokeninfo.key", f.infoKey))
          .where(matchStar("tokeninfo.value", f.infoValue ?? "*")),
      ));
    }
    if (f.tokengroup !== undefined) {
      conds.push(eb.exists(
        eb.selectFrom("tokentokengroup")
          .innerJoin("tokengroup", "tokengroup.id", "tokentokengroup.tokengroup_id")
          .select("tokentokengroup.token_id")
          .whereRef("tokentokengroup.token_id", "=", "token.id")
          .where("tokengroup.name", "=", f.tokengroup),
      ));
    }
    if (f.containerId !== undefined) {
      let member = eb.selectFrom("tokencontainertoken").select("tokencontainertoken.token_id")
        .whereRef("tokencontainertoken.token_id", "=", "token.id");
      if (f.containerId !== null) {
        member = member.where("tokencontainertoken.container_id", "=", f.containerId);
      }
      conds.push(f.containerId === null ? eb.not(eb.exists(member)) : eb.exists(member));
    }
    if (f.allowedRealms) {
      const realms = f.allowedRealms.length ? f.allowedRealms : [""];
      conds.push(eb.or([
        eb("token.user_realm", "in", realms),
        eb.exists(
          eb.selectFrom("token_realm").select("token_realm.token_id")
            .whereRef("token_realm.token_id", "=", "token.id")
            .where("token_realm.realm", "in", realms),
        ),
      ]));
    }
    return eb.and(conds);
  };
  const rows = await db.selectFrom("token").selectAll().where(where)
    .orderBy(
      page.sortby === "state" ? STATE_ORDER : `token.${page.sortby}`,
      page.desc ? "desc" : "asc",
    )
    .orderBy("token.id", "asc")
    .limit(page.limit).offset(page.offset).execute();
  // a page that is not full, and is not past the end, tells the total itself: one statement
  // (a one-serial listing reads the table once); else the matching tokens are counted
  const total = rows.length < page.limit && (rows.length > 0 || page.offset === 0)
    ? page.offset + rows.length
    : Number(
      (await db.selectFrom("token").select((eb) => eb.fn.countAll<number>().as("n"))
        .where(where).executeTakeFirstOrThrow()).n,
    );
  return { tokens: rows.map((r) => toToken(r as TokenRow)), total };
}

/** The token group names of each of `tokenIds` (sorted; tokens in no group are absent). */
export async function groupNamesOf(db: Db, tokenIds: number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  if (tokenIds.length === 0) return out;
  const rows = await db.selectFrom("tokentokengroup")
    .innerJoin("tokengroup", "tokengroup.id", "tokentokengroup.tokengroup_id")
    .select(["tokentokengroup.token_id as token_id", "tokengroup.name as name"])
    .where("tokentokengroup.token_id", "in", tokenIds)
    .orderBy("tokengroup.name").execute();
  for (const r of rows) out.set(r.token_id, [...out.get(r.token_id) ?? [], r.name]);
  return out;
}

/**
 * The info entries {@link recordAuth}'s statement leaves, computed from the
 * entries before it as SQLite computes them: a counter that is not a plain
 * integer (set by hand) gives undefined (the owner cache then starts over).
 */
function afterRecordAuth(
  before: TokenInfo,
  rows: { key: string; value: string }[],
): TokenInfo | undefined {
  const info: TokenInfo = {};
  for (const r of rows) {
    const old = before[r.key];
    if (old === undefined) info[r.key] = { value: r.value, type: "" };
    else if (r.key === "last_auth") info[r.key] = { value: r.value, type: old.type };
    else if (/^-?\d{1,15}$/.test(old.value)) {
      info[r.key] = { value: String(Number(old.value) + 1), type: old.type };
    } else return undefined;
  }
  return info;
}

/**
 * Counts an authentication in tokeninfo in one statement per token:
 * `count_auth` (+`count_auth_success`) +1 and optionally `last_auth`.
 */
export async function recordAuth(
  db: Db,
  ids: number[],
  options: { isSuccess: boolean; countAuth: boolean; lastAuth?: string },
  pending?: PendingCommits,
): Promise<void> {
  const keys: string[] = [];
  if (options.countAuth) keys.push("count_auth");
  if (options.countAuth && options.isSuccess) keys.push("count_auth_success");
  for (const id of ids) {
    const rows = keys.map((key) => ({ token_id: id, key, value: "1", type: "" }));
    if (options.lastAuth !== undefined) {
      rows.push({ token_id: id, key: "last_auth", value: options.lastAuth, type: "" });
    }
    if (rows.length === 0) continue;
    const args = rows.flatMap((r) => [r.token_id, r.key, r.value]);
    await runCached(
      db,
      `recordAuth:${rows.length}`,
      (...a) =>
        db.insertInto("tokeninfo")
          .values(rows.map((_, i) => ({
            token_id: a[3 * i] as number,
            key: a[3 * i + 1] as string,
            value: a[3 * i + 2] as string,
            type: sql<string>`''`,
          })))
          .onConflict((oc) =>
            oc.columns(["token_id", "key"]).doUpdateSet({
              // counters are incremented in SQL so parallel requests never lose a count
              value: sql<string>`case when tokeninfo.key = 'last_auth' then excluded.value
                else cast(cast(tokeninfo.value as integer) + 1 as varchar(30)) end`,
            })
          ),
      args,
      pending,
      {
        keepsTokenCache: true,
        onDirect: () =>
          patchCachedToken(db, id, (cached) => {
            const info = afterRecordAuth(cached.info, rows);
            return info && { info };
          }),
      },
    );
  }
}

/** The active, assigned tokens of token realm `realm`, with info and realms (4eyes checks). */
export async function activeAssignedInRealm(db: Db, realm: string): Promise<TokenWithInfo[]> {
  const { tokens } = await listTokens(
    db,
    { tokenrealms: [realm], assigned: true, active: true },
    { sortby: "serial", desc: false, offset: 0, limit: 100_000 },
  );
  return await withInfo(db, tokens);
}
