/**
 * The `offline` machine application (spec 07 §5.3, §5.4): hashed future HOTP
 * values for offline login, refill tokens and `/validate/offlinerefill`.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError } from "../../errors.ts";
import { safeEqual } from "../../lib/crypto.ts";
import { findHotpCounter, hotpAt, type OtpHash } from "../../lib/otp.ts";
import { toHex } from "../../lib/random.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import {
  checkImportedPin,
  checkPin,
  findTokenBySerial,
  infoPlain,
  isImportedPinHash,
  splitPinPass,
  tokenSecret,
  type TokenWithInfo,
} from "../token/mod.ts";
import { setInfo, updateTokens } from "../token/token_store.ts";
import { pbkdf2Sha512Hash } from "./_pbkdf2.ts";
import * as bindingStore from "./machine_token_store.ts";

/** Default number of offline OTP values. */
export const DEFAULT_COUNT = 100;
/** Default PBKDF2 rounds of the offline hashes. */
export const DEFAULT_ROUNDS = 6549;
/** Refill tokens are this many random bytes, hex-encoded. */
const REFILLTOKEN_BYTES = 40;
const SALT_BYTES = 10;
// bounds keep one request from burning minutes of CPU
const MAX_COUNT = 1000;
const MAX_ROUNDS = 100_000;

const REFILL_ERROR = "Token is not an offline token or refill token is incorrect";

/** Token types the offline application serves. */
export const OFFLINE_TYPES: readonly string[] = ["hotp", "webauthn", "passkey"];

/** An offline authentication item before binding options are merged. */
export type OfflineItem = Record<string, unknown>;

function intOption(options: Record<string, string>, key: string, fallback: number, max: number) {
  const raw = options[key];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < (key === "rounds" ? 1 : 0) || Number(raw) > max) {
    throw new ParameterError(
      `Cannot use option "${key}" of the offline binding: expected an integer up to ${max}, got "${raw}"`,
    );
  }
  return Number(raw);
}

/** The computer name in a User-Agent (`ComputerName/<name>`, `Hostname/…`, …); undefined if none. */
export function computerNameOf(userAgent: string | undefined): string | undefined {
  if (!userAgent) return undefined;
  for (const key of ["ComputerName", "Hostname", "MachineName", "Windows", "Linux", "Mac"]) {
    const i = userAgent.indexOf(`${key}/`);
    if (i < 0) continue;
    const name = userAgent.slice(i + key.length + 1).split(/\s/)[0];
    if (name) return name;
  }
  return undefined;
}

function refillKeyOf(token: TokenWithInfo, userAgent: string | undefined): string {
  if (token.type !== "webauthn" && token.type !== "passkey") return "refilltoken";
  const name = computerNameOf(userAgent);
  if (!name) throw new ParameterError("Unable to generate refill token without computer name.");
  return `refilltoken_${name}`;
}

async function newRefillToken(deps: Deps, token: TokenWithInfo, key: string): Promise<string> {
  const value = toHex(deps.random.bytes(REFILLTOKEN_BYTES));
  await setInfo(deps.db, token.id, { [key]: { value, type: "" } });
  return value;
}

/**
 * Reserves `amount` HOTP values from the token's current counter (one
 * compare-and-set, so parallel requests never hand out the same values) and
 * returns `counter → passlib hash of PIN+OTP` (or OTP+PIN).
 */
async function offlineOtps(
  deps: Deps,
  token: TokenWithInfo,
  pin: string,
  amount: number,
  rounds: number,
  prependPin: boolean,
): Promise<Record<string, string>> {
  const key = tokenSecret(deps, token);
  const hash = (token.info.hashlib?.value ?? "sha1") as OtpHash;
  let start = token.count;
  for (let attempt = 0;; attempt++) {
    const moved = await updateTokens(
      deps.db,
      [token.id],
      { count: start + amount },
      (eb) => eb("count", "=", start),
    );
    if (moved === 1) break;
    if (attempt >= 5) throw new ParameterError("Cannot reserve offline OTP values: counter busy");
    const fresh = await findTokenBySerial(deps, token.serial);
    if (!fresh) throw new ParameterError("The token does not exist");
    start = fresh.count;
  }
  const entries = await Promise.all(
    Array.from({ length: amount }, async (_, i) => {
      const otp = hotpAt(key, start + i, token.otplen, hash);
      const password = prependPin ? pin + otp : otp + pin;
      return [
        String(start + i),
        await pbkdf2Sha512Hash(password, deps.random.bytes(SALT_BYTES), rounds),
      ];
    }),
  );
  return Object.fromEntries(entries);
}

/**
 * The offline item of `token` (spec 07 §5.3): owner, refill token and, for
 * HOTP, `count` hashed future values (the counter advances by `count`).
 * `password` (PIN+OTP) only contributes its PIN part. Undefined for other types.
 */
