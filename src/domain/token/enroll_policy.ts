/**
 * The one place where enrolment reads policy: the enrollment scope, matched
 * on the token owner and the client (`verify_enrollment`,
 * `<type>_2step_clientsize|serversize|difficulty`, `tokenlabel`,
 * `tokenissuer`, `appimageurl`, `<type>_force_app_pin`,
 * `<type>_app_force_unlock`, `registration.*`, `pw.*`, `papertoken_count`,
 * `otp_pin_random`, `pinhandling`, `encrypt_pin`, `require_description` and
 * the type's own values such as `tantoken_count`), and the caller's admin or
 * user scope (`<type>_2step`, `otp_pin_contents` for a random PIN, and the
 * type's own values: `sms_gateways`, `daypassword_*`,
 * `indexedsecret_force_attribute`). Without policies these are privacyIDEA's
 * defaults (no verification, two-step dropped).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { PolicyError } from "../../errors.ts";
import type { UserRef } from "./model.ts";
import { type ConditionData, loadPolicySet, type PolicyMatcher } from "../policy/mod.ts";
import { getUserAttributes } from "./_users.ts";

/** Who enrols what (policy match context). */
export interface EnrollPolicyContext {
  type: string;
  /** The owner of the new token, if any. */
  user?: UserRef;
  realm?: string;
  caller?: { role: "admin" | "user"; username: string; realm: string };
  /** The request's client address. */
  client?: string;
  /**
   * The request's condition data (headers, environment, parameters, the token it names); the
   * `userinfo` conditions read the owner.
   */
  conditions?: ConditionData;
}

/**
 * Condition data of a match about `user` (privacyIDEA matches enrolment policies on the
 * request's user object): the request's sections, `userinfo` of `user` (none without one).
 */
export function userConditions(
  deps: Deps,
  request: ConditionData | undefined,
  user: UserRef | undefined,
): ConditionData {
  return { ...request, userinfo: user ? () => getUserAttributes(deps, user) : undefined };
}

/** Enrolment policy values. */
export interface EnrollPolicies {
  /** `verify_enrollment`: token types whose first OTP must be verified. */
  verifyEnrollment: string[];
  /** `<type>_2step` for this type. */
  twoStep: "none" | "allow" | "force";
  /** `<type>_2step_clientsize`, `_serversize`, `_difficulty`, when a policy sets them. */
  twoStepClientSize?: number;
  twoStepServerSize?: number;
  twoStepDifficulty?: number;
  /** The type's own policy values (see {@link TYPE_ENROLL_ACTIONS}): action → value. */
  typeActions: Readonly<Record<string, string>>;
  /**
   * Init parameters the policies set, replacing the client's (privacyIDEA
   * writes them into the request): `tokenlabel`, `tokenissuer`,
   * `appimageurl`, `force_app_pin`, `app_force_unlock`, `papertoken_count`.
   */
  initParams: Readonly<Record<string, string>>;
  /** `otp_pin_random`: length of a random PIN replacing the client's. */
  randomPinLength?: number;
  /** `<type>_otp_pin_contents` or `otp_pin_contents` (caller's scope) for the random PIN. */
  randomPinContents?: string;
  /** `pinhandling`: the handlers a random PIN is given to. */
  pinHandlers: string[];
  /** `encrypt_pin`: the PIN is stored encrypted instead of hashed. */
  encryptPin: boolean;
  /** `require_description`: token types that need a description. */
  requireDescription: string[];
}

/** Enrolment actions of both FIDO types (spec 11 §4.1, §5.1). */
const FIDO_ENROLL_ACTIONS = [
  "webauthn_relying_party_id",
  "webauthn_relying_party_name",
  "webauthn_timeout",
  "webauthn_user_verification_requirement",
  "webauthn_authenticator_attachment",
  "webauthn_public_key_credential_algorithms",
  "webauthn_authenticator_attestation_form",
  "webauthn_authenticator_attestation_level",
  "webauthn_authenticator_selection_list",
  "webauthn_avoid_double_registration",
];

/**
 * Type-specific policy actions read at enrolment: `enrollment` ones are
 * matched on the owner, `caller` ones in the caller's admin or user scope.
 * `multi` values of all matching policies are united (space separated).
 */
