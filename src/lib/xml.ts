/**
 * A small XML element tree for reading vendor files (PSKC): names and
 * attribute names are lower-cased local names (namespace prefixes dropped),
 * as privacyIDEA's HTML-style parser sees them. Parsing is strict (saxes);
 * documents with a DOCTYPE are refused, so no entity expansion or external
 * entity can be smuggled in.
 *
 * @module
 */
import { SaxesParser } from "saxes";

/** One element: lower-cased local name, attributes, children and its own text. */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** Text directly inside this element (not of its children). */
  text: string;
  /** 1-based line of the start tag (for error messages). */
  line: number;
}

/** Thrown for malformed XML or a refused construct; `line` is 1-based. */
export class XmlError extends Error {
  constructor(message: string, readonly line: number) {
    super(message);
    this.name = "XmlError";
  }
}

function localName(name: string): string {
  const i = name.indexOf(":");
  return (i >= 0 ? name.slice(i + 1) : name).toLowerCase();
}

/** Parses `text` into its root element. */
export function parseXml(text: string): XmlElement {
  const parser = new SaxesParser({ xmlns: false, position: true });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let failure: XmlError | undefined;
  parser.on("error", (err) => {
    failure ??= new XmlError(err.message.replace(/^(?:[^\s:]*:)?\d+:\d+: /, ""), parser.line);
  });
  parser.on("doctype", () => {
    failure ??= new XmlError("documents with a DOCTYPE are not accepted", parser.line);
  });
  parser.on("opentag", (tag) => {
    const attrs: Record<string, string> = {};
    for (const [k, v] of Object.entries(tag.attributes)) {
      attrs[localName(k)] = String(v);
    }
    const el: XmlElement = {
      name: localName(tag.name),
      attrs,
      children: [],
      text: "",
      line: parser.line,
    };
    if (stack.length > 0) stack[stack.length - 1].children.push(el);
    else root ??= el;
    stack.push(el);
  });
  parser.on("closetag", () => void stack.pop());
  parser.on("text", (t) => {
    if (stack.length > 0) stack[stack.length - 1].text += t;
  });
  parser.on("cdata", (t) => {
    if (stack.length > 0) stack[stack.length - 1].text += t;
  });
  try {
    parser.write(text).close();
  } catch (err) {
    failure ??= new XmlError(
      (err as Error).message.replace(/^(?:[^\s:]*:)?\d+:\d+: /, ""),
      parser.line,
    );
  }
  if (failure) throw failure;
  if (!root) throw new XmlError("no root element", 1);
  return root;
}

/** The first child of `el` named `name` (lower-cased local name). */
export function child(el: XmlElement | undefined, name: string): XmlElement | undefined {
  return el?.children.find((c) => c.name === name);
}

/** Every child of `el` named `name`. */
export function childrenNamed(el: XmlElement | undefined, name: string): XmlElement[] {
  return el?.children.filter((c) => c.name === name) ?? [];
}

/** The first descendant of `el` named `name` (depth first, document order). */
export function descendant(el: XmlElement | undefined, name: string): XmlElement | undefined {
  if (!el) return undefined;
  for (const c of el.children) {
    if (c.name === name) return c;
    const found = descendant(c, name);
    if (found) return found;
  }
  return undefined;
}

/** The text of `el` and all its descendants, trimmed ("" when absent). */
export function textOf(el: XmlElement | undefined): string {
  if (!el) return "";
  const parts: string[] = [];
  const walk = (e: XmlElement) => {
    parts.push(e.text);
    e.children.forEach(walk);
  };
  walk(el);
  return parts.join("").trim();
}
