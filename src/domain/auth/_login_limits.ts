/**
 * Login limits per client address (config `auth.login_*`): how many logins of
 * one address may be in progress at once, and how many may fail within a
 * window. They never lock an account: another address can still log in as
 * the same user.
 *
 * The counts are per process (in memory, bounded): with several nodes behind a
 * load balancer an address gets the limits on each node. They are a brake on
 * guessing and flooding, not a correctness rule, so they need no database.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { TooManyRequestsError } from "../../errors.ts";
import { type Admission, AttemptLimiter } from "../../lib/attempt_limiter.ts";
import { parseIp } from "../../lib/ip.ts";

/** Client addresses tracked at most (about 100 bytes each); then expired and oldest go. */
const MAX_TRACKED_ADDRESSES = 10_000;

// one limiter per database: per server process in production, per test app in tests
const limiters = new WeakMap<object, AttemptLimiter>();

function limiterOf(deps: Deps): AttemptLimiter {
  let limiter = limiters.get(deps.db);
  if (limiter === undefined) {
    const auth = deps.config.auth;
    limiter = new AttemptLimiter({
      maxFailures: auth.loginFailures,
      windowMs: auth.loginFailureWindow * 1000,
      maxPending: auth.loginParallel,
      maxKeys: MAX_TRACKED_ADDRESSES,
    });
    limiters.set(deps.db, limiter);
  }
  return limiter;
}

/**
 * The key an address is counted under: an IPv4 address as it is, an IPv6
 * address by its /64 (one host usually holds a whole /64, so counting single
 * addresses would give it 2^64 budgets).
 */
export function clientKeyOf(clientIp: string): string {
  const addr = parseIp(clientIp);
  if (addr === undefined) return clientIp;
  if (addr.kind() === "ipv4") return addr.toString();
  return addr.toNormalizedString().split(":").slice(0, 4).join(":") + "::/64";
}

/** An admitted login: call `finish` once with whether it failed. */
export type LoginAttempt = Extract<Admission, { allowed: true }>;

/**
 * Admits a login from `clientIp` or throws {@link TooManyRequestsError} (429)
 * when the address has used up its failures or has too many logins running.
 */
export function beginLogin(deps: Deps, clientIp: string): LoginAttempt {
  const key = clientKeyOf(clientIp);
  const admission = limiterOf(deps).begin(key, deps.clock.now());
  if (admission.allowed) return admission;
  deps.log.warn("Login refused: limit of the client address reached", {
    client: key,
    reason: admission.reason,
  });
  if (admission.reason === "failures") {
    const seconds = Math.max(1, Math.ceil(admission.retryAfterMs / 1000));
    throw new TooManyRequestsError(
      `Cannot log in: too many failed logins from "${clientIp}", try again in ${seconds} seconds`,
    );
  }
  throw new TooManyRequestsError(
    `Cannot log in: too many logins from "${clientIp}" at once, try again in a few seconds`,
  );
}
