/**
 * `push`: a token in the privacyIDEA Authenticator app that confirms a login
 * out of band (spec 13 §1). Enrolment has two steps: `/token/init` gives the
 * app its enrolment URL (`otpauth://pipush/…`, rollout state `clientwait`),
 * then the app registers its RSA public key at `POST /ttype/push` and gets
 * the server's (src/domain/push/mod.ts). A correct PIN creates a challenge
 * with a random nonce; the app fetches it by a signed poll (or receives it by
 * Firebase), answers with a signature over the nonce, and the client's
 * `/validate/check` with the transaction id and an empty pass succeeds once
 * the challenge is answered.
 *
 * All signatures are RSASSA-PKCS1-v1_5 with SHA-256 over `|`-joined UTF-8
 * strings, transported as base32 with padding (spec 13 §1.5).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createPrivateKey, createPublicKey, generateKeyPair, sign, verify } from "node:crypto";
import { ParameterError, PolicyError } from "../../../errors.ts";
import { base32Decode, base32Encode } from "../../../lib/otp.ts";
import { toHex } from "../../../lib/random.ts";
import { decryptSecretText, safeEqual } from "../../../lib/crypto.ts";
import type { Deps } from "../../../deps.ts";
import { isAnsweredNonce } from "../../challenge/mod.ts";
import { param, pyQuote, qrImg } from "./_oath.ts";
import { MessageTagError, messageTags, ownerInfo, renderMessage } from "./_challenge.ts";
import { firebaseGatewayOptions } from "../../smsgateway/mod.ts";
import { sendFirebaseMessage } from "../../smsgateway/firebase_provider.ts";
import { loadPolicySet } from "../../policy/mod.ts";
import { isTrueValue } from "./_sent_code.ts";
import {
  infoValue,
  type TokenType,
  type TypeChallenge,
  type TypeChallengeContext,
  type TypeChallengeFailure,
  type TypeInitContext,
  type TypeInitResult,
} from "./token_type.ts";

/** The value of `push_firebase_configuration` that sends nothing: the app polls. */
export const POLL_ONLY = "poll only";
/** Default challenge message (policy `push_challenge_text` replaces it). */
export const PUSH_CHALLENGE_TEXT = "Please confirm the authentication on your mobile device!";
/** Default challenge message in code-to-phone mode (privacyIDEA 3.13). */
export const CODE_TO_PHONE_TEXT = "Please enter the code displayed on your smartphone.";
/** Challenge data `mode` of a code-to-phone challenge. */
export const CODE_TO_PHONE = "code_to_phone";
/** Default question shown in the app (policy `push_text_on_mobile`). */
export const PUSH_MOBILE_TEXT = "Do you want to confirm the login?";
/** Default notification title (policy `push_title_on_mobile`). */
export const PUSH_MOBILE_TITLE = "privacyIDEA";
/** Appended to the message when the challenge could not be sent. */
export const PUSH_POLL_HINT =
  " Use the polling feature of your privacyIDEA Authenticator App to check for a new Login request.";

/** Tokeninfo keys of a push token (spec 13 §1.1). */
export const PUSH_INFO = {
  credential: "enrollment_credential",
  firebaseConfig: "push_firebase_configuration",
  phoneKey: "public_key_smartphone",
  firebaseToken: "firebase_token",
  serverPublic: "public_key_server",
  serverPrivate: "private_key_server",
  pollingAllowed: "polling_allowed",
} as const;

const ALPHABETIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZ".split("");
const NUMERIC = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, "0"));

// ---------------------------------------------------------------------------
// Keys and signatures

/** The base64 body of a PEM block: header and footer lines removed, outer whitespace trimmed. */
export function stripPem(pem: string): string {
  return pem.replace(/-----(BEGIN|END)[^-]*-----/g, "").trim();
}

/**
 * The app's public key object from `public_key_smartphone`: SPKI, PEM-stripped,
 * usually in the base64url alphabet (privacyIDEA's `_build_verify_object`).
 */
export function phoneKeyOf(text: string) {
  const b64 = text.trim().replaceAll("-", "+").replaceAll("_", "/").replaceAll(" ", "+")
    .replace(/\s/g, "");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new Error("the public key is not base64");
  const key = createPublicKey({ key: Buffer.from(b64, "base64"), format: "der", type: "spki" });
  if (key.asymmetricKeyType !== "rsa") throw new Error("the public key is not an RSA key");
  return key;
}

/** Signs `text` (PKCS#1 v1.5, SHA-256) with a PEM private key; base32 with padding. */
export function signText(privatePem: string, text: string): string {
  const key = createPrivateKey(privatePem);
  return base32Encode(sign("sha256", new TextEncoder().encode(text), key), true);
}

