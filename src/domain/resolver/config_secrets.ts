/**
 * Helpers for resolver configurations whose values are JSON objects: secrets
 * inside such a value (`client_certificate.private_key_password`, stored
 * encrypted and listed as `__CENSORED__` on their own). The rule that a stored
 * secret is not kept when the place it is sent to changes is domain/secret_targets'.
 *
 * @module
 */
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
