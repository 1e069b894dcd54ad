import assert from "node:assert/strict";
import { shippedRuntime, startTaskRuntime } from "../../bench/lib/server.ts";

Deno.test("startTaskRuntime: leading environment assignments, --v8-flags and --no-code-cache of the start task", () => {
  assert.deepEqual(
    startTaskRuntime(
      "MALLOC_ARENA_MAX=1 A_B=x=y deno run --allow-all --no-code-cache --v8-flags=--max-old-space-size=128 main.ts serve",
    ),
    {
      env: { MALLOC_ARENA_MAX: "1", A_B: "x=y" },
      denoFlags: ["--no-code-cache", "--v8-flags=--max-old-space-size=128"],
    },
  );
  assert.deepEqual(startTaskRuntime("deno run -A main.ts serve"), { env: {}, denoFlags: [] });
});

Deno.test("the benchmark starts servers with the memory settings deno.json's start task ships", () => {
  const shipped = shippedRuntime();
  const config = JSON.parse(Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)));
  const flags = shipped.denoFlags.join(" ");
  assert.match(flags, /--max-old-space-size=\d+/);
  assert.match(flags, /--max-semi-space-size=\d+/);
  assert.ok(shipped.denoFlags.includes("--no-code-cache"));
  // the compiled binary carries the same V8 flags
  for (const f of shipped.denoFlags) assert.ok(config.tasks.compile.includes(f), f);
});
