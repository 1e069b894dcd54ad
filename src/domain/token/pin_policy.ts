/**
 * OTP PIN policies of the admin and user scopes (spec 15 §2.1): `otp_pin_minlength`,
 * `otp_pin_maxlength`, `otp_pin_contents` and the per-type overrides
 * (`spass_otp_pin_minlength` …), as privacyIDEA's prepolicy `check_otp_pin` and
 * `check_pin` apply them to a PIN about to be set.
 *
 * How to call it (any path that sets a token PIN a caller chose):
 *
 * ```ts
 * import { checkPinPolicy } from "../token/pin_policy.ts";
 *
 * // an admin setting the PIN of a token owned by `owner`
 * await checkPinPolicy(deps, pin, {
 *   caller: { role: "admin", username: "super", realm: "" },
 *   type: "hotp",
 *   context: { user: owner.login, realm: owner.realm, resolver: owner.resolver, client },
 * });
 * // a user choosing a new PIN (e.g. change_pin_via_validate: always role user)
 * await checkPinPolicy(deps, pin, {
 *   caller: { role: "user", username: user.login, realm: user.realm, resolver: user.resolver },
 *   type: token.type,
 *   context: { client },
 * });
 * ```
 *
 * It resolves when the PIN complies and throws PolicyError (403, code 303) with
 * privacyIDEA's message otherwise. An absent PIN is checked as `""` (privacyIDEA's
 * quirk: a minimum length refuses it). Without any active policy in the caller's
 * scope it costs one cached policy-set lookup.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { PolicyError } from "../../errors.ts";
import type { Random } from "../../lib/random.ts";
import {
  CHAR_CLASSES,
  type CharLists,
  charListsOf,
  generatePassword,
} from "../../lib/char_policy.ts";
import { type Caller, checkRight, type RightContext, rightValue } from "../policy/mod.ts";

/** Who sets the PIN, on which token type, in which policy context. */
export interface PinPolicyOptions {
  /** The caller: its role picks the scope (admin or user) and, for a user, the match. */
  caller: Caller;
  /** The token type (any case); `<type>_otp_pin_*` overrides the generic action per attribute. */
  type: string;
  /**
   * The request's policy context: for an admin the user acted on (user, realm or the token's
   * realms, resolver); for both roles the client, user agent and condition data.
   */
  context?: RightContext;
}

/** The caller and request context the PIN policies of a request are matched in. */
export type PinPolicyScope = Omit<PinPolicyOptions, "type">;

/** The PIN rules that apply (undefined: not limited). */
export interface PinRules {
  minLength?: number;
  maxLength?: number;
  contents?: string;
}

/** Types that take no PIN (privacyIDEA's `using_pin = False`). */
const PINLESS_TYPES = new Set(["sshkey", "certificate"]);

/** True for token types that take no PIN: their PIN is never checked. */
export function isPinlessType(type: string): boolean {
  return PINLESS_TYPES.has(type.toLowerCase());
}

function charLists(contents: string): CharLists {
  const lists = charListsOf(contents);
  if (!lists) throw new PolicyError("Unknown character specifier in PIN policy.");
  return lists;
}

/**
 * Checks `pin` against a contents value; returns privacyIDEA's message (the failures joined
 * by ","), or undefined when it complies.
 */
export function pinContentsProblem(pin: string, contents: string): string | undefined {
  const { base, requirements } = charLists(contents);
  const problems: string[] = [];
  if ([...pin].some((ch) => !base.includes(ch))) problems.push("Not allowed character in PIN!");
  for (const group of requirements) {
    if (![...pin].some((ch) => group.includes(ch))) {
      problems.push(`Missing character in PIN: ${group}`);
    }
  }
  return problems.length === 0 ? undefined : problems.join(",");
}

function lengthValue(read: { action: string; value: string } | undefined): number | undefined {
  if (read === undefined) return undefined;
  if (!/^\s*\d{1,9}\s*$/.test(read.value)) {
    // privacyIDEA fails with an unexpected error here; a clear refusal instead of no limit
    throw new PolicyError(
      `The policy action "${read.action}" needs a whole number, got "${read.value}"`,
    );
  }
  return Number(read.value);
}

