/**
 * Value handling of the HTTP-family resolvers as privacyIDEA 3.12 does it
 * (spec 16 §2.3-§2.5): Python's `str()` of JSON values, `urlencode`, pydash
 * paths into an answer, `responseMapping`, and tag substitution into request
 * templates, where Tessera encodes each value for the place it lands in
 * (a URL path, a query, a form body, JSON text) instead of inserting it raw.
 *
 * @module
 */

const TAG_REGEXP = /\{(.+?)\}/g;

/** Python's `repr()` of a string. */
function pyReprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = "";
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += "\\" + quote;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) {
      out += "\\x" + code.toString(16).padStart(2, "0");
    } else out += ch;
  }
  return quote + out + quote;
}

function pyNumber(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? "nan" : n > 0 ? "inf" : "-inf";
  return String(n).replace(/e([+-])(\d)$/, "e$10$2");
}

function pyRepr(v: unknown): string {
  if (typeof v === "string") return pyReprString(v);
  return pyStr(v);
}

/** Python's `str()` of a parsed JSON value (`True`, `None`, `[1, 2]`, `{'a': 1}`). */
export function pyStr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") return pyNumber(v);
  if (Array.isArray(v)) return "[" + v.map(pyRepr).join(", ") + "]";
  if (typeof v === "object") {
    return "{" +
      Object.entries(v as Record<string, unknown>).map(([k, x]) =>
        `${pyReprString(k)}: ${pyRepr(x)}`
      ).join(", ") + "}";
  }
  return String(v);
}

/** Python's `urllib.parse.quote_plus(value, safe="")`. */
export function quotePlus(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll("%20", "+");
}

/** Python's `urlencode(params)` with `str()` of each value. */
export function urlencode(params: Record<string, unknown>): string {
  return Object.entries(params).map(([k, v]) => `${quotePlus(k)}=${quotePlus(pyStr(v))}`).join(
    "&",
  );
}

/** Percent-encodes a value for one URL path segment (RFC 3986 pchar kept: `@`, `:`, …). */
export function encodePathSegment(value: string): string {
  return encodeURIComponent(value).replace(
    /%(24|26|2B|2C|3B|3D|3A|40)/g,
    (_, hex: string) => String.fromCharCode(parseInt(hex, 16)),
  );
}

/** The value at a pydash path (`data.user.mail`, `0.id`, `a[1].b`); undefined when missing. */
export function pathGet(value: unknown, path: string): unknown {
  let current = value;
  for (const m of path.matchAll(/\[(\d+)\]|([^.[\]]+)/g)) {
    const key = m[1] ?? m[2];
    if (Array.isArray(current)) {
      if (!/^-?\d+$/.test(key)) return undefined;
      const i = Number(key);
      const at = i < 0 ? current.length + i : i;
      if (at < 0 || at >= current.length) return undefined;
      current = current[at];
    } else if (current !== null && typeof current === "object") {
      if (!Object.hasOwn(current, key)) return undefined;
      current = (current as Record<string, unknown>)[key];
    } else {
      return undefined;
    }
  }
  return current;
}

/**
 * Applies a `responseMapping` to an answer (spec 16 §2.5): empty → the answer
 * unchanged; a value that is exactly one tag takes the raw JSON value at its
 * path (missing → null), any other value is text with each tag replaced by
 * Python's `str()` of its value (missing → "").
 */
export function applyResponseMapping(mapping: Record<string, string>, body: unknown): unknown {
  const keys = Object.keys(mapping);
  if (keys.length === 0) return body;
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const template = mapping[key];
    const tags = [...template.matchAll(TAG_REGEXP)].map((m) => m[1]);
    if (tags.length === 1 && template.startsWith("{") && template.endsWith("}")) {
      out[key] = pathGet(body, tags[0]) ?? null;
      continue;
    }
    let text = template;
    for (const tag of tags) {
      const found = pathGet(body, tag);
      text = text.replaceAll(`{${tag}}`, found === undefined ? "" : pyStr(found));
    }
    out[key] = text;
  }
  return out;
}

/** Deep equality of parsed JSON values (the special error handler's subset test). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao);
  return ak.length === Object.keys(bo).length &&
    ak.every((k) => Object.hasOwn(bo, k) && jsonEqual(ao[k], bo[k]));
}

/** Whether every `key: value` of `expected` occurs in `answer` (an object). */
export function containsAll(answer: unknown, expected: Record<string, unknown>): boolean {
  if (answer === null || typeof answer !== "object" || Array.isArray(answer)) return false;
  const obj = answer as Record<string, unknown>;
  return Object.entries(expected).every(([k, v]) => Object.hasOwn(obj, k) && jsonEqual(obj[k], v));
}

/** How a tag value is written into the text it lands in. */
export type Encoder = (value: string) => string;

/** Inside JSON text: escaped as the content of a JSON string. */
export const JSON_TEXT: Encoder = (v) => JSON.stringify(v).slice(1, -1);
/** In a form body or a query: percent-encoded. */
export const FORM_VALUE: Encoder = quotePlus;
/** In XML: the five predefined entities. */
export const XML_TEXT: Encoder = (v) =>
  v.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? "&apos;",
  );
/** Anything else: as it is (privacyIDEA's behaviour everywhere). */
export const RAW: Encoder = (v) => v;

/**
 * Replaces every `{tag}` of `tags` in `template` in one pass (a value that
 * holds another tag is never filled again); `*` in a value becomes `wildcard`
 * unless the tag is in `keepStars` (passwords stay intact). Unknown tags stay
 * as they are.
 */
export function fillTags(
  template: string,
  tags: Record<string, string>,
  options: { wildcard: string; encode: Encoder; keepStars?: Set<string> },
): string {
  const names = Object.keys(tags);
  if (names.length === 0) return template;
  const pattern = new RegExp(
    `\\{(${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})\\}`,
    "g",
  );
  return template.replace(pattern, (_, name: string) => {
    const value = options.keepStars?.has(name)
      ? tags[name]
      : tags[name].replaceAll("*", options.wildcard);
    return options.encode(value);
  });
}

/**
 * Fills the tags of an endpoint: a value before the first `?` of the template
 * is encoded as a path segment, after it as a query value.
 */
export function fillEndpoint(
  template: string,
  tags: Record<string, string>,
  options: { wildcard: string; keepStars?: Set<string> },
): string {
  const q = template.indexOf("?");
  if (q < 0) return fillTags(template, tags, { ...options, encode: encodePathSegment });
  return fillTags(template.slice(0, q), tags, { ...options, encode: encodePathSegment }) +
    fillTags(template.slice(q), tags, { ...options, encode: quotePlus });
}

/** The encoder for a request template sent with `contentType`. */
export function encoderFor(contentType: string | undefined): Encoder {
  const type = (contentType ?? "application/json").split(";")[0].trim().toLowerCase();
  if (type === "application/json" || type.endsWith("+json")) return JSON_TEXT;
  // privacyIDEA's own default for token requests is misspelt "…-urlencode"
  if (type.startsWith("application/x-www-form-urlencode")) return FORM_VALUE;
  if (type.endsWith("/xml") || type.endsWith("+xml")) return XML_TEXT;
  return RAW;
}