/** True if `signature` (base32) is a valid signature of `text` by `key`; false for any bad input. */
export function verifyText(
  key: ReturnType<typeof createPublicKey>,
  text: string,
  signature: string,
): boolean {
  if (!/^[A-Z2-7]+=*$/i.test(signature.trim())) return false;
  try {
    return verify("sha256", new TextEncoder().encode(text), key, base32Decode(signature));
  } catch {
    return false;
  }
}

/** A new RSA key pair (PKCS#1 PEM), e = 65537, as privacyIDEA's `generate_keypair`. */
export function newServerKeyPair(bits: number): Promise<{ publicPem: string; privatePem: string }> {
  return new Promise((resolve, reject) => {
    generateKeyPair("rsa", {
      modulusLength: bits,
      publicExponent: 65537,
      publicKeyEncoding: { type: "pkcs1", format: "pem" },
      privateKeyEncoding: { type: "pkcs1", format: "pem" },
    }, (err, publicPem, privatePem) => {
      if (err) reject(err);
      else resolve({ publicPem, privatePem });
    });
  });
}

/** The server's private key of a push token (decrypted tokeninfo). */
export function serverPrivateKey(deps: Deps, info: Record<string, { value: string }>): string {
  const stored = info[PUSH_INFO.serverPrivate]?.value ?? "";
  if (stored === "") throw new Error("the token has no server key");
  return decryptSecretText(deps.keys.token, stored);
}

// ---------------------------------------------------------------------------
// Enrolment (step 1)

function requiredPolicy(ctx: TypeInitContext, action: string): string {
  const v = ctx.policies?.[action];
  if (v === undefined || v === "") {
    throw new PolicyError(`Missing enrollment policy for push token: ${action}`);
  }
  return v;
}

function formatLabel(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (m, name: string) => values[name] ?? m);
}

/** The enrolment URL (spec 13 §1.3), its parameters in privacyIDEA's order. */
function enrolmentUrl(
  ctx: TypeInitContext,
  v: { url: string; ttl: string; credential: string; sslverify: string; pollOnly: boolean },
): string {
  const login = ctx.owner?.login ?? "";
  const realm = ctx.owner?.realm ?? "";
  const values = {
    serial: ctx.serial,
    user: login,
    realm,
    givenname: ctx.ownerInfo?.givenname ?? "",
    surname: ctx.ownerInfo?.surname ?? "",
  };
  const legacy = (param(ctx, "tokenlabel") ?? "<s>").replaceAll("<s>", ctx.serial)
    .replaceAll("<u>", login).replaceAll("<r>", realm);
  const label = formatLabel(legacy, values);
  const issuer = formatLabel(param(ctx, "tokenissuer") ?? "privacyIDEA", values);
  const scheme = isTrueValue(ctx.policies?.push_use_pia_scheme) ? "pia" : "otpauth";
  const q: [string, string][] = [
    ["url", v.url],
    ["ttl", v.ttl],
    ["issuer", issuer],
    ["enrollment_credential", v.credential],
  ];
  const image = param(ctx, "appimageurl");
  if (image) q.push(["image", image]);
  q.push(["v", "1"], ["serial", ctx.serial], ["sslverify", v.sslverify]);
  q.push(["poll_only", v.pollOnly ? "True" : "False"]);
  if (isTrueValue(param(ctx, "force_app_pin"))) q.push(["pin", "True"]);
  const unlock = param(ctx, "app_force_unlock");
  if (unlock) q.push(["app_force_unlock", unlock]);
  const query = q.map(([k, val]) => `${k}=${pyQuote(val)}`).join("&");
  return `${scheme}://pipush/${pyQuote(label)}?${query}`;
}

