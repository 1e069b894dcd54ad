/**
 * File and function sizes of `src/` in lines, largest first (DEVELOPERS.md,
 * "Shape: sizes and lookups"). A function is a declaration, a method or an
 * arrow function with a block body; it runs from the line that opens it to
 * the first later line at the same indentation that starts with `}`, which
 * holds for code formatted by `deno fmt`. Nested functions count on their
 * own and inside their parent.
 *
 * Usage: `deno run --allow-read src/build/sizes.ts [root] [--top N]` (root: a
 * checkout, default `.`; N: rows per table, default 10).
 *
 * @module
 */

/** One measured file or function. */
export interface Sized {
  /** `path` for a file, `path:line name` for a function. */
  name: string;
  lines: number;
}

const DECLARATION_REGEXP = /^(\s*)(?:export\s+)?(?:default\s+)?(?:async\s+)?function\*?\s*([\w$]*)/;
const METHOD_REGEXP =
  /^(\s*)(?:(?:public|private|protected|static|readonly|override)\s+)*(?:async\s+)?(?:get\s+|set\s+)?\*?([\w$]+)\s*(?:<[^>]*>)?\(.*\{$/;
const ARROW_REGEXP = /^(\s*)(?:.*?(?:const|let)\s+([\w$]+)\b.*|.*)=>\s*\{$/;
const ROUTE_REGEXP = /^\s*[\w$.]+\.(get|post|put|delete|patch|all)\(\s*("[^"]*")/;
const NOT_METHODS = new Set([
  "if",
  "for",
  "while",
  "switch",
  "catch",
  "with",
  "function",
  "return",
]);

/** The functions of one formatted TypeScript source and their lengths in lines. */
export function functionSizes(path: string, text: string): Sized[] {
  const lines = text.split("\n");
  const out: Sized[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*(\/\/|\*|\/\*)/.test(line)) continue;
    let indent: string | undefined;
    let name = "";
    const decl = DECLARATION_REGEXP.exec(line);
    const method = METHOD_REGEXP.exec(line);
    const arrow = ARROW_REGEXP.exec(line);
    if (decl) [indent, name] = [decl[1], decl[2] || "(anonymous)"];
    else if (method && !NOT_METHODS.has(method[2])) [indent, name] = [method[1], method[2]];
    else if (arrow) {
      const route = ROUTE_REGEXP.exec(line);
      indent = arrow[1];
      name = route ? `${route[1]} ${route[2]}` : arrow[2] ?? "(arrow)";
    }
    if (indent === undefined) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith(`${indent}}`));
    if (end < 0) continue;
    out.push({ name: `${path}:${i + 1} ${name}`, lines: end - i + 1 });
  }
  return out;
}

/** Every `.ts`/`.tsx` file under `dir`, relative to `root`. */
function sourceFiles(root: string, dir: string): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync(`${root}/${dir}`)) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...sourceFiles(root, rel));
    else if (/\.tsx?$/.test(entry.name)) found.push(rel);
  }
  return found;
}

/** File and function sizes of `root/src`, each list largest first. */
export function measure(root: string): { files: Sized[]; functions: Sized[] } {
  const files: Sized[] = [];
  const functions: Sized[] = [];
  for (const path of sourceFiles(root, "src")) {
    // generated bundles (the web UI's assets) are data, not code to live in
    if (path === "src/ui/assets.ts") continue;
    const text = Deno.readTextFileSync(`${root}/${path}`);
    files.push({ name: path, lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0) });
    functions.push(...functionSizes(path, text));
  }
  const bySize = (a: Sized, b: Sized) => b.lines - a.lines || a.name.localeCompare(b.name);
  return { files: files.sort(bySize), functions: functions.sort(bySize) };
}

if (import.meta.main) {
  const args = [...Deno.args];
  const topAt = args.indexOf("--top");
  const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 10;
  const root = args[0] ?? ".";
  const { files, functions } = measure(root);
  const over = (n: number, list: Sized[]) => list.filter((s) => s.lines > n).length;
  console.log(`files in src/: ${files.length}; over 500 lines: ${over(500, files)}`);
  for (const f of files.slice(0, top)) console.log(`  ${String(f.lines).padStart(5)}  ${f.name}`);
  console.log(`functions: ${functions.length}; over 100 lines: ${over(100, functions)}`);
  for (const f of functions.slice(0, top)) {
    console.log(`  ${String(f.lines).padStart(5)}  ${f.name}`);
  }
}
