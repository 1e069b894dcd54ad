/**
 * `yubico`: a YubiKey in Yubico OTP mode whose OTPs a Yubico-compatible
 * validation server checks (spec 11 §7): YubiCloud or a self-hosted
 * yubikey-val. Tessera keeps no key, only the public id (`yubico.tokenid`);
 * the server keeps the counters and answers a replay with `REPLAYED_OTP`.
 *
 * The request carries a fresh nonce and the protocol's HMAC-SHA1 signature
 * under system config `yubico.secret`; an answer counts only with
 * `status=OK`, our nonce and OTP echoed, and a valid signature. An unreachable
 * or slow server is a failed authentication after `yubico.timeout` seconds
 * (default 5, not privacyIDEA's 60: a login waits on this call), never an error.
 *
 * @module
 */
import { readBodyPrefix } from "../../../lib/read_body.ts";
import { missingParameter, ParameterError } from "../../../errors.ts";
import { toHex } from "../../../lib/random.ts";
import {
  base64Bytes,
  isYubicoSignature,
  MODHEX_REGEXP,
  parseYubicoReply,
  yubicoSignature,
} from "../../../lib/yubico_otp.ts";
import type { SystemConfig } from "../../system_config/mod.ts";
import { param } from "./_oath.ts";
import {
  infoValue,
  type OtpCheck,
  type TokenType,
  type TypeCheckContext,
  type TypeInitContext,
  type TypeInitResult,
} from "./token_type.ts";

/** YubiCloud's verify URL, the default of `yubico.url`. */
export const YUBICO_DEFAULT_URL = "https://api.yubico.com/wsapi/2.0/verify";
/** Seconds to wait for the validation server unless `yubico.timeout` says otherwise. */
export const YUBICO_DEFAULT_TIMEOUT_S = 5;

const TOKENID_LENGTH = 12;
const OTP_LENGTH = 44;
const MAX_REPLY = 4096;

function initYubico(ctx: TypeInitContext): TypeInitResult {
  const given = (param(ctx, "yubico.tokenid") ?? "").trim();
  if (given === "") throw missingParameter("yubico.tokenid");
  if (given.length < TOKENID_LENGTH) {
    // privacyIDEA raises this as an untyped exception (HTTP 500); a 400 says what is wrong
    throw new ParameterError("The Yubikey token ID needs to be 12 characters long!");
  }
  const tokenid = given.slice(0, TOKENID_LENGTH).toLowerCase();
  if (!MODHEX_REGEXP.test(tokenid)) {
    throw new ParameterError(
      `Cannot parse parameter "yubico.tokenid": expected the modhex public id of the YubiKey, got "${tokenid}"`,
    );
  }
  return {
    secret: new Uint8Array(0),
    otplen: OTP_LENGTH,
    info: { "yubico.tokenid": tokenid, tokenkind: "hardware" },
  };
}

/** The validation server settings from system config. */
interface YubicoServer {
  url: URL;
  id: string;
  key: Uint8Array;
  isPost: boolean;
  timeoutMs: number;
}

function serverOf(system: SystemConfig): YubicoServer | string {
  let url: URL;
  try {
    url = new URL(system.get("yubico.url") || YUBICO_DEFAULT_URL);
  } catch {
    return `system config "yubico.url" is not a URL`;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return `system config "yubico.url" is not an http(s) URL`;
  }
  const id = system.get("yubico.id").trim();
  if (id === "") return `system config "yubico.id" is not set`;
  const key = base64Bytes(system.get("yubico.secret"));
  if (!key) return `system config "yubico.secret" is not set or not base64`;
  const timeout = Number(system.get("yubico.timeout"));
  const timeoutS = Number.isFinite(timeout) && timeout > 0 && timeout <= 60
    ? timeout
    : YUBICO_DEFAULT_TIMEOUT_S;
  return { url, id, key, isPost: system.bool("yubico.do_post"), timeoutMs: timeoutS * 1000 };
}

/** Asks the validation server about `otp`; the reason when it is not a valid OK. */
async function verifyRemotely(
  ctx: TypeCheckContext,
  server: YubicoServer,
  otp: string,
): Promise<string | undefined> {
  const nonce = toHex(ctx.deps.random.bytes(20));
  const params: Record<string, string> = { id: server.id, otp, nonce };
  params.h = yubicoSignature(params, server.key);
  const url = new URL(server.url);
  let body: string | undefined;
  if (server.isPost) body = new URLSearchParams(params).toString();
  else for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  let text: string;
  try {
    const res = await fetch(url, {
      method: server.isPost ? "POST" : "GET",
      headers: server.isPost ? { "content-type": "application/x-www-form-urlencoded" } : {},
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(server.timeoutMs),
    });
    const answer = await readBodyPrefix(res, MAX_REPLY);
    // a verify answer is a few lines: anything larger is not one
    if (answer.isTruncated) throw new Error(`the answer is longer than ${MAX_REPLY} bytes`);
    text = answer.text;
    if (res.status !== 200) return `the server answered HTTP ${res.status}`;
  } catch (err) {
    return `the server did not answer: ${(err as Error).message}`;
  }
  const reply = parseYubicoReply(text);
  if (!reply.h || !isYubicoSignature(reply, server.key, reply.h)) {
    return "the answer's signature is wrong";
  }
  // a signed answer to another request (an old one replayed to us) is no answer
  if (reply.nonce !== nonce) return "the answer carries another nonce";
  if (reply.otp !== otp) return "the answer is about another OTP";
  if (reply.status !== "OK") return `the server answered status ${reply.status ?? "(none)"}`;
  return undefined;
}

/** The `yubico` type. */
export const YUBICO: TokenType = {
  type: "yubico",
  prefix: "UBCM",
  authenticates: true,
  challenge: true,
  defaultOtplen: OTP_LENGTH,
  init: initYubico,
  async checkOtp(ctx, given): Promise<OtpCheck> {
    // a YubiKey types upper case under caps lock
    const otp = given.toLowerCase();
    const tokenid = infoValue(ctx.token.info, "yubico.tokenid").toLowerCase();
    if (otp.length !== OTP_LENGTH || tokenid === "") return { isValid: false };
    if (otp.slice(0, TOKENID_LENGTH) !== tokenid) return { isValid: false };
    // only modhex goes out: nothing else is a Yubico OTP, and it cannot reshape the request
    if (!MODHEX_REGEXP.test(otp)) return { isValid: false };
    const server = serverOf(ctx.system);
    if (typeof server === "string") {
      ctx.deps.log.error("Cannot check a yubico token", {
        serial: ctx.token.serial,
        reason: server,
      });
      return { isValid: false };
    }
    const problem = await verifyRemotely(ctx, server, otp);
    if (problem) {
      ctx.deps.log.warn("Yubico validation refused an OTP", {
        serial: ctx.token.serial,
        server: server.url.origin,
        reason: problem,
      });
      return { isValid: false };
    }
    return { isValid: true };
  },
};
