/**
 * Token administration (spec 02 §5): every function acts on the token objects the
 * caller checked (the rights step's, or an event handler's own lookup), never on a serial:
 * enable, disable, revoke, reset, delete, assign, unassign, PINs, descriptions, settings,
 * tokeninfo, token realms, resync, fail counters, and bulk actions over a serial list.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  missingParameter,
  ParameterError,
  PolicyError,
  ResourceNotFoundError,
  TokenAdminError,
} from "../../errors.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import { deleteChallengesOf } from "../challenge/mod.ts";
import { type ConditionData, loadPolicySet, userAgentName } from "../policy/mod.ts";
import type { InfoEntry, Token, TokenWithInfo, UserRef } from "./model.ts";
import { checkTokenLimits } from "./token_limits.ts";
import { isPinEncrypted, type PinChange, pinChangeAfterSet, policyInt } from "./enroll_policy.ts";
import { encryptedPinOf, pinHashOf } from "./pin.ts";
import { checkPinPolicy, type PinPolicyScope, pinRules, randomPin } from "./pin_policy.ts";
import { tokenTypeOf } from "./types/mod.ts";
import { realmExists } from "./_users.ts";
import * as store from "./token_store.ts";
import {
  alreadyAssigned,
  MAX_DESCRIPTION,
  MAX_INFO_KEY,
  MAX_INFO_VALUE,
  plainInfo,
  requireUnlocked,
} from "./_common.ts";
import { checkValidityDate, validityStamp } from "./dates.ts";
import { TOKEN_NOT_FOUND_MESSAGE } from "./lookup.ts";
import { checkContext } from "./secrets.ts";

/** Enables or disables the tokens; returns how many changed state. */
export async function enableTokens(
  deps: Deps,
  tokens: readonly Token[],
  isActive = true,
): Promise<number> {
  requireUnlocked(tokens);
  const ids = tokens.filter((t) => t.active !== isActive).map((t) => t.id);
  return await store.updateTokens(deps.db, ids, { active: isActive ? 1 : 0 });
}

/** Disables the tokens; returns how many changed state. */
export async function disableTokens(deps: Deps, tokens: readonly Token[]): Promise<number> {
  return await enableTokens(deps, tokens, false);
}

/** Revokes the tokens (revoked, locked, inactive); returns the count. */
export async function revokeTokens(deps: Deps, tokens: readonly Token[]): Promise<number> {
  for (const t of tokens) await tokenTypeOf(t.type)?.revoke?.(deps, t);
  await store.updateTokens(deps.db, tokens.map((t) => t.id), {
    revoked: 1,
    locked: 1,
    active: 0,
  });
  return tokens.length;
}

/** Resets the fail counter of the tokens; returns the count. */
export async function resetTokens(deps: Deps, tokens: readonly Token[]): Promise<number> {
  requireUnlocked(tokens);
  await deps.db.transaction().execute(async (trx) => {
    await store.updateTokens(trx, tokens.map((t) => t.id), { failcount: 0 });
    for (const t of tokens) await store.deleteInfo(trx, t.id, ["failcounter_exceeded"]);
  });
  return tokens.length;
}

/** Deletes the tokens and their challenges; returns the count. */
export async function deleteTokens(deps: Deps, tokens: readonly Token[]): Promise<number> {
  await deleteChallengesOf(deps, tokens.map((t) => t.serial));
  const n = await store.deleteTokens(deps.db, tokens.map((t) => t.id));
  // gone since it was loaded (a serial named twice in a bulk delete): as unknown
  if (n === 0 && tokens.length > 0) throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  return n;
}

/** Result of an action on a list of serials. */
export interface BulkResult {
  count_success: number;
  failed: string[];
  unauthorized: string[];
}

/**
 * Runs `action` on the token of each serial, one at a time: a serial without a token among
 * `tokens` (the checked tokens of the request) goes to `failed`, as does one whose action
 * fails. Serials the rights step refused are never among them.
 */
export async function forEachToken<T extends Token>(
  deps: Deps,
  serials: readonly string[],
  tokens: readonly T[],
  action: (tokens: T[]) => Promise<number>,
): Promise<BulkResult> {
  const out: BulkResult = { count_success: 0, failed: [], unauthorized: [] };
  for (const serial of serials) {
    const t = tokens.find((x) => x.serial === serial);
    if (!t) {
      out.failed.push(serial);
      continue;
    }
    try {
      if ((await action([t])) > 0) out.count_success++;
    } catch (err) {
      deps.log.info("Token action failed", { serial, error: String(err) });
      out.failed.push(serial);
    }
  }
  return out;
}

