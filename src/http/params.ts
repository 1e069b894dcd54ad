/**
 * Parameter intake (spec 01 §1, 09 §1.2): query, urlencoded or multipart form,
 * and JSON body merged into one flat map, with the second percent-decoding of
 * query/form/path values for every client but three.
 *
 * @module
 */
import type { Context } from "hono";
import type { AppEnv, Params } from "./context.ts";
import { HttpError, missingParameter, ParameterError } from "../errors.ts";
import { decodeFormComponent, needsSecondDecoding, unquoteAgain } from "../lib/percent.ts";

/** Longest accepted parameter name. */
const MAX_KEY_LENGTH = 256;

function badRequest(message: string): ParameterError {
  return new ParameterError(message);
}

/** Parses `a=1&b=2` strictly; the first value of a repeated key wins. */
export function parseUrlEncoded(text: string, into: Params, what: string): void {
  if (text === "") return;
  for (const part of text.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? "" : part.slice(eq + 1);
    const key = decodeFormComponent(rawKey);
    const value = decodeFormComponent(rawValue);
    if (key === undefined || value === undefined) {
      throw badRequest(`Cannot parse ${what}: invalid percent-encoding`);
    }
    if (!(key in into)) into[key] = value;
  }
}

function checkValue(key: string, value: unknown, depth = 0): void {
  if (key.length > MAX_KEY_LENGTH) {
    throw badRequest("Cannot parse request: parameter name too long");
  }
  if (key.includes("\0")) throw badRequest("Cannot parse request: NUL byte in a parameter name");
  if (typeof value === "string") {
    if (value.includes("\0")) {
      throw badRequest(`Cannot parse parameter "${key}": NUL byte in value`);
    }
  } else if (value !== null && typeof value === "object" && !(value instanceof File)) {
    if (depth > 20) throw badRequest("Cannot parse request: JSON nested too deeply");
    for (const [k, v] of Object.entries(value)) {
      checkValue(Array.isArray(value) ? key : k, v, depth + 1);
    }
  }
}

/** Reads the body (bounded by `limit`) and merges every parameter source. */
export async function readParams(c: Context<AppEnv>, limit: number): Promise<Params> {
  const req = c.req.raw;
  const params: Params = {};
  const url = req.url;
  const q = url.indexOf("?");
  if (q >= 0) {
    const hash = url.indexOf("#", q);
    parseUrlEncoded(url.slice(q + 1, hash < 0 ? undefined : hash), params, "query string");
  }

  let json: Record<string, unknown> | undefined;
  if (req.body !== null && req.method !== "GET" && req.method !== "HEAD") {
    const length = req.headers.get("content-length");
    const declared = Number(length ?? "0");
    if (declared > limit) throw new HttpError(413, `Request body larger than ${limit} bytes`, 905);
    // a declared length bounds the body (HTTP framing): read it whole, in one step
    const bytes = length !== null && /^\d+$/.test(length)
      ? new Uint8Array(await req.arrayBuffer())
      : await readBounded(req, limit);
    const type = (req.headers.get("content-type") ?? "").toLowerCase();
    if (bytes.length > 0) {
      if (type.startsWith("application/json") || type.includes("+json")) {
        json = parseJsonObject(bytes, true)!;
      } else if (type.startsWith("application/x-www-form-urlencoded")) {
        const text = decodeUtf8(bytes);
        if (text === undefined) throw badRequest("Cannot parse form body: invalid UTF-8");
        parseUrlEncoded(text, params, "form body");
      } else if (type.startsWith("multipart/form-data")) {
        await parseMultipart(bytes, req.headers.get("content-type")!, params);
      } else {
        // privacyIDEA also merges a JSON object sent without a JSON content type
        json = parseJsonObject(bytes, false);
      }
    }
  }

  if (needsSecondDecoding(req.headers.get("user-agent"))) {
    for (const [k, v] of Object.entries(params)) {
      if (typeof v === "string") params[k] = unquoteAgain(v);
    }
  }
  if (json) Object.assign(params, json);
  for (const [k, v] of Object.entries(params)) checkValue(k, v);
  return params;
}

