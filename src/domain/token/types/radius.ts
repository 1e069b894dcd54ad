/**
 * `radius`: forwards the OTP (or the whole `pass`) to a RADIUS server
 * (spec 08 §3). The server is a `/radiusserver/` definition named by tokeninfo
 * `radius.identifier` (or the legacy `radius.server` / system settings); the
 * User-Name sent upstream is tokeninfo `radius.user`.
 *
 * With `radius.local_checkpin` the validate engine checks the PIN locally and
 * {@link RADIUS.checkOtp} sends the OTP part. Without it the PIN is checked by
 * the RADIUS server: the engine must skip the local PIN check when
 * {@link RadiusTokenExtras.pinCheckedRemotely} is true and call
 * {@link radiusAuthenticate}, which also handles upstream Access-Challenge/State.
 *
 * @module
 */
import { missingParameter, ParameterError } from "../../../errors.ts";
import { fromHex, toHex } from "../../../lib/random.ts";
import { param } from "./_oath.ts";
import { decryptSecretText } from "../../../lib/crypto.ts";
import {
  askRadiusServer,
  nasIdentifierOf,
  type RadiusAnswer,
  sendRadiusTo,
} from "../../radius_server/mod.ts";
import type { TokenWithInfo } from "../model.ts";
import {
  infoValue,
  type OtpCheck,
  type TokenType,
  type TypeCheckContext,
  type TypeInitContext,
  type TypeInitResult,
} from "./token_type.ts";

/** Challenge message when upstream sends none, and of the local-PIN challenge. */
export const RADIUS_CHALLENGE_MESSAGE = "Enter your RADIUS tokencode:";
/** Challenge data key holding the hex of the upstream State. */
export const RADIUS_STATE_KEY = "radius_state";

const TRUE = new Set(["1", "true", "yes", "on"]);
const LEGACY_PORT = 1812;
const LEGACY_TIMEOUT = 5;
const LEGACY_RETRIES = 3;

function isTrue(value: string | undefined): boolean {
  return value !== undefined && TRUE.has(value.trim().toLowerCase());
}

function parseHostPort(text: string, what: string): { server: string; port: number } {
  const m = text.trim().match(/^(?:\[([^\]]+)\]|([^:\s]+))(?::(\d{1,5}))?$/);
  const port = m?.[3] === undefined ? LEGACY_PORT : Number(m[3]);
  if (!m || port < 1 || port > 65535) {
    throw new ParameterError(`Cannot parse parameter "${what}": expected host[:port]`);
  }
  return { server: m[1] ?? m[2], port };
}

function initRadius(ctx: TypeInitContext): TypeInitResult {
  const identifier = param(ctx, "radius.identifier") ?? "";
  const user = param(ctx, "radius.user") ?? "";
  const server = param(ctx, "radius.server") ?? "";
  const secret = param(ctx, "radius.secret") ?? "";
  const systemSettings = isTrue(param(ctx, "radius.system_settings"));
  if (user === "") throw missingParameter("radius.user");
  if (identifier === "" && server === "" && secret === "" && !systemSettings) {
    throw missingParameter("radius.identifier");
  }
  if (identifier.length > 255 || user.length > 253) {
    throw new ParameterError('Cannot parse parameter "radius.identifier": too long');
  }
  if (server !== "") parseHostPort(server, "radius.server");
  const otplenParam = param(ctx, "otplen");
  let otplen = 6;
  if (otplenParam !== undefined && otplenParam !== "") {
    otplen = Number(otplenParam);
    if (!Number.isInteger(otplen) || otplen < 1 || otplen > 32) {
      throw new ParameterError(
        `Cannot parse parameter "otplen": expected an integer from 1 to 32, got "${otplenParam}"`,
      );
    }
  }
  const info: Record<string, string> = {
    tokenkind: "virtual",
    "radius.user": user,
    "radius.local_checkpin": isTrue(param(ctx, "radius.local_checkpin")) ? "1" : "0",
  };
  if (identifier !== "") info["radius.identifier"] = identifier;
  if (server !== "") info["radius.server"] = server;
  if (systemSettings) info["radius.system_settings"] = "1";
  return {
    otplen,
    info,
    // the legacy shared secret is stored encrypted, never as plain tokeninfo
    secretInfo: secret !== "" ? { "radius.secret": secret } : undefined,
  };
}

