/**
 * The subscription file (spec 06 §3.1): one YAML mapping with the 18 signed
 * fields and `signature`. Parsing is strict: unknown keys, wrong types, bad
 * dates and over-long values are refused with a clear error instead of the
 * upstream 500s.
 *
 * @module
 */
import { parseDocument } from "yaml";
import { ParameterError, SubscriptionError } from "../../errors.ts";
import type { SubscriptionTable } from "../../db/schema.ts";
import { isoDay, SIGNED_FIELDS, type SignedField, type SignedValues } from "./signature.ts";

/** A subscription as stored (dates are midnight UTC in milliseconds). */
export type SubscriptionData = Omit<SubscriptionTable, "id" | "updated_at">;

/** Largest accepted subscription file in bytes. */
export const MAX_FILE_BYTES = 64 * 1024;

/** Column sizes of the string fields (privacyIDEA's model). */
export const FIELD_LIMITS: Record<string, number> = {
  application: 80,
  for_name: 80,
  for_address: 128,
  for_email: 128,
  for_phone: 50,
  for_url: 80,
  for_comment: 255,
  by_name: 50,
  by_email: 128,
  by_address: 128,
  by_phone: 50,
  by_url: 80,
  level: 80,
  signature: 640,
};

const DATE_FIELDS = new Set<string>(["date_from", "date_till"]);
const INT_FIELDS = new Set<string>(["num_users", "num_tokens", "num_clients"]);
const ALL_FIELDS = new Set<string>([...SIGNED_FIELDS, "signature"]);
const DATE_REGEXP = /^(\d{4})-(\d{2})-(\d{2})$/;
const MAX_INT = 2_147_483_647;

/** The upstream message form: `SubscriptionError('<text>', application=<app>)`. */
export function subscriptionError(
  text: string,
  application: string | undefined,
): SubscriptionError {
  return new SubscriptionError(
    `SubscriptionError(${pyRepr(text)}, application=${application ?? "None"})`,
  );
}

function pyRepr(text: string): string {
  if (text.includes("'") && !text.includes('"')) return `"${text}"`;
  return `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

/** Message when a signature cannot be checked (no key, missing field, bad value). */
export const VERIFY_FAILED = "Verifying the signature of your subscription failed.";
/** Message when a well-formed signature does not match. */
export const SIGNATURE_MISMATCH = "Signature of your subscription does not match.";

function malformed(reason: string): ParameterError {
  return new ParameterError(`Cannot parse subscription file: ${reason}`);
}

/** Midnight UTC of a `YYYY-MM-DD` text, or undefined for an impossible date. */
export function parseDay(text: string): number | undefined {
  const m = text.match(DATE_REGEXP);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) {
    return undefined;
  }
  return ms;
}

/** Result of {@link parseSubscriptionFile}: the data, or which field made verification fail. */
export type ParsedFile =
  | { ok: true; data: SubscriptionData }
  | { ok: false; application: string | undefined; reason: string };

/**
 * Parses the file text. Syntax errors, a non-mapping, unknown keys, bad dates
 * and over-long values throw a 905 ParameterError; a missing or null signed
 * field or a value of the wrong type is returned as `ok: false` because the
 * spec reports it as a failed signature check. `unsigned` accepts a draft
 * without `signature` (for signing).
 */
export function parseSubscriptionFile(
  text: string,
  options: { unsigned?: boolean } = {},
): ParsedFile {
  if (new TextEncoder().encode(text).length > MAX_FILE_BYTES) {
    throw malformed(`larger than ${MAX_FILE_BYTES} bytes`);
  }
  const doc = parseDocument(text, { intAsBigInt: true, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw malformed(`invalid YAML (${doc.errors[0].message.split("\n")[0]})`);
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 10 });
  } catch (err) {
    throw malformed(`invalid YAML (${(err as Error).message.split("\n")[0]})`);
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw) || raw instanceof Date) {
    throw malformed("expected a mapping of subscription fields");
  }
  const map = raw as Record<string, unknown>;
  for (const key of Object.keys(map)) {
    if (!ALL_FIELDS.has(key)) throw malformed(`unknown field "${key.slice(0, 40)}"`);
  }
  const appRaw = map.application;
  const application = typeof appRaw === "string"
    ? appRaw
    : typeof appRaw === "bigint"
    ? String(appRaw)
    : undefined;

  const out: Record<string, string | number> = {};
  for (const field of [...SIGNED_FIELDS, "signature"] as const) {
    const value = map[field];
    if (field === "signature" && options.unsigned) {
      // the CLI signs a draft: any old signature is replaced
      out[field] = "";
      continue;
    }
    if (value === undefined || value === null) {
      return { ok: false, application, reason: `missing field ${field}` };
    }
    if (DATE_FIELDS.has(field)) {
      let ms: number | undefined;
      if (value instanceof Date) ms = parseDay(value.toISOString().slice(0, 10));
      else if (typeof value === "string") ms = parseDay(value.trim());
      if (ms === undefined) throw malformed(`${field} must be a date YYYY-MM-DD`);
      out[field] = ms;
    } else if (INT_FIELDS.has(field)) {
      if (typeof value !== "bigint" || value < 0n || value > BigInt(MAX_INT)) {
        return { ok: false, application, reason: `${field} is not a non-negative integer` };
      }
      out[field] = Number(value);
    } else {
      let s: string;
      if (typeof value === "string") s = value;
      else if (typeof value === "bigint") s = value.toString(10);
      else return { ok: false, application, reason: `${field} is not a string` };
      if (s.length > FIELD_LIMITS[field]) {
        throw malformed(`${field} is longer than ${FIELD_LIMITS[field]} characters`);
      }
      if (s.includes("\0")) throw malformed(`${field} contains a NUL byte`);
      out[field] = s;
    }
  }
  const data = out as unknown as SubscriptionData;
  if (data.date_from > data.date_till) throw malformed("date_from is after date_till");
  return { ok: true, data };
}

/** The signed values of a stored subscription (dates as `YYYY-MM-DD`). */
export function signedValuesOf(data: SubscriptionData): SignedValues {
  const values = {} as Record<SignedField, string | number>;
  for (const field of SIGNED_FIELDS) {
    const v = data[field];
    values[field] = DATE_FIELDS.has(field) ? isoDay(v as number) : v;
  }
  return values;
}

function yamlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * Renders a subscription as the single-line flow mapping privacyIDEA's files
 * use (`{'application': 'x', …, 'signature': '…'}`); valid YAML.
 */
export function renderSubscriptionFile(values: SignedValues, signature: string): string {
  const parts = SIGNED_FIELDS.map((f) => {
    const v = values[f];
    return `${yamlString(f)}: ${typeof v === "number" ? String(v) : yamlString(v)}`;
  });
  parts.push(`'signature': ${yamlString(signature)}`);
  return `{${parts.join(", ")}}\n`;
}
