/**
 * The cache registry (DEVELOPERS.md, section "Caches") against the source:
 * every long-lived map, set, epoch cache, mutable module variable and
 * mutated module table in src/ is listed there with its kind and its one-line
 * refresh rule, and nothing is listed that is not in the source. A cache of
 * Tessera's own data (kind `epoch`) lives in a store: a `*_store.ts` file or a
 * helper only stores import. No file outside the stores and db/direct.ts
 * touches `EpochCache`.
 *
 * The search is by pattern (fmt keeps declarations at the start of their
 * line): module-level `const`/`let`/`var` bound to `new Map|WeakMap|Set|
 * WeakSet|…Cache(`, every module-level `let`, module-level object or array
 * literals that the file changes, and class fields bound to such a `new`.
 * A `Map` or `Set` that its file never changes and does not export as a
 * mutable type is a constant table, not a cache. `src/ui/app/` is browser
 * code (it runs in the user's browser, not in the server) and is left out.
 *
 * @module
 */
import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url).pathname;

/** The kinds of the registry, and what each promises. */
export const KINDS: Readonly<Record<string, string>> = {
  epoch: "data of Tessera's database, used only while the epoch it was loaded under is current",
  memo: "a pure function of immutable inputs (the key is the whole input)",
  external: "data from outside the database (files, LDAP, probes) with its own refresh rule",
  state: "per-process state that is no cache (limits, pools, handles, counters)",
  object: "a field of an object whose owner and lifetime the rule names",
};

/** One long-lived mutable structure found in the source. */
export interface Found {
  file: string;
  name: string;
  line: number;
  /** What it is bound to (`new WeakMap`, `let`, `literal`, …). */
  form: string;
}

const COLLECTION = String.raw`(?:Map|WeakMap|Set|WeakSet|\w*Cache)`;
// a declaration up to its `=`, allowing `=>` inside a type annotation
const HEAD = String.raw`(?:[^=;]|=>)*?`;
const MODULE_NEW = new RegExp(
  String.raw`^(export\s+)?(?:const|let|var)\s+(\w+)(${HEAD})=\s*new\s+(${COLLECTION})\b`,
  "gm",
);
const MODULE_LET = /^(?:export\s+)?let\s+(\w+)/gm;
const MODULE_LITERAL = new RegExp(
  String.raw`^(?:export\s+)?const\s+(\w+)${HEAD}=\s*[\[{]\s*$`,
  "gm",
);
// a top-level class body: from its head to the first `}` at the start of a line
const CLASS_BODY = /^(?:export\s+)?(?:abstract\s+)?class\b[^\n]*\{[ \t]*\n([\s\S]*?)^\}/gm;
const CLASS_FIELD = new RegExp(
  String.raw`^  (?:(?:static|readonly|private|protected|public) +)*(#?\w+)\??` +
    String.raw`(?::(?:[^=;\n]|=>)*?)? *= *new\s+(${COLLECTION})\b`,
  "gm",
);

