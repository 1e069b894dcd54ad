/**
 * `indexedsecret`: a shared secret text; a challenge asks for the characters
 * at some 1-based positions (spec 11 §9). The secret is the token secret
 * (encrypted at rest). Challenge-only: a correct PIN triggers the challenge,
 * the answer is the characters in the asked order. With tokeninfo
 * `multichallenge` one position is asked per round until
 * `indexedsecret_count` answers were right. The transaction is used up by
 * its answer, so a drawn set of positions is answered once.
 *
 * @module
 */
import { ParameterError, ValidateError } from "../../../errors.ts";
import { safeEqual } from "../../../lib/crypto.ts";
import { toHex } from "../../../lib/random.ts";
import { getUserInfo } from "../_users.ts";
import { param } from "./_oath.ts";
import { firstValue, intPolicy, randomPosition, validUntil } from "./_challenge.ts";
import { infoValue, type OtpCheck, type TokenType } from "./token_type.ts";

/** Default message; `{0!s}` stands for the positions, comma-joined. */
export const INDEXEDSECRET_CHALLENGE_TEXT = "Please enter the positions {0!s} from your secret.";
const VALIDITY = 120;
const MAX_SECRET = 1000;
const MAX_POSITIONS = 100;

function characters(secret: Uint8Array): string[] {
  return Array.from(new TextDecoder().decode(secret));
}

function positionsOf(data: Record<string, unknown>, length: number): number[] | undefined {
  const list = data.positions;
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const ok = list.every((p) => Number.isInteger(p) && p >= 1 && p <= length);
  return ok ? list as number[] : undefined;
}

/** The `indexedsecret` type. */
export const INDEXEDSECRET: TokenType = {
  type: "indexedsecret",
  prefix: "PIIX",
  authenticates: true,
  challenge: true,
  challengeOnly: true,
  async init(ctx) {
    const attribute = ctx.policies?.indexedsecret_force_attribute;
    let secret: string;
    if (attribute) {
      // the policy forces the secret to a user attribute's value
      if (!ctx.owner) {
        throw new ParameterError(
          `The secret is taken from the user attribute "${attribute}": the token needs a user`,
        );
      }
      secret = firstValue((await getUserInfo(ctx.deps, ctx.owner))[attribute]);
      if (secret === "") {
        throw new ParameterError(`The user attribute "${attribute}" is empty`);
      }
    } else {
      // the literal text, not hex; without one, 40 hex characters are generated
      secret = param(ctx, "otpkey") ?? "";
      if (secret === "") secret = toHex(ctx.deps.random.bytes(20));
    }
    // deno-lint-ignore no-control-regex
    if (secret.length > MAX_SECRET || /[\x00-\x1f\x7f]/.test(secret)) {
      throw new ParameterError(
        `Cannot parse parameter "otpkey": at most ${MAX_SECRET} printable characters`,
      );
    }
    return {
      secret: new TextEncoder().encode(secret),
      info: { tokenkind: "software" },
      detail: { otpkey: { description: "OTP seed", value: `seed://${secret}`, img: "" } },
    };
  },
  checkOtp() {
    // challenge-only: positions exist only in a challenge
    return { isValid: false };
  },
  createChallenge(ctx) {
    const chars = characters(ctx.secret);
    if (chars.length === 0) {
      throw new ValidateError(
        "The indexedsecret token has an empty secret and can not be used for authentication.",
      );
    }
    const isMultiRound = infoValue(ctx.token.info, "multichallenge") !== "";
    const round = ctx.round ?? {};
    const total = typeof round.total === "number"
      ? round.total
      : intPolicy(ctx.policy("indexedsecret_count"), 2, 1, MAX_POSITIONS);
    const done = typeof round.done === "number" ? round.done : 0;
    const count = isMultiRound ? 1 : total;
    const positions = Array.from(
      { length: count },
      () => randomPosition(ctx.deps.random, chars.length),
    );
    const text = ctx.policy("indexedsecret_challenge_text") ?? INDEXEDSECRET_CHALLENGE_TEXT;
    const joined = positions.join(",");
    return Promise.resolve({
      message: text.replaceAll("\\,", ",").replaceAll("{0!s}", joined).replaceAll("{0}", joined),
      data: { positions, done, total, isMultiRound },
      extras: {
        attributes: {
          state: null,
          random_positions: positions,
          valid_until: validUntil(ctx.nowMs, VALIDITY),
        },
      },
      validity: VALIDITY,
    });
  },
  checkAnswer(ctx, answer, data): OtpCheck {
    const chars = characters(ctx.secret);
    const positions = positionsOf(data, chars.length);
    if (!positions) return { isValid: false };
    const expected = positions.map((p) => chars[p - 1]).join("");
    if (!safeEqual(answer, expected)) return { isValid: false };
    const done = (typeof data.done === "number" ? data.done : 0) + 1;
    const total = typeof data.total === "number" ? data.total : 1;
    if (data.isMultiRound === true && done < total) {
      return { isValid: true, nextRound: { done, total } };
    }
    return { isValid: true };
  },
};
