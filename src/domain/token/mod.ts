/**
 * The token domain (spec 02 §1–§5): enrolment, listing and administration of
 * tokens. Secrets are encrypted with AES-256-GCM under `deps.keys.token`; PINs
 * are keyed hashes.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  DatabaseError,
  missingParameter,
  ParameterError,
  PolicyError,
  ResourceNotFoundError,
  TokenAdminError,
} from "../../errors.ts";
import { encryptSecret } from "../../lib/crypto.ts";
import { keySizeOf, type OtpHash } from "../../lib/otp.ts";
import { fromHex, toHex } from "../../lib/random.ts";
import { pbkdf2 } from "node:crypto";
import { loadSystemConfig, type SystemConfig } from "../system_config/mod.ts";
import { deleteChallengesOf } from "../challenge/mod.ts";
import { type ConditionData, loadPolicySet, userAgentName } from "../policy/mod.ts";
import type { InfoEntry, Token, TokenWithInfo, UserRef } from "./model.ts";
import { checkTokenLimits } from "./token_limits.ts";
import {
  type EnrollPolicies,
  enrollPolicies,
  isPinEncrypted,
  type PinChange,
  pinChangeAfterSet,
  policyInt,
  TWO_STEP_BOUNDS,
} from "./enroll_policy.ts";
import { encryptedPinOf, pinHashOf } from "./pin.ts";
import {
  checkEnrolmentPin,
  checkPinPolicy,
  type PinPolicyScope,
  pinRules,
  randomPin,
} from "./pin_policy.ts";
import { checkSerial, generateSerial } from "./serial.ts";
import { type InitParams, tokenTypeOf } from "./types/mod.ts";
import { usesOwnerNames } from "./types/_oath.ts";
import { getUserInfo, realmExists } from "./_users.ts";
import * as store from "./token_store.ts";
import {
  alreadyAssigned,
  isUniqueViolation,
  lockedError,
  MAX_DESCRIPTION,
  MAX_INFO_KEY,
  MAX_INFO_VALUE,
  newTokenRow,
  plainInfo,
  requireUnlocked,
} from "./_common.ts";
import { checkValidityDate, nowIso, validityStamp } from "./dates.ts";
import { findTokenBySerial, isOwner, TOKEN_NOT_FOUND_MESSAGE } from "./lookup.ts";
import { checkContext, tokenSecret } from "./secrets.ts";

export type { InfoEntry, Token, TokenInfo, TokenWithInfo, UserRef } from "./model.ts";
export { TOKEN_TYPE_MODULES, TOKEN_TYPES, tokenTypeOf } from "./types/mod.ts";
export type { TokenType } from "./types/mod.ts";
export {
  checkImportedPin,
  checkPin,
  importedPinHash,
  isImportedPinHash,
  pinHashOf,
  splitPinPass,
} from "./pin.ts";
export {
  checkPinPolicy,
  type PinPolicyOptions,
  type PinPolicyScope,
  pinRules,
  randomPin,
} from "./pin_policy.ts";
export { type ImportedToken, type ImportOutcome, writeImportedToken } from "./imported.ts";
export { checkSerial, generateSerial } from "./serial.ts";
export {
  DEFAULT_ENROLL_POLICIES,
  type EnrollPolicies,
  enrollPolicies,
  type EnrollPolicyContext,
} from "./enroll_policy.ts";
export { isUniqueViolation, plainInfo, TOKEN_LOCKED_MESSAGE } from "./_common.ts";
export { lastAuthStamp, parseValidityDate, validityStamp } from "./dates.ts";
export {
  findTokenByCredentialIdHash,
  findTokenBySerial,
  findTokensByInfo,
  findTokensBySerials,
  getTokenBySerial,
  getTokensOfUser,
  isOwner,
  reloadTokens,
  TOKEN_NOT_FOUND_MESSAGE,
  USER_NOT_FOUND_MESSAGE,
} from "./lookup.ts";
export { checkContext, infoPlain, tokenSecret } from "./secrets.ts";
export {
  listTokens,
  parseTokenState,
  tokenConditionData,
  type TokenListQuery,
  type TokenView,
  tokenView,
} from "./list.ts";
export { tokensCsv } from "./csv.ts";
export {
  advanceTokenCounter,
  clearFailcount,
  consumeTokenInfo,
  deleteTokenById,
  increaseFailcount,
  recordAuthentication,
  updateTokenInfo,
} from "./check_writes.ts";
export { lostToken } from "./lost.ts";
export { getSerialByOtp, type SerialSearch } from "./getserial.ts";

/** Result of {@link initToken}. */
export interface InitResult {
  serial: string;
  /** Enrolment data for the response `detail`. */
  detail: Record<string, unknown>;
  type: string;
}

