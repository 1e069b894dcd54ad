/**
 * The privacyIDEA Authenticator app's side of a push token (spec 13 §1.4,
 * §1.8, §1.9): `POST /ttype/push` finishes the enrolment (the app's public
 * key in, the server's out) and takes the app's signed answers; `GET
 * /ttype/push` is the app's signed poll for open challenges. There is no
 * login: the app's signatures are the authentication, so every refusal here
 * changes nothing.
 *
 * Stricter than privacyIDEA (replays): a poll's timestamp must be newer than
 * that of the token's last poll that found challenges, and an answer only
 * settles a challenge that is unexpired and neither answered nor declined yet.
 * Only a poll that finds challenges writes (its timestamp): the app's idle
 * polls write nothing, so they leave the check path's token cache alone.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { AppError, ParameterError, PolicyError, ResourceNotFoundError } from "../../errors.ts";
import { decryptSecretText, encryptSecret, safeEqual } from "../../lib/crypto.ts";
import { loadPolicySet } from "../policy/mod.ts";
import { findTokenBySerial } from "../token/lookup.ts";
import * as tokenStore from "../token/token_store.ts";
import type { TokenWithInfo } from "../token/model.ts";
import {
  challengesOfSerial,
  DECLINED_SESSION,
  replaceChallengeData,
  settleChallenge,
} from "../challenge/mod.ts";
import {
  CODE_TO_PHONE,
  mobileQuestion,
  newServerKeyPair,
  phoneData,
  phoneKeyOf,
  type PhonePolicies,
  PUSH_INFO,
  PUSH_MOBILE_TITLE,
  serverPrivateKey,
  sslVerifyOf,
  stripPem,
  verifyText,
} from "../token/types/push.ts";
import { messageTags, randomPosition } from "../token/types/_challenge.ts";
import type { TypeChallengeContext } from "../token/types/token_type.ts";
import { getUserInfo } from "../token/_users.ts";

/** Seconds a poll's timestamp may differ from the server's clock (privacyIDEA's POLL_TIME_WINDOW). */
const POLL_WINDOW_S = 60;
/** Tokeninfo key of the last accepted poll's timestamp (microseconds since the epoch). */
const LAST_POLL = "push_last_poll";

const SIGNATURE_ERROR = "Could not verify signature!";

function required(params: Record<string, string>, name: string): string {
  const v = params[name];
  if (v === undefined) throw new ParameterError(`Missing parameter: '${name}'`);
  return v;
}

/**
 * Microseconds since the epoch of an ISO 8601 timestamp (a naive one is UTC);
 * undefined when it does not parse.
 */
export function isoMicros(text: string): bigint | undefined {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/
      .exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = "0", frac = "", zone = "Z"] = m;
  const ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s);
  const check = new Date(ms);
  if (
    Number.isNaN(ms) || check.getUTCMonth() !== +mo - 1 || check.getUTCDate() !== +d ||
    +h > 23 || +mi > 59 || +s > 59
  ) return undefined;
  let offsetMin = 0;
  if (zone !== "Z") {
    const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
    offsetMin = (z[1] === "-" ? -1 : 1) * (+z[2] * 60 + +(z[3] ?? "0"));
  }
  return BigInt(ms - offsetMin * 60_000) * 1000n + BigInt(frac.padEnd(6, "0"));
}

/** The timestamp in microseconds, or the privacyIDEA error for a bad or out-of-window one. */
function checkTimestamp(deps: Deps, text: string, windowS: number): bigint {
  const micros = isoMicros(text);
  if (micros === undefined) {
    throw new AppError(`Could not parse timestamp ${text}. ISO-Format required.`);
  }
  const now = BigInt(deps.clock.now()) * 1000n;
  const span = BigInt(windowS) * 1_000_000n;
  if (micros < now - span || micros > now + span) {
    throw new AppError(`Timestamp ${text} not in valid range.`);
  }
  return micros;
}