async function initPush(ctx: TypeInitContext): Promise<TypeInitResult> {
  if (!isTrueValue(param(ctx, "genkey"))) {
    throw new ParameterError(
      "Invalid Parameters. Either provide (genkey) or (serial, fbtoken, pubkey).",
    );
  }
  const firebase = requiredPolicy(ctx, "push_firebase_configuration");
  const url = requiredPolicy(ctx, "push_registration_url");
  const pollOnly = firebase === POLL_ONLY;
  if (!pollOnly && !(await firebaseGatewayOptions(ctx.deps, firebase))) {
    throw new ParameterError("Unknown Firebase configuration!");
  }
  const ttl = ctx.policies?.push_ttl ?? "10";
  const ssl = ctx.policies?.push_ssl_verify;
  const sslverify = ssl === "0" || ssl === "1" ? ssl : "1";
  const credential = toHex(ctx.deps.random.bytes(20));
  const value = enrolmentUrl(ctx, { url, ttl, credential, sslverify, pollOnly });
  return {
    info: { [PUSH_INFO.firebaseConfig]: firebase },
    secretInfo: { [PUSH_INFO.credential]: credential },
    rolloutState: "clientwait",
    active: false,
    detail: {
      enrollment_credential: credential,
      pushurl: { description: "URL for privacyIDEA Push Token", value, img: qrImg(value) },
    },
    // a re-enrolment starts over: the old app's keys no longer count
    ownsInfo: (key: string) =>
      key === PUSH_INFO.phoneKey || key === PUSH_INFO.firebaseToken ||
      key === PUSH_INFO.serverPublic || key === PUSH_INFO.serverPrivate,
  };
}

// ---------------------------------------------------------------------------
// Challenges

/** The presence options and the right one (spec 13 §1.6.2); undefined when not required. */
function presenceOf(ctx: TypeChallengeContext): { options: string[]; correct: string } | undefined {
  if (!ctx.policy("push_require_presence")) return undefined;
  const kind = (ctx.policy("push_presence_options") ?? "ALPHABETIC").toUpperCase();
  let alphabet = ALPHABETIC;
  if (kind === "NUMERIC") alphabet = NUMERIC;
  else if (kind === "CUSTOM") {
    const custom = (ctx.policy("push_presence_custom_options") ?? "").split(":")
      .map((o) => o.trim()).filter((o) => o !== "");
    if (custom.length > 0) alphabet = [...new Set(custom)];
  }
  let num = Number.parseInt(ctx.policy("push_presence_num_options") ?? "3", 10);
  if (!Number.isInteger(num) || num < 2 || num > 10) num = 3;
  num = Math.min(num, alphabet.length);
  const pool = [...alphabet];
  const options: string[] = [];
  for (let i = 0; i < num; i++) {
    options.push(pool.splice(randomIndex(ctx, pool.length), 1)[0]);
  }
  return { options, correct: options[randomIndex(ctx, options.length)] };
}

function randomIndex(ctx: TypeChallengeContext, n: number): number {
  const limit = Math.floor(0x100000000 / n) * n;
  for (;;) {
    const b = ctx.deps.random.bytes(4);
    const x = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
    if (x < limit) return x % n;
  }
}

/** The policy values that shape the data the app gets. */
export interface PhonePolicies {
  url: string;
  question: string;
  title: string;
  sslverify: string;
}

/** The challenge data the app gets, signed by the server (spec 13 §1.7, S1/S1p). */
export function phoneData(
  privatePem: string,
  serial: string,
  nonce: string,
  p: PhonePolicies,
  presenceOptions?: string[],
): Record<string, string> {
  const data: Record<string, string> = {
    nonce,
    question: p.question,
    serial,
    title: p.title,
    sslverify: p.sslverify,
    url: p.url,
  };
  let text = `${nonce}|${p.url}|${serial}|${p.question}|${p.title}|${p.sslverify}`;
  if (presenceOptions) {
    data.require_presence = presenceOptions.join(",");
    data.version = "2";
    text += `|${data.require_presence}`;
  }
  data.signature = signText(privatePem, text);
  return data;
}

/** `push_text_on_mobile` with its tags, or the default when it names an unknown tag. */
export function mobileQuestion(
  text: string | undefined,
  tags: Readonly<Record<string, string>>,
): string {
  if (text === undefined) return PUSH_MOBILE_TEXT;
  try {
    return renderMessage(text, tags);
  } catch (err) {
    if (err instanceof MessageTagError) return PUSH_MOBILE_TEXT;
    throw err;
  }
}

/** `push_ssl_verify` as privacyIDEA reads it: `0` or `1`, anything else `1`. */
export function sslVerifyOf(value: string | undefined): string {
  return value === "0" ? "0" : "1";
}

