/**
 * The token model shared by the token domain, its type modules and validate.
 *
 * @module
 */

/** A user reference (same shape as the user domain's `UserRef`). */
export interface UserRef {
  login: string;
  realm: string;
  resolver: string;
  uid: string;
}

/** A token as stored (secrets stay encrypted; never returned to clients). */
export interface Token {
  id: number;
  serial: string;
  type: string;
  description: string;
  active: boolean;
  revoked: boolean;
  locked: boolean;
  failcount: number;
  maxfail: number;
  count: number;
  countWindow: number;
  syncWindow: number;
  otplen: number;
  rolloutState: string;
  /** AES-256-GCM encrypted secret ("" when the type has none). */
  keyEnc: string;
  /** Keyed PIN hash ("" = empty PIN). */
  pinHash: string;
  /** Owner, undefined when unassigned. */
  owner: UserRef | undefined;
  createdAt: number;
}

/** One tokeninfo entry; `type` "password" marks an encrypted value. */
export interface InfoEntry {
  value: string;
  type: string;
}

/** Tokeninfo of one token by key. */
export type TokenInfo = Record<string, InfoEntry>;

/** A token together with its info and realms. */
export interface TokenWithInfo extends Token {
  info: TokenInfo;
  realms: string[];
}