/** The push policies that shape what the app gets, for this token's owner. */
async function phonePolicies(deps: Deps, token: TokenWithInfo) {
  const set = await loadPolicySet(deps);
  const owner = token.owner;
  const who = {
    user: owner?.login ?? null,
    realm: owner?.realm ?? null,
    resolver: owner?.resolver ?? null,
  };
  const auth = set.matcher({ ...who, scope: "authentication" });
  const enroll = set.matcher({ ...who, scope: "enrollment" });
  return {
    url: await enroll.value("push_registration_url"),
    question: await auth.value("push_text_on_mobile"),
    title: await auth.value("push_title_on_mobile"),
    sslverify: sslVerifyOf(await auth.value("push_ssl_verify")),
  };
}

/** `push_allow_polling` matched without a user (privacyIDEA reads it before the token). */
async function allowPolling(deps: Deps): Promise<string> {
  const set = await loadPolicySet(deps);
  const m = set.matcher({ scope: "authentication", user: null, realm: null, resolver: null });
  return (await m.value("push_allow_polling")) ?? "allow";
}

async function pushToken(deps: Deps, serial: string): Promise<TokenWithInfo | undefined> {
  const t = await findTokenBySerial(deps, serial);
  return t?.type === "push" ? t : undefined;
}

/**
 * `GET /ttype/push`: the app's signed poll (spec 13 §1.8). Returns the
 * signed challenge data of every open challenge of the token.
 */
export async function pollChallenges(
  deps: Deps,
  params: Record<string, string>,
): Promise<Record<string, string>[]> {
  const polling = await allowPolling(deps);
  if (polling === "deny") throw new PolicyError("Polling not allowed!");
  const serial = required(params, "serial");
  const timestamp = required(params, "timestamp");
  const signature = required(params, "signature");
  const micros = checkTimestamp(deps, timestamp, POLL_WINDOW_S);
  const token = await pushToken(deps, serial);
  if (!token) throw new AppError(SIGNATURE_ERROR);
  if (
    polling === "token" &&
    !isTrue(token.info[PUSH_INFO.pollingAllowed]?.value ?? "True")
  ) {
    throw new PolicyError("Polling not allowed!");
  }
  let key;
  try {
    key = phoneKeyOf(token.info[PUSH_INFO.phoneKey]?.value ?? "");
  } catch {
    throw new AppError(SIGNATURE_ERROR);
  }
  if (!verifyText(key, `${serial}|${timestamp}`, signature)) throw new AppError(SIGNATURE_ERROR);
  // a replayed poll (not newer than the last one that found challenges) is refused
  const last = token.info[LAST_POLL]?.value;
  if (last !== undefined && /^\d+$/.test(last) && micros <= BigInt(last)) {
    throw new AppError(SIGNATURE_ERROR);
  }
  const p = await phonePolicies(deps, token);
  if (!p.url) throw new AppError(SIGNATURE_ERROR);
  const now = deps.clock.now();
  const open = (await challengesOfSerial(deps, serial)).filter((c) =>
    !c.isAnswered && c.session !== DECLINED_SESSION && c.expiresAt >= now &&
    c.challenge !== "" && !isConfirmedCodeToPhone(c.data) &&
    dataOf(c.data)?.push_enrollment !== true
  );
  if (open.length === 0) return [];
  await tokenStore.setInfo(deps.db, token.id, { [LAST_POLL]: { value: String(micros), type: "" } });
  const privatePem = serverPrivateKey(deps, token.info);
  const tags = await questionTags(deps, token);
  const phone: PhonePolicies = {
    url: p.url,
    question: mobileQuestion(p.question, tags),
    title: p.title ?? PUSH_MOBILE_TITLE,
    sslverify: p.sslverify,
  };
  return open.map((c) => {
    const presence = presenceOf(c.data);
    return phoneData(privatePem, serial, c.challenge, phone, presence?.slice(0, -1));
  });
}