/** Sets the PIN of the tokens; returns the count. */
export async function setPin(
  deps: Deps,
  tokens: readonly Token[],
  pin: string,
  options: { pinPolicy?: PinPolicyScope; pinChange?: PinSetBy } = {},
): Promise<number> {
  requireUnlocked(tokens);
  if (options.pinPolicy) {
    // each type's own rules (spass_otp_pin_*), else the generic ones
    for (const type of new Set(tokens.map((t) => t.type))) {
      await checkPinPolicy(deps, pin, { ...options.pinPolicy, type });
    }
  }
  // encrypt_pin and change_pin_* are matched per token (its owner, else its realms)
  const plans: { t: Token; encrypt: boolean; change: PinChange }[] = [];
  for (const t of tokens) {
    const subject = t.owner ? { user: t.owner } : {};
    const client = options.pinChange?.client;
    const conditions = options.pinChange?.conditions;
    const encrypt = await isPinEncrypted(deps, { ...subject, client, conditions });
    const change = await pinChangeAfterSet(deps, { ...subject, client, conditions }, {
      role: options.pinChange?.role,
      isPinSet: pin !== "",
    });
    plans.push({ t, encrypt, change });
  }
  let n = 0;
  await deps.db.transaction().execute(async (trx) => {
    for (const { t, encrypt, change } of plans) {
      const pinHash = encrypt ? encryptedPinOf(deps, pin) : pinHashOf(deps, pin);
      await store.updateToken(trx, t.id, { pin_hash: pinHash });
      if (change.days !== undefined) {
        const due = validityStamp(deps.clock.now() + change.days * 86_400_000);
        await store.setInfo(trx, t.id, plainInfo({ next_pin_change: due }));
      } else if (change.clear) {
        await store.deleteInfo(trx, t.id, ["next_pin_change"]);
      }
      n++;
    }
  });
  return n;
}

/** Who sets a PIN (for `change_pin_on_first_use` / `change_pin_every`) and from where. */
export interface PinSetBy {
  role: "admin" | "user";
  client?: string;
  /** The request's policy condition data (the policies read the token owner's info). */
  conditions?: ConditionData;
}

/**
 * The token types the token-scope policy `require_description_on_edit` names for an edit by
 * `editor` (the union over the matching policies, lower case).
 */
async function typesNeedingDescription(deps: Deps, editor: PinPolicyScope): Promise<string[]> {
  const set = editor.context?.policies ?? await loadPolicySet(deps);
  if (!set.hasActivePolicies("token")) return [];
  const { caller, context: ctx = {} } = editor;
  const isAdmin = caller.role === "admin";
  const { values } = await set.actionValues({
    scope: "token",
    action: "require_description_on_edit",
    // an admin: the user the token belongs to; a user: themselves
    user: isAdmin ? ctx.user ?? null : caller.username,
    realm: isAdmin ? ctx.realm ?? null : caller.realm,
    resolver: isAdmin ? ctx.resolver ?? null : caller.resolver ?? null,
    client: ctx.client ?? null,
    userAgent: ctx.userAgent == null ? null : userAgentName(ctx.userAgent),
    conditions: ctx.conditions ?? {},
  });
  return values.map((v) => v.toLowerCase());
}

/**
 * Sets the description of the tokens (truncated to 80). With `editor`, the
 * token-scope policy `require_description_on_edit` refuses an empty one for the types it
 * names (`POST /token/description` only, as in privacyIDEA).
 */
export async function setDescription(
  deps: Deps,
  tokens: readonly Token[],
  description: string,
  options: { editor?: PinPolicyScope } = {},
): Promise<number> {
  requireUnlocked(tokens);
  if (options.editor && description.trim() === "") {
    const required = await typesNeedingDescription(deps, options.editor);
    const token = tokens.find((t) => required.includes(t.type.toLowerCase()));
    if (token) throw new PolicyError(`Description required for ${token.type.toLowerCase()} token.`);
  }
  return await store.updateTokens(deps.db, tokens.map((t) => t.id), {
    description: description.slice(0, MAX_DESCRIPTION),
  });
}

/** Fields of {@link setTokenFields} (`POST /token/set`). */
export interface TokenSettings {
  description?: string;
  countWindow?: number;
  syncWindow?: number;
  hashlib?: string;
  maxFailcount?: number;
  countAuthMax?: number;
  countAuthSuccessMax?: number;
  validityPeriodStart?: string;
  validityPeriodEnd?: string;
}