async function readBounded(req: Request, limit: number): Promise<Uint8Array> {
  const reader = req.body!.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      throw new HttpError(413, `Request body larger than ${limit} bytes`, 905);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let off = 0;
  for (const ch of chunks) {
    out.set(ch, off);
    off += ch.length;
  }
  return out;
}

// decode() without {stream: true} keeps no state between calls: one decoder serves all
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function parseJsonObject(bytes: Uint8Array, strict: boolean): Record<string, unknown> | undefined {
  const text = decodeUtf8(bytes);
  let parsed: unknown;
  try {
    if (text === undefined) throw new Error("invalid UTF-8");
    parsed = JSON.parse(text);
  } catch {
    if (strict) throw badRequest("Cannot parse request body: malformed JSON");
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    if (strict) throw badRequest("Cannot parse request body: the JSON body must be an object");
    return undefined;
  }
  return parsed as Record<string, unknown>;
}

async function parseMultipart(bytes: Uint8Array, contentType: string, into: Params): Promise<void> {
  let form: FormData;
  try {
    form = await new Response(bytes as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": contentType },
    }).formData();
  } catch {
    throw badRequest("Cannot parse multipart form body");
  }
  for (const [key, value] of form.entries()) {
    if (!(key in into)) into[key] = value;
  }
}

/** A path parameter, decoded once by the router and once more per the quirk. */
export function pathParam(c: Context<AppEnv>, name: string): string {
  const v = c.req.param(name as never) as string | undefined;
  if (v === undefined) return "";
  if (v.includes("\0")) throw badRequest(`Cannot parse path parameter "${name}": NUL byte`);
  return needsSecondDecoding(c.req.header("user-agent")) ? unquoteAgain(v) : v;
}

/** Reads a parameter as a string; numbers and booleans are stringified. */
export function stringParam(params: Params, name: string): string | undefined {
  const v = params[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new ParameterError(`Cannot parse parameter "${name}": expected a string`);
}

/** A required, non-empty string parameter (else 905 "Missing parameter: <name>"). */
export function requireString(params: Params, name: string): string {
  const v = stringParam(params, name);
  if (v === undefined || v === "") throw missingParameter(name);
  return v;
}

const TRUE_STRINGS = new Set(["1", "true", "yes", "on"]);
const FALSE_STRINGS = new Set(["0", "false", "no", "off", ""]);

/** Reads a boolean parameter (true/1/yes/on, false/0/no/off/""); `fallback` when absent. */
export function boolParam(params: Params, name: string, fallback = false): boolean {
  const v = params[name];
  if (v === undefined || v === null) return fallback;
  if (typeof v === "boolean") return v;
  if (typeof v === "number" && (v === 0 || v === 1)) return v === 1;
  if (typeof v === "string") {
    const s = v.trim().toLowerCase();
    if (TRUE_STRINGS.has(s)) return true;
    if (FALSE_STRINGS.has(s)) return false;
  }
  throw new ParameterError(
    `Cannot parse parameter "${name}": expected a boolean, got "${String(v)}"`,
  );
}

/** Reads an integer parameter within [min, max]; `fallback` when absent or empty. */
export function intParam(
  params: Params,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number;
export function intParam(
  params: Params,
  name: string,
  fallback: undefined,
  min: number,
  max: number,
): number | undefined;
export function intParam(
  params: Params,
  name: string,
  fallback: number | undefined,
  min: number,
  max: number,
): number | undefined {
  const v = params[name];
  if (v === undefined || v === null || v === "") return fallback;
  const n = typeof v === "number"
    ? v
    : typeof v === "string" && /^\s*-?\d+\s*$/.test(v)
    ? Number(v)
    : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ParameterError(
      `Cannot parse parameter "${name}": expected an integer from ${min} to ${max}, got "${
        String(v)
      }"`,
    );
  }
  return n;
}