/**
 * The PIN rules for `options`: per attribute the `<type>_otp_pin_<x>` value of the caller's
 * scope, else the generic `otp_pin_<x>` (conflicting values of one priority: PolicyError).
 */
export async function pinRules(deps: Deps, options: PinPolicyOptions): Promise<PinRules> {
  const type = options.type.toLowerCase();
  const ctx = options.context ?? {};
  const read = async (attr: string) => {
    for (const action of [`${type}_otp_pin_${attr}`, `otp_pin_${attr}`]) {
      const value = await rightValue(deps, options.caller, action, ctx);
      if (value !== undefined) return { action, value };
    }
    return undefined;
  };
  const min = await read("minlength");
  const max = await read("maxlength");
  const contents = await read("contents");
  return {
    minLength: lengthValue(min),
    maxLength: lengthValue(max),
    contents: contents === undefined || contents.value === "" ? undefined : contents.value,
  };
}

/**
 * Checks a PIN a caller is about to set against the admin- or user-scope PIN policies
 * (see the module doc for how to call it). Throws PolicyError (403/303) with privacyIDEA's
 * message: `The minimum OTP PIN length is <n>`, `The maximum OTP PIN length is <n>`, or the
 * contents message; the first failing rule wins.
 */
export async function checkPinPolicy(
  deps: Deps,
  pin: string | undefined,
  options: PinPolicyOptions,
): Promise<void> {
  if (isPinlessType(options.type)) return;
  const rules = await pinRules(deps, options);
  const value = pin ?? "";
  // Unicode code points, as Python's len()
  const length = [...value].length;
  if (rules.minLength !== undefined && length < rules.minLength) {
    throw new PolicyError(`The minimum OTP PIN length is ${rules.minLength}`);
  }
  if (rules.maxLength !== undefined && length > rules.maxLength) {
    throw new PolicyError(`The maximum OTP PIN length is ${rules.maxLength}`);
  }
  if (rules.contents !== undefined) {
    const problem = pinContentsProblem(value, rules.contents);
    if (problem !== undefined) throw new PolicyError(problem);
  }
}

/**
 * A random PIN of `length` characters that meets a contents value (one character of each
 * required group, the rest from the allowed characters, shuffled), as privacyIDEA's
 * `generate_password`; without contents, letters and digits.
 */
export function randomPin(random: Random, length: number, contents?: string): string {
  if (contents === undefined) {
    return generatePassword(random, length, CHAR_CLASSES.c + CHAR_CLASSES.n);
  }
  const { base, requirements } = charLists(contents);
  const groups = requirements.filter((g) => g !== "");
  if (base === "" && length > groups.length) {
    throw new PolicyError("Unknown character specifier in PIN policy.");
  }
  return generatePassword(random, length, base, groups);
}

function isTruthy(v: unknown): boolean {
  return v !== undefined && v !== null && v !== "" && v !== false && v !== 0 && v !== "0";
}

function textParam(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : "";
}

/**
 * `POST /token/init`'s PIN steps (spec 15 §2.1, §2.2; spec 17 §1): a `pin` sent without the
 * caller's `enrollpin` right is refused (privacyIDEA 3.13: PolicyError 403), then the PIN
 * (`otppin`, else `pin`, else `""`) is checked by {@link checkPinPolicy}. A `rollover` or
 * `verify` request without a PIN is not checked (it sets none).
 */
export async function checkEnrolmentPin(
  deps: Deps,
  params: Readonly<Record<string, unknown>>,
  options: PinPolicyOptions,
): Promise<void> {
  if (params.pin !== undefined && params.pin !== null) {
    await checkRight(deps, options.caller, "enrollpin", {
      ...options.context,
      message: "Setting a PIN is not allowed due to missing 'enrollpin' right.",
    });
  }
  const pin = textParam(params.otppin) || textParam(params.pin);
  // privacyIDEA skips the check for these; a PIN they do carry is still checked
  if (pin === "" && (isTruthy(params.rollover) || isTruthy(params.verify))) return;
  await checkPinPolicy(deps, pin, options);
}
