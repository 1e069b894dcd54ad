import assert from "node:assert/strict";
import { type CpuProfile, shortUrl, summarize } from "../../bench/profile_summary.ts";

Deno.test("shortUrl: project files relative, npm packages by name, natives named", () => {
  assert.equal(
    shortUrl("file:///work/main/src/domain/validate/mod.ts"),
    "src/domain/validate/mod.ts",
  );
  assert.equal(shortUrl("file:///work/main/main.ts"), "main.ts");
  assert.equal(
    shortUrl("file:///root/.cache/deno/npm/registry.npmjs.org/kysely/0.29.9/dist/esm/kysely.js"),
    "npm:kysely/dist/esm/kysely.js",
  );
  assert.equal(
    shortUrl("file:///c/deno/npm/registry.npmjs.org/@scope/pkg/1.0.0/index.js"),
    "npm:@scope/pkg/index.js",
  );
  assert.equal(shortUrl("ext:core/01_core.js"), "ext:core/01_core.js");
  assert.equal(shortUrl(""), "(native)");
});

Deno.test("summarize: self time from samples, inclusive time up the call tree", () => {
  const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame("(root)", ""), children: [2, 4] },
      { id: 2, callFrame: frame("handle", "file:///x/src/app.ts"), children: [3] },
      { id: 3, callFrame: frame("query", "file:///x/src/db/store.ts") },
      { id: 4, callFrame: frame("(idle)", "") },
    ],
    samples: [3, 3, 2, 4, 3],
    timeDeltas: [1000, 1000, 500, 4000, 1000],
  };
  const s = summarize(profile);
  assert.equal(s.totalMs, 7.5);
  const fn = (prefix: string) => s.functions.find((r) => r.name.startsWith(prefix))!;
  assert.deepEqual([fn("query").selfMs, fn("query").totalMs], [3, 3]);
  assert.deepEqual([fn("handle").selfMs, fn("handle").totalMs], [0.5, 3.5]);
  assert.deepEqual([fn("(root)").selfMs, fn("(root)").totalMs], [0, 7.5]);
  assert.equal(s.functions[0].name, "(idle) (native):1"); // biggest self time first
  const file = s.files.find((r) => r.name === "src/app.ts")!;
  assert.deepEqual([file.selfMs, file.totalMs], [0.5, 3.5]);
});
