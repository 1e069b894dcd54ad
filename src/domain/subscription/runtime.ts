/**
 * Runtime metering of client components (spec 06 §5): which User-Agents are
 * metered, the free tier per application, and the probabilistic refusal when
 * a subscription is missing, expired or exceeded.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { Random } from "../../lib/random.ts";
import { parseUserAgent } from "../../lib/percent.ts";
import { SubscriptionError } from "../../errors.ts";
import { SIGNATURE_MISMATCH, signedValuesOf, subscriptionError, VERIFY_FAILED } from "./file.ts";
import { loadVendorKey, signedMessage, verifySignatureMemo } from "./signature.ts";
import * as store from "./subscription_store.ts";
import type { StoredSubscription } from "./subscription_store.ts";

/** Users with active tokens allowed without a subscription, per application (spec 06 §5.2). */
export const FREE_TIER: Readonly<Record<string, number>> = {
  "demo_application": 0,
  "owncloud": 50,
  "privacyidea-nextcloud": 50,
  "privacyidea-ldap-proxy": 50,
  "privacyidea-cp": 50,
  "privacyidea-pam": 10000,
  "privacyidea-shibboleth": 10000,
  "privacyidea-adfs": 50,
  "privacyidea-keycloak": 10000,
  "simplesamlphp": 10000,
  "privacyidea-simplesamlphp": 10000,
  "privacyidea authenticator": 10,
  "privacyidea": 50,
};

/** User-Agent product names (lower case) metered as another application. */
export const UA_ALIASES: Readonly<Record<string, string>> = {
  "pam": "privacyidea-pam",
  "pam-privacyidea": "privacyidea-pam",
  "pam-passkey": "privacyidea-pam",
  "entraid-via-keycloak": "privacyidea-keycloak",
  "freeradius": "privacyidea",
};

/** Refusal texts clients match on (spec 06 §5.3). */
export const NO_SUBSCRIPTION = "No subscription for your client.";
export const EXPIRED = "Your subscription expired.";
export const EXCEEDED = "Too many users with assigned tokens. Subscription exceeded.";

const DAY_MS = 86_400_000;

/** The metered application of a User-Agent, or undefined for browsers and unknown clients. */
export function meteredApplication(userAgent: string | null | undefined): string | undefined {
  const product = parseUserAgent(userAgent).product.toLowerCase();
  if (product === "") return undefined;
  const app = UA_ALIASES[product] ?? product;
  return app in FREE_TIER ? app : undefined;
}

/** A uniform integer in `0..max` (inclusive) from `random`. */
export function randomInt(random: Random, max: number): number {
  const range = max + 1;
  const limit = Math.floor(0x1_0000_0000 / range) * range;
  let x = 0;
  for (let i = 0; i < 64; i++) {
    const b = random.bytes(4);
    x = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
    // rejection sampling keeps the draw uniform
    if (x < limit) break;
  }
  return x % range;
}

/** A uniform number in `[0, 1)` from `random`. */
export function randomFraction(random: Random): number {
  const b = random.bytes(4);
  return (((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0) / 0x1_0000_0000;
}

/** True when a draw from `0..users` lands above `allowed` (only possible when exceeded). */
function exceededDraw(random: Random, users: number, allowed: number): boolean {
  if (users <= allowed) return false;
  return randomInt(random, users) > allowed;
}

/** Refusal probability `d` whole days after expiry (0 on the expiry day). */
export function expiredRefusalProbability(days: number): number {
  return days <= 0 ? 0 : 0.2 + 0.3 * (days - 14) / 30;
}

/** Re-verifies a stored subscription's signature; throws the §3.3 errors. */
export async function verifyStoredSubscription(
  deps: Deps,
  sub: StoredSubscription,
): Promise<void> {
  const key = await loadVendorKey(deps.config.subscriptions.keyDir, sub.by_name, deps.clock.now());
  if (!key) {
    deps.log.warn("Subscription key not found or unreadable", {
      application: sub.application,
      vendor: sub.by_name.split(/\s+/)[0] ?? "",
    });
    throw subscriptionError(VERIFY_FAILED, sub.application);
  }
  const result = await verifySignatureMemo(
    key,
    signedMessage(signedValuesOf(sub)),
    sub.signature,
  );
  if (result === "malformed") throw subscriptionError(VERIFY_FAILED, sub.application);
  if (result === "mismatch") throw subscriptionError(SIGNATURE_MISMATCH, sub.application);
}

/**
 * The check of spec 06 §5.3 for one application: resolves when the request
 * may pass, throws a SubscriptionError (code 101) when it is refused.
 * Applications without a free-tier entry are not metered.
 */
export async function checkSubscription(
  deps: Deps,
  application: string,
  options: { maxFree?: number } = {},
): Promise<void> {
  const free = options.maxFree ?? FREE_TIER[application.toLowerCase()];
  if (free === undefined) return;
  const subs = await store.meteredSubscriptions(deps.db, application);
  if (subs.length === 0) {
    const users = await store.activeTokenUsers(deps.db);
    if (exceededDraw(deps.random, users, free)) {
      throw subscriptionError(NO_SUBSCRIPTION, application);
    }
    return;
  }
  const sub = subs[0];
  const now = deps.clock.now();
  if (sub.date_till < now) {
    // expired: soft refusal growing with the days since expiry; signature and users unchecked
    const days = Math.floor((now - sub.date_till) / DAY_MS);
    if (randomFraction(deps.random) < expiredRefusalProbability(days)) {
      throw subscriptionError(EXPIRED, application);
    }
    return;
  }
  await verifyStoredSubscription(deps, sub);
  const users = await store.activeTokenUsers(deps.db);
  if (exceededDraw(deps.random, users, sub.num_tokens)) {
    throw subscriptionError(EXCEEDED, application);
  }
}

/** Outcome of metering one request from a client component. */
export interface MeterResult {
  /** The metered application. */
  application: string;
  /** Set when the check refused the request (what enforce mode raises). */
  refusal?: SubscriptionError;
}

/**
 * Meters a request by its User-Agent. Undefined for clients that are not
 * metered (browsers, unknown tools, the Authenticator App) and when
 * `subscriptions.mode` is `off`. Never throws a SubscriptionError itself: the
 * caller decides between enforcing and warning.
 */
export async function meterClientRequest(
  deps: Deps,
  userAgent: string | null | undefined,
): Promise<MeterResult | undefined> {
  if (deps.config.subscriptions.mode === "off") return undefined;
  const application = meteredApplication(userAgent);
  if (application === undefined) return undefined;
  try {
    await checkSubscription(deps, application);
    return { application };
  } catch (err) {
    if (err instanceof SubscriptionError) return { application, refusal: err };
    throw err;
  }
}

/**
 * The WebUI's soft status (spec 06 §5.4) for `component`: 0 within the free
 * tier, 1 over it without a subscription, 2 when the check fails, 3 OK.
 * Counts assigned active tokens (of `tokenType` if given), not users.
 */
export async function subscriptionStatus(
  deps: Deps,
  component = "privacyidea",
  options: { tokenType?: string } = {},
): Promise<0 | 1 | 2 | 3> {
  const count = await store.countActiveAssignedTokens(deps.db, options.tokenType);
  if (count <= (FREE_TIER[component.toLowerCase()] ?? 50)) return 0;
  const subs = await store.findSubscriptions(deps.db, component);
  if (subs.length === 0) return 1;
  try {
    await checkSubscription(deps, component);
  } catch (err) {
    if (err instanceof SubscriptionError) return 2;
    throw err;
  }
  return 3;
}
