/**
 * `applspec`: application-specific password (spec 14 §6). A static password,
 * like `pw`, bound to a service: it takes part in a check only when the request
 * names the same `service_id` (case-insensitively); without it the token is
 * left out as if the user did not have it. The `service_id` is any text, not
 * checked against the `/serviceid/` definitions (as privacyIDEA).
 *
 * @module
 */
import { otpEqual } from "../../../lib/otp.ts";
import { passwordFromContents } from "../../../lib/char_policy.ts";
import { missingParameter, ParameterError } from "../../../errors.ts";
import { param } from "./_oath.ts";
import type { TokenType, TypeInitContext } from "./token_type.ts";

const MAX_PASSWORD = 200;
const SERVICE_ID = "service_id";

/**
 * The password: `otpkey` as given, else (or under `applspec_force_server_generate`)
 * generated from the request's `applspec.length` (default 23) and
 * `applspec.contents` (default `cn`), as privacyIDEA; the `pw`/`registration`
 * length and contents policies do not apply to it.
 */
function passwordOf(ctx: TypeInitContext): string {
  const given = ctx.policies?.applspec_force_server_generate ? "" : param(ctx, "otpkey") ?? "";
  if (given !== "") return given;
  const lengthText = param(ctx, "applspec.length") ?? "23";
  const length = Number(lengthText);
  if (!/^\d+$/.test(lengthText.trim()) || length < 1 || length > MAX_PASSWORD) {
    throw new ParameterError(
      `Cannot parse parameter "applspec.length": expected 1 to ${MAX_PASSWORD}`,
    );
  }
  const contents = param(ctx, "applspec.contents") ?? "cn";
  const out = passwordFromContents(ctx.deps.random, contents, length);
  if (out === undefined) {
    throw new ParameterError(
      `Cannot parse parameter "applspec.contents": unknown character specifier "${contents}"`,
    );
  }
  return out;
}

function initApplspec(ctx: TypeInitContext) {
  const serviceId = param(ctx, SERVICE_ID);
  if (serviceId === undefined || serviceId === "") throw missingParameter(SERVICE_ID);
  const password = passwordOf(ctx);
  if (password.length > MAX_PASSWORD) {
    throw new ParameterError(`Cannot parse parameter "otpkey": longer than ${MAX_PASSWORD}`);
  }
  return {
    secret: new TextEncoder().encode(password),
    otplen: password.length,
    info: { tokenkind: "software", [SERVICE_ID]: serviceId },
    detail: { password },
  };
}

/** The `applspec` type. */
export const APPLSPEC: TokenType = {
  type: "applspec",
  prefix: "ASPW",
  authenticates: true,
  challenge: false,
  init: initApplspec,
  checkOtp(ctx, otp) {
    const stored = new TextDecoder().decode(ctx.secret);
    return { isValid: stored !== "" && otpEqual(stored, otp) };
  },
  isCandidate(token, request) {
    const wanted = request.serviceId;
    const own = token.info[SERVICE_ID]?.value;
    return !!wanted && !!own && own.toLowerCase() === wanted.toLowerCase();
  },
};