async function pushChallenge(
  ctx: TypeChallengeContext,
): Promise<TypeChallenge | TypeChallengeFailure> {
  // a request waiting for the app (push_wait) answers alone: no button to press, no code to
  // type (privacyIDEA disables presence with push_wait)
  const presenceWanted = !ctx.isWaiting && ctx.policy("push_require_presence") !== undefined;
  // code to phone (privacyIDEA 3.13): the app confirms, then the user types the code it shows;
  // push_require_presence takes precedence
  const isCodeToPhone = !ctx.isWaiting && !presenceWanted &&
    ctx.policy("push_code_to_phone") !== undefined;
  let message = (ctx.policy("push_challenge_text") ??
    (isCodeToPhone ? CODE_TO_PHONE_TEXT : PUSH_CHALLENGE_TEXT)).replaceAll("\\,", ",");
  const config = infoValue(ctx.token.info, PUSH_INFO.firebaseConfig);
  if (config === "") return { failed: message + PUSH_POLL_HINT };
  const nonce = base32Encode(ctx.deps.random.bytes(20), true);
  // tokens challenged in one request share the presence options of the first
  const presence = presenceWanted
    ? (ctx.shared?.get("push_presence") as ReturnType<typeof presenceOf>) ?? presenceOf(ctx)
    : undefined;
  if (presence) ctx.shared?.set("push_presence", presence);
  const isSent = config === POLL_ONLY || await sendToFirebase(ctx, config, nonce, presence);
  const polling = ctx.policy("push_allow_polling") ?? "allow";
  const tokenAllows = isTrueValue(
    infoValue(ctx.token.info, PUSH_INFO.pollingAllowed, "True"),
  );
  const isStored = isSent || polling === "allow" ||
    (polling === "token" && tokenAllows);
  if (!isSent) message += PUSH_POLL_HINT;
  if (!isStored) return { failed: message };
  const extras: Record<string, unknown> = {
    client_mode: isCodeToPhone ? "interactive" : "poll",
    attributes: { hideResponseInput: !isCodeToPhone },
  };
  if (presence) {
    extras.presence_answer = presence.correct;
    message = message.includes("{presence_answer}")
      ? message.replaceAll("{presence_answer}", presence.correct)
      : `${message} Please press: ${presence.correct}`;
  }
  return {
    message,
    challenge: nonce,
    data: presence
      ? { nonce, presence: [...presence.options, presence.correct].join(",") }
      : isCodeToPhone
      ? { nonce, mode: CODE_TO_PHONE, smartphone_confirmed: false }
      : { nonce },
    extras,
  };
}

/** Sends the signed challenge data through the Firebase definition `config`; true if FCM took it. */
async function sendToFirebase(
  ctx: TypeChallengeContext,
  config: string,
  nonce: string,
  presence: { options: string[] } | undefined,
): Promise<boolean> {
  const options = await firebaseGatewayOptions(ctx.deps, config);
  const owner = ctx.token.owner ?? ctx.user;
  const set = await loadPolicySet(ctx.deps);
  const url = await set.matcher({
    scope: "enrollment",
    user: owner?.login ?? null,
    realm: owner?.realm ?? null,
    resolver: owner?.resolver ?? null,
  }).value("push_registration_url");
  if (!options || !url) {
    ctx.deps.log.warn("Push challenge not sent: no Firebase definition or registration URL", {
      serial: ctx.token.serial,
    });
    return false;
  }
  const tags = messageTags(ctx, await ownerInfo(ctx), "");
  const data = phoneData(serverPrivateKey(ctx.deps, ctx.token.info), ctx.token.serial, nonce, {
    url,
    question: mobileQuestion(ctx.policy("push_text_on_mobile"), tags),
    title: ctx.policy("push_title_on_mobile") ?? PUSH_MOBILE_TITLE,
    sslverify: sslVerifyOf(ctx.policy("push_ssl_verify")),
  }, presence?.options);
  const fbToken = infoValue(ctx.token.info, PUSH_INFO.firebaseToken);
  return await sendFirebaseMessage(ctx.deps, options, fbToken, data);
}

/** The `push` type. */
export const PUSH: TokenType = {
  type: "push",
  prefix: "PIPU",
  authenticates: true,
  challenge: true,
  challengeOnly: true,
  init: initPush,
  checkOtp() {
    // a push token has no OTP: it only answers its own challenges
    return { isValid: false };
  },
  createChallenge: pushChallenge,
  waitSeconds(policy) {
    // push_wait=0 (or no number) is off, as in privacyIDEA
    const seconds = Number.parseInt(policy("push_wait") ?? "", 10);
    return seconds > 0 ? seconds : undefined;
  },
  async checkAnswer(ctx, answer, data) {
    if (data.mode === CODE_TO_PHONE) {
      // the code the app showed after it confirmed; before that nothing answers
      const code = typeof data.display_code === "string" ? data.display_code : "";
      return {
        isValid: data.smartphone_confirmed === true && code !== "" && safeEqual(answer, code),
      };
    }
    // the app's confirmation, not the pass, answers the challenge
    const nonce = typeof data.nonce === "string" ? data.nonce : "";
    return { isValid: nonce !== "" && await isAnsweredNonce(ctx.deps, ctx.token.serial, nonce) };
  },
};