export async function offlineItem(
  deps: Deps,
  token: TokenWithInfo,
  options: Record<string, string>,
  req: { password?: string; userAgent?: string },
): Promise<OfflineItem | undefined> {
  if (!OFFLINE_TYPES.includes(token.type)) return undefined;
  const item: OfflineItem = {};
  let response: Record<string, unknown> = {};
  if (token.owner) item.user = item.username = token.owner.login;
  const refillKey = refillKeyOf(token, req.userAgent);
  if (token.type === "hotp") {
    const count = intOption(options, "count", DEFAULT_COUNT, MAX_COUNT);
    const rounds = intOption(options, "rounds", DEFAULT_ROUNDS, MAX_ROUNDS);
    const system = await loadSystemConfig(deps);
    const prependPin = system.bool("PrependPin");
    let pin = "";
    if (req.password) {
      const split = splitPinPass(req.password, token.otplen, prependPin);
      if (!split) throw new ParameterError("Could not split password");
      pin = split.pin;
    }
    response = await offlineOtps(deps, token, pin, count, rounds, prependPin);
  } else if (token.type === "webauthn") {
    // the secret is the raw credential id; privacyIDEA stores and answers it as hex
    response = {
      pubKey: infoPlain(deps, token.info, "pubKey") ?? "",
      credentialId: toHex(tokenSecret(deps, token)),
      rpId: infoPlain(deps, token.info, "relying_party_id") ?? "",
    };
  } else {
    response = {
      pubKey: infoPlain(deps, token.info, "public_key") ?? "",
      rpId: infoPlain(deps, token.info, "relying_party_id") ?? "",
      credentialId: new TextDecoder().decode(tokenSecret(deps, token)),
    };
  }
  item.refilltoken = await newRefillToken(deps, token, refillKey);
  item.response = response;
  return item;
}

/**
 * Whether token `serial` (of type `tokenType`, when given) may get offline data
 * ({@link offlineAuthItems}): it has an `offline` binding and a type with offline values.
 */
export async function hasOfflineBinding(
  deps: Deps,
  serial: string,
  tokenType?: string,
): Promise<boolean> {
  // a type without offline values never gets items (offlineItem), binding or not: no query
  if (tokenType !== undefined && !OFFLINE_TYPES.includes(tokenType)) return false;
  // one precompiled query on the hot path when the token has no offline binding
  return await bindingStore.hasBinding(deps.db, serial, "offline");
}

/**
 * Offline data for `/validate/check` (spec 07 §5.4): when token `serial` has an
 * `offline` binding, `{offline: [item]}` with `serial` set and the binding
 * options merged; undefined otherwise. Call after a successful check for which
 * {@link hasOfflineBinding} said yes (the hot path asks that once); `tokenType`,
 * when given, is the type of token `serial`.
 */
export async function offlineAuthItems(
  deps: Deps,
  serial: string,
  req: { password?: string; userAgent?: string; tokenType?: string } = {},
): Promise<{ offline: OfflineItem[] } | undefined> {
  const bindings = await bindingStore.findBindings(deps.db, { serial, application: "offline" });
  if (bindings.length === 0) return undefined;
  const token = await findTokenBySerial(deps, serial);
  if (!token) return undefined;
  const item = await offlineItem(deps, token, bindings[0].options, req);
  if (!item) return undefined;
  return { offline: [{ ...item, ...bindings[0].options, serial }] };
}

/** Request of `/validate/offlinerefill`. */
export interface RefillRequest {
  serial: string;
  refilltoken: string;
  /** The last PIN+OTP the user entered offline. */
  pass: string;
  userAgent?: string;
}

/**
 * Refills an offline token (`/validate/offlinerefill`): checks the refill
 * token and the last used OTP, returns fresh hashes for the values consumed
 * since, and rotates the refill token.
 */
export async function offlineRefill(
  deps: Deps,
  req: RefillRequest,
): Promise<{ refilltoken: string; response: Record<string, string>; serial: string }> {
  const token = await findTokenBySerial(deps, req.serial);
  if (!token) throw new ParameterError("The token does not exist");
  if (!token.active || token.revoked || token.locked || token.failcount >= token.maxfail) {
    throw new ParameterError("The token is not valid.");
  }
  const bindings = await bindingStore.findBindings(deps.db, {
    tokenId: token.id,
    application: "offline",
  });
  if (bindings.length === 0) throw new ParameterError(REFILL_ERROR);
  const refillKey = refillKeyOf(token, req.userAgent);
  const stored = token.info[refillKey]?.value ?? "";
  if (stored === "" || !safeEqual(stored, req.refilltoken)) throw new ParameterError(REFILL_ERROR);

  let response: Record<string, string> = {};
  if (token.type === "hotp") {
    const options = bindings[0].options;
    const count = intOption(options, "count", DEFAULT_COUNT, MAX_COUNT);
    const rounds = intOption(options, "rounds", DEFAULT_ROUNDS, MAX_ROUNDS);
    const prependPin = (await loadSystemConfig(deps)).bool("PrependPin");
    const split = splitPinPass(req.pass, token.otplen, prependPin);
    if (!split) throw new ParameterError("Could not split password");
    // stricter than privacyIDEA: the PIN is checked too, not only hashed into the values
    const isPinRight = checkPin(deps, token.pinHash, split.pin) ||
      (isImportedPinHash(token.pinHash) && await checkImportedPin(deps, token, split.pin));
    if (!isPinRight) throw new ParameterError("PIN is not correct");
    const hash = (token.info.hashlib?.value ?? "sha1") as OtpHash;
    const first = Math.max(0, token.count - count);
    const matched = findHotpCounter(
      tokenSecret(deps, token),
      split.otp,
      first,
      token.count - first,
      token.otplen,
      hash,
    );
    if (matched < 0) throw new ParameterError("You provided a wrong OTP value.");
    // the client used values first..matched: hand out that many new ones
    response = await offlineOtps(deps, token, split.pin, matched - first + 1, rounds, prependPin);
  }
  const refilltoken = await newRefillToken(deps, token, refillKey);
  return { refilltoken, response, serial: token.serial };
}