function str(params: InitParams, name: string): string | undefined {
  const v = params[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new ParameterError(`Cannot parse parameter "${name}": expected a string`);
}

/**
 * Enrols a token (`POST /token/init`): a new one, or a re-init of an existing
 * serial of the same type. `user` assigns it; `realm` alone sets a token realm.
 */
export async function initToken(
  deps: Deps,
  params: InitParams,
  options: {
    user?: UserRef;
    realm?: string;
    caller?: { role: "admin" | "user"; username: string; realm: string };
    /** The request's `Origin` header (WebAuthn registration). */
    origin?: string;
    /** The request's client address (policy matching). */
    client?: string;
    /** The caller's PIN policies (`enrollpin`, `otp_pin_*`); absent: not checked. */
    pinPolicy?: PinPolicyScope;
    /**
     * An enrolment via multichallenge: privacyIDEA's plain `init_token`, without the
     * `/token/init` pre-policies (require_description, verify_enrollment, two-step,
     * otp_pin_random).
     */
    isViaMultichallenge?: boolean;
    /** The request's policy condition data (the enrolment policies read the owner's info). */
    conditions?: ConditionData;
  } = {},
): Promise<InitResult> {
  const type = (str(params, "type") || "hotp").toLowerCase();
  const module = tokenTypeOf(type);
  if (!module) throw new TokenAdminError(`init token failed. Unknown token type: ${type}`, 1610);
  const system = await loadSystemConfig(deps);
  let serial = str(params, "serial") ?? "";
  let existing: TokenWithInfo | undefined;
  if (serial !== "") {
    checkSerial(serial);
    existing = await findTokenBySerial(deps, serial);
    if (existing && existing.type !== type) {
      throw new TokenAdminError(
        `init token failed: Token ${serial} already exists with type ${existing.type}. Can not initialize token with new type ${type}`,
      );
    }
    if (existing?.locked) throw lockedError();
  } else {
    serial = await generateSerial(deps, type, module.prefix, system.int("SerialLength"));
  }
  let policies = await enrollPolicies(deps, {
    type,
    user: options.user ?? existing?.owner,
    realm: options.realm,
    caller: options.caller,
    client: options.client,
    conditions: options.conditions,
  });
  if (options.isViaMultichallenge) {
    policies = {
      ...policies,
      requireDescription: [],
      verifyEnrollment: [],
      twoStep: "none",
      randomPinLength: undefined,
    };
  }
  // require_description: a new token (not the second step of one) needs a description
  if (
    policies.requireDescription.includes(type) && !str(params, "description") &&
    existing?.rolloutState !== "verify" && existing?.rolloutState !== "clientwait"
  ) {
    throw new PolicyError(`Description required for ${type} token.`);
  }
  await checkTokenLimits(deps, {
    user: options.user ?? existing?.owner,
    realm: options.realm,
    type,
    serial: existing ? serial : undefined,
    conditions: options.conditions,
  });
  // second steps: verifying the first OTP, or the client part of a two-step enrolment
  if (existing?.rolloutState === "verify" && str(params, "verify") !== undefined) {
    return await verifyEnrollment(deps, system, existing, str(params, "verify")!);
  }
  if (existing?.rolloutState === "clientwait" && str(params, "otpkey")) {
    return await finishTwoStep(deps, existing, str(params, "otpkey")!);
  }
  // enrollment policies set init parameters (label, issuer, app image, code lengths, …)
  params = { ...params, ...policies.initParams };
  // otp_pin_random replaces the client's PIN; privacyIDEA's order: enrollpin (on what the
  // client sent), then the PIN rules (on the random PIN), before anything is made
  const randomPinValue = policies.randomPinLength === undefined
    ? undefined
    : randomPin(deps.random, policies.randomPinLength, policies.randomPinContents);
  if (options.pinPolicy) {
    const checked = randomPinValue === undefined ? params : { ...params, otppin: randomPinValue };
    await checkEnrolmentPin(deps, checked, { ...options.pinPolicy, type });
  }
  if (randomPinValue !== undefined) {
    params = { ...params, pin: randomPinValue };
    checkPinHandlers(policies.pinHandlers);
  }
  const twoStep = twoStepOf(params, policies, existing, type);
  const newOwner = options.user ?? existing?.owner;
  const typed = await module.init({
    deps,
    system,
    serial,
    // the server part of a two-step key is always generated
    params: twoStep
      ? {
        ...params,
        otpkey: undefined,
        genkey: "1",
        "2stepinit": "1",
        "2step_clientsize": String(twoStep.clientsize),
        "2step_difficulty": String(twoStep.difficulty),
        ...(twoStep.serversize === undefined ? {} : { keysize: String(twoStep.serversize) }),
      }
      : params,
    existing,
    owner: newOwner,
    ownerInfo: newOwner &&
        (usesOwnerNames(str(params, "tokenlabel")) || usesOwnerNames(str(params, "tokenissuer")))
      ? await getUserInfo(deps, newOwner)
      : undefined,
    policies: policies.typeActions,
    origin: options.origin,
  });
  if (twoStep) {
    typed.active = false;
    typed.rolloutState = "clientwait";
    typed.detail = {
      ...typed.detail,
      "2step_salt": twoStep.clientsize,
      "2step_output": keySizeOf((typed.info?.hashlib ?? "sha1") as OtpHash),
      "2step_difficulty": twoStep.difficulty,
    };
    typed.info = {
      ...typed.info,
      "2step_clientsize": String(twoStep.clientsize),
      "2step_difficulty": String(twoStep.difficulty),
    };
  } else if (
    policies.verifyEnrollment.includes(type) && module.authenticates && !module.pinOnly &&
    // a challenge-only type's code exists only once a challenge sent it
    !module.challengeOnly
  ) {
    typed.rolloutState = "verify";
    typed.detail = {
      ...typed.detail,
      verify: { message: "Please enter a valid OTP value of the new token." },
    };
  }

  const now = deps.clock.now();
  const info: Record<string, InfoEntry> = {};
  for (const [k, v] of Object.entries(typed.info ?? {})) info[k] = { value: v, type: "" };
  for (const [k, v] of Object.entries(typed.secretInfo ?? {})) {
    info[k] = { value: encryptSecret(deps.keys.token, v, deps.random), type: "password" };
  }
  // `<type>.<x>` init parameters are copied into tokeninfo
  for (const [k, v] of Object.entries(params)) {
    if (
      k.startsWith(`${type}.`) && k.length <= MAX_INFO_KEY && typeof v === "string" &&
      // the type's own (checked, normalised) value wins over the raw parameter
      !(k in (typed.secretInfo ?? {})) && !(k in (typed.info ?? {}))
    ) {
      info[k] = { value: v.slice(0, MAX_INFO_VALUE), type: "" };
    }
  }
  for (const k of ["validity_period_start", "validity_period_end"]) {
    const v = str(params, k);
    if (v) info[k] = { value: checkValidityDate(v, k), type: "" };
  }
  if (!existing) info.creation_date = { value: nowIso(now), type: "" };

  const pin = str(params, "pin");
  const description = str(params, "description");
  const owner = options.user ?? existing?.owner;
  if (options.user && existing?.owner && !isOwner(existing, options.user)) {
    throw alreadyAssigned(existing.owner);
  }
  const fields: store.TokenFields = {
    otplen: typed.otplen ?? existing?.otplen ?? module.defaultOtplen ??
      system.int("DefaultOtpLen"),
    rollout_state: typed.rolloutState ?? "enrolled",
    active: typed.active === false ? 0 : 1,
  };
  if (typed.secret !== undefined) {
    fields.key_enc = encryptSecret(deps.keys.token, typed.secret, deps.random);
    // a new key starts counting from zero (a WebAuthn credential from its sign count)
    fields.count = typed.counter ?? 0;
  }
  if (pin !== undefined) {
    // encrypt_pin: stored reversibly encrypted instead of hashed
    fields.pin_hash = policies.encryptPin ? encryptedPinOf(deps, pin) : pinHashOf(deps, pin);
  }
  // change_pin_on_first_use (admin) / change_pin_every (user setting a PIN)
  const pinChange = await pinChangeAfterSet(deps, {
    user: owner,
    realm: owner ? undefined : options.realm,
    client: options.client,
    conditions: options.conditions,
  }, { role: options.caller?.role, isPinSet: !!(str(params, "otppin") || pin) });
  if (pinChange.days !== undefined) {
    info.next_pin_change = {
      value: validityStamp(deps.clock.now() + pinChange.days * 86_400_000),
      type: "",
    };
  }
  const newDescription = description ?? typed.description;
  if (newDescription !== undefined) fields.description = newDescription.slice(0, MAX_DESCRIPTION);
  if (options.user) {
    fields.user_id = options.user.uid;
    fields.user_login = options.user.login;
    fields.user_realm = options.user.realm;
    fields.resolver = options.user.resolver;
  }

  try {
    await deps.db.transaction().execute(async (trx) => {
      let id: number;
      if (existing) {
        id = existing.id;
        await store.updateToken(trx, id, { ...fields, failcount: 0 });
      } else {
        id = await store.insertToken(trx, newTokenRow(system, serial, type, now, fields));
      }
      await store.setInfo(trx, id, info);
      if (existing && pinChange.clear && pinChange.days === undefined) {
        await store.deleteInfo(trx, id, ["next_pin_change"]);
      }
      if (existing && typed.ownsInfo) {
        const stale = Object.entries(existing.info)
          .filter(([k, e]) => !(k in info) && typed.ownsInfo!(k, e)).map(([k]) => k);
        await store.deleteInfo(trx, id, stale);
      }
      if (owner?.realm) await store.addRealm(trx, id, owner.realm);
      if (options.realm && !options.user) await store.addRealm(trx, id, options.realm);
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      // a type's own unique tokeninfo (a credential id) or the serial
      if (typed.conflictError) throw typed.conflictError;
      throw new DatabaseError(
        `Cannot create token "${serial}": a token with this serial already exists`,
      );
    }
    throw err;
  }
  if (randomPinValue !== undefined) {
    handOverRandomPin(deps, policies.pinHandlers, { serial, type, owner, caller: options.caller });
  }
  const rolloutState = fields.rollout_state!;
  return { serial, type, detail: { serial, rollout_state: rolloutState, ...typed.detail } };
}

/** PIN handlers `pinhandling` may name (privacyIDEA's only built-in one). */
export const PIN_HANDLERS = ["privacyidea.lib.pinhandling.base.PinHandler"] as const;

/** Refuses a `pinhandling` value naming no known handler (before anything is written). */
function checkPinHandlers(handlers: readonly string[]): void {
  for (const h of handlers) {
    if (!(PIN_HANDLERS as readonly string[]).includes(h)) {
      throw new PolicyError(`Unknown PIN handler "${h}" in policy action pinhandling`);
    }
  }
}

/**
 * `pinhandling`: hands a random enrolment PIN to the handlers. privacyIDEA's
 * base handler logs the PIN; Tessera's records that a random PIN was set,
 * never the PIN (no secret in logs).
 */
function handOverRandomPin(
  deps: Deps,
  handlers: readonly string[],
  what: {
    serial: string;
    type: string;
    owner?: UserRef;
    caller?: { username: string; realm: string };
  },
): void {
  for (const _ of new Set(handlers)) {
    deps.log.info("A random PIN was set at enrolment", {
      serial: what.serial,
      type: what.type,
      user: what.owner ? `${what.owner.login}@${what.owner.realm}` : "",
      enrolledBy: what.caller ? `${what.caller.username}@${what.caller.realm}` : "",
    });
  }
}

/** The two-step sizes of an enrolment, or undefined when it is a one-step one. */
function twoStepOf(
  params: InitParams,
  policies: EnrollPolicies,
  existing: TokenWithInfo | undefined,
  type: string,
): { clientsize: number; serversize?: number; difficulty: number } | undefined {
  if (type !== "hotp" && type !== "totp") return undefined;
  let isTwoStep = isTrueParam(str(params, "2stepinit"));
  // without <type>_2step the client's 2stepinit is dropped; force sets it on new tokens
  if (policies.twoStep === "none") isTwoStep = false;
  else if (
    policies.twoStep === "force" &&
    (!existing || (isTrueParam(str(params, "rollover")) && existing.rolloutState !== "clientwait"))
  ) {
    isTwoStep = true;
  }
  if (!isTwoStep) return undefined;
  // a policy value wins over the client's parameter
  const size = (name: keyof typeof TWO_STEP_BOUNDS, policy: number | undefined) => {
    if (policy !== undefined) return policy;
    const given = str(params, `2step_${name}`);
    if (given === undefined || given === "") return undefined;
    const [min, max] = TWO_STEP_BOUNDS[name];
    if (!/^\d{1,9}$/.test(given) || Number(given) < min || Number(given) > max) {
      throw new ParameterError(
        `Cannot parse parameter "2step_${name}": expected an integer from ${min} to ${max}, got "${given}"`,
      );
    }
    return Number(given);
  };
  return {
    clientsize: size("clientsize", policies.twoStepClientSize) ?? 8,
    serversize: size("serversize", policies.twoStepServerSize),
    difficulty: size("difficulty", policies.twoStepDifficulty) ?? 10000,
  };
}

function isTrueParam(v: string | undefined): boolean {
  return v !== undefined && ["1", "true", "yes", "on"].includes(v.toLowerCase());
}

/** Second call of a `verify_enrollment` enrolment: the first OTP of the new token. */
async function verifyEnrollment(
  deps: Deps,
  system: SystemConfig,
  token: TokenWithInfo,
  otp: string,
): Promise<InitResult> {
  const module = tokenTypeOf(token.type)!;
  const res = await module.checkOtp(checkContext(deps, system, token), otp);
  const isAccepted = res.isValid &&
    (res.counter === undefined || await store.advanceCounter(deps.db, token.id, res.counter)) &&
    (res.consumeInfo === undefined || await store.consumeInfo(deps.db, token.id, res.consumeInfo));
  if (!isAccepted) throw new ParameterError("Verification of the new token failed.");
  await store.updateToken(deps.db, token.id, { rollout_state: "enrolled" });
  return {
    serial: token.serial,
    type: token.type,
    detail: { serial: token.serial, rollout_state: "enrolled" },
  };
}

/**
 * Second call of a two-step enrolment: key = PBKDF2-HMAC-SHA1(server part as
 * lower-case hex, salt = client part, difficulty iterations, server key length).
 */
async function finishTwoStep(
  deps: Deps,
  token: TokenWithInfo,
  clientHex: string,
): Promise<InitResult> {
  const clean = clientHex.replace(/\s/g, "");
  if (clean.length === 0 || clean.length > 256 || !/^([0-9a-fA-F]{2})+$/.test(clean)) {
    throw new ParameterError('Cannot parse parameter "otpkey": expected a hex string');
  }
  const server = tokenSecret(deps, token);
  const difficulty = Number(token.info["2step_difficulty"]?.value ?? "10000") || 10000;
  const clientSize = Number(token.info["2step_clientsize"]?.value ?? "8") || 8;
  if (clean.length / 2 !== clientSize) {
    throw new ParameterError(
      `Client Secret Size is expected to be ${clientSize}, but is ${clean.length / 2}`,
    );
  }
  // the key has the hash's size, whatever the size of the server part (2step_serversize)
  const keyLength = keySizeOf((token.info.hashlib?.value ?? "sha1") as OtpHash);
  const key = await new Promise<Uint8Array>((resolve, reject) =>
    pbkdf2(toHex(server), fromHex(clean), difficulty, keyLength, "sha1", (err, out) => {
      if (err) reject(err);
      else resolve(new Uint8Array(out));
    })
  );
  await store.updateToken(deps.db, token.id, {
    key_enc: encryptSecret(deps.keys.token, key, deps.random),
    count: 0,
    active: 1,
    rollout_state: "enrolled",
  });
  return {
    serial: token.serial,
    type: token.type,
    detail: { serial: token.serial, rollout_state: "enrolled" },
  };
}

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