async function questionTags(deps: Deps, token: TokenWithInfo): Promise<Record<string, string>> {
  const info = token.owner ? await getUserInfo(deps, token.owner) : {};
  // the tags read only the token, the owner and the time of the context
  const ctx = { token, nowMs: deps.clock.now() } as unknown as TypeChallengeContext;
  return messageTags(ctx, info, "");
}

function presenceOf(data: string): string[] | undefined {
  try {
    const v = JSON.parse(data);
    return typeof v?.presence === "string" && v.presence !== "" ? v.presence.split(",") : undefined;
  } catch {
    return undefined;
  }
}

function dataOf(data: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(data);
    return v && typeof v === "object" ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A code-to-phone challenge the app has confirmed (it now waits for the user's code). */
function isConfirmedCodeToPhone(data: string): boolean {
  const d = dataOf(data);
  return d?.mode === CODE_TO_PHONE && d.smartphone_confirmed === true;
}

function isTrue(v: string): boolean {
  return ["1", "true", "yes", "on"].includes(v.trim().toLowerCase());
}

/** The answer of `POST /ttype/push`: `result.value` and `detail`. */
export interface PushAnswer {
  value: boolean;
  detail?: Record<string, unknown>;
}

/**
 * `POST /ttype/push`: the enrolment's second step, the app's answer to a
 * challenge, or its new Firebase token (spec 13 §1.4, §1.9).
 */
export async function pushPost(deps: Deps, params: Record<string, string>): Promise<PushAnswer> {
  const serial = required(params, "serial");
  if ("fbtoken" in params && "pubkey" in params) return await finishEnrolment(deps, params);
  if ("signature" in params && !("new_fb_token" in params)) {
    return await answerChallenge(deps, serial, params);
  }
  if ("new_fb_token" in params && "timestamp" in params && "signature" in params) {
    return { value: await updateFirebaseToken(deps, serial, params) };
  }
  throw new ParameterError("Missing parameters!");
}

async function finishEnrolment(
  deps: Deps,
  params: Record<string, string>,
): Promise<PushAnswer> {
  const serial = params.serial;
  const token = await pushToken(deps, serial);
  if (!token || token.rolloutState !== "clientwait") {
    throw new ResourceNotFoundError(
      "No token with this serial number in the rollout state 'clientwait'.",
    );
  }
  const given = required(params, "enrollment_credential");
  const stored = token.info[PUSH_INFO.credential];
  const expected = stored === undefined
    ? ""
    : stored.type === "password"
    ? decryptSecretText(deps.keys.token, stored.value)
    : stored.value;
  if (expected === "" || !safeEqual(given, expected)) {
    throw new ParameterError(
      "Invalid enrollment credential. You are not authorized to finalize this token.",
    );
  }
  try {
    phoneKeyOf(params.pubkey);
  } catch {
    throw new ParameterError("Invalid parameter 'pubkey': not an RSA public key.");
  }
  const keys = await newServerKeyPair(deps.config.push.serverKeyBits);
  await deps.db.transaction().execute(async (trx) => {
    await tokenStore.deleteInfo(trx, token.id, [PUSH_INFO.credential]);
    await tokenStore.setInfo(trx, token.id, {
      [PUSH_INFO.phoneKey]: { value: params.pubkey, type: "" },
      [PUSH_INFO.firebaseToken]: { value: params.fbtoken, type: "" },
      [PUSH_INFO.serverPublic]: { value: keys.publicPem, type: "" },
      [PUSH_INFO.serverPrivate]: {
        value: encryptSecret(deps.keys.token, keys.privatePem, deps.random),
        type: "password",
      },
    });
    // only the request that moved the token out of clientwait finishes it
    const moved = await tokenStore.updateTokens(
      trx,
      [token.id],
      { rollout_state: "enrolled", active: 1 },
      (eb) => eb("rollout_state", "=", "clientwait"),
    );
    if (moved !== 1) {
      throw new ResourceNotFoundError(
        "No token with this serial number in the rollout state 'clientwait'.",
      );
    }
  });
  // an enrolment via multichallenge waits for this step: its challenge is answered now
  const now = deps.clock.now();
  for (const c of await challengesOfSerial(deps, serial)) {
    if (c.expiresAt >= now && dataOf(c.data)?.push_enrollment === true) {
      await settleChallenge(deps, c.id, "answered");
    }
  }
  return {
    value: true,
    detail: { serial, rollout_state: "enrolled", public_key: stripPem(keys.publicPem) },
  };
}

async function answerChallenge(
  deps: Deps,
  serial: string,
  params: Record<string, string>,
): Promise<PushAnswer> {
  const token = await pushToken(deps, serial);
  if (!token) throw new ResourceNotFoundError("The requested token could not be found.");
  let key;
  try {
    key = phoneKeyOf(token.info[PUSH_INFO.phoneKey]?.value ?? "");
  } catch {
    return { value: false };
  }
  const decline = isTrue(params.decline ?? "");
  const presence = params.presence_answer ?? "";
  const now = deps.clock.now();
  for (const c of await challengesOfSerial(deps, serial)) {
    if (c.challenge === "" || c.expiresAt < now) continue;
    let text = `${c.challenge}|${serial}`;
    if (decline) text += "|decline";
    if (presence) text += `|${presence}`;
    if (!verifyText(key, text, params.signature)) continue;
    if (decline) return { value: await settleChallenge(deps, c.id, "declined") };
    const wanted = presenceOf(c.data);
    if (wanted && (!presence || presence !== wanted[wanted.length - 1])) return { value: false };
    const data = dataOf(c.data);
    if (data?.mode === CODE_TO_PHONE) return await confirmCodeToPhone(deps, token, c, data);
    return { value: await settleChallenge(deps, c.id, "answered") };
  }
  return { value: false };
}

/**
 * Code to phone (privacyIDEA 3.13): the app's confirmation gives it a
 * two-digit code to show; the challenge stays open until the user types the
 * code at the client (`/validate/check` with the transaction id).
 */
async function confirmCodeToPhone(
  deps: Deps,
  token: TokenWithInfo,
  c: { id: number; data: string },
  data: Record<string, unknown>,
): Promise<PushAnswer> {
  if (data.smartphone_confirmed === true) return { value: false };
  const code = String(randomPosition(deps.random, 100) - 1).padStart(2, "0");
  const next = JSON.stringify({ ...data, smartphone_confirmed: true, display_code: code });
  if (!(await replaceChallengeData(deps, c.id, c.data, next))) return { value: false };
  const set = await loadPolicySet(deps);
  const owner = token.owner;
  const message = await set.matcher({
    scope: "authentication",
    user: owner?.login ?? null,
    realm: owner?.realm ?? null,
    resolver: owner?.resolver ?? null,
  }).value("push_code_to_phone_message");
  return {
    value: true,
    detail: { display_code: code, message: message ?? "Enter the code to log in" },
  };
}

async function updateFirebaseToken(
  deps: Deps,
  serial: string,
  params: Record<string, string>,
): Promise<boolean> {
  checkTimestamp(deps, params.timestamp, 300);
  const token = await pushToken(deps, serial);
  let key;
  try {
    key = phoneKeyOf(token?.info[PUSH_INFO.phoneKey]?.value ?? "");
  } catch {
    throw new AppError(SIGNATURE_ERROR);
  }
  const text = `${params.new_fb_token}|${serial}|${params.timestamp}`;
  if (!token || !verifyText(key, text, params.signature)) throw new AppError(SIGNATURE_ERROR);
  await tokenStore.setInfo(deps.db, token.id, {
    [PUSH_INFO.firebaseToken]: { value: params.new_fb_token, type: "" },
  });
  return true;
}
