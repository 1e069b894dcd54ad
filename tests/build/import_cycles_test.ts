import assert from "node:assert/strict";
import {
  entryFiles,
  findCycles,
  formatCycles,
  importGraph,
} from "../../src/build/import_cycles.ts";

const SCRIPT = new URL("../../src/build/import_cycles.ts", import.meta.url).pathname;

Deno.test("findCycles reports each circle once, with a shortest path through it", () => {
  const graph = new Map([
    ["a.ts", ["b.ts"]],
    ["b.ts", ["c.ts", "x.ts"]],
    ["c.ts", ["a.ts", "b.ts"]],
    ["d.ts", ["d.ts"]],
    ["e.ts", ["a.ts"]],
    ["x.ts", []],
  ]);
  assert.deepEqual(findCycles(graph), [
    { files: ["a.ts", "b.ts", "c.ts"], circle: ["a.ts", "b.ts", "c.ts", "a.ts"] },
    { files: ["d.ts"], circle: ["d.ts", "d.ts"] },
  ]);
  assert.deepEqual(findCycles(new Map([["a.ts", ["b.ts"]], ["b.ts", []]])), []);
});

Deno.test("findCycles follows a chain longer than the call stack would allow", () => {
  const n = 50_000;
  const graph = new Map(
    Array.from({ length: n }, (_, i) => [`m${i}.ts`, i + 1 < n ? [`m${i + 1}.ts`] : ["m0.ts"]]),
  );
  const [cycle] = findCycles(graph);
  assert.equal(cycle.files.length, n);
  assert.equal(cycle.circle.length, n + 1);
});

/** A project folder with `src/<name>.ts` files holding the given text. */
function fixture(files: Record<string, string>): string {
  const root = Deno.makeTempDirSync({ prefix: "import_cycles_test_" });
  Deno.mkdirSync(`${root}/src`);
  for (const [name, text] of Object.entries(files)) {
    Deno.writeTextFileSync(`${root}/src/${name}`, text);
  }
  return root;
}

const CIRCLE = {
  // a type-only import closes the circle: it counts as much as a value import
  "a.ts": `import type { B } from "./b.ts";\nexport interface A { b?: B }\n`,
  "b.ts": `import { c } from "./c.ts";\nexport interface B { n: number }\nexport const b = c;\n`,
  "c.ts": `import type { A } from "./a.ts";\nexport const c = 1;\nexport type C = A;\n`,
  "leaf.ts": `import { c } from "./c.ts";\nexport const leaf = c;\n`,
};

Deno.test("importGraph reads a fixture project's imports from deno info, type imports included", () => {
  const root = fixture(CIRCLE);
  try {
    const graph = importGraph(root, entryFiles(root));
    assert.deepEqual(Object.fromEntries(graph), {
      "src/a.ts": ["src/b.ts"],
      "src/b.ts": ["src/c.ts"],
      "src/c.ts": ["src/a.ts"],
      "src/leaf.ts": ["src/c.ts"],
    });
    const cycles = findCycles(graph);
    assert.deepEqual(cycles, [{
      files: ["src/a.ts", "src/b.ts", "src/c.ts"],
      circle: ["src/a.ts", "src/b.ts", "src/c.ts", "src/a.ts"],
    }]);
    assert.equal(
      formatCycles(cycles, graph.size),
      "import cycles: 1 (4 files)\n\n3 files: src/a.ts, src/b.ts, src/c.ts\n" +
        "  e.g. src/a.ts -> src/b.ts -> src/c.ts -> src/a.ts",
    );
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

async function runCheck(root: string): Promise<{ code: number; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-run", SCRIPT, root],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("the check fails on a fixture with a circle and passes once it is opened", async () => {
  const root = fixture(CIRCLE);
  try {
    const failed = await runCheck(root);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /import cycles: 1 \(4 files\)/);
    assert.match(failed.stderr, /src\/a\.ts -> src\/b\.ts -> src\/c\.ts -> src\/a\.ts/);
    Deno.writeTextFileSync(`${root}/src/c.ts`, `export const c = 1;\n`);
    const passed = await runCheck(root);
    assert.equal(passed.code, 0, passed.stderr);
    assert.match(passed.stderr, /import cycles: none \(4 files\)/);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