function escape(name: string): string {
  return name.replace(/[$#]/g, (c) => `\\${c}`);
}

/** Whether `text` changes the collection or table `name` (set, add, delete, clear, assign, push). */
function isChanged(text: string, name: string): boolean {
  const n = escape(name);
  return new RegExp(
    String.raw`(?<![\w.])${n}\.(?:set|add|delete|clear|push|splice|unshift|pop|shift)\(|` +
      String.raw`(?<![\w.])${n}(?:\[[^\]]*\]|\.\w+)\s*(?:=(?!=)|\+\+|--|\+=|-=)|` +
      String.raw`Object\.assign\(\s*${n}\b|delete\s+${n}\b`,
  ).test(text);
}

/**
 * A `Map` or `Set` built with its contents that nothing changes: not changed
 * in its file, never handed to a function (which could change it), and not
 * exported unless typed read-only.
 */
function isConstantTable(
  text: string,
  m: RegExpMatchArray,
  exported: string | undefined,
  head: string,
): boolean {
  const name = m[2];
  const after = text.slice(m.index! + m[0].length);
  // `new Map()` / `new Map<K, V>()`: empty, so filled later
  if (/^\s*(?:<[^()]*>)?\s*\(\s*\)/.test(after)) return false;
  if (isChanged(text, name)) return false;
  const n = escape(name);
  if (new RegExp(String.raw`[(,]\s*${n}\s*[,)]`).test(text)) return false;
  return !exported || /Readonly(?:Map|Set)</.test(head);
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

/** Every long-lived mutable structure of one file's text (see the module doc). */
export function scanText(file: string, text: string): Found[] {
  const found: Found[] = [];
  for (const m of text.matchAll(MODULE_NEW)) {
    const [, exported, name, head, kind] = m;
    if ((kind === "Map" || kind === "Set") && isConstantTable(text, m, exported, head)) continue;
    found.push({ file, name, line: lineOf(text, m.index), form: `new ${kind}` });
  }
  for (const m of text.matchAll(MODULE_LET)) {
    found.push({ file, name: m[1], line: lineOf(text, m.index), form: "let" });
  }
  for (const m of text.matchAll(MODULE_LITERAL)) {
    if (!isChanged(text, m[1])) continue;
    found.push({ file, name: m[1], line: lineOf(text, m.index), form: "literal" });
  }
  for (const body of text.matchAll(CLASS_BODY)) {
    const start = body.index + body[0].indexOf(body[1]);
    for (const m of body[1].matchAll(CLASS_FIELD)) {
      const line = lineOf(text, start + m.index);
      found.push({ file, name: m[1], line, form: `field new ${m[2]}` });
    }
  }
  return found;
}

/** The source files of the server (src/, without the browser code in src/ui/app/). */
export function sourceFiles(dir = `${ROOT}src`): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) {
      if (path !== `${ROOT}src/ui/app`) out.push(...sourceFiles(path));
    } else if (/\.tsx?$/.test(e.name)) out.push(path);
  }
  return out.sort();
}

/** Every long-lived mutable structure of src/. */
export function scanSource(): Found[] {
  return sourceFiles().flatMap((path) =>
    scanText(path.slice(ROOT.length), Deno.readTextFileSync(path))
  );
}

/** One row of the registry. */
export interface Registered {
  file: string;
  name: string;
  kind: string;
  rule: string;
}

// deno fmt pads the columns
const ROW_REGEXP = /^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|\s*(\w+)\s*\|\s*(.*?)\s*\|$/;

