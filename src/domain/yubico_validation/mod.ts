/**
 * `/ttype/yubikey` (spec 11 §6.4): the Yubico validation protocol 2.0 for
 * `yubikey` tokens, so yubico-pam and other ykclient users can validate
 * against Tessera. Clients are system config `yubikey.apiid.<id>` = base64
 * API key; requests may be signed (`h`), answers to a known client always are.
 * `yubikey.require_signature.<id>` (or `yubikey.require_signature` for every
 * client) refuses unsigned requests of a client before any token is touched.
 *
 * The endpoint is public and answers whether an OTP is good, so the OTP goes
 * through the `/validate/check` engine ({@link validateTokens}): a disabled,
 * revoked or locked token fails, a wrong or replayed OTP raises the fail
 * counter, a good one moves the counter by compare-and-set (one success per
 * OTP, also in parallel), and the token's PIN must be empty (only the OTP is
 * sent).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import {
  base64Bytes,
  isYubicoSignature,
  MODHEX_REGEXP,
  yubicoSignature,
} from "../../lib/yubico_otp.ts";
import { loadSystemConfig, type SystemConfig } from "../system_config/mod.ts";
import { findTokensByInfo, type UserRef } from "../token/mod.ts";
import { MAX_PUBLIC_ID, YUBICO_BLOCK_LENGTH } from "../token/types/yubikey.ts";
import { validateTokens } from "../validate/mod.ts";

/** The answer statuses Tessera gives. */
export type YubicoStatus =
  | "OK"
  | "BAD_OTP"
  | "BAD_SIGNATURE"
  | "NO_SUCH_CLIENT"
  | "MISSING_PARAMETER";

/** A validation request: its parameters (strings) and who sent it. */
export interface YubicoRequest {
  params: Record<string, string>;
  clientIp: string;
  userAgent: string;
}

/** The `text/plain` answer and what the audit records. */
export interface YubicoAnswer {
  text: string;
  status: YubicoStatus;
  /** Why, for the audit and the log (never sent). */
  reason: string;
  serial?: string;
  user?: UserRef;
}

const CLIENT_ID_REGEXP = /^[A-Za-z0-9._-]{1,64}$/;
const NONCE_REGEXP = /^[A-Za-z0-9]{16,40}$/;
// what may be echoed into a line of the answer: printable ASCII, no line breaks
const ECHO_REGEXP = /^[\x21-\x7e]{0,128}$/;
// the parameter that names the type on privacyIDEA's generic /ttype/<type> route
const UNSIGNED = new Set(["h", "ttype"]);

/** privacyIDEA's answer time stamp: `YYYY-MM-DDThh:mm:ssZ` and microseconds (UTC here). */
export function protocolTimestamp(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 19)}Z${String((ms % 1000) * 1000).padStart(6, "0")}`;
}

function answerText(data: Record<string, string>): string {
  return ["nonce", "otp", "status", "timestamp", "h"].map((k) => `${k}=${data[k]}\n`).join("");
}

/** Answers one validation protocol request. */
export async function yubikeyValidate(deps: Deps, req: YubicoRequest): Promise<YubicoAnswer> {
  const p = req.params;
  const id = p.id ?? "";
  const otp = p.otp ?? "";
  const nonce = p.nonce ?? "";
  const data: Record<string, string> = {
    // a value that could break the line format is not echoed
    nonce: ECHO_REGEXP.test(nonce) ? nonce : "",
    otp: ECHO_REGEXP.test(otp) ? otp : "",
    status: "MISSING_PARAMETER",
    timestamp: protocolTimestamp(deps.clock.now()),
  };
  const system = await loadSystemConfig(deps);
  const key = CLIENT_ID_REGEXP.test(id)
    ? base64Bytes(system.get(`yubikey.apiid.${id}`))
    : undefined;
  if (!key) {
    // no key, no signature (privacyIDEA: empty `h`)
    return {
      text: answerText({ ...data, status: "NO_SUCH_CLIENT", h: "" }),
      status: "NO_SUCH_CLIENT",
      reason: `no API key for client "${id.slice(0, 64)}"`,
    };
  }
  const outcome = await decide(deps, req, key, {
    otp,
    nonce,
    isSignatureRequired: isSignatureRequired(system, id),
  });
  data.status = outcome.status;
  data.h = yubicoSignature(data, key);
  return { ...outcome, text: answerText(data) };
}

/**
 * Whether client `id` must sign its requests: `yubikey.require_signature.<id>`
 * when set, else `yubikey.require_signature` (privacyIDEA's flat config keys;
 * not under `yubikey.apiid.`, whose values are secrets). Off by default, as in
 * privacyIDEA and the protocol, where `h` is optional.
 */
function isSignatureRequired(system: SystemConfig, id: string): boolean {
  const own = `yubikey.require_signature.${id}`;
  return system.get(own) !== "" ? system.bool(own) : system.bool("yubikey.require_signature");
}

async function decide(
  deps: Deps,
  req: YubicoRequest,
  key: Uint8Array,
  given: { otp: string; nonce: string; isSignatureRequired: boolean },
): Promise<Omit<YubicoAnswer, "text">> {
  const { otp, nonce } = given;
  if (otp === "" || nonce === "") {
    return { status: "MISSING_PARAMETER", reason: "otp or nonce missing" };
  }
  const signature = req.params.h;
  if (signature === undefined || signature === "") {
    // refused before the token is looked up: whoever knows a client id and a public id
    // could otherwise raise the token's fail counter until it locks
    if (given.isSignatureRequired) {
      return {
        status: "MISSING_PARAMETER",
        reason: "the client must sign its requests (yubikey.require_signature): h is missing",
      };
    }
  } else {
    const signed = Object.fromEntries(
      Object.entries(req.params).filter(([k]) => !UNSIGNED.has(k)),
    );
    if (!isYubicoSignature(signed, key, signature)) {
      return { status: "BAD_SIGNATURE", reason: "the request signature is wrong" };
    }
  }
  if (!NONCE_REGEXP.test(nonce)) {
    return { status: "MISSING_PARAMETER", reason: "the nonce is not 16 to 40 letters and digits" };
  }
  const text = otp.toLowerCase();
  if (
    text.length <= YUBICO_BLOCK_LENGTH || text.length > YUBICO_BLOCK_LENGTH + MAX_PUBLIC_ID ||
    !MODHEX_REGEXP.test(text)
  ) {
    return { status: "BAD_OTP", reason: "not a Yubico OTP with a public id" };
  }
  const prefix = text.slice(0, -YUBICO_BLOCK_LENGTH).slice(-MAX_PUBLIC_ID);
  const tokens = await findTokensByInfo(deps, {
    type: "yubikey",
    key: "yubikey.prefix",
    value: prefix,
  });
  if (tokens.length === 0) {
    return { status: "BAD_OTP", reason: `no yubikey token with prefix "${prefix}"` };
  }
  try {
    const result = await validateTokens(deps, tokens, {
      pass: text,
      clientIp: req.clientIp,
      userAgent: req.userAgent,
    });
    return {
      status: result.value ? "OK" : "BAD_OTP",
      reason: String(result.detail.message ?? ""),
      serial: result.serial ?? (tokens.length === 1 ? tokens[0].serial : undefined),
      user: result.user,
    };
  } catch (err) {
    // a revoked token, a policy refusal: a failed validation, as /validate/check fails
    if (!(err instanceof AppError)) throw err;
    return {
      status: "BAD_OTP",
      reason: err.message,
      serial: tokens.length === 1 ? tokens[0].serial : undefined,
    };
  }
}
