/**
 * What every step of a check shares: the request as the client sent it, the
 * result it answers with (the facts the audit records), and the per-check
 * context, made once when the request's objects are resolved.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { PolicyError } from "../../errors.ts";
import { PendingCommits } from "../../db/direct.ts";
import type { SystemConfig } from "../system_config/mod.ts";
import type { TokenWithInfo, UserRef } from "../token/mod.ts";
import type { ConditionData } from "../policy/mod.ts";
import type { FidoAnswer } from "../token/types/_fido.ts";
import type { ClientQuestion, SignedAnswer } from "../token/types/mod.ts";
import type { PasskeyRegistration } from "./_enrol_passkey.ts";
import type { ValidatePolicies } from "./policy.ts";

/** Input of `validateCheck`. */
export interface CheckRequest {
  user?: string;
  realm?: string;
  resolver?: string;
  serial?: string;
  pass: string;
  /** `transaction_id` or its alias `state`. */
  transactionId?: string;
  otponly?: boolean;
  type?: string;
  /** `service_id`: the service an application-specific password (applspec) is for. */
  serviceId?: string;
  clientIp: string;
  userAgent: string;
  /** The question the client chose for an OCRA challenge (`challenge`, spec 14 §3.3). */
  clientQuestion?: ClientQuestion;
  /** A WebAuthn/passkey assertion: the request goes the FIDO way (spec 11 §4.4). */
  fido?: FidoAnswer;
  /** A U2F key's signed answer (`clientdata`, `signaturedata`) to a challenge (spec 14 §8.2). */
  signedAnswer?: SignedAnswer;
  /** Step 2 of a passkey enrolment via multichallenge (spec 11 §5.4). */
  passkeyRegistration?: PasskeyRegistration;
  /** `cancel_enrollment`: drops the enrolment via multichallenge of the transaction. */
  isCancelEnrolment?: boolean;
  /**
   * The password check of a WebUI login (`login_mode=privacyIDEA`): no
   * enrolment via multichallenge, whose challenge that login cannot answer.
   */
  isWebuiLogin?: boolean;
  /**
   * The API key the request carries, checked only when `api_key_required`
   * matches. Set by the `/validate/*` routes; callers that are no HTTP API
   * (the RADIUS listener, `/auth`) leave it out and are not asked for one.
   */
  apiKey?: ApiKeyCheck;
  /**
   * Told the serials of the user's tokens once they are loaded, before they
   * are checked: a request that fails later (the database goes away) is
   * audited with the tokens it was about.
   */
  onTokens?: (serials: string[]) => void;
  /**
   * The request's own policy condition data (headers, environment, parameters), set by the
   * HTTP routes; the policies add the user and the token the request is about.
   */
  conditions?: ConditionData;
  /**
   * The caller's pending commits (the HTTP request's): a check of a user or serial adds its
   * writes there and leaves them for the caller, who settles them before it answers (with the
   * request's audit row, in one commit). Without it the check settles them itself.
   */
  writes?: PendingCommits;
}

/** What the request's API key is: a valid validate JWT, another valid JWT, or nothing valid. */
export type ApiKeyStatus = "valid" | "not-api-key" | "invalid";

/** Reads and verifies the request's API key (called only when a policy asks for one). */
export type ApiKeyCheck = () => Promise<ApiKeyStatus>;

/** Outcome of a check: `result.value` and `detail`, and what the audit records of it. */
export interface CheckResult {
  value: boolean;
  detail: Record<string, unknown>;
  /** Serial of the token that decided (audit). */
  serial?: string;
  tokenType?: string;
  /**
   * Every token that authenticated (value true): the authorization rules on
   * the token (`serial`, `tokentype`, `tokeninfo`) apply to each of them.
   */
  tokens?: TokenWithInfo[];
  /** The user the request was about (resolved), for audit and attributes. */
  user?: UserRef;
  /** Login and realm as requested (also when the user is unknown). */
  login?: string;
  realm?: string;
  /** Names of the authentication/authorization policies that applied (audit). */
  policies?: string[];
  /** The audit's info when the detail does not tell it (a message hidden from the client). */
  auditInfo?: string;
}

/**
 * One check, resolved once before anything is decided: the request, its
 * user and token, the policies matched on exactly these, one reading of the
 * clock, and the commits of its writes. Every step reads it; none resolves
 * the request's objects again.
 */
export interface CheckContext {
  readonly deps: Deps;
  readonly system: SystemConfig;
  /** The request as the client sent it (after `mangle`): pass, transaction, client, agent. */
  readonly request: CheckRequest;
  /** Login and realm as the request names them ("" when it names no user). */
  readonly login: string;
  readonly realm: string;
  /** The user the check is about: the one the request names, else the token's owner. */
  user?: UserRef;
  /** The token the request names by serial (an ownerless one with its realms). */
  readonly token?: TokenWithInfo;
  /** The policy snapshot: the validate policies matched on this user and token. */
  readonly policies: ValidatePolicies;
  /** The time of the check (one reading of the clock). */
  readonly now: number;
  /** Commits of this check's hot-path writes, settled before it answers. */
  readonly pending: PendingCommits;
}

/** The resolved parts of a {@link CheckContext} (the rest is made by {@link newCheckContext}). */
export type CheckObjects = Omit<CheckContext, "deps" | "now" | "pending">;

/** A check's context: its objects, the clock read now, and its pending commits (none yet). */
export function newCheckContext(
  deps: Deps,
  objects: CheckObjects,
  pending: PendingCommits = new PendingCommits(),
): CheckContext {
  return { deps, ...objects, now: deps.clock.now(), pending };
}

/** A success with only a message (the pass-on and passthru policies). */
export function ok(message: string): CheckResult {
  return { value: true, detail: { message } };
}

/** Reads a token-type authentication action; throws the PolicyError of a conflict. */
export function typePolicy(policies: ValidatePolicies): (action: string) => string | undefined {
  const actions = policies.typeActions;
  return (action) => {
    const found = actions[action];
    if (found && "conflict" in found) throw new PolicyError(found.conflict);
    return found?.value;
  };
}
