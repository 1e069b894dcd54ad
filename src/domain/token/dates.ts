/**
 * The date texts of tokens: creation date, validity periods, `failcounter_exceeded`,
 * `next_pin_change` and `last_auth`, as privacyIDEA writes and reads them.
 *
 * @module
 */
import { TokenAdminError } from "../../errors.ts";

/** `YYYY-MM-DDThh:mm:ss+00:00` of `ms`, whole seconds (format of creation_date). */
export function nowIso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "+00:00");
}

const VALIDITY_REGEXP =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?$/;

/** `value` when it is a validity-period date; else the refusal naming `key`. */
export function checkValidityDate(value: string, key: string): string {
  if (parseValidityDate(value) === undefined) {
    const which = key.endsWith("start") ? "start" : "end";
    throw new TokenAdminError(`Could not parse validity period ${which} date!`);
  }
  return value;
}

/** Parses a validity-period date (`YYYY-MM-DDThh:mm+zzzz`, ISO-8601) to ms; undefined if bad. */
export function parseValidityDate(value: string): number | undefined {
  const m = value.trim().match(VALIDITY_REGEXP);
  if (!m) return undefined;
  let zone = m[7] ?? "Z";
  if (zone !== "Z" && !zone.includes(":")) zone = `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? "00"}${zone}`);
  return Number.isFinite(ms) ? ms : undefined;
}

/** `YYYY-MM-DDThh:mm+0000` (format of validity periods and failcounter_exceeded). */
export function validityStamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16) + "+0000";
}

/** `YYYY-MM-DD hh:mm:ss.ffffff+0000` (format of last_auth). */
export function lastAuthStamp(ms: number): string {
  // checks answered in the same millisecond share the text
  if (ms === lastStamp.ms) return lastStamp.text;
  const iso = new Date(ms).toISOString();
  const text = `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${iso.slice(20, 23)}000+0000`;
  lastStamp = { ms, text };
  return text;
}

let lastStamp = { ms: NaN, text: "" };