export const TYPE_ENROLL_ACTIONS: Readonly<
  Record<string, { enrollment?: string[]; caller?: string[]; multi?: string[]; bool?: string[] }>
> = {
  tan: { enrollment: ["tantoken_count"] },
  push: {
    enrollment: [
      "push_firebase_configuration",
      "push_registration_url",
      "push_ttl",
      "push_ssl_verify",
      "push_use_pia_scheme",
    ],
    bool: ["push_use_pia_scheme"],
  },
  hotp: {
    caller: ["hotp_hashlib", "hotp_otplen", "hotp_force_server_generate"],
    bool: ["hotp_force_server_generate"],
  },
  totp: {
    caller: ["totp_hashlib", "totp_otplen", "totp_timestep", "totp_force_server_generate"],
    bool: ["totp_force_server_generate"],
  },
  sms: { caller: ["sms_gateways"], multi: ["sms_gateways"] },
  indexedsecret: { caller: ["indexedsecret_force_attribute"] },
  webauthn: {
    enrollment: [...FIDO_ENROLL_ACTIONS, "webauthn_challenge_text"],
    multi: ["webauthn_public_key_credential_algorithms", "webauthn_authenticator_selection_list"],
    bool: ["webauthn_avoid_double_registration"],
  },
  passkey: {
    enrollment: [
      ...FIDO_ENROLL_ACTIONS,
      "passkey_attestation_conveyance_preference",
    ],
    multi: ["webauthn_public_key_credential_algorithms"],
  },
  certificate: {
    enrollment: [
      "certificate_ca_connector",
      "certificate_template",
      "certificate_request_subject_component",
      "certificate_require_attestation",
    ],
    caller: ["certificate_trusted_Attestation_CA_path"],
    multi: ["certificate_request_subject_component", "certificate_trusted_Attestation_CA_path"],
  },
  daypassword: {
    caller: [
      "daypassword_timestep",
      "daypassword_hashlib",
      "daypassword_otplen",
      "daypassword_force_server_generate",
    ],
    bool: ["daypassword_force_server_generate"],
  },
  motp: { caller: ["motp_force_server_generate"], bool: ["motp_force_server_generate"] },
  applspec: {
    caller: ["applspec_force_server_generate"],
    bool: ["applspec_force_server_generate"],
  },
};

/** No policy: no verification, no two-step enrolment. */
export const DEFAULT_ENROLL_POLICIES: Readonly<EnrollPolicies> = Object.freeze({
  verifyEnrollment: [],
  twoStep: "none",
  typeActions: {},
  initParams: {},
  pinHandlers: [],
  encryptPin: false,
  requireDescription: [],
});

/** Bounds of two-step sizes (bytes) and PBKDF2 rounds, from a policy or the client. */
export const TWO_STEP_BOUNDS = Object.freeze(
  {
    clientsize: [1, 128],
    serversize: [10, 128],
    difficulty: [1, 1_000_000],
  } as const,
);