/** The rows of the "Caches" section of DEVELOPERS.md; throws on a row it cannot read. */
export function readRegistry(text: string): Registered[] {
  const start = text.indexOf("\n## Caches\n");
  assert.ok(start >= 0, 'DEVELOPERS.md has no section "## Caches"');
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const rows: Registered[] = [];
  for (const line of section.split("\n")) {
    if (!/^\|\s*`/.test(line)) continue;
    const m = ROW_REGEXP.exec(line);
    assert.ok(m, `cannot read the registry row: ${line}`);
    rows.push({ file: m[1], name: m[2], kind: m[3], rule: m[4] });
  }
  return rows;
}

function keyOf(x: { file: string; name: string }): string {
  return `${x.file} ${x.name}`;
}

Deno.test("the scan finds maps, sets, epoch caches, module lets, changed tables and class fields", () => {
  const text = [
    'const CONSTANT = new Set(["a", "b"]);',
    'export const EXPORTED: ReadonlySet<string> = new Set(["x"]);',
    "const EMPTY = new Map<string, number>();",
    "const FILLED_BY_HELPER = new Map([[1, 2]]);",
    "remember(FILLED_BY_HELPER, 3);",
    "const CHANGED = new Set([1]);",
    "function f() {",
    "  CHANGED.add(2);",
    "  local = new Map();",
    "}",
    "export const SHARED = new Set([1]);",
    "const weak: WeakMap<object, (x: number) => string> =",
    "  new WeakMap();",
    "const epochs = new EpochCache<string, number>();",
    "const lookups = new LookupCache(1, 2);",
    "let lastSeen = 0;",
    "export let counter = 0;",
    "const TABLE: Record<string, number> = {",
    "  a: 1,",
    "};",
    'TABLE["b"] = 2;',
    "const FIXED: Record<string, number> = {",
    "  a: 1,",
    "};",
    "class Thing {",
    "  readonly #entries = new Map<string, number>();",
    "  static shared: Map<string, () => void> = new Map();",
    "  method() {",
    "    const inner = new Map();",
    "  }",
    "}",
  ].join("\n");
  const found = scanText("x.ts", text).map((f) => `${f.name}:${f.line}:${f.form}`);
  assert.deepEqual(found.sort(), [
    "#entries:26:field new Map",
    "CHANGED:6:new Set",
    "EMPTY:3:new Map",
    "FILLED_BY_HELPER:4:new Map",
    "SHARED:11:new Set",
    "TABLE:18:literal",
    "counter:17:let",
    "epochs:14:new EpochCache",
    "lastSeen:16:let",
    "lookups:15:new LookupCache",
    "shared:27:field new Map",
    "weak:12:new WeakMap",
  ]);
});

Deno.test("every cache of src/ is in the registry of DEVELOPERS.md, and the registry lists no other", () => {
  const found = scanSource();
  const registry = readRegistry(Deno.readTextFileSync(`${ROOT}DEVELOPERS.md`));
  // the scan works at all: it finds what this test itself knows to be there
  assert.ok(found.some((f) => f.file === "src/db/direct.ts" && f.name === "attached"));
  const registered = new Map(registry.map((r) => [keyOf(r), r]));
  const missing = found.filter((f) => !registered.has(keyOf(f)));
  assert.deepEqual(
    missing.map((f) => `${f.file}:${f.line} ${f.name} (${f.form})`),
    [],
    "caches not in the registry (DEVELOPERS.md, section Caches): add a row with kind and rule",
  );
  const seen = new Set(found.map(keyOf));
  assert.deepEqual(
    registry.filter((r) => !seen.has(keyOf(r))).map(keyOf),
    [],
    "registry rows that name nothing in src/ (renamed or removed?)",
  );
  assert.equal(registered.size, registry.length, "a cache is listed twice");
});

Deno.test("each registry row has a known kind and a rule, none is a test hook; an EpochCache is of kind epoch", () => {
  const registry = readRegistry(Deno.readTextFileSync(`${ROOT}DEVELOPERS.md`));
  const byKey = new Map(registry.map((r) => [keyOf(r), r]));
  for (const r of registry) {
    assert.ok(r.kind in KINDS, `${keyOf(r)}: unknown kind "${r.kind}"`);
    assert.ok(r.rule.trim().length >= 20, `${keyOf(r)}: say what it holds and how it is refreshed`);
    // a test hook or a cache not yet under the rule is no registry entry
    assert.ok(!/\((?:moves|fix)\)|\btest hook\b|injected by tests/i.test(r.rule), keyOf(r));
  }
  for (const f of scanSource().filter((f) => f.form.endsWith("EpochCache"))) {
    assert.equal(byKey.get(keyOf(f))?.kind, "epoch", `${keyOf(f)} is an EpochCache`);
  }
});

/** The files of src/ that import `file` (by relative specifier). */
function importersOf(file: string): string[] {
  const out: string[] = [];
  for (const path of sourceFiles()) {
    const text = Deno.readTextFileSync(path);
    for (const m of text.matchAll(/\bfrom\s+"(\.{1,2}\/[^"]+)"/g)) {
      const target = new URL(m[1], `file://${path}`).pathname.slice(ROOT.length);
      if (target === file) out.push(path.slice(ROOT.length));
    }
  }
  return out;
}

/** A store, or a helper that only stores import. */
function isInsideStores(file: string): boolean {
  if (file.endsWith("_store.ts")) return true;
  const importers = importersOf(file);
  return importers.length > 0 && importers.every((f) => f.endsWith("_store.ts"));
}

Deno.test("a cache of the database's data (kind epoch) lives in a store; only stores use EpochCache", () => {
  const registry = readRegistry(Deno.readTextFileSync(`${ROOT}DEVELOPERS.md`));
  const outside = registry.filter((r) => r.kind === "epoch" && !isInsideStores(r.file));
  assert.deepEqual(outside.map(keyOf), [], "epoch caches outside the stores: move them in");
  const users = sourceFiles().map((path) => path.slice(ROOT.length)).filter((file) =>
    file !== "src/db/direct.ts" && /\bEpochCache\b/.test(Deno.readTextFileSync(`${ROOT}${file}`))
  );
  assert.deepEqual(users.filter((file) => !isInsideStores(file)), [], "EpochCache outside a store");
});

if (import.meta.main) {
  for (const f of scanSource()) console.log(`${f.file}:${f.line}\t${f.name}\t${f.form}`);
}
