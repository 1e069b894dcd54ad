/**
 * The committed `src/ui/assets.ts` is what the UI sources build to, so the
 * program (and `deno task compile`) serves the UI as it is in the sources.
 */
import assert from "node:assert/strict";
import { ASSETS_MODULE, assetsModuleSource, buildUiAssets } from "../../src/ui/build.ts";

Deno.test("src/ui/assets.ts is up to date with src/ui/ (run deno task ui:build)", async () => {
  const built = await assetsModuleSource(await buildUiAssets());
  const committed = await Deno.readTextFile(ASSETS_MODULE);
  assert.ok(built === committed, "src/ui/assets.ts is out of date: run deno task ui:build");
});
