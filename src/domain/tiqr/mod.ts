/**
 * The TiQR app's side of a tiqr token (spec 14 §7): `/ttype/tiqr` answers the app's
 * metadata request, takes the secret it chose (enrolment), and checks its OCRA
 * response to a challenge (authentication). There is no login: the enrolment session
 * and the challenge's transaction id with the right response are the authentication.
 *
 * Stricter than privacyIDEA: the metadata (the user's login and name) is given only
 * for the token's open enrolment session; a secret must be 16 to 128 bytes of hex; of
 * parallel enrolments or answers only one succeeds; a token that cannot authenticate
 * (disabled, revoked, locked) answers no challenge, and one whose fail counter is at
 * its limit gets `INVALID_RESPONSE:0` without its response being checked; with several
 * tiqr tokens challenged in one transaction, the response is checked for each (privacyIDEA
 * checks the first only).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, ResourceNotFoundError } from "../../errors.ts";
import { decryptSecretText, encryptSecret, safeEqual } from "../../lib/crypto.ts";
import { ocraResponse } from "../../lib/ocra.ts";
import { otpEqual } from "../../lib/otp.ts";
import { fromHex } from "../../lib/random.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import { getUserInfo } from "../user/mod.ts";
import {
  findTokenBySerial,
  increaseFailcount,
  TOKEN_NOT_FOUND_MESSAGE,
  tokenSecret,
  type TokenWithInfo,
} from "../token/mod.ts";
import * as tokenStore from "../token/token_store.ts";
import {
  challengesOfTransaction,
  deleteExpiredChallengesOf,
  settleChallenge,
} from "../challenge/mod.ts";
import { TIQR_SESSION, tiqrSetting, tiqrSuiteOf } from "../token/types/tiqr.ts";

/** The actions of `/ttype/tiqr`, as privacyIDEA lists them in its error. */
const ACTIONS = ["metadata", "enrollment", "authentication"] as const;

/** What `/ttype/tiqr` answers: raw JSON (metadata) or plain text, and the token it was about. */
export type TiqrAnswer =
  | { kind: "json"; body: Record<string, unknown>; serial: string }
  | { kind: "plain"; text: string; serial: string; isSuccess: boolean };

function required(params: Record<string, string>, name: string): string {
  const v = params[name];
  if (v === undefined) throw new ParameterError(`Missing parameter: '${name}'`);
  return v;
}

async function tiqrToken(deps: Deps, serial: string): Promise<TokenWithInfo> {
  const token = await findTokenBySerial(deps, serial);
  if (token?.type !== "tiqr") throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  return token;
}

/** True if `given` is the token's open enrolment session. */
function isSession(deps: Deps, token: TokenWithInfo, given: string): boolean {
  const stored = token.info[TIQR_SESSION];
  if (stored === undefined || stored.value === "") return false;
  // imported from privacyIDEA the session is plain tokeninfo
  const expected = stored.type === "password"
    ? decryptSecretText(deps.keys.token, stored.value)
    : stored.value;
  return expected !== "" && safeEqual(given, expected);
}

/** `/ttype/tiqr`: the app's metadata, enrolment or authentication request. */
export async function tiqrRequest(
  deps: Deps,
  params: Record<string, string>,
): Promise<TiqrAnswer> {
  // no (or an empty) action is an authentication, as in privacyIDEA
  const action = params.action || "authentication";
  if (!(ACTIONS as readonly string[]).includes(action)) {
    throw new ParameterError(
      `Allowed actions are [${ACTIONS.map((a) => `'${a}'`).join(", ")}]`,
    );
  }
  if (action === "metadata") return await metadata(deps, params);
  if (action === "enrollment") return await enrollment(deps, params);
  return await authentication(deps, params);
}

async function metadata(deps: Deps, params: Record<string, string>): Promise<TiqrAnswer> {
  const session = required(params, "session");
  const serial = required(params, "serial");
  const token = await tiqrToken(deps, serial);
  // privacyIDEA answers any session: the user's login and name would go to anyone
  if (!isSession(deps, token, session)) throw new ParameterError("Invalid Session");
  const system = await loadSystemConfig(deps);
  const owner = token.owner;
  const info = owner ? await getUserInfo(deps, owner) : {};
  const regServer = tiqrSetting(system, "tiqr.regServer");
  const logoUrl = tiqrSetting(system, "tiqr.logoUrl");
  // keys in the order Flask's jsonify writes them (sorted)
  const body = {
    identity: {
      displayName: `${info.givenname ?? "."} ${info.surname ?? "."}`,
      identifier: `${owner?.login ?? ""}_${owner?.realm ?? ""}`,
    },
    service: {
      authenticationUrl: tiqrSetting(system, "tiqr.authServer"),
      displayName: tiqrSetting(system, "tiqr.serviceDisplayname"),
      enrollmentUrl: `${regServer}?action=enrollment&session=${session}&serial=${serial}`,
      identifier: tiqrSetting(system, "tiqr.serviceIdentifier"),
      infoUrl: tiqrSetting(system, "tiqr.infoUrl"),
      logoUrl: logoUrl === "" ? null : logoUrl,
      ocraSuite: tiqrSetting(system, "tiqr.ocrasuite"),
    },
  };
  return { kind: "json", body, serial };
}

