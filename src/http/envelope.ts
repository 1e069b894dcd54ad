/**
 * The privacyIDEA response envelope (spec 01 §2, §3) for every JSON response,
 * with optional response signing (§4).
 *
 * @module
 */
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";
import { VERSION } from "../version.ts";
import { AppError, AuthError, errorCodeOf, errorMessageOf, httpStatusOf } from "../errors.ts";
import { pythonJson } from "../lib/py_json.ts";

/** Stands in for privacyIDEA's server thread id in `detail.threadid`. */
export const THREAD_ID = Deno.pid;

/** Options of {@link ok}. */
export interface OkOptions {
  /** `detail` object; omitted from the response when empty. */
  detail?: Record<string, unknown>;
  /** Top-level siblings of `result` (e.g. `auth_items`). */
  extra?: Record<string, unknown>;
  /** HTTP status (default 200). */
  status?: number;
}

/** `result.authentication` per spec 01 §2.1. */
export function authenticationOf(
  value: unknown,
  detail: Record<string, unknown> | undefined,
): string {
  const multi = detail?.multi_challenge;
  const hasMulti = Array.isArray(multi) ? multi.length > 0 : Boolean(multi);
  if (value && value !== "CHALLENGE" && !hasMulti) return "ACCEPT";
  if (value === "CHALLENGE") return "CHALLENGE";
  if (hasMulti || (detail && "passkey" in detail)) return "CHALLENGE";
  if (
    !value && (detail?.challenge_status === "declined" || detail?.challenge_status === "cancelled")
  ) {
    return "DECLINED";
  }
  return "REJECT";
}

/** A success envelope. Endpoints marked auth-style get id 2 and `result.authentication`. */
export async function ok(
  c: Context<AppEnv>,
  value: unknown,
  options: OkOptions = {},
): Promise<Response> {
  const authStyle = c.get("authStyle") === true;
  const result: Record<string, unknown> = { status: true, value };
  const detail = options.detail && Object.keys(options.detail).length > 0
    ? { ...options.detail, threadid: THREAD_ID }
    : undefined;
  if (authStyle) result.authentication = authenticationOf(value, detail);
  const body: Record<string, unknown> = {
    id: authStyle ? 2 : 1,
    jsonrpc: "2.0",
    result,
    time: c.get("deps").clock.now() / 1000,
    version: `Tessera ${VERSION}`,
    versionnumber: c.get("deps").config.compat.versionnumber,
  };
  if (detail) body.detail = detail;
  if (options.extra) Object.assign(body, options.extra);
  return await send(c, body, options.status ?? 200);
}

/** The error envelope for any thrown value (spec 01 §3). */
export async function errorEnvelope(c: Context<AppEnv>, err: unknown): Promise<Response> {
  let detail: Record<string, unknown> | null = null;
  if (err instanceof AppError && err.detail !== undefined) {
    detail = Object.keys(err.detail).length > 0 ? { ...err.detail, threadid: THREAD_ID } : {};
  } else if (err instanceof AuthError && c.req.path.replace(/\/+$/, "") === "/auth") {
    detail = {};
  }
  const body = {
    detail,
    id: 1,
    jsonrpc: "2.0",
    result: { status: false, error: { code: errorCodeOf(err), message: errorMessageOf(err) } },
    time: (c.get("deps")?.clock.now() ?? Date.now()) / 1000,
    version: `Tessera ${VERSION}`,
  };
  return await send(c, body, httpStatusOf(err));
}

async function send(
  c: Context<AppEnv>,
  body: Record<string, unknown>,
  status: number,
): Promise<Response> {
  const signer = c.get("deps")?.signer;
  let text: string;
  if (signer) {
    const nonce = c.get("params")?.nonce;
    if (typeof nonce === "string" && nonce !== "") body.nonce = nonce;
    const canonical = pythonJson(body);
    const signature = await signer.sign(canonical);
    text = canonical.slice(0, -1) + (canonical.length > 2 ? ", " : "") +
      `"signature": "rsa_sha256_pss:${signature}"}`;
  } else {
    text = JSON.stringify(body);
  }
  const response = new Response(text, {
    status,
    headers: {
      "content-type": "application/json",
      // responses may carry credentials (JWTs, enrolment secrets): never cache
      "cache-control": "no-store, no-cache",
    },
  });
  // post event handlers read the body from here instead of re-parsing the text
  ENVELOPE_BODIES.set(response, body);
  // compression skips small answers by this, without reading them (http/compress.ts)
  ENVELOPE_LENGTHS.set(response, text.length);
  return response;
}

/** The envelope object each response was made from (read by the event middleware). */
export const ENVELOPE_BODIES: WeakMap<Response, Record<string, unknown>> = new WeakMap();

/** The length (UTF-16 units, at most the byte count) of each envelope response's text. */
export const ENVELOPE_LENGTHS: WeakMap<Response, number> = new WeakMap();
