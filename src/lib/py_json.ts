/**
 * JSON text exactly as Python's `json.dumps(obj, sort_keys=True)` writes it:
 * keys sorted recursively, separators `", "` and `": "`, non-ASCII escaped.
 * Signed responses are this text (spec 01 §4).
 *
 * @module
 */

const ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

// deno-lint-ignore no-control-regex
const NEEDS_ESCAPE_REGEXP = /["\\\u0000-\u001f\u007f-\uffff]/g;

function pyString(s: string): string {
  return '"' + s.replace(NEEDS_ESCAPE_REGEXP, (c) => {
    return ESCAPES[c] ?? "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
  }) + '"';
}

function pyNumber(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? "NaN" : n > 0 ? "Infinity" : "-Infinity";
  const s = String(n);
  // Python writes exponents with a sign and two digits: 1e+21, 1e-07
  return s.replace(/e([+-])(\d)$/, "e$10$2");
}

/** Serialises `value` like Python's `json.dumps(value, sort_keys=True)`. */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "string":
      return pyString(value);
    case "number":
      return pyNumber(value);
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return value.toString();
    case "object": {
      if (Array.isArray(value)) return "[" + value.map(pythonJson).join(", ") + "]";
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort(compareCodePoints);
      return "{" + keys.map((k) => pyString(k) + ": " + pythonJson(obj[k])).join(", ") + "}";
    }
    default:
      return "null";
  }
}

// Python sorts str keys by code point; JS's default sort compares UTF-16 units.
function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done ? (y.done ? 0 : -1) : 1;
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}
