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
import { randomString } from "../../lib/random.ts";
import { type Caller, type RightContext, rightValue } from "../policy/mod.ts";

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

/** The PIN rules that apply (undefined: not limited). */
export interface PinRules {
  minLength?: number;
  maxLength?: number;
  contents?: string;
}

// privacyIDEA's character classes (string.ascii_letters, digits, punctuation)
const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";
const SPECIAL = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
const CLASSES: Readonly<Record<string, string>> = { c: LETTERS, n: DIGITS, s: SPECIAL };
const CONTENTS_REGEXP = /^[+-]*[cns]+$|^\[.*\]+$/;
/** Types that take no PIN (privacyIDEA's `using_pin = False`). */
const PINLESS_TYPES = new Set(["sshkey", "certificate"]);

/** True for token types that take no PIN: their PIN is never checked. */
export function isPinlessType(type: string): boolean {
  return PINLESS_TYPES.has(type.toLowerCase());
}

/** The allowed characters and the character groups a PIN needs one of, for a contents value. */
export function pinCharsets(contents: string): { base: string; requirements: string[] } {
  if (!CONTENTS_REGEXP.test(contents)) {
    throw new PolicyError("Unknown character specifier in PIN policy.");
  }
  const all = LETTERS + DIGITS + SPECIAL;
  if (contents[0] === "+") {
    // one character from the union of the listed classes ("+" and "-" name no class)
    const union = [...contents.slice(1)].map((ch) => CLASSES[ch] ?? "").join("");
    return { base: all, requirements: [union] };
  }
  if (contents[0] === "-") {
    const excluded = contents.slice(1);
    const base = Object.entries(CLASSES).filter(([k]) => !excluded.includes(k))
      .map(([, v]) => v).join("");
    return { base, requirements: [] };
  }
  if (contents[0] === "[") {
    // the characters between the brackets, literally (no ranges)
    return { base: contents.slice(1, -1), requirements: [] };
  }
  return { base: all, requirements: [...contents].map((ch) => CLASSES[ch]) };
}

/**
 * Checks `pin` against a contents value; returns privacyIDEA's message (the failures joined
 * by ","), or undefined when it complies.
 */
export function pinContentsProblem(pin: string, contents: string): string | undefined {
  const { base, requirements } = pinCharsets(contents);
  const problems: string[] = [];
  if ([...pin].some((ch) => !base.includes(ch))) problems.push("Not allowed character in PIN!");
  for (const group of requirements) {
    if (![...pin].some((ch) => group.includes(ch))) {
      problems.push(`Missing character in PIN: ${group}`);
    }
  }
  return problems.length === 0 ? undefined : problems.join(",");
}

function lengthValue(action: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\s*\d{1,9}\s*$/.test(value)) {
    // privacyIDEA fails with an unexpected error here; a clear refusal instead of no limit
    throw new PolicyError(`The policy action ${action} needs a number, not "${value}"`);
  }
  return Number(value);
}

/**
 * The PIN rules for `options`: per attribute the `<type>_otp_pin_<x>` value of the caller's
 * scope, else the generic `otp_pin_<x>` (conflicting values of one priority: PolicyError).
 */
export async function pinRules(deps: Deps, options: PinPolicyOptions): Promise<PinRules> {
  const type = options.type.toLowerCase();
  const ctx = options.context ?? {};
  const read = async (attr: string) =>
    await rightValue(deps, options.caller, `${type}_otp_pin_${attr}`, ctx) ??
      await rightValue(deps, options.caller, `otp_pin_${attr}`, ctx);
  const min = await read("minlength");
  const max = await read("maxlength");
  const contents = await read("contents");
  return {
    minLength: lengthValue("otp_pin_minlength", min),
    maxLength: lengthValue("otp_pin_maxlength", max),
    contents: contents === undefined || contents === "" ? undefined : contents,
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
  const { base, requirements } = contents === undefined
    ? { base: LETTERS + DIGITS, requirements: [] as string[] }
    : pinCharsets(contents);
  const chars = requirements.filter((g) => g !== "").map((g) => randomString(random, 1, g));
  if (base !== "") {
    const rest = randomString(random, Math.max(0, length - chars.length), base);
    chars.push(...rest);
  }
  // Fisher-Yates with rejection-sampled indices
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomIndex(random, i + 1);
    [chars[i], chars[j]] = [chars[j], chars[i]];
  }
  return chars.join("");
}

function randomIndex(random: Random, n: number): number {
  const range = 2 ** 32;
  const limit = range - (range % n);
  for (;;) {
    const b = random.bytes(4);
    const v = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
    if (v < limit) return v % n;
  }
}
