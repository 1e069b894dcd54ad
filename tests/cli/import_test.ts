/**
 * `tessera import privacyidea`: the command's output (dry run, summary table,
 * progress, a second run that changes nothing) on the run's engine.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
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

/** Every path under `dir`, relative, sorted (directories end in "/"). */
async function listing(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (sub: string) => {
    for await (const e of Deno.readDir(`${dir}${sub}`)) {
      const rel = `${sub}/${e.name}`;
      out.push(e.isDirectory ? `${rel}/` : rel);
      if (e.isDirectory) await walk(rel);
    }
  };
  await walk("");
  return out.sort();
}

async function runImport(dir: string, env: Record<string, string>, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--data-dir", `${dir}/data`, "import", "privacyidea", ...args],
    stdin: "null",
    env: { NO_COLOR: "1", TESSERA_SIGNING_ENABLED: "true", ...env },
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

const NOT_PI =
  "Error: The database is not a privacyIDEA database (missing tables: token, tokeninfo, " +
  "tokenrealm, realm, resolver, resolverconfig, resolverrealm, policy, config)\n";

Deno.test("tessera import privacyidea refuses a database that is not privacyIDEA's, with or without --dry-run, before creating anything", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-cli-import-" });
  const target = await serverDatabase();
  try {
    await Deno.writeFile(`${dir}/encKey`, ENC_KEY);
    // a SQLite database of something else, an empty file, a file that is no database at all
    const other = new DatabaseSync(`${dir}/other.sqlite`);
    other.exec("create table users (id integer primary key, name text)");
    other.exec("insert into users (name) values ('alice')");
    other.close();
    await Deno.writeFile(`${dir}/empty.sqlite`, new Uint8Array());
    await Deno.writeTextFile(`${dir}/text.sqlite`, "id,name\n1,alice\n".repeat(100));
    const before = await listing(dir);
    const cases: [string, string][] = [
      [`sqlite:///${dir}/other.sqlite`, NOT_PI],
      [`sqlite:///${dir}/empty.sqlite`, NOT_PI],
      [
        `sqlite:///${dir}/text.sqlite`,
        `Error: Cannot open the privacyIDEA database "${dir}/text.sqlite": file is not a database\n`,
      ],
    ];
    for (const [url, message] of cases) {
      for (const extra of [["--dry-run"], []]) {
        const res = await runImport(
          dir,
          target.env,
          "--database",
          url,
          "--enckey",
          `${dir}/encKey`,
          ...extra,
        );
        assert.equal(res.code, 1, `${url} ${extra}: ${res.stdout}${res.stderr}`);
        assert.equal(res.stderr, message);
        assert.equal(res.stdout, "");
        // no data directory, key file, signing key or database was created
        assert.deepEqual(await listing(dir), before);
      }
    }
  } finally {
    await target.drop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tessera import privacyidea --dry-run creates nothing: no data directory, key file or database; later it only reads the database", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-cli-import-" });
  const target = await serverDatabase();
  try {
    const { url } = await createPiSqlite(dir, Date.now());
    await Deno.writeFile(`${dir}/encKey`, ENC_KEY);
    const args = ["--database", url, "--enckey", `${dir}/encKey`];
    const before = await listing(dir);
    assert.ok(!before.some((p) => p.startsWith("/data")), before.join(" "));
    const dry = await runImport(dir, target.env, ...args, "--dry-run");
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^Dry run: nothing was written\.$/m);
    assert.match(dry.stdout, /^would import: token HOTP0001$/m);
    assert.match(dry.stdout, /^tokens\s+6\s+6\s+0\s+0$/m);
    assert.deepEqual(await listing(dir), before);

    const real = await runImport(dir, target.env, ...args);
    assert.equal(real.code, 0, real.stderr);
    assert.match(real.stdout, /^tokens\s+6\s+6\s+0\s+0$/m);
    const after = await listing(dir);
    assert.ok(after.includes("/data/encKey"), after.join(" "));
    // a dry run against the imported database compares with it and changes nothing (SQLite's
    // shared-memory files come and go with the read, so the folder's own time may move)
    const files = after.filter((p) => !p.endsWith("/"));
    const stamps = async () =>
      await Promise.all(
        files.map(async (p) => [p, (await Deno.stat(`${dir}${p}`)).mtime?.getTime()]),
      );
    const mtimes = await stamps();
    const again = await runImport(dir, target.env, ...args, "--dry-run");
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^exists, skipped: token HOTP0001$/m);
    assert.match(again.stdout, /^tokens\s+6\s+0\s+6\s+0$/m);
    assert.deepEqual(await listing(dir), after);
    assert.deepEqual(await stamps(), mtimes);
  } finally {
    await target.drop();
    await Deno.remove(dir, { recursive: true });
  }
});
