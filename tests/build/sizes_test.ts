import assert from "node:assert/strict";
import { functionSizes, measure } from "../../src/build/sizes.ts";

const SOURCE = `/** A module. */
export async function outer(
  a: number,
): Promise<number> {
  const inner = (x: number) => {
    return x + 1;
  };
  if (a > 0) {
    return inner(a);
  }
  return 0;
}

routes.post("/init", async (c) => {
  return c;
});

const table = {
  async method(x: string) {
    return x;
  },
};
`;

Deno.test("functionSizes measures declarations, arrows, route handlers and methods in lines", () => {
  const sizes = functionSizes("f.ts", SOURCE).map((s) => [s.name, s.lines]);
  assert.deepEqual(sizes, [
    ["f.ts:2 outer", 11],
    ["f.ts:5 inner", 3],
    ['f.ts:14 post "/init"', 3],
    ["f.ts:19 method", 3],
  ]);
});

Deno.test("measure lists src/ files and functions largest first", () => {
  const { files, functions } = measure(new URL("../..", import.meta.url).pathname);
  assert.ok(files.length > 100);
  assert.ok(files.every((f, i) => i === 0 || files[i - 1].lines >= f.lines));
  assert.ok(functions.every((f, i) => i === 0 || functions[i - 1].lines >= f.lines));
  // the validate room's public surface is re-exports only
  const validate = files.find((f) => f.name === "src/domain/validate/mod.ts");
  assert.ok(validate && validate.lines < 60, JSON.stringify(validate));
});
