/**
 * Challenge-response (spec 02 §7): challenges with a shared 20-digit
 * transaction id and an expiry, stored in the database.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { randomDigits } from "../../lib/random.ts";
import type { SystemConfig } from "../system_config/mod.ts";
import type { PendingCommits } from "../../db/direct.ts";
import * as store from "./challenge_store.ts";

export type { ChallengeRow } from "./challenge_store.ts";

/** Default challenge message (with its trailing space). */
export const DEFAULT_CHALLENGE_TEXT = "please enter otp: ";

/** A new 20-digit transaction id. */
export function newTransactionId(deps: Deps): string {
  return randomDigits(deps.random, 20);
}

/** Seconds a challenge of `type` stays valid (`<Type>ChallengeValidityTime` or the default). */
export function challengeValidity(system: SystemConfig, type: string): number {
  const specific = `${type.charAt(0).toUpperCase()}${type.slice(1)}ChallengeValidityTime`;
  const v = Number.parseInt(system.get(specific, ""), 10);
  return Number.isFinite(v) && v > 0 ? v : system.int("DefaultChallengeValidityTime");
}

/** One challenge to create. */
export interface NewChallenge {
  serial: string;
  type: string;
  message: string;
  data?: string;
  /** The challenge value itself where the type has one (a WebAuthn nonce), else "". */
  challenge?: string;
  /** Seconds it stays valid; undefined: {@link challengeValidity} of its type. */
  validity?: number;
  /** The challenge's session (e.g. `enrollment`); default "". */
  session?: string;
}

/** One entry of `detail.multi_challenge`. */
export type MultiChallengeEntry = Record<string, unknown> & {
  transaction_id: string;
  serial: string;
  type: string;
  client_mode: string;
  message: string;
};

/**
 * Creates challenges under one new transaction id (one INSERT) and returns the
 * `detail` keys of spec 02 §7.
 */
export async function createChallenges(
  deps: Deps,
  system: SystemConfig,
  challenges: NewChallenge[],
  options: {
    preferredClientMode?: string;
    extras?: Record<string, Record<string, unknown>>;
    /** The transaction id drawn beforehand (the types' challenges name it); default: a new one. */
    transactionId?: string;
  } = {},
): Promise<{ transactionId: string; detail: Record<string, unknown> }> {
  const transactionId = options.transactionId ?? newTransactionId(deps);
  const now = deps.clock.now();
  // expired challenges of these tokens are of no use any more
  await store.deleteExpired(deps.db, now, challenges.map((c) => c.serial));
  await store.insertChallenges(
    deps.db,
    challenges.map((c) => ({
      transaction_id: transactionId,
      serial: c.serial,
      data: c.data ?? "",
      challenge: c.challenge ?? "",
      session: c.session ?? "",
      created_at: now,
      expires_at: now + (c.validity ?? challengeValidity(system, c.type)) * 1000,
    })),
  );
  const multi: MultiChallengeEntry[] = challenges.map((c) => ({
    transaction_id: transactionId,
    serial: c.serial,
    type: c.type,
    client_mode: "interactive",
    message: c.message,
    ...(options.extras?.[c.serial] ?? {}),
  }));
  return { transactionId, detail: challengeDetail(multi, options.preferredClientMode) };
}

/** The §7 detail keys for a list of multi_challenge entries. */
export function challengeDetail(
  multi: MultiChallengeEntry[],
  preferredClientMode = "interactive",
): Record<string, unknown> {
  const messages = [...new Set(multi.map((m) => m.message))];
  const last = multi[multi.length - 1];
  const detail: Record<string, unknown> = {
    multi_challenge: multi,
    messages,
    message: messages.join(", "),
    transaction_ids: [...new Set(multi.map((m) => m.transaction_id))],
  };
  if (last) {
    detail.transaction_id = last.transaction_id;
    detail.serial = last.serial;
    detail.type = last.type;
    detail.client_mode = last.client_mode;
    detail.preferred_client_mode = preferredClientMode;
    // a type's extras are also copied to the top level (spec 11 §0.2, deprecated but read)
    for (const key of ["attributes", "image"]) if (key in last) detail[key] = last[key];
  }
  return detail;
}

/** Non-expired challenges of a transaction for some serials. */
export async function openChallenges(
  deps: Deps,
  transactionId: string,
  serials: string[],
): Promise<store.ChallengeRow[]> {
  const now = deps.clock.now();
  return (await store.findByTransaction(deps.db, transactionId, serials))
    .filter((c) => c.expiresAt >= now);
}

/** All challenges of a transaction (expired ones included). */
export async function challengesOfTransaction(
  deps: Deps,
  transactionId: string,
  serials?: string[],
): Promise<store.ChallengeRow[]> {
  return await store.findByTransaction(deps.db, transactionId, serials);
}

/**
 * Closes a transaction for its answer and returns the serials of the open
 * (unexpired) challenges this call removed. One statement removes all of the
 * transaction's challenges, so of parallel calls for one transaction only one
 * gets any serial: a caller that finds its token's serial here has answered
 * the challenge, any other answered nothing. With `pending`, the write's
 * commit is added there (the caller's OTP counter write shares it).
 */
