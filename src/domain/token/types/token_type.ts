/**
 * The interface every token type module implements. Modules are registered in
 * `types/mod.ts`, the one registry.
 *
 * @module
 */
import type { Deps } from "../../../deps.ts";
import type { SystemConfig } from "../../system/mod.ts";
import type { TokenInfo, TokenWithInfo } from "../model.ts";

/** Init parameters as received (flat map, typed JSON values or strings). */
export type InitParams = Record<string, unknown>;

/** What a type module gets to enrol (or re-enrol) a token. */
export interface TypeInitContext {
  deps: Deps;
  system: SystemConfig;
  serial: string;
  params: InitParams;
  /** The token being re-initialised, if the serial exists. */
  existing: TokenWithInfo | undefined;
}

/** What a type module decides at enrolment. */
export interface TypeInitResult {
  /** The secret to store encrypted (OTP key bytes, password bytes); undefined keeps the old one. */
  secret?: Uint8Array;
  otplen?: number;
  /** Plain tokeninfo to set. */
  info?: Record<string, string>;
  /** Tokeninfo to store encrypted (`type` "password"). */
  secretInfo?: Record<string, string>;
  /** Enrolment data for the response `detail` (beside serial/rollout_state). */
  detail?: Record<string, unknown>;
  rolloutState?: string;
  active?: boolean;
}

/** What a type module gets to check an OTP. */
export interface TypeCheckContext {
  deps: Deps;
  system: SystemConfig;
  token: TokenWithInfo;
  /** The decrypted secret (empty when the type has none). */
  secret: Uint8Array;
  nowMs: number;
}

/** Result of an OTP check. */
export interface OtpCheck {
  isValid: boolean;
  /**
   * Counter to store on success, written as a compare-and-set (`count < counter`)
   * so one OTP value never succeeds twice; undefined = no counter.
   */
  counter?: number;
  /** Tokeninfo to update on success (e.g. TOTP timeShift). */
  info?: Record<string, string>;
}

/** A token type module. */
export interface TokenType {
  /** Lower-case type name (`hotp`). */
  readonly type: string;
  /** Serial prefix (`OATH`). */
  readonly prefix: string;
  /** Description for `/auth/rights` and policy actions. */
  readonly description: string;
  /** Can answer `/validate/check` (false for sshkey). */
  readonly authenticates: boolean;
  /** Supports challenge-response (triggerchallenge, policy `challenge_response`). */
  readonly challenge: boolean;
  /** Challenge-only types (email, sms): a correct PIN always triggers a challenge. */
  readonly challengeOnly?: boolean;
  /** `pass` is the PIN only, no OTP part (spass). */
  readonly pinOnly?: boolean;
  /** The token deletes itself after one successful authentication (registration). */
  readonly deleteAfterSuccess?: boolean;
  /** Default `otplen` when the type does not set it. */
  readonly defaultOtplen?: number;
  /** Enrolment. */
  init(ctx: TypeInitContext): TypeInitResult | Promise<TypeInitResult>;
  /** Checks the OTP part of `pass`. */
  checkOtp(ctx: TypeCheckContext, otp: string): OtpCheck | Promise<OtpCheck>;
  /** True if `otp` is the value just before the current counter (message suffix). */
  isPreviousOtp?(ctx: TypeCheckContext, otp: string): boolean | Promise<boolean>;
  /** Resync with two consecutive OTPs; returns the counter to store or undefined. */
  resync?(ctx: TypeCheckContext, otp1: string, otp2: string): OtpCheck | Promise<OtpCheck>;
  /** The counter of `otp` inside the sync window, or −1 (auto-resync). */
  findInSyncWindow?(ctx: TypeCheckContext, otp: string): Promise<number>;
  /** Extra per-challenge data (message override, extras for multi_challenge). */
  challengeExtras?(ctx: TypeCheckContext): Record<string, unknown>;
  /** Tokeninfo keys this type hides from list output (never secrets, those are ciphertext). */
  readonly hiddenInfo?: readonly string[];
}

/** Reads tokeninfo value `key` or `fallback`. */
export function infoValue(info: TokenInfo, key: string, fallback = ""): string {
  return info[key]?.value ?? fallback;
}
