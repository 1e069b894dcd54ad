/**
 * `u2f`: a FIDO U2F security key registered in privacyIDEA (spec 14 §8).
 * privacyIDEA 3.12 no longer enrols U2F keys (`/token/init` answers ERR1610,
 * see catalogue.ts), but registrations carried over from it authenticate: a
 * correct PIN (or `/validate/triggerchallenge`) makes a challenge with a
 * `u2fSignRequest`, and the key's `clientdata`/`signaturedata` answer it.
 * The signature (P-256, SHA-256) covers SHA256(appId) ‖ user presence ‖
 * counter ‖ SHA256(clientData); the counter must exceed the stored one and
 * is stored with a compare-and-set, so one signed answer succeeds once.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createPublicKey, type KeyObject, verify } from "node:crypto";
import { PolicyError, TokenAdminError, ValidateError } from "../../../errors.ts";
import { fromHex, toHex } from "../../../lib/random.ts";
import { b64url } from "./_fido.ts";
import {
  infoValue,
  type OtpCheck,
  type TokenType,
  type TypeAnswerContext,
  type TypeChallengeContext,
} from "./token_type.ts";

/** The U2F protocol version of every sign request. */
const U2F_VERSION = "U2F_V2";
/** Default authentication message; `{0!s}` is the token description. */
export const U2F_AUTH_TEXT = "Please confirm with your U2F token ({0!s})";
/** The `typ` of a U2F authentication's client data. */
const ASSERTION_TYP = "navigator.id.getAssertion";
/** Longest `clientdata`/`signaturedata` text looked at (a real one is a few hundred characters). */
const MAX_FIELD = 8192;

/**
 * privacyIDEA's `url_decode`: base64url with optional padding, characters
 * outside the alphabet ignored (as Python's lenient decoder does); undefined
 * when what is left is no base64.
 */
export function u2fDecode(text: string): Uint8Array | undefined {
  if (text.length > MAX_FIELD) return undefined;
  const t = text.replace(/[^A-Za-z0-9\-_+/]/g, "").replaceAll("+", "-").replaceAll("/", "_");
  if (t.length % 4 === 1) return undefined;
  return new Uint8Array(Buffer.from(t, "base64url"));
}

/** The P-256 public key of an uncompressed point (65 bytes, 0x04 ‖ x ‖ y); undefined if none. */
function p256Key(raw: Uint8Array): KeyObject | undefined {
  if (raw.length !== 65 || raw[0] !== 0x04) return undefined;
  try {
    return createPublicKey({
      key: { kty: "EC", crv: "P-256", x: b64url(raw.slice(1, 33)), y: b64url(raw.slice(33)) },
      format: "jwk",
    });
  } catch {
    // not a point on the curve
    return undefined;
  }
}

async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(
    await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
  );
}

/**
 * Whether `signature` (DER ECDSA, P-256/SHA-256) under the public key `pubKey`
 * signs SHA256(appId) ‖ presence ‖ counter ‖ SHA256(clientData) (spec 14 §8.2.3).
 */
export async function u2fSignatureValid(
  pubKey: Uint8Array,
  appId: string,
  clientData: Uint8Array,
  signatureData: Uint8Array,
): Promise<boolean> {
  const key = p256Key(pubKey);
  if (!key || signatureData.length < 6) return false;
  const signed = new Uint8Array(32 + 5 + 32);
  signed.set(await sha256(new TextEncoder().encode(appId)), 0);
  // the presence byte and the counter exactly as the key sent them
  signed.set(signatureData.slice(0, 5), 32);
  signed.set(await sha256(clientData), 37);
  try {
    return verify("sha256", signed, { key, dsaEncoding: "der" }, signatureData.slice(5));
  } catch {
    // a malformed DER signature
    return false;
  }
}

/**
 * privacyIDEA's `attestation_certificate_allowed`: each rule `<tag>/<regex>/`
 * (tag `subject`, `issuer` or `serial` of the attestation certificate) must
 * find its regex in that value; no rules admit every token.
 */
export function attestationAllowed(
  info: Record<string, string>,
  rules: readonly string[],
): boolean {
  for (const rule of rules) {
    const [tag, pattern = ""] = rule.split("/");
    if (pattern === "") continue;
    const value = info[`attestation_${tag}`] ?? "";
    let re: RegExp;
    try {
      re = new RegExp(pattern);
    } catch {
      // a rule that cannot be read admits nothing
      return false;
    }
    if (value === "" || !re.test(value)) return false;
  }
  return true;
}

