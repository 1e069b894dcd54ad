/**
 * Python literals for the policy export/import format (spec 04 §2.3):
 * `repr()`-style output and a small, safe `ast.literal_eval` subset as input
 * (strings, numbers, True/False/None, lists, tuples, dicts).
 *
 * @module
 */
import { ParameterError } from "../../errors.ts";

/** A value Python's repr can print. */
export type PyValue =
  | string
  | number
  | boolean
  | null
  | PyValue[]
  | { [key: string]: PyValue };

/** Python `repr()` of a string: single quotes unless the text has one and no double quote. */
export function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += "\\" + quote;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += "\\x" + code.toString(16).padStart(2, "0");
    else out += ch;
  }
  return out + quote;
}

/** Python `repr()` of a JSON-like value. */
export function pyRepr(v: PyValue | undefined): string {
  if (v === null || v === undefined) return "None";
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return pyStr(v);
  if (Array.isArray(v)) return "[" + v.map(pyRepr).join(", ") + "]";
  return "{" + Object.entries(v).map(([k, x]) => `${pyStr(k)}: ${pyRepr(x)}`).join(", ") + "}";
}

class Parser {
  pos = 0;
  constructor(readonly text: string) {}

  fail(): never {
    throw new ParameterError(`Cannot parse Python literal: ${this.text.slice(0, 80)}`);
  }
  ws(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++;
  }
  peek(): string {
    this.ws();
    return this.text[this.pos] ?? "";
  }
  eat(ch: string): boolean {
    if (this.peek() === ch) {
      this.pos++;
      return true;
    }
    return false;
  }
  value(depth = 0): PyValue {
    if (depth > 20) this.fail();
    const c = this.peek();
    if (c === "'" || c === '"') return this.str();
    if (c === "[") return this.seq("]", depth);
    if (c === "(") return this.seq(")", depth);
    if (c === "{") return this.dict(depth);
    const m = this.text.slice(this.pos).match(
      /^(True|False|None|[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)/,
    );
    if (!m) this.fail();
    this.pos += m[0].length;
    if (m[0] === "True") return true;
    if (m[0] === "False") return false;
    if (m[0] === "None") return null;
    return Number(m[0]);
  }
  str(): string {
    const quote = this.text[this.pos++];
    let out = "";
    while (this.pos < this.text.length) {
      const ch = this.text[this.pos++];
      if (ch === quote) return out;
      if (ch !== "\\") {
        out += ch;
        continue;
      }
      const e = this.text[this.pos++];
      const simple: Record<string, string> = {
        n: "\n",
        r: "\r",
        t: "\t",
        "\\": "\\",
        "'": "'",
        '"': '"',
        "0": "\0",
      };
      if (e in simple) out += simple[e];
      else if (e === "x" || e === "u") {
        const len = e === "x" ? 2 : 4;
        const hex = this.text.slice(this.pos, this.pos + len);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) this.fail();
        out += String.fromCharCode(parseInt(hex, 16));
        this.pos += len;
      } else out += "\\" + (e ?? "");
    }
    return this.fail();
  }
  seq(close: string, depth: number): PyValue[] {
    this.pos++;
    const out: PyValue[] = [];
    while (!this.eat(close)) {
      out.push(this.value(depth + 1));
      if (!this.eat(",")) {
        if (!this.eat(close)) this.fail();
        break;
      }
    }
    return out;
  }
  dict(depth: number): { [key: string]: PyValue } {
    this.pos++;
    const out: { [key: string]: PyValue } = {};
    while (!this.eat("}")) {
      const k = this.value(depth + 1);
      if (!this.eat(":")) this.fail();
      const v = this.value(depth + 1);
      out[typeof k === "string" ? k : pyRepr(k)] = v;
      if (!this.eat(",")) {
        if (!this.eat("}")) this.fail();
        break;
      }
    }
    return out;
  }
}

/** Parses a Python literal (like `ast.literal_eval`); throws ParameterError when malformed. */
export function parsePyLiteral(text: string): PyValue {
  const p = new Parser(text);
  const v = p.value();
  p.ws();
  if (p.pos !== text.length) p.fail();
  return v;
}
