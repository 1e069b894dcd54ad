/**
 * Subscriptions (spec 06): upload of vendor-signed files, listing with the
 * computed usage state, deletion, and the runtime check for client components.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  parseSubscriptionFile,
  SIGNATURE_MISMATCH,
  signedValuesOf,
  subscriptionError,
  VERIFY_FAILED,
} from "./file.ts";
import { isoDay, loadVendorKey, signedMessage, verifySignature } from "./signature.ts";
import * as store from "./subscription_store.ts";
import { subscriptionStatus } from "./runtime.ts";

export {
  checkSubscription,
  FREE_TIER,
  meterClientRequest,
  meteredApplication,
  type MeterResult,
  subscriptionStatus,
  UA_ALIASES,
} from "./runtime.ts";
export type { SubscriptionData } from "./file.ts";

const DAY_MS = 86_400_000;

/**
 * `POST /subscriptions/`: parses the file, verifies its signature with the
 * vendor key, refuses an already expired subscription, then creates the row or
 * replaces the one with exactly this application. Returns the row id.
 * Nothing is stored when any step fails.
 */
export async function uploadSubscription(deps: Deps, fileText: string): Promise<number> {
  const parsed = parseSubscriptionFile(fileText);
  if (!parsed.ok) {
    deps.log.warn("Subscription upload refused", { reason: parsed.reason });
    throw subscriptionError(VERIFY_FAILED, parsed.application);
  }
  const data = parsed.data;
  const now = deps.clock.now();
  const key = await loadVendorKey(deps.config.subscriptions.keyDir, data.by_name, now);
  if (!key) {
    deps.log.warn("Subscription upload refused: no usable vendor key", {
      application: data.application,
      vendor: data.by_name.trim().split(/\s+/)[0] ?? "",
    });
    throw subscriptionError(VERIFY_FAILED, data.application);
  }
  const result = await verifySignature(key, signedMessage(signedValuesOf(data)), data.signature);
  if (result === "malformed") throw subscriptionError(VERIFY_FAILED, data.application);
  if (result === "mismatch") throw subscriptionError(SIGNATURE_MISMATCH, data.application);
  if (data.date_till <= now) {
    throw subscriptionError(
      `The subscription expired on ${isoDay(data.date_till)} and cannot be uploaded.`,
      data.application,
    );
  }
  return await store.upsertSubscription(deps.db, data, now);
}

/** One entry of `GET /subscriptions/` (spec 06 §2 plus Tessera's extra keys). */
export type SubscriptionView = Record<string, string | number | boolean>;

/**
 * `GET /subscriptions/[<application>]`: every subscription (or those of one
 * application, ignoring case) with dates as HTTP-dates and the computed
 * `timedelta`, `active_tokens`, `active_users`, plus Tessera's `active`,
 * `days_left`, `users_in_use` and `users_allowed`.
 */
export async function listSubscriptions(
  deps: Deps,
  application?: string,
): Promise<SubscriptionView[]> {
  const subs = await store.findSubscriptions(deps.db, application);
  if (subs.length === 0) return [];
  // counted afresh for the admin (the runtime check reads the store's count, exact as well)
  const [activeTokens, activeUsers] = await Promise.all([
    store.countActiveAssignedTokens(deps.db),
    store.countActiveTokenUsers(deps.db),
  ]);
  const now = deps.clock.now();
  const today = Math.floor(now / DAY_MS);
  return subs.map((s) => ({
    id: s.id,
    application: s.application,
    for_name: s.for_name,
    for_address: s.for_address,
    for_email: s.for_email,
    for_phone: s.for_phone,
    for_url: s.for_url,
    for_comment: s.for_comment,
    by_name: s.by_name,
    by_email: s.by_email,
    by_address: s.by_address,
    by_phone: s.by_phone,
    by_url: s.by_url,
    date_from: new Date(s.date_from).toUTCString(),
    date_till: new Date(s.date_till).toUTCString(),
    num_users: s.num_users,
    num_tokens: s.num_tokens,
    num_clients: s.num_clients,
    level: s.level,
    signature: s.signature,
    // Python's timedelta.days: floor, negative while valid
    timedelta: Math.floor((now - s.date_till) / DAY_MS),
    active_tokens: activeTokens,
    active_users: activeUsers,
    active: s.date_from <= now && now < s.date_till,
    days_left: Math.floor(s.date_till / DAY_MS) - today,
    users_in_use: activeUsers,
    users_allowed: s.num_tokens,
  }));
}

/** `DELETE /subscriptions/<application>`: the deleted id, or -1 (exact-case match). */
export async function deleteSubscription(deps: Deps, application: string): Promise<number> {
  return await store.deleteSubscription(deps.db, application);
}

/**
 * The `/auth` WebUI keys of spec 06 §5.4: `subscription_status` (server) and
 * `subscription_status_push` (Authenticator App, push tokens only), codes 0–3.
 */
export async function webuiSubscriptionStatus(
  deps: Deps,
): Promise<{ subscription_status: number; subscription_status_push: number }> {
  return {
    subscription_status: await subscriptionStatus(deps, "privacyidea"),
    subscription_status_push: await subscriptionStatus(deps, "privacyidea authenticator", {
      tokenType: "push",
    }),
  };
}