const SECRET_REGEXP = /^(?:[0-9a-fA-F]{2}){16,128}$/;

async function enrollment(deps: Deps, params: Record<string, string>): Promise<TiqrAnswer> {
  const serial = required(params, "serial");
  const session = required(params, "session");
  const secret = required(params, "secret");
  const token = await tiqrToken(deps, serial);
  if (!isSession(deps, token, session)) throw new ParameterError("Invalid Session");
  if (!SECRET_REGEXP.test(secret)) {
    throw new ParameterError(
      'Cannot parse parameter "secret": expected 16 to 128 bytes as hex digits',
    );
  }
  const keyEnc = encryptSecret(deps.keys.token, fromHex(secret), deps.random);
  await deps.db.transaction().execute(async (trx) => {
    // the session is used up: of parallel enrolments only the one that deleted it counts
    if (await tokenStore.deleteInfo(trx, token.id, [TIQR_SESSION]) !== 1) {
      throw new ParameterError("Invalid Session");
    }
    await tokenStore.updateToken(trx, token.id, { key_enc: keyEnc, count: 0, failcount: 0 });
  });
  return { kind: "plain", text: "OK", serial, isSuccess: true };
}

async function authentication(deps: Deps, params: Record<string, string>): Promise<TiqrAnswer> {
  required(params, "userId");
  const tid = required(params, "sessionKey");
  const response = required(params, "response");
  required(params, "operation");
  const now = deps.clock.now();
  const rows = await challengesOfTransaction(deps, tid);
  // the open challenges of tiqr tokens that can authenticate (privacyIDEA also checks disabled
  // ones); a user's tokens challenged together share the transaction
  const open: { token: TokenWithInfo; c: (typeof rows)[number] }[] = [];
  for (const c of rows) {
    if (c.expiresAt < now || c.isAnswered) continue;
    const token = await findTokenBySerial(deps, c.serial);
    if (token?.type !== "tiqr" || !token.active || token.revoked || token.locked) continue;
    open.push({ token, c });
  }
  const expired = rows.filter((c) => c.expiresAt < now).map((c) => c.serial);
  if (expired.length > 0) await deleteExpiredChallengesOf(deps, expired);
  if (open.length === 0) return plain("INVALID_CHALLENGE", "", false);
  // at the limit no response is checked: guessing goes no further
  const checkable = open.filter(({ token }) => token.failcount < token.maxfail);
  for (const { token, c } of checkable) {
    // the app answers for the token it holds: any of them may be the one (privacyIDEA checks
    // only the first, so a second tiqr token of the user could never answer)
    if (!isRightResponse(deps, token, c.challenge, response)) continue;
    // of parallel right answers one settles the challenge; the others find it answered
    const isSettled = await settleChallenge(deps, c.id, "answered");
    return plain(isSettled ? "OK" : "INVALID_CHALLENGE", token.serial, isSettled);
  }
  if (checkable.length === 0) return plain("INVALID_RESPONSE:0", open[0].token.serial, false);
  const first = checkable[0].token;
  // a wrong response counts against each token it was checked for: one atomic increment
  // (capped at maxfail), then the first token's counter as it is now
  await increaseFailcount(deps, checkable.map(({ token }) => token));
  const current = await findTokenBySerial(deps, first.serial) ?? first;
  const left = Math.max(0, current.maxfail - current.failcount);
  return plain(`INVALID_RESPONSE:${left}`, first.serial, false);
}

function plain(text: string, serial: string, isSuccess: boolean): TiqrAnswer {
  return { kind: "plain", text, serial, isSuccess };
}

function isRightResponse(
  deps: Deps,
  token: TokenWithInfo,
  question: string,
  response: string,
): boolean {
  const suite = tiqrSuiteOf(token.info);
  if (!suite || question === "" || response.length !== suite.digits) return false;
  const secret = tokenSecret(deps, token);
  if (secret.length === 0) return false;
  let expected: string;
  try {
    expected = ocraResponse(secret, suite, question);
  } catch {
    return false;
  }
  return otpEqual(expected, response);
}