/** `POST /token/set`: applies the given settings; returns how many fields were applied. */
export async function setTokenFields(
  deps: Deps,
  tokens: readonly Token[],
  s: TokenSettings,
): Promise<number> {
  requireUnlocked(tokens);
  const fields: store.TokenFields = {};
  const info: Record<string, InfoEntry> = {};
  let n = 0;
  if (s.description !== undefined) {
    fields.description = s.description.slice(0, MAX_DESCRIPTION);
    n++;
  }
  if (s.countWindow !== undefined) (fields.count_window = s.countWindow, n++);
  if (s.syncWindow !== undefined) (fields.sync_window = s.syncWindow, n++);
  if (s.maxFailcount !== undefined) (fields.maxfail = s.maxFailcount, n++);
  if (s.hashlib !== undefined) {
    const h = s.hashlib.toLowerCase();
    if (!["sha1", "sha256", "sha512"].includes(h)) {
      throw new ParameterError(
        `Cannot parse parameter "hashlib": expected sha1, sha256 or sha512, got "${s.hashlib}"`,
      );
    }
    info.hashlib = { value: h, type: "" };
    n++;
  }
  if (s.countAuthMax !== undefined) {
    info.count_auth_max = { value: String(s.countAuthMax), type: "" };
    n++;
  }
  if (s.countAuthSuccessMax !== undefined) {
    info.count_auth_success_max = { value: String(s.countAuthSuccessMax), type: "" };
    n++;
  }
  if (s.validityPeriodStart !== undefined) {
    info.validity_period_start = {
      value: checkValidityDate(s.validityPeriodStart, "start"),
      type: "",
    };
    n++;
  }
  if (s.validityPeriodEnd !== undefined) {
    info.validity_period_end = { value: checkValidityDate(s.validityPeriodEnd, "end"), type: "" };
    n++;
  }
  await deps.db.transaction().execute(async (trx) => {
    for (const t of tokens) {
      await store.updateToken(trx, t.id, fields);
      await store.setInfo(trx, t.id, info);
    }
  });
  return n * tokens.length;
}

/** Sets one tokeninfo value of `t` (admin). */
export async function setTokenInfo(
  deps: Deps,
  t: Token,
  key: string,
  value: string,
): Promise<boolean> {
  if (key === "" || key.length > MAX_INFO_KEY) throw missingParameter("key");
  if (value.length > MAX_INFO_VALUE) {
    throw new ParameterError(`Cannot parse parameter "value": longer than ${MAX_INFO_VALUE}`);
  }
  requireUnlocked([t]);
  await store.setInfo(deps.db, t.id, { [key]: { value, type: "" } });
  return true;
}

/** Deletes one tokeninfo key of `t`; true if it existed. */
export async function deleteTokenInfo(deps: Deps, t: Token, key: string): Promise<boolean> {
  requireUnlocked([t]);
  return (await store.deleteInfo(deps.db, t.id, [key])) > 0;
}

/** Replaces the token realms of `t`; unknown realms are skipped, the owner's realm kept. */
export async function setTokenRealms(
  deps: Deps,
  t: Token,
  realms: readonly string[],
): Promise<boolean> {
  requireUnlocked([t]);
  const keep = new Set<string>();
  for (const r of realms.map((r) => r.trim().toLowerCase()).filter((r) => r !== "")) {
    if (await realmExists(deps, r)) keep.add(r);
  }
  if (t.owner?.realm) keep.add(t.owner.realm);
  await store.replaceRealms(deps.db, t.id, [...keep].sort());
  return true;
}

