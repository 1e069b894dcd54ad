/**
 * Enrolment (`POST /token/init`): a new token or a re-init of an existing serial of the
 * same type, the enrolment policies, two-step enrolment and `verify_enrollment`.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { DatabaseError, ParameterError, PolicyError, TokenAdminError } from "../../errors.ts";
import { encryptSecret } from "../../lib/crypto.ts";
import { keySizeOf, type OtpHash } from "../../lib/otp.ts";
import { fromHex, toHex } from "../../lib/random.ts";
import { pbkdf2 } from "node:crypto";
import { loadSystemConfig, type SystemConfig } from "../system_config/mod.ts";
import type { ConditionData } from "../policy/mod.ts";
import type { InfoEntry, TokenWithInfo, UserRef } from "./model.ts";
import { checkTokenLimits } from "./token_limits.ts";
import {
  type EnrollPolicies,
  enrollPolicies,
  pinChangeAfterSet,
  TWO_STEP_BOUNDS,
} from "./enroll_policy.ts";
import { encryptedPinOf, pinHashOf } from "./pin.ts";
import { checkEnrolmentPin, type PinPolicyScope, randomPin } from "./pin_policy.ts";
import { checkSerial, generateSerial } from "./serial.ts";
import { type InitParams, NOT_ENROLLED_TYPES, tokenTypeOf } from "./types/mod.ts";
import { usesOwnerNames } from "./types/_oath.ts";
import { getUserInfo } from "./_users.ts";
import * as store from "./token_store.ts";
import {
  alreadyAssigned,
  isUniqueViolation,
  lockedError,
  MAX_DESCRIPTION,
  MAX_INFO_KEY,
  MAX_INFO_VALUE,
  newTokenRow,
} from "./_common.ts";
import { checkValidityDate, nowIso, validityStamp } from "./dates.ts";
import { findTokenBySerial, isOwner } from "./lookup.ts";
import { checkContext, tokenSecret } from "./secrets.ts";

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
  // a type kept only to authenticate existing tokens (u2f) is unknown here, as in privacyIDEA 3.12
  if (!module || type in NOT_ENROLLED_TYPES) {
    throw new TokenAdminError(`init token failed. Unknown token type: ${type}`, 1610);
  }
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
