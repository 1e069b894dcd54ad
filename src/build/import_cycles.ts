/**
 * The import-cycle check of `deno task check`: reads the module graph from
 * `deno info --json` for every TypeScript file under main.ts, src/, tests/
 * and bench/ and fails when any of our files imports itself through others.
 * Type-only and dynamic imports count too: a circle of types still ties the
 * files together, and the rule (STYLE.md, "no circular imports") is about the
 * structure, not only about evaluation order. Runs offline; npm, node: and
 * remote modules are not followed.
 *
 * Usage: `deno run --allow-read --allow-run src/build/import_cycles.ts [root]` (exit 1 on a
 * cycle).
 *
 * @module
 */

/** Our files (paths relative to the root) and the files of ours each one imports. */
export type ImportGraph = Map<string, string[]>;

/** One strongly connected set of files and a shortest circle through its first file. */
export interface ImportCycle {
  files: string[];
  circle: string[];
}

interface InfoDependency {
  code?: { specifier?: string };
  type?: { specifier?: string };
}

interface InfoModule {
  specifier: string;
  dependencies?: InfoDependency[];
}

/** The TypeScript files the check starts from: main.ts and every .ts/.tsx under src, tests, bench. */
export function entryFiles(root: string): string[] {
  const found: string[] = [];
  for (const top of ["main.ts", "src", "tests", "bench"]) walk(`${root}/${top}`, found);
  return found.sort();
}

function walk(path: string, found: string[]): void {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  if (info.isFile) {
    if (/\.tsx?$/.test(path)) found.push(path);
    return;
  }
  for (const entry of Deno.readDirSync(path)) walk(`${path}/${entry.name}`, found);
}

/**
 * The import graph of the given files (absolute paths) from one `deno info --json` run over a
 * `data:` module that imports them all; `config` is the deno.json whose import map applies.
 */
export function importGraph(root: string, files: string[], config?: string): ImportGraph {
  const text = files.map((f) => `import ${JSON.stringify(new URL(`file://${f}`).href)};\n`).join(
    "",
  );
  const out = new Deno.Command(Deno.execPath(), {
    args: [
      "info",
      "--json",
      ...(config ? ["--config", config] : ["--no-config"]),
      `data:application/typescript,${encodeURIComponent(text)}`,
    ],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  if (!out.success) {
    throw new Error(`deno info --json failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  const modules: InfoModule[] = JSON.parse(new TextDecoder().decode(out.stdout)).modules;
  return graphOf(root, modules);
}

/** Keeps the modules under `root` and their edges to each other, as root-relative paths. */
function graphOf(root: string, modules: InfoModule[]): ImportGraph {
  const prefix = new URL(`file://${root.replace(/\/*$/, "/")}`).href;
  const local = (spec?: string) =>
    spec?.startsWith(prefix) ? decodeURIComponent(spec.slice(prefix.length)) : undefined;
  const graph: ImportGraph = new Map();
  for (const m of modules) {
    const from = local(m.specifier);
    if (from === undefined) continue;
    const to = new Set<string>();
    for (const d of m.dependencies ?? []) {
      for (const spec of [d.code?.specifier, d.type?.specifier]) {
        const file = local(spec);
        if (file !== undefined) to.add(file);
      }
    }
    graph.set(from, [...to].sort());
  }
  return graph;
}

/** Every set of files that import each other in a circle (Tarjan's strongly connected components). */
export function findCycles(graph: ImportGraph): ImportCycle[] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const edges = (n: string) => graph.get(n) ?? [];

  // iterative, so a long chain of imports cannot overflow the call stack
  for (const start of [...graph.keys()].sort()) {
    if (index.has(start)) continue;
    const work: { node: string; next: number }[] = [{ node: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1];
      const out = edges(top.node);
      if (top.next < out.length) {
        const to = out[top.next++];
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          component.push(n);
        } while (n !== top.node);
        if (component.length > 1 || edges(top.node).includes(top.node)) {
          components.push(component.sort());
        }
      }
    }
  }
  return components
    .map((files) => ({ files, circle: shortestCircle(graph, files[0], new Set(files)) }))
    .sort((a, b) => b.files.length - a.files.length || a.files[0].localeCompare(b.files[0]));
}

/** A shortest path from `start` back to itself inside one component (breadth first). */
function shortestCircle(graph: ImportGraph, start: string, within: Set<string>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    for (const to of graph.get(queue[i]) ?? []) {
      if (!within.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let n = queue[i]; n !== start; n = previous.get(n)!) path.unshift(n);
        path.unshift(start);
        return path;
      }
      if (!previous.has(to)) {
        previous.set(to, queue[i]);
        queue.push(to);
      }
    }
  }
  return [start];
}

/** The report the check prints: one block per circle, or a line saying there is none. */
export function formatCycles(cycles: ImportCycle[], fileCount: number): string {
  if (cycles.length === 0) return `import cycles: none (${fileCount} files)`;
  const lines = [`import cycles: ${cycles.length} (${fileCount} files)`];
  for (const c of cycles) {
    lines.push("", `${c.files.length} files: ${c.files.join(", ")}`);
    lines.push(`  e.g. ${c.circle.join(" -> ")}`);
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const root = (Deno.args[0] ?? Deno.cwd()).replace(/\/+$/, "");
  const config = `${root}/deno.json`;
  let hasConfig = false;
  try {
    hasConfig = Deno.statSync(config).isFile;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const graph = importGraph(root, entryFiles(root), hasConfig ? config : undefined);
  const cycles = findCycles(graph);
  console.error(formatCycles(cycles, graph.size));
  if (cycles.length > 0) Deno.exit(1);
}