/** Assigns the token `t` to a user (spec 02 §5 `assign`). */
export async function assignToken(
  deps: Deps,
  t: Token,
  user: UserRef,
  options: {
    pin?: string;
    isUserCaller?: boolean;
    pinPolicy?: PinPolicyScope;
    client?: string;
    /** The request's policy condition data (the policies read the new owner's info). */
    conditions?: ConditionData;
  } = {},
): Promise<boolean> {
  requireUnlocked([t]);
  const conditions = options.conditions;
  if (!t.owner) {
    await checkTokenLimits(deps, { user, type: t.type, serial: t.serial, conditions });
  }
  // an assign without a PIN is checked as "" (privacyIDEA's check_otp_pin)
  if (options.pinPolicy) {
    await checkPinPolicy(deps, options.pin, { ...options.pinPolicy, type: t.type });
  }
  if (t.owner) {
    if (options.isUserCaller) {
      throw new TokenAdminError("Token already assigned to another user.", 1103);
    }
    throw alreadyAssigned(t.owner);
  }
  const fields: store.TokenFields = {
    user_id: user.uid,
    user_login: user.login,
    user_realm: user.realm,
    resolver: user.resolver,
    failcount: 0,
  };
  if (options.pin !== undefined) {
    const encrypt = await isPinEncrypted(deps, { user, client: options.client, conditions });
    fields.pin_hash = encrypt ? encryptedPinOf(deps, options.pin) : pinHashOf(deps, options.pin);
  }
  await deps.db.transaction().execute(async (trx) => {
    // only the first of two parallel assigns wins
    const n = await store.updateTokens(trx, [t.id], fields, (eb) => eb("user_id", "=", ""));
    if (n !== 1) throw new TokenAdminError("Token already assigned to another user.", 1103);
    if (user.realm) await store.addRealm(trx, t.id, user.realm);
  });
  return true;
}

/** Unassigns the tokens (clears owner, PIN and fail counter); returns the count. */
export async function unassignTokens(deps: Deps, tokens: readonly Token[]): Promise<number> {
  requireUnlocked(tokens);
  return await store.updateTokens(deps.db, tokens.map((t) => t.id), {
    user_id: "",
    user_login: "",
    user_realm: "",
    resolver: "",
    pin_hash: "",
    failcount: 0,
  });
}

/** Resyncs an OTP token (the first of `tokens` that accepts them) with two consecutive OTPs. */
export async function resyncToken(
  deps: Deps,
  tokens: readonly TokenWithInfo[],
  otp1: string,
  otp2: string,
): Promise<boolean> {
  requireUnlocked(tokens);
  const system = await loadSystemConfig(deps);
  for (const t of tokens) {
    const module = tokenTypeOf(t.type);
    if (!module?.resync) continue;
    const res = await module.resync(checkContext(deps, system, t), otp1, otp2);
    if (!res.isValid || res.counter === undefined) continue;
    if (!(await store.advanceCounter(deps.db, t.id, res.counter))) continue;
    await store.resetFailcount(deps.db, [t.id]);
    if (res.info) await store.setInfo(deps.db, t.id, plainInfo(res.info));
    return true;
  }
  return false;
}

/**
 * `POST /token/setrandompin`: sets one random PIN of `length` characters on the
 * tokens. `length` is the caller's admin/user policy `otp_pin_set_random`; without it
 * the request is refused (spec 02 §5). The PIN follows the caller's `otp_pin_contents` (the
 * token type's own first); without one, letters and digits (privacyIDEA's default).
 */
export async function setRandomPin(
  deps: Deps,
  tokens: readonly Token[],
  options: { length?: string; pinChange?: PinSetBy; pinPolicy?: PinPolicyScope } = {},
): Promise<{ count: number; pin: string }> {
  if (options.length === undefined) {
    const scope = options.pinPolicy?.caller.role ?? "admin";
    throw new TokenAdminError(
      `You need to specify a policy 'otp_pin_set_random' in scope ${scope}.`,
    );
  }
  const length = policyInt("otp_pin_set_random", options.length, 1, 128);
  const first = options.pinPolicy ? tokens[0] : undefined;
  const contents = first && options.pinPolicy
    ? (await pinRules(deps, { ...options.pinPolicy, type: first.type })).contents
    : undefined;
  const pin = randomPin(deps.random, length, contents);
  const count = await setPin(deps, tokens, pin, { pinChange: options.pinChange });
  return { count, pin };
}

/** Sets the fail counter of the tokens to `value` (capped at maxfail); returns the count. */
export async function setFailcount(
  deps: Deps,
  tokens: readonly Token[],
  value: number,
): Promise<number> {
  if (!Number.isInteger(value) || value < 0) {
    throw new ParameterError(
      `Cannot set the fail counter: expected a non-negative integer, got "${value}"`,
    );
  }
  requireUnlocked(tokens);
  await deps.db.transaction().execute(async (trx) => {
    for (const t of tokens) {
      await store.updateToken(trx, t.id, { failcount: Math.min(value, t.maxfail) });
      if (value === 0) await store.deleteInfo(trx, t.id, ["failcounter_exceeded"]);
    }
  });
  return tokens.length;
}
