/**
 * Value rules of the LDAP resolvers: Active Directory GUIDs, DN escaping
 * (RFC 4514), search filters built from user input (RFC 4515: values travel
 * as filter objects, never as filter text, so `*)(uid=*` is a plain value),
 * and the attribute values of search entries.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import {
  AndFilter,
  type Entry,
  EqualityFilter,
  type Filter,
  FilterParser,
  GreaterThanEqualsFilter,
  LessThanEqualsFilter,
  OrFilter,
  SubstringFilter,
} from "ldapts";

const GUID_REGEXP =
  /^\{?([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})\}?$/i;

/** LDAP attribute descriptions (name with options, or a numeric OID). */
export const ATTRIBUTE_REGEXP = /^(?:[A-Za-z][A-Za-z0-9-]*|\d+(?:\.\d+)+)(?:;[A-Za-z0-9-]+)*$/;

function hex(bytes: Uint8Array, from: number, to: number, reverse: boolean): string {
  const part = Array.from(bytes.subarray(from, to));
  if (reverse) part.reverse();
  return part.map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * An Active Directory `objectGUID` (16 bytes) as privacyIDEA shows it: the
 * lower-case UUID text in Microsoft's byte order (the first three groups
 * little-endian), without braces.
 */
export function guidToString(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new Error(`objectGUID must be 16 bytes, got ${bytes.length}`);
  return [
    hex(bytes, 0, 4, true),
    hex(bytes, 4, 6, true),
    hex(bytes, 6, 8, true),
    hex(bytes, 8, 10, false),
    hex(bytes, 10, 16, false),
  ].join("-");
}

/** The 16 bytes of a GUID text (inverse of {@link guidToString}); undefined when malformed. */
export function guidToBytes(text: string): Uint8Array | undefined {
  const m = text.trim().match(GUID_REGEXP);
  if (!m) return undefined;
  const groups = m.slice(1).map((g) => g.match(/../g)!.map((h) => parseInt(h, 16)));
  return new Uint8Array([
    ...groups[0].reverse(),
    ...groups[1].reverse(),
    ...groups[2].reverse(),
    ...groups[3],
    ...groups[4],
  ]);
}

