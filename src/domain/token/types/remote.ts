/**
 * `remote`: forwards the check to another privacyIDEA-compatible server (spec 14 §5),
 * named by the id of a `/privacyideaserver/` definition (`remote.server_id`). With
 * `remote.local_checkpin` the token PIN is checked here and only the OTP part goes upstream
 * ({@link REMOTE.checkOtp}); otherwise the whole `pass` goes there and the remote checks the
 * PIN (the engine's remote-PIN hook, {@link RadiusTokenExtras}). The upstream request is
 * `/validate/check` with `pass` and the non-empty `remote.user`, `remote.serial`,
 * `remote.realm`, `remote.resolver`. The remote server's own challenges are not relayed.
 *
 * @module
 */
import { ConfigAdminError, missingParameter, ParameterError } from "../../../errors.ts";
import { privacyideaServerById, remoteValidateCheck } from "../../privacyidea_server/mod.ts";
import type { TokenWithInfo } from "../model.ts";
import { param } from "./_oath.ts";
import type { RadiusTokenExtras, RadiusTokenOutcome } from "./radius.ts";
import {
  infoValue,
  type OtpCheck,
  type TokenType,
  type TypeCheckContext,
  type TypeInitContext,
  type TypeInitResult,
} from "./token_type.ts";

const TRUE = new Set(["1", "true", "yes", "on"]);
const FORWARDED = ["serial", "user", "realm", "resolver"] as const;
const MAX_VALUE = 255;

function isTrue(value: string | undefined): boolean {
  return value !== undefined && TRUE.has(value.trim().toLowerCase());
}

async function initRemote(ctx: TypeInitContext): Promise<TypeInitResult> {
  if ((param(ctx, "remote.server") ?? "") !== "") {
    throw new ParameterError(
      'Cannot parse parameter "remote.server": a server URL without a definition is not ' +
        "supported; define the server at /privacyideaserver/ and give its id as remote.server_id",
    );
  }
  const idText = param(ctx, "remote.server_id") ?? "";
  if (idText === "") throw missingParameter("remote.server_id");
  const id = /^\d{1,15}$/.test(idText.trim()) ? Number(idText.trim()) : NaN;
  if (!(await privacyideaServerById(ctx.deps, id))) {
    throw new ConfigAdminError("The specified privacyIDEA Server configuration does not exist.");
  }
  const info: Record<string, string> = {
    tokenkind: "virtual",
    "remote.server_id": String(id),
    "remote.local_checkpin": isTrue(param(ctx, "remote.local_checkpin")) ? "1" : "0",
  };
  for (const key of FORWARDED) {
    const value = param(ctx, `remote.${key}`) ?? "";
    if (value.length > MAX_VALUE) {
      throw new ParameterError(`Cannot parse parameter "remote.${key}": too long`);
    }
    if (value !== "") info[`remote.${key}`] = value;
  }
  if (!info["remote.serial"] && !info["remote.user"]) {
    // privacyIDEA enrols it and fails every check
    throw new ParameterError(
      "A remote token needs remote.serial or remote.user: the token or user to check remotely",
    );
  }
  return { otplen: 6, info };
}

/** Asks the remote server about `pass`. */
async function ask(ctx: TypeCheckContext, pass: string) {
  const info = ctx.token.info;
  const fields: [string, string][] = [["pass", pass]];
  for (const key of FORWARDED) {
    const value = infoValue(info, `remote.${key}`);
    if (value !== "") fields.push([key, value]);
  }
  return await remoteValidateCheck(ctx.deps, Number(infoValue(info, "remote.server_id")), fields);
}

function checksPinLocally(token: TokenWithInfo): boolean {
  return isTrue(infoValue(token.info, "remote.local_checkpin", "0"));
}

/** The `remote` type. */
export const REMOTE: TokenType & RadiusTokenExtras = {
  type: "remote",
  prefix: "PIRE",
  authenticates: true,
  challenge: true,
  defaultOtplen: 6,
  init: initRemote,
  /** With a local PIN: the OTP part goes upstream. */
  async checkOtp(ctx, otp): Promise<OtpCheck> {
    const out = await ask(ctx, otp);
    if (!out.isAccepted) return { isValid: false };
    return {
      isValid: true,
      info: out.serial ? { last_matching_remote_serial: out.serial } : undefined,
    };
  },
  pinCheckedRemotely(token) {
    return !checksPinLocally(token);
  },
  /** Without a local PIN: the whole pass goes upstream; upstream challenges are not relayed. */
  async authenticate(ctx, pass): Promise<RadiusTokenOutcome> {
    const out = await ask(ctx, pass);
    return out.isAccepted
      ? { result: "accept" }
      : { result: "reject", message: "remote side denied access" };
  },
};
