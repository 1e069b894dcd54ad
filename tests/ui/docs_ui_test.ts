/**
 * docs/ui.md and its screenshots agree: every image it shows is in docs/ui/, and every
 * screenshot there (written by `UPDATE_DOCS=1 deno test -A tests/ui/pages_browser_test.ts`)
 * is shown. The screenshot names are the ones pages_browser_test.ts writes.
 */
import assert from "node:assert/strict";

const DOCS = new URL("../../docs/", import.meta.url);

Deno.test("docs/ui.md shows every screenshot of docs/ui/ and no missing one", async () => {
  const text = await Deno.readTextFile(new URL("ui.md", DOCS));
  const shown = [...text.matchAll(/!\[[^\]]+\]\(ui\/([^)]+\.png)\)/g)].map((m) => m[1]).sort();
  const files: string[] = [];
  for await (const e of Deno.readDir(new URL("ui/", DOCS))) {
    if (e.isFile && e.name.endsWith(".png")) files.push(e.name);
  }
  files.sort();
  assert.ok(files.length >= 20, `only ${files.length} screenshots in docs/ui/`);
  assert.deepEqual(shown.filter((n) => !files.includes(n)), [], "shown but not in docs/ui/");
  assert.deepEqual(files.filter((n) => !shown.includes(n)), [], "in docs/ui/ but not shown");
  assert.equal(new Set(shown).size, shown.length, "a screenshot is shown twice");
});

Deno.test("the browser test writes exactly the screenshots of docs/ui/", async () => {
  const source = await Deno.readTextFile(new URL("./pages_browser_test.ts", import.meta.url));
  // the names of screenshot(page, "…") calls and of the page tables' third column
  const written = new Set([
    ...[...source.matchAll(/screenshot\(page, "([^"]+)"\)/g)].map((m) => m[1]),
    ...[...source.matchAll(/\["#\/[^"]*", (?:"[^"]*"|`[^`]*`), "([^"]+)"\]/g)].map((m) => m[1]),
    ...[...source.matchAll(/\[`#\/[^`]*`, "[^"]*", "([^"]+)"\]/g)].map((m) => m[1]),
  ]);
  const files: string[] = [];
  for await (const e of Deno.readDir(new URL("ui/", DOCS))) {
    if (e.isFile && e.name.endsWith(".png")) files.push(e.name.slice(0, -4));
  }
  assert.deepEqual([...written].filter((n) => !files.includes(n)).sort(), []);
  assert.deepEqual(files.filter((n) => !written.has(n)).sort(), []);
});