/** The enrolment policies that apply to `ctx`. */
export async function enrollPolicies(
  deps: Deps,
  ctx: EnrollPolicyContext,
): Promise<EnrollPolicies> {
  const set = await loadPolicySet(deps);
  const caller = ctx.caller;
  const callerScope = caller?.role === "user" ? "user" : "admin";
  const hasEnrollment = set.hasActivePolicies("enrollment");
  const hasCaller = caller !== undefined && set.hasActivePolicies(callerScope);
  if (!hasEnrollment && !hasCaller) return DEFAULT_ENROLL_POLICIES as EnrollPolicies;
  const type = ctx.type.toLowerCase();
  const owner = {
    user: ctx.user?.login ?? null,
    realm: ctx.user?.realm ?? ctx.realm ?? null,
    resolver: ctx.user?.resolver ?? null,
    conditions: userConditions(deps, ctx.conditions, ctx.user),
  };
  const out: EnrollPolicies = { ...DEFAULT_ENROLL_POLICIES, verifyEnrollment: [] };
  const own = TYPE_ENROLL_ACTIONS[type] ?? {};
  const typeActions: Record<string, string> = {};
  const initParams: Record<string, string> = {};
  const read = async (m: PolicyMatcher, action: string) => {
    if (own.multi?.includes(action)) {
      const { values } = await m.values(action);
      if (values.length > 0) typeActions[action] = values.join(" ");
    } else if (own.bool?.includes(action)) {
      // force_server_generate restricts the caller: only a policy naming it turns it on
      const on = action.endsWith("_force_server_generate")
        ? await m.namedBool(action)
        : await m.bool(action);
      if (on.length > 0) typeActions[action] = "true";
    } else {
      const value = await m.value(action);
      if (value !== undefined) typeActions[action] = value;
    }
  };
  if (hasEnrollment) {
    const m = set.matcher({ ...owner, scope: "enrollment", client: ctx.client || null });
    out.verifyEnrollment = (await m.values("verify_enrollment")).values.map((v) => v.toLowerCase());
    const int = async (action: string, min: number, max: number) => {
      const v = (await m.values(action, { unique: true })).values[0];
      return v === undefined ? undefined : policyInt(action, v, min, max);
    };
    const b = TWO_STEP_BOUNDS;
    out.twoStepClientSize = await int(`${type}_2step_clientsize`, ...b.clientsize);
    out.twoStepServerSize = await int(`${type}_2step_serversize`, ...b.serversize);
    out.twoStepDifficulty = await int(`${type}_2step_difficulty`, ...b.difficulty);
    for (const action of own.enrollment ?? []) await read(m, action);
    // init_tokenlabel: label, issuer, app image, app PIN / unlock (privacyIDEA 3.13)
    for (const action of ["tokenlabel", "tokenissuer", "appimageurl"]) {
      const v = await m.value(action);
      if (v !== undefined) initParams[action] = v;
    }
    if ((await m.bool(`${type}_force_app_pin`)).length > 0) {
      initParams.force_app_pin = "True";
      initParams.app_force_unlock = "pin";
    }
    const unlock = (await m.values(`${type}_app_force_unlock`, { unique: true })).values[0];
    if (unlock !== undefined) initParams.app_force_unlock = unlock;
    // generated codes and passwords: the policy, else the type's default (never the client's)
    if (type === "registration" || type === "pw") {
      const length = await int(`${type}.length`, 1, 128);
      if (length !== undefined) typeActions[`${type}.length`] = String(length);
      const contents = (await m.values(`${type}.contents`, { unique: true })).values[0];
      if (contents !== undefined) typeActions[`${type}.contents`] = contents;
    }
    if (type === "paper") {
      const count = await int("papertoken_count", 1, 1000);
      if (count !== undefined) initParams.papertoken_count = String(count);
    }
    out.randomPinLength = await int("otp_pin_random", 1, 128);
    if (out.randomPinLength !== undefined) {
      out.pinHandlers = (await m.values("pinhandling")).values;
    }
    out.encryptPin = (await m.bool("encrypt_pin")).length > 0;
    out.requireDescription = (await m.values("require_description")).values
      .map((v) => v.toLowerCase());
  }
  if (hasCaller && caller) {
    const isAdmin = caller.role === "admin";
    const m = set.matcher({
      scope: callerScope,
      adminuser: isAdmin ? caller.username : null,
      adminrealm: isAdmin ? caller.realm : null,
      user: isAdmin ? owner.user : caller.username,
      realm: isAdmin ? owner.realm : caller.realm,
      resolver: isAdmin ? owner.resolver : null,
      client: ctx.client || null,
      // privacyIDEA's admin_or_user: the conditions read the request's user (the owner)
      conditions: owner.conditions,
    });
    const twoStep = (await m.values(`${type}_2step`, { unique: true })).values[0];
    if (twoStep === "allow" || twoStep === "force") out.twoStep = twoStep;
    else if (twoStep !== undefined) {
      throw new PolicyError(`Unknown 2step policy setting: ${twoStep}`);
    }
    for (const action of own.caller ?? []) await read(m, action);
    if (out.randomPinLength !== undefined) {
      out.randomPinContents = (await m.values(`${type}_otp_pin_contents`, { unique: true }))
        .values[0] ?? (await m.values("otp_pin_contents", { unique: true })).values[0];
    }
  }
  out.initParams = initParams;
  out.typeActions = typeActions;
  return out;
}

// ---------------------------------------------------------------------------
// Enrollment-scope actions read outside the per-type table

