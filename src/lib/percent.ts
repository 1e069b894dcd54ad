/**
 * Percent-decoding helpers for privacyIDEA's parameter quirk (spec 09 §1.2).
 *
 * @module
 */

const PCT_RUN_REGEXP = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * Decodes `%XX` sequences once more, like Python's `urllib.parse.unquote`:
 * `+` stays, invalid escapes stay as they are, invalid UTF-8 becomes U+FFFD.
 */
export function unquoteAgain(value: string): string {
  if (!value.includes("%")) return value;
  return value.replace(PCT_RUN_REGEXP, (run) => {
    const bytes = new Uint8Array(run.length / 3);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(run.slice(3 * i + 1, 3 * i + 3), 16);
    return new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  });
}

/**
 * Strictly decodes one `application/x-www-form-urlencoded` component
 * (`+` is a space). Returns undefined for a malformed escape or invalid UTF-8.
 */
export function decodeFormComponent(value: string): string | undefined {
  const s = value.replaceAll("+", " ");
  if (!s.includes("%")) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

const PRODUCT_REGEXP = /^([A-Za-z0-9_-]+)(?:\/([0-9.]*))?(?:\s+(.*))?$/s;

/** Splits a User-Agent into product, version and comment (spec 09 §1.1). */
export function parseUserAgent(
  ua: string | null | undefined,
): { product: string; version: string; comment: string } {
  if (!ua) return { product: "", version: "", comment: "" };
  const m = ua.trim().match(PRODUCT_REGEXP);
  if (!m) {
    const lead = ua.match(/^[A-Za-z0-9_-]+/);
    return { product: lead ? lead[0] : "", version: "", comment: "" };
  }
  return { product: m[1], version: m[2] ?? "", comment: m[3] ?? "" };
}

const NO_UNQUOTE_AGENTS = new Set(["privacyidea-cp", "privacyidea-ldap-proxy", "simplesamlphp"]);

/** True when values from this User-Agent get the second percent-decoding. */
export function needsSecondDecoding(ua: string | null | undefined): boolean {
  return !NO_UNQUOTE_AGENTS.has(parseUserAgent(ua).product.toLowerCase());
}