export async function consumeTransaction(
  deps: Deps,
  transactionId: string,
  pending?: PendingCommits,
): Promise<string[]> {
  const now = deps.clock.now();
  const removed = await store.deleteTransaction(deps.db, transactionId, pending);
  return removed.filter((c) => c.expiresAt >= now).map((c) => c.serial);
}

/** Deletes the challenges of tokens (when they are deleted). */
export async function deleteChallengesOf(deps: Deps, serials: string[]): Promise<void> {
  await store.deleteBySerials(deps.db, serials);
}

/** Marks a transaction's challenges answered (out-of-band confirmation, e.g. push). */
export async function markAnswered(
  deps: Deps,
  transactionId: string,
  serial?: string,
): Promise<number> {
  return await store.markAnswered(deps.db, transactionId, serial);
}

/**
 * `GET /validate/polltransaction`: `accept` if a non-expired challenge of the
 * transaction was answered, else `pending` (also for unknown ids).
 */
export async function pollTransaction(
  deps: Deps,
  transactionId: string,
): Promise<{ isAnswered: boolean; status: "accept" | "declined" | "pending" }> {
  const now = deps.clock.now();
  const rows = (await store.findByTransaction(deps.db, transactionId))
    .filter((c) => c.expiresAt >= now);
  const isAnswered = rows.some((c) => c.isAnswered);
  if (isAnswered) return { isAnswered, status: "accept" };
  // a push challenge the app declined (spec 13 §1.10)
  const isDeclined = rows.some((c) => c.session === DECLINED_SESSION);
  return { isAnswered, status: isDeclined ? "declined" : "pending" };
}

/** The session of a challenge the user declined in the app. */
export const DECLINED_SESSION = "challenge_declined";

/** Every challenge of a token (expired ones included), oldest first. */
export async function challengesOfSerial(
  deps: Deps,
  serial: string,
): Promise<store.ChallengeRow[]> {
  return await store.findAllOfSerial(deps.db, serial);
}

/**
 * Marks one open challenge answered or declined; a challenge already answered
 * or declined stays as it is (false).
 */
export async function settleChallenge(
  deps: Deps,
  id: number,
  outcome: "answered" | "declined",
): Promise<boolean> {
  const change = outcome === "answered"
    ? { answered: true as const }
    : { session: DECLINED_SESSION };
  return await store.settleOpenChallenge(deps.db, id, change, DECLINED_SESSION);
}

/** `DELETE /token/challenges/expired`: deletes every challenge that has expired; how many. */
export async function deleteExpiredChallenges(deps: Deps): Promise<number> {
  return await store.deleteExpired(deps.db, deps.clock.now());
}

/** Deletes the expired challenges of some tokens; how many. */
export async function deleteExpiredChallengesOf(deps: Deps, serials: string[]): Promise<number> {
  return await store.deleteExpired(deps.db, deps.clock.now(), serials);
}

/**
 * Replaces the data of an open challenge (neither answered nor declined) that
 * still holds `oldData`; false when another request changed it first.
 */
export async function replaceChallengeData(
  deps: Deps,
  id: number,
  oldData: string,
  newData: string,
): Promise<boolean> {
  return await store.replaceOpenChallengeData(deps.db, id, oldData, newData, DECLINED_SESSION);
}

/** True if the unexpired challenge of `serial` with challenge value `nonce` was answered. */
export async function isAnsweredNonce(
  deps: Deps,
  serial: string,
  nonce: string,
): Promise<boolean> {
  return await store.isAnsweredChallenge(deps.db, serial, nonce, deps.clock.now());
}

/**
 * `GET /token/challenges/`: challenges (optionally of one serial), paged;
 * `realms` limits them to tokens of those realms (realm-limited admins).
 */
export async function listChallenges(
  deps: Deps,
  serial: string | undefined,
  options: { page?: number; pagesize?: number; realms?: string[] } = {},
): Promise<
  {
    challenges: Record<string, unknown>[];
    count: number;
    current: number;
    prev: number | null;
    next: number | null;
  }
> {
  const page = Math.max(1, options.page ?? 1);
  const size = Math.max(1, options.pagesize ?? 15);
  const { rows, total } = await store.findBySerial(deps.db, serial, {
    offset: (page - 1) * size,
    limit: size,
    realms: options.realms,
  });
  const now = deps.clock.now();
  return {
    challenges: rows.map((c) => ({
      id: c.id,
      transaction_id: c.transactionId,
      serial: c.serial,
      timestamp: new Date(c.createdAt).toISOString(),
      expiration: new Date(c.expiresAt).toISOString(),
      otp_received: c.receivedCount > 0 || c.isAnswered,
      otp_status: c.isAnswered,
      received_count: c.receivedCount,
      data: "",
      challenge: c.challenge,
      valid: c.expiresAt >= now,
    })),
    count: total,
    current: page,
    prev: page > 1 ? page - 1 : null,
    next: page * size < total ? page + 1 : null,
  };
}