/** True when the token checks its PIN locally (`radius.local_checkpin`). */
export function checksPinLocally(token: TokenWithInfo): boolean {
  return isTrue(infoValue(token.info, "radius.local_checkpin", "0"));
}

async function ask(
  ctx: TypeCheckContext,
  password: string,
  state?: Uint8Array,
): Promise<RadiusAnswer> {
  const info = ctx.token.info;
  const identifier = infoValue(info, "radius.identifier");
  const question = {
    userName: infoValue(info, "radius.user"),
    password,
    state,
    // the engine already loaded the system config
    nasIdentifier: nasIdentifierOf(ctx.system),
  };
  if (identifier !== "") return await askRadiusServer(ctx.deps, identifier, question);
  return await sendRadiusTo(ctx.deps, legacyTarget(ctx), question);
}

function legacyTarget(ctx: TypeCheckContext) {
  const info = ctx.token.info;
  const useSystem = isTrue(infoValue(info, "radius.system_settings"));
  const hostPort = useSystem ? ctx.system.get("radius.server") : infoValue(info, "radius.server");
  const stored = info["radius.secret"];
  const secret = useSystem
    ? ctx.system.get("radius.secret")
    : stored?.type === "password"
    ? decryptSecretText(ctx.deps.keys.token, stored.value)
    : "";
  const { server, port } = parseHostPort(hostPort, "radius.server");
  return {
    server,
    port,
    secret,
    retries: LEGACY_RETRIES,
    timeout: LEGACY_TIMEOUT,
    messageAuthenticator: false,
  };
}

/** Outcome of {@link radiusAuthenticate}. */
export type RadiusTokenOutcome =
  | { result: "accept" }
  | { result: "reject"; message?: string }
  | {
    result: "challenge";
    /** Message for `detail.message`. */
    message: string;
    /** Challenge data to store: `{radius_state: <hex of upstream State>}`. */
    data: Record<string, string>;
  };

/**
 * Authenticates a radius token with one upstream request (spec 08 §3.2/3.3).
 * `pass` is the whole pass (remote PIN) or the OTP part (local PIN, after the
 * engine checked the PIN). `challengeData` is the data of the challenge being
 * answered (its upstream State is sent back). An upstream Access-Challenge
 * becomes a "challenge" outcome only when `challengeAllowed` (auth policy
 * `challenge_response` includes `radius`); otherwise it is a reject.
 */
export async function radiusAuthenticate(
  ctx: TypeCheckContext,
  pass: string,
  options: { challengeData?: Record<string, unknown>; challengeAllowed?: boolean } = {},
): Promise<RadiusTokenOutcome> {
  const stateHex = options.challengeData?.[RADIUS_STATE_KEY];
  let state: Uint8Array | undefined;
  if (typeof stateHex === "string" && stateHex !== "") {
    try {
      state = fromHex(stateHex);
    } catch {
      state = undefined;
    }
  }
  const answer = await ask(ctx, pass, state);
  if (answer.result === "accept") return { result: "accept" };
  if (answer.result === "challenge" && options.challengeAllowed) {
    return {
      result: "challenge",
      message: answer.replyMessages[0] || RADIUS_CHALLENGE_MESSAGE,
      data: { [RADIUS_STATE_KEY]: answer.state ? toHex(answer.state) : "" },
    };
  }
  return { result: "reject", message: answer.replyMessages[0] };
}

/** Hooks the validate engine needs beyond {@link TokenType} for remote-PIN tokens. */
export interface RadiusTokenExtras {
  /** True: skip the local PIN check and give the whole `pass` to {@link radiusAuthenticate}. */
  pinCheckedRemotely(token: TokenWithInfo): boolean;
  authenticate: typeof radiusAuthenticate;
}

/** The `radius` type. */
export const RADIUS: TokenType & RadiusTokenExtras = {
  type: "radius",
  prefix: "PIRA",
  authenticates: true,
  challenge: true,
  defaultOtplen: 6,
  init: initRadius,
  /** Sends `otp` upstream without State; only Access-Accept is valid. */
  async checkOtp(ctx: TypeCheckContext, otp: string): Promise<OtpCheck> {
    const answer = await ask(ctx, otp);
    return { isValid: answer.result === "accept" };
  },
  challengeExtras() {
    return { message: RADIUS_CHALLENGE_MESSAGE };
  },
  pinCheckedRemotely(token) {
    return !checksPinLocally(token);
  },
  authenticate: radiusAuthenticate,
};
