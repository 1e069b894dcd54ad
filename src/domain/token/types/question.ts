/**
 * `question`: answers to questions (spec 11 §10). Each answer is tokeninfo
 * under its question text, stored encrypted (`type` "password"). A correct
 * PIN triggers a challenge with a random question not yet asked in this
 * series; policy `question_number` (1–30) asks that many in a row, each
 * right intermediate answer bringing the next question (new transaction).
 *
 * @module
 */
import { missingParameter, ParameterError, TokenAdminError } from "../../../errors.ts";
import { decryptSecretText, safeEqual } from "../../../lib/crypto.ts";
import { challengeValidity } from "../../challenge/mod.ts";
import { intPolicy, randomPosition, validUntil } from "./_challenge.ts";
import type { OtpCheck, TokenType, TypeCheckContext, TypeInitContext } from "./token_type.ts";

const MAX_QUESTION = 255;
const MAX_ANSWER = 2000;
// tokeninfo keys that mean something else: a question may not take their place
const RESERVED_KEYS = new Set([
  "tokenkind",
  "creation_date",
  "hashlib",
  "timeStep",
  "timeWindow",
  "timeShift",
  "count_auth",
  "count_auth_max",
  "count_auth_success",
  "count_auth_success_max",
  "validity_period_start",
  "validity_period_end",
  "last_auth",
  "failcounter_exceeded",
  "next_pin_change",
  "otp1c",
  "dueDate",
]);

function questionsParam(ctx: TypeInitContext): Record<string, string> {
  let raw = ctx.params.questions;
  if (raw === undefined || raw === null || raw === "") throw missingParameter("questions");
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw new ParameterError('Cannot parse parameter "questions": expected a JSON object');
    }
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ParameterError('Cannot parse parameter "questions": expected a JSON object');
  }
  const out: Record<string, string> = {};
  for (const [question, answer] of Object.entries(raw as Record<string, unknown>)) {
    const q = question.trim();
    if (
      q === "" || q.length > MAX_QUESTION || RESERVED_KEYS.has(q) || q.endsWith(".type") ||
      // deno-lint-ignore no-control-regex
      /[\x00-\x1f\x7f]/.test(q)
    ) {
      throw new ParameterError(`Cannot use question "${q.slice(0, 50)}"`);
    }
    if (typeof answer !== "string" || answer === "" || answer.length > MAX_ANSWER) {
      throw new ParameterError(
        `Cannot parse parameter "questions": bad answer to "${q.slice(0, 50)}"`,
      );
    }
    out[q] = answer;
  }
  return out;
}

/** The question texts of a token (its encrypted tokeninfo entries). */
function questionsOf(ctx: TypeCheckContext): string[] {
  return Object.entries(ctx.token.info).filter(([, e]) => e.type === "password").map(([k]) => k)
    .sort();
}

/** The `question` type. */
export const QUESTION: TokenType = {
  type: "question",
  prefix: "QUST",
  authenticates: true,
  challenge: true,
  challengeOnly: true,
  init(ctx) {
    const questions = questionsParam(ctx);
    const needed = intPolicy(ctx.system.get("question.num_answers", "5"), 5, 0, 1000);
    if (Object.keys(questions).length < needed) {
      throw new TokenAdminError(`You need to provide at least ${needed} answers.`);
    }
    return {
      info: { tokenkind: "software" },
      secretInfo: questions,
      // a re-enrolment replaces the questions: the old ones go
      ownsInfo: (_key, entry) => entry.type === "password",
    };
  },
  checkOtp() {
    // challenge-only: the question exists only in a challenge
    return { isValid: false };
  },
  createChallenge(ctx) {
    const all = questionsOf(ctx);
    if (all.length === 0) return Promise.resolve({ failed: "The token has no questions." });
    const round = ctx.round ?? {};
    const total = typeof round.total === "number"
      ? round.total
      : intPolicy(ctx.policy("question_number"), 1, 1, 30);
    const done = typeof round.done === "number" ? round.done : 0;
    let asked = Array.isArray(round.asked) ? round.asked.filter((q) => all.includes(q)) : [];
    let open = all.filter((q) => !asked.includes(q));
    // every question was asked in this series: they are asked again
    if (open.length === 0) {
      asked = [];
      open = all;
    }
    const question = open[randomPosition(ctx.deps.random, open.length) - 1];
    const validity = challengeValidity(ctx.system, "question");
    return Promise.resolve({
      message: question,
      data: { question, asked: [...asked, question], done, total },
      extras: { attributes: { valid_until: validUntil(ctx.nowMs, validity) } },
      validity,
    });
  },
  checkAnswer(ctx, answer, data): OtpCheck {
    const question = typeof data.question === "string" ? data.question : "";
    const entry = ctx.token.info[question];
    if (!entry || entry.type !== "password") return { isValid: false };
    let expected: string;
    try {
      expected = decryptSecretText(ctx.deps.keys.token, entry.value);
    } catch {
      return { isValid: false };
    }
    if (!safeEqual(answer, expected)) return { isValid: false };
    const done = (typeof data.done === "number" ? data.done : 0) + 1;
    const total = typeof data.total === "number" ? data.total : 1;
    if (done < total) {
      return { isValid: true, nextRound: { done, total, asked: data.asked } };
    }
    return { isValid: true };
  },
};
