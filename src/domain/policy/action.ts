/**
 * Policy action strings (spec 04 §1 "Action string"): parsing the stored
 * comma-separated form, normalising input, and splitting action values.
 *
 * @module
 */
import { ParameterError } from "../../errors.ts";

/** Parsed actions: name → `true` or the string value. */
export type ActionMap = Record<string, string | true>;

// a comma not preceded by a backslash separates entries
const ENTRY_SPLIT_REGEXP = /(?<!\\),/;
const ENTRY_SPLIT_REGEXP_G = /(?<!\\),/g;

/** Parses a stored action string into its map (entries trimmed as a whole, `=` splits once). */
export function parseActionString(text: string): ActionMap {
  const out: ActionMap = {};
  if (text.trim() === "") return out;
  for (const raw of text.split(ENTRY_SPLIT_REGEXP)) {
    const entry = raw.trim();
    if (entry === "") continue;
    const eq = entry.indexOf("=");
    if (eq < 0) out[entry] = true;
    else out[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return out;
}

/** Turns API input (string, JSON object or list of strings) into the stored action string. */
export function actionInputToString(input: unknown): string {
  if (input === undefined || input === null) return "";
  if (typeof input === "string") return input;
  if (Array.isArray(input)) {
    if (!input.every((x) => typeof x === "string")) {
      throw new ParameterError('Cannot parse parameter "action": a list must contain strings');
    }
    return input.join(", ");
  }
  if (typeof input === "object") {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(input as Record<string, unknown>)) {
      if (v === true) parts.push(k);
      // a comma inside a value is part of it, not a separator (privacyIDEA splits it when read)
      else if (typeof v === "string") parts.push(`${k}=${v.replace(ENTRY_SPLIT_REGEXP_G, "\\,")}`);
      else if (typeof v === "number") parts.push(`${k}=${v}`);
      else if (v === false) parts.push(`${k}=False`);
      else {
        throw new ParameterError(
          `Cannot parse parameter "action": the value of "${k}" must be a string, number or boolean`,
        );
      }
    }
    return parts.join(", ");
  }
  if (typeof input === "boolean" || typeof input === "number") return String(input);
  throw new ParameterError('Cannot parse parameter "action": expected a string, object or list');
}

/**
 * Splits an action value into its values: a value in single quotes is one
 * value without the quotes, free text stays whole, anything else splits on whitespace.
 */
export function splitActionValue(value: string, freeText = false): string[] {
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) {
    return [value.slice(1, -1)];
  }
  if (freeText) return value === "" ? [] : [value];
  return value.split(/\s+/).filter((v) => v !== "");
}

/** Turns `\,` into `,` for components that use an action value as text. */
export function unescapeText(value: string): string {
  return value.replaceAll("\\,", ",");
}

/** Strips a leading negation (`!` or `-`); returns the name and whether it was negated. */
export function stripNegation(name: string): { name: string; isNegated: boolean } {
  if (name.startsWith("!") || name.startsWith("-")) return { name: name.slice(1), isNegated: true };
  return { name, isNegated: false };
}
