/**
 * Rules the token room's writers share: the limits of descriptions and tokeninfo, the
 * locked-token refusal, the row of a new token. Internal to `src/domain/token/`.
 *
 * @module
 */
import { TokenAdminError } from "../../errors.ts";
import type { SystemConfig } from "../system_config/mod.ts";
import type { InfoEntry, Token, UserRef } from "./model.ts";
import type * as store from "./token_store.ts";

/** Text of the 1007 error. */
export const TOKEN_LOCKED_MESSAGE = "This action is not possible, since the token is locked";

/** Longest description (longer ones are cut). */
export const MAX_DESCRIPTION = 80;

/** Longest tokeninfo key. */
export const MAX_INFO_KEY = 255;

/** Longest tokeninfo value (an admin's longer one is refused, an init parameter's cut). */
export const MAX_INFO_VALUE = 2000;

/** The refusal of an action on a locked token (1007). */
export function lockedError(): TokenAdminError {
  return new TokenAdminError(TOKEN_LOCKED_MESSAGE, 1007);
}

/** Refuses the action when one of `tokens` is locked. */
export function requireUnlocked(tokens: readonly Token[]): void {
  if (tokens.some((t) => t.locked)) throw lockedError();
}

/** True for a unique-constraint error of SQLite or PostgreSQL. */
export function isUniqueViolation(err: unknown): boolean {
  const msg = err instanceof Error ? err.message : String(err);
  return /UNIQUE constraint failed|duplicate key value|unique constraint/i.test(msg) ||
    (err as { code?: string })?.code === "23505";
}

/** The refusal of an assignment to a token that has an owner (1103). */
export function alreadyAssigned(o: UserRef): TokenAdminError {
  return new TokenAdminError(
    `Token already assigned to user User(login='${o.login}', realm='${o.realm}', resolver='${o.resolver}')`,
    1103,
  );
}

/** Wraps plain strings as tokeninfo entries. */
export function plainInfo(values: Record<string, string>): Record<string, InfoEntry> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { value: v, type: "" }]));
}

/**
 * A new token row: active, unassigned, counters at zero, the system's default
 * max fail count and windows, otplen 6; then `fields` over it.
 */
export function newTokenRow(
  system: SystemConfig,
  serial: string,
  type: string,
  createdAt: number,
  fields: store.TokenFields = {},
): Parameters<typeof store.insertToken>[1] {
  return {
    serial,
    tokentype: type,
    description: "",
    key_enc: "",
    pin_hash: "",
    active: 1,
    revoked: 0,
    locked: 0,
    failcount: 0,
    maxfail: system.int("DefaultMaxFailCount"),
    count: 0,
    count_window: system.int("DefaultCountWindow"),
    sync_window: system.int("DefaultSyncWindow"),
    otplen: 6,
    rollout_state: "",
    user_id: "",
    resolver: "",
    user_realm: "",
    user_login: "",
    created_at: createdAt,
    ...fields,
  };
}