/** The client data as JSON object, or undefined. */
function clientDataOf(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    return v && typeof v === "object" && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The answer check of spec 14 §8.2 points 2-3. */
async function checkU2fAnswer(ctx: TypeAnswerContext): Promise<OtpCheck> {
  const t = ctx.token;
  const fail = (reason: string): OtpCheck => {
    // the client learns only that the answer did not match; the reason is for the administrator
    ctx.deps.log.info("A U2F answer was refused", { serial: t.serial, reason });
    return { isValid: false };
  };
  const nonceHex = ctx.challenge ?? "";
  const sent = ctx.signedAnswer;
  if (!sent?.clientData || !sent.signatureData || !/^([0-9a-f]{2})+$/i.test(nonceHex)) {
    return fail("clientdata, signaturedata or the stored challenge is missing");
  }
  const clientData = u2fDecode(sent.clientData);
  const signatureData = u2fDecode(sent.signatureData);
  const client = clientData && clientDataOf(clientData);
  if (!clientData || !client || !signatureData) {
    return fail("clientdata or signaturedata is not base64url (JSON)");
  }
  if (client.challenge !== b64url(fromHex(nonceHex))) {
    return fail("the client data names another challenge");
  }
  if (client.typ !== ASSERTION_TYP) throw new ValidateError("Incorrect navigator.id");
  const pubKey = fromHex(infoValue(t.info, "pubKey").replace(/[^0-9a-fA-F]/g, ""));
  const appId = infoValue(t.info, "appId");
  if (!(await u2fSignatureValid(pubKey, appId, clientData, signatureData))) {
    return fail("the signature does not verify under the token's public key");
  }
  const counter = new DataView(signatureData.buffer, signatureData.byteOffset + 1, 4)
    .getUint32(0);
  if (counter <= t.count) {
    return fail(`the signature is valid, but its counter ${counter} is not above ${t.count}`);
  }
  const rules = ctx.authzValues?.("u2f_req") ?? [];
  const cert = {
    attestation_issuer: infoValue(t.info, "attestation_issuer"),
    attestation_serial: infoValue(t.info, "attestation_serial"),
    attestation_subject: infoValue(t.info, "attestation_subject"),
  };
  if (!attestationAllowed(cert, rules)) {
    ctx.deps.log.warn("A U2F device is not allowed to authenticate by policy u2f_req", {
      serial: t.serial,
    });
    throw new PolicyError(
      "The U2F device is not allowed to authenticate due to policy restriction.",
    );
  }
  // stored with a compare-and-set (count < counter): a replay, also a parallel one, fails
  return { isValid: true, counter };
}

/** The `u2f` type. */
export const U2F: TokenType = {
  type: "u2f",
  prefix: "U2F",
  authenticates: true,
  challenge: true,
  // a correct PIN always asks the key, no challenge_response policy needed
  challengeOnly: true,
  init() {
    // privacyIDEA 3.12 removed U2F from the enrollable types (enrol.ts refuses it first)
    throw new TokenAdminError("init token failed. Unknown token type: u2f", 1610);
  },
  // never with a plain pass: the key's signed answer is the answer
  checkOtp() {
    return { isValid: false };
  },
  checkAnswer(ctx) {
    return checkU2fAnswer(ctx);
  },
  createChallenge(ctx: TypeChallengeContext) {
    // the u2f challenges of one transaction share one nonce (privacyIDEA reuses it)
    let nonce = ctx.shared?.get("u2f.nonce");
    if (!(nonce instanceof Uint8Array)) {
      nonce = ctx.deps.random.bytes(32);
      ctx.shared?.set("u2f.nonce", nonce);
    }
    const bytes = nonce as Uint8Array;
    const description = ctx.token.description;
    const text = ctx.policy("u2f_challenge_text") ??
      U2F_AUTH_TEXT.replaceAll("{0!s}", description);
    // no vendor images are shipped: img and image stay empty
    const img = "";
    return Promise.resolve({
      message: text.replaceAll("\\,", ","),
      challenge: toHex(bytes),
      extras: {
        client_mode: "u2f",
        attributes: {
          u2fSignRequest: {
            appId: infoValue(ctx.token.info, "appId"),
            version: U2F_VERSION,
            challenge: b64url(bytes),
            keyHandle: b64url(ctx.secret),
          },
          hideResponseInput: true,
          img,
        },
        image: img,
      },
    });
  },
};
