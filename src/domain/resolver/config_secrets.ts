/**
 * Helpers for resolver configurations whose values are JSON objects: secrets
 * inside such a value (`client_certificate.private_key_password`, stored
 * encrypted and listed as `__CENSORED__` on their own). The rule that a stored
 * secret is not kept when the place it is sent to changes is domain/secret_targets'.
 *
 * A password inside a URL in such an object (an endpoint
 * `https://user:pw@host/users`) is censored and kept as a top-level URL's is
 * ({@link censorObjectUrls}, {@link keepObjectUrlPasswords}).
 *
 * @module
 */
import { CENSORED } from "../../lib/crypto.ts";
import { censorUrlPassword, keepUrlPassword } from "../secret_targets/url.ts";

/** Whether a stored flag reads as true. */
export function isTrueText(value: string | undefined): boolean {
  return ["1", "true", "yes", "on"].includes((value ?? "").trim().toLowerCase());
}

/** A stored value as a JSON object (an object is returned as it is), else undefined. */
export function objectOf(value: unknown): Record<string, unknown> | undefined {
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
    ? parsed as Record<string, unknown>
    : undefined;
}

/** `[key, sub]` of every secret inside a JSON object value (`key.sub`). */
export function subSecrets(secrets: string[]): [string, string][] {
  return secrets.filter((s) => s.includes(".")).map((s) => {
    const dot = s.indexOf(".");
    return [s.slice(0, dot), s.slice(dot + 1)];
  });
}

/** `config` with each sub-secret value replaced by `fn` (undefined deletes the sub-key). */
export function mapSubSecrets(
  config: Record<string, string>,
  secrets: string[],
  fn: (value: string, key: string, sub: string) => string | undefined,
): Record<string, string> {
  let out = config;
  for (const [key, sub] of subSecrets(secrets)) {
    const obj = objectOf(out[key]);
    if (!obj || typeof obj[sub] !== "string") continue;
    const next = fn(obj[sub] as string, key, sub);
    if (next === undefined) delete obj[sub];
    else obj[sub] = next;
    out = { ...out, [key]: JSON.stringify(obj) };
  }
  return out;
}

/** `value` with the password of every URL among its strings, at any depth, censored. */
export function censorObjectUrls(value: unknown): unknown {
  if (typeof value === "string") return censorUrlPassword(value);
  if (Array.isArray(value)) return value.map(censorObjectUrls);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, censorObjectUrls(v)]));
}

/**
 * The JSON object text `sent` of key `name` with each URL whose password is
 * `__CENSORED__` given the stored one at the same place in `stored`, by the
 * rule of {@link keepUrlPassword} (refused when none is stored there or the
 * URL's target moved). Text that is no JSON object, or holds no placeholder,
 * is returned as it is.
 */
export function keepObjectUrlPasswords(name: string, sent: string, stored: string | undefined) {
  if (!sent.includes(CENSORED)) return sent;
  const obj = objectOf(sent);
  if (!obj) return sent;
  const keep = (path: string, v: unknown, old: unknown): unknown => {
    if (typeof v === "string") {
      return keepUrlPassword(path, v, typeof old === "string" ? old : undefined);
    }
    if (Array.isArray(v)) {
      return v.map((x, i) => keep(`${path}.${i}`, x, Array.isArray(old) ? old[i] : undefined));
    }
    if (v === null || typeof v !== "object") return v;
    const before = old !== null && typeof old === "object" ? old as Record<string, unknown> : {};
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, keep(`${path}.${k}`, x, before[k])]),
    );
  };
  return JSON.stringify(keep(name, obj, objectOf(stored)));
}
