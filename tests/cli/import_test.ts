/**
 * `tessera import privacyidea`: the command's output (dry run, summary table,
 * progress, a second run that changes nothing) on the run's engine.
 */
import assert from "node:assert/strict";
import { createTestApp } from "../test_app.ts";
import { importCommand } from "../../src/cli/import.ts";
import { createPiSqlite, ENC_KEY } from "../import/_pi_fixture.ts";
import { listTokens } from "../../src/domain/token/mod.ts";
import { serverDatabase } from "./_server.ts";

Deno.test("tessera import privacyidea: dry run, summary table, second run", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-cli-import-" });
  try {
    const { url } = await createPiSqlite(dir, t.clock.now());
    await Deno.writeFile(`${dir}/encKey`, ENC_KEY);
    await Deno.writeTextFile(`${dir}/pepper`, "missing\n");
    const run = async (extra: [string, string | true][]) => {
      const lines: string[] = [];
      const progress: string[] = [];
      const flags = new Map<string, string | true>([
        ["database", url],
        ["enckey", `${dir}/encKey`],
        ["pepper-file", `${dir}/pepper`],
        ...extra,
      ]);
      const code = await importCommand(t.deps, flags, {
        line: (l) => lines.push(l),
        progress: (done, total) => progress.push(`${done}/${total}`),
      });
      assert.equal(code, 0);
      return { lines, progress };
    };
    const dry = await run([["dry-run", true]]);
    assert.equal(dry.lines[0], "Dry run: nothing was written.");
    assert.ok(dry.lines.includes("would import: token TOTP0001"));
    assert.match(
      dry.lines.find((l) => l.includes("would import") && l.includes("found"))!,
      /^\s+found/,
    );
    assert.equal((await listTokens(t.deps, {})).count, 0);

    const real = await run([]);
    const tokens = real.lines.find((l) => l.startsWith("tokens"))!;
    assert.deepEqual(tokens.split(/\s+/), ["tokens", "6", "6", "0", "0"]);
    assert.equal(real.progress.at(-1), "6/6");
    assert.match(real.lines.at(-1)!, /^Imported \d+ objects in one transaction\.$/);
    assert.equal((await listTokens(t.deps, {})).count, 6);

    const again = await run([]);
    assert.equal(again.lines.at(-1), "Nothing changed.");
    assert.deepEqual(again.lines.find((l) => l.startsWith("tokens"))!.split(/\s+/), [
      "tokens",
      "6",
      "0",
      "6",
      "0",
    ]);
    assert.ok(again.lines.includes("exists, skipped: token HOTP0001"));
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

Deno.test("tessera import privacyidea as a process: usage, wrong key, dry run, import (run's engine)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-cli-import-" });
  const target = await serverDatabase();
  const run = async (...args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "--data-dir", `${dir}/data`, "import", ...args],
      stdin: "null",
      env: { NO_COLOR: "1", ...target.env },
    }).output();
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
  };
  try {
    const { url } = await createPiSqlite(dir, Date.now());
    await Deno.writeFile(`${dir}/encKey`, ENC_KEY);
    await Deno.writeFile(`${dir}/otherKey`, ENC_KEY.map((b) => b ^ 1));
    const usage = await run("privacyidea", "--database", url);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /needs --enckey/);
    const wrong = await run("privacyidea", "--database", url, "--enckey", `${dir}/otherKey`);
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(wrong.stderr, /^Error: The key file does not decrypt/m);
    const dry = await run(
      "privacyidea",
      "--database",
      url,
      "--enckey",
      `${dir}/encKey`,
      "--dry-run",
    );
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^Dry run: nothing was written\.$/m);
    const real = await run("privacyidea", "--database", url, "--enckey", `${dir}/encKey`);
    assert.equal(real.code, 0, real.stderr);
    assert.match(real.stdout, /^tokens\s+6\s+6\s+0\s+0$/m);
    const again = await run("privacyidea", "--database", url, "--enckey", `${dir}/encKey`);
    assert.match(again.stdout, /^Nothing changed\.$/m);
  } finally {
    await target.drop();
    await Deno.remove(dir, { recursive: true });
  }
});
