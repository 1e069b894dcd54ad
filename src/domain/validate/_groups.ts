/**
 * The groups a token-list check sorts its tokens into (spec 02 §6.2 step 4)
 * and the transaction a pass answers.
 *
 * @module
 */
import type { TokenWithInfo } from "../token/mod.ts";
import type { ChallengeRow } from "../challenge/mod.ts";
import type { OtpCheck } from "../token/types/mod.ts";

/** The challenges stored under the request's `transaction_id` (spec 02 §6.2 step 3). */
export interface Transaction {
  id: string;
  /** Every challenge of the transaction for the tokens checked, expired ones included. */
  stored: ChallengeRow[];
}

/** A right answer to a challenge, not yet accepted: the transaction decides. */
export interface RightAnswer {
  token: TokenWithInfo;
  check: OtpCheck;
}

/**
 * The groups of spec 02 §6.2 step 4, filled while classifying the tokens,
 * and the transaction the pass answers (if the request names one).
 */
export interface Groups {
  readonly tx?: Transaction;
  stateMessages: Set<string>;
  valid: TokenWithInfo[];
  /** Tokens with a challenge in the transaction, whether the answer was right or not. */
  responded: TokenWithInfo[];
  rightAnswers: RightAnswer[];
  challengeRequests: TokenWithInfo[];
  challengeOverrides: Record<string, { message: string; data: string }>;
  /** Radius tokens whose upstream server challenged again while answering (spec 08 §3.3). */
  reChallenged: TokenWithInfo[];
  pinMatching: TokenWithInfo[];
  invalid: TokenWithInfo[];
  /** The OTP of a single PIN-matching token was its previous one. */
  isPreviousOtp: boolean;
}