/** Whom an enrollment-scope action is matched on (privacyIDEA's `Match.user`). */
export interface EnrollmentSubject {
  user?: UserRef;
  /** The realm when there is no user. */
  realm?: string;
  /** The request's client address. */
  client?: string;
  /** The request's condition data; the `userinfo` conditions read `user`. */
  conditions?: ConditionData;
}

/** The enrollment-scope matcher for `subject`; undefined when the scope has no active policy. */
export async function enrollmentMatcher(
  deps: Deps,
  subject: EnrollmentSubject,
): Promise<PolicyMatcher | undefined> {
  const set = await loadPolicySet(deps);
  if (!set.hasActivePolicies("enrollment")) return undefined;
  return set.matcher({
    scope: "enrollment",
    user: subject.user?.login ?? null,
    realm: subject.user?.realm ?? subject.realm ?? null,
    resolver: subject.user?.resolver ?? null,
    client: subject.client || null,
    conditions: userConditions(deps, subject.conditions, subject.user),
  });
}

/**
 * An integer policy value from `min` to `max`; any other value is refused
 * with a PolicyError naming the action (privacyIDEA fails with a 500).
 */
export function policyInt(action: string, value: string, min: number, max: number): number {
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new PolicyError(
      `The policy action "${action}" needs an integer from ${min} to ${max}, got "${value}"`,
    );
  }
  return n;
}

/** What `POST /token/lost` generates (enrollment scope, matched on the lost token's owner). */
export interface LostTokenSettings {
  /** `losttoken_PW_length` (default 16). */
  length: number;
  /** `losttoken_PW_contents` (default `8`, Base58). */
  contents: string;
  /** `losttoken_valid`: days (default 10). */
  validDays: number;
}

/** The lost-token settings for a token of `owner`. */
export async function lostTokenSettings(
  deps: Deps,
  subject: EnrollmentSubject,
): Promise<LostTokenSettings> {
  const out: LostTokenSettings = { length: 16, contents: "8", validDays: 10 };
  const m = await enrollmentMatcher(deps, subject);
  if (!m) return out;
  const length = await m.value("losttoken_PW_length");
  if (length !== undefined) out.length = policyInt("losttoken_PW_length", length, 1, 128);
  const contents = await m.value("losttoken_PW_contents");
  if (contents !== undefined) out.contents = contents;
  const valid = await m.value("losttoken_valid");
  if (valid !== undefined) out.validDays = policyInt("losttoken_valid", valid, 1, 3650);
  return out;
}

/** What setting a PIN does to `next_pin_change`: set it `days` from now, or clear it. */
export interface PinChange {
  days?: number;
  clear: boolean;
}

/**
 * `change_pin_on_first_use` and `change_pin_every` after a PIN was set
 * (privacyIDEA's post-step `save_pin_change`, matched on the token: its owner,
 * else its realm): an admin's request under `change_pin_on_first_use` makes
 * the PIN due now, whether it set one or not; a user's request that set a PIN
 * clears the due date and, under `change_pin_every` (`90d` or `90`), sets it
 * that many days ahead.
 */
export async function pinChangeAfterSet(
  deps: Deps,
  token: EnrollmentSubject,
  request: { role?: "admin" | "user"; isPinSet: boolean },
): Promise<PinChange> {
  if (request.role === undefined) return { clear: false };
  if (request.role === "user" && !request.isPinSet) return { clear: false };
  const m = await enrollmentMatcher(deps, token);
  if (request.role === "admin") {
    const due = m !== undefined && (await m.bool("change_pin_on_first_use")).length > 0;
    return due ? { days: 0, clear: false } : { clear: false };
  }
  const every = m === undefined
    ? undefined
    : (await m.values("change_pin_every", { unique: true })).values[0];
  if (every === undefined) return { clear: true };
  // privacyIDEA: lower-cased, surrounding "d"s stripped, whole days
  const days = every.toLowerCase().replace(/^d+|d+$/g, "");
  return { days: policyInt("change_pin_every", days, 0, 36500), clear: true };
}

/** `encrypt_pin`: PINs set for `subject` are stored encrypted instead of hashed. */
export async function isPinEncrypted(deps: Deps, subject: EnrollmentSubject): Promise<boolean> {
  const m = await enrollmentMatcher(deps, subject);
  return m !== undefined && (await m.bool("encrypt_pin")).length > 0;
}