/** Escapes an attribute value for use in a DN (RFC 4514 §2.4). */
export function escapeDnValue(value: string): string {
  let out = value.replace(/[\\,+"<>;=\0]/g, (c) => c === "\0" ? "\\00" : `\\${c}`);
  if (out.startsWith("#") || out.startsWith(" ")) out = `\\${out}`;
  if (out.endsWith(" ") && !out.endsWith("\\ ")) out = `${out.slice(0, -1)}\\ `;
  return out;
}

/** Attribute type and unescaped value of the first RDN of `dn` (single-valued RDNs only). */
export function firstRdn(dn: string): { attribute: string; value: string } | undefined {
  let i = 0;
  let raw = "";
  for (; i < dn.length; i++) {
    const c = dn[i];
    if (c === "\\") {
      raw += dn.slice(i, i + 2);
      i++;
    } else if (c === "," || c === "+") {
      if (c === "+") return undefined;
      break;
    } else raw += c;
  }
  const eq = raw.indexOf("=");
  if (eq <= 0) return undefined;
  const attribute = raw.slice(0, eq).trim();
  const escaped = raw.slice(eq + 1).trim();
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let j = 0; j < escaped.length; j++) {
    const c = escaped[j];
    if (c === "\\" && /^[0-9a-f]{2}$/i.test(escaped.slice(j + 1, j + 3))) {
      bytes.push(parseInt(escaped.slice(j + 1, j + 3), 16));
      j += 2;
    } else if (c === "\\") {
      bytes.push(...enc.encode(escaped[j + 1] ?? ""));
      j++;
    } else bytes.push(...enc.encode(c));
  }
  return { attribute, value: new TextDecoder().decode(new Uint8Array(bytes)) };
}

/**
 * A comparable form of a DN for "is it below the base" checks: lower case,
 * no blanks around separators, hex escapes of special characters spelled as
 * backslash escapes.
 */
export function normaliseDn(dn: string): string {
  return dn.trim().toLowerCase()
    .replace(
      /\\(2c|2b|22|5c|3c|3e|3b|3d)/g,
      (_, h: string) => `\\${String.fromCharCode(parseInt(h, 16))}`,
    )
    .replace(/\s*(?<!\\)([,=+])\s*/g, "$1");
}

/** Whether `dn` is `base` or below it. */
export function isWithinBase(dn: string, base: string): boolean {
  const d = normaliseDn(dn);
  const b = normaliseDn(base);
  if (b === "") return true;
  return d === b || (d.endsWith(`,${b}`) && !d.endsWith(`\\,${b}`));
}

/** Parses an admin-written filter (LDAPSEARCHFILTER, SEARCHFILTER); throws on bad syntax. */
export function parseFilter(text: string): Filter {
  const t = text.trim();
  // raw parentheses are always syntax (values escape them as \28 and \29)
  let depth = 0;
  for (const c of t) {
    if (c === "(") depth++;
    else if (c === ")" && --depth < 0) break;
  }
  if (depth !== 0) throw new Error(`Unbalanced parens in filter string: ${t.slice(0, 200)}`);
  return FilterParser.parseString(t);
}

/** Escapes a value for filter text (RFC 4515): `\`, `*`, `(`, `)` and NUL as `\5c` … `\00`. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/**
 * An admin-written filter with `{tag}` placeholders (the LDAP group search):
 * each known tag is replaced by its value, escaped so that it is one value
 * and never filter syntax; an unknown tag stays as it is. Throws on bad syntax.
 */
export function filterFromTemplate(template: string, tags: Record<string, string>): Filter {
  const text = template.replace(
    /\{([^{}]+)\}/g,
    (tag, name: string) => Object.hasOwn(tags, name) ? escapeFilterValue(tags[name]) : tag,
  );
  return parseFilter(text);
}

/**
 * A filter matching `attribute` against a user-given `pattern` in which `*`
 * is the only wildcard; every other character is a literal value. Undefined
 * for an empty or `*`-only pattern (it restricts nothing).
 */
export function patternFilter(attribute: string, pattern: string): Filter | undefined {
  if (pattern.replaceAll("*", "") === "") return undefined;
  if (!pattern.includes("*")) return new EqualityFilter({ attribute, value: pattern });
  const parts = pattern.split("*");
  return new SubstringFilter({
    attribute,
    initial: parts[0],
    any: parts.slice(1, -1).filter((p) => p !== ""),
    final: parts[parts.length - 1],
  });
}

/** `(attribute=value)` with the value as an opaque string or bytes. */
export function equalityFilter(attribute: string, value: string | Uint8Array): Filter {
  return new EqualityFilter({
    attribute,
    value: typeof value === "string" ? value : Buffer.from(value),
  });
}

/** AND of the filters (the single filter itself when there is one). */
export function andFilter(filters: Filter[]): Filter {
  return filters.length === 1 ? filters[0] : new AndFilter({ filters });
}

/** OR of the filters (the single filter itself when there is one). */
export function orFilter(filters: Filter[]): Filter {
  return filters.length === 1 ? filters[0] : new OrFilter({ filters });
}

/** `(attribute>=low)(attribute<=high)` as one AND. */
export function rangeFilter(attribute: string, low: string, high: string): Filter {
  return new AndFilter({
    filters: [
      new GreaterThanEqualsFilter({ attribute, value: low }),
      new LessThanEqualsFilter({ attribute, value: high }),
    ],
  });
}

/** Raw values of `attribute` in `entry` (attribute names compare case-insensitively). */
export function rawValues(entry: Entry, attribute: string): (string | Uint8Array)[] {
  const want = attribute.toLowerCase();
  for (const [key, value] of Object.entries(entry)) {
    if (key === "dn" || key.toLowerCase() !== want) continue;
    const list = Array.isArray(value) ? value : [value];
    return list as (string | Uint8Array)[];
  }
  return [];
}

/** Values of `attribute` as text: UTF-8 text as is, binary values as base64. */
export function textValues(entry: Entry, attribute: string): string[] {
  return rawValues(entry, attribute).map((v) =>
    typeof v === "string" ? v : Buffer.from(v).toString("base64")
  );
}
