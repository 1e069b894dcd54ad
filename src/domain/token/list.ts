/**
 * The token list (`GET /token/`) and a token's list view (also the `token` data of
 * policy conditions).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError } from "../../errors.ts";
import type { TokenWithInfo } from "./model.ts";
import { tokenTypeOf } from "./types/mod.ts";
import * as store from "./token_store.ts";
import { containerIdsOfTokens } from "../container/container_store.ts";

/** Query of {@link listTokens} (spec 02 §5.1). */
export interface TokenListQuery extends store.TokenListFilter {
  sortby?: string;
  sortdir?: string;
  page?: number;
  pagesize?: number;
  hiddenInfo?: string[];
}

/** One token as `GET /token/` shows it. */
export type TokenView = Record<string, unknown>;

/**
 * The `token` and `tokeninfo` data of policy conditions (spec 04) for a token
 * loaded only when a condition asks for it.
 */
export function tokenConditionData(load: () => Promise<TokenWithInfo | undefined>): {
  token: () => Promise<TokenView | undefined>;
  tokeninfo: () => Promise<Record<string, string> | undefined>;
} {
  return {
    token: async () => {
      const t = await load();
      return t ? tokenView(t) : undefined;
    },
    tokeninfo: async () => {
      const t = await load();
      return t
        ? Object.fromEntries(Object.entries(t.info).map(([k, e]) => [k, e.value]))
        : undefined;
    },
  };
}

/** The list dict of a token (spec 02 §5.1). */
export function tokenView(t: TokenWithInfo, hiddenInfo: string[] = []): TokenView {
  let info: Record<string, unknown> = {};
  for (const [k, e] of Object.entries(t.info)) {
    if (hiddenInfo.includes(k)) continue;
    info[k] = e.value;
    if (e.type === "password") info[`${k}.type`] = "password";
  }
  const listInfo = tokenTypeOf(t.type)?.listInfo;
  if (listInfo) info = listInfo(info as Record<string, string>);
  const o = t.owner;
  const view: TokenView = {
    active: t.active,
    container_serial: "",
    count: t.count,
    count_window: t.countWindow,
    description: t.description,
    failcount: t.failcount,
    id: t.id,
    info,
    locked: t.locked,
    maxfail: t.maxfail,
    otplen: t.otplen,
    realms: t.realms,
    resolver: o?.resolver ?? "",
    revoked: t.revoked,
    rollout_state: t.rolloutState,
    serial: t.serial,
    sync_window: t.syncWindow,
    tokengroup: [],
    tokentype: t.type,
    user_id: o?.uid ?? "",
    user_realm: o?.realm ?? "",
    username: o?.login ?? "",
  };
  if (o) view.user_editable = false;
  return view;
}

/** The token list's `state` filter: undefined when absent or empty, else one of `TOKEN_STATES`. */
export function parseTokenState(value: string | undefined): store.TokenState | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const state = store.TOKEN_STATES.find((s) => s === value.trim().toLowerCase());
  if (state) return state;
  throw new ParameterError(
    `Cannot parse parameter "state": expected one of ${
      store.TOKEN_STATES.join(", ")
    }, got "${value}"`,
  );
}

/** `GET /token/`: a page of tokens `{tokens, count, prev, next, current}`. */
export async function listTokens(
  deps: Deps,
  query: TokenListQuery,
): Promise<
  { tokens: TokenView[]; count: number; prev: number | null; next: number | null; current: number }
> {
  const page = Math.max(1, query.page ?? 1);
  const pagesize = Math.max(1, query.pagesize ?? 15);
  const sortby = store.SORT_COLUMNS[query.sortby ?? "serial"] ?? "serial";
  const desc = (query.sortdir ?? "asc").toLowerCase() === "desc";
  const { tokens, total } = await store.listTokens(deps.db, query, {
    sortby,
    desc,
    offset: (page - 1) * pagesize,
    limit: pagesize,
  });
  const full = await store.withInfo(deps.db, tokens);
  const groups = await store.groupNamesOf(deps.db, full.map((t) => t.id));
  const containers = await containerIdsOfTokens(deps.db, full.map((t) => t.id));
  return {
    tokens: full.map((t) => ({
      ...tokenView(t, query.hiddenInfo),
      container_serial: containers.get(t.id)?.serial ?? "",
      tokengroup: groups.get(t.id) ?? [],
    })),
    count: total,
    prev: page > 1 ? page - 1 : null,
    next: page * pagesize < total ? page + 1 : null,
    current: page,
  };
}
