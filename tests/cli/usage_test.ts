/**
 * What the command line answers a user who mistypes, whose backup cannot be
 * made, or who lists the admins: each answer asserted exactly as printed.
 *
 * @module
 */
import assert from "node:assert/strict";
import { TEST_ENGINE } from "../test_db.ts";
import { serverDatabase } from "./_server.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

async function tessera(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", TESSERA_SIGNING_ENABLED: "false", ...env },
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/** The text `tessera <command> --help` prints. */
async function helpOf(command: string[]): Promise<string> {
  const r = await tessera([...command, "--help"]);
  assert.equal(r.code, 0);
  return r.stdout;
}

const onSqliteRun = { ignore: TEST_ENGINE !== "sqlite" };

Deno.test({
  name: "a mistyped command or option: the nearest one and that command's help, exit 2",
  ...onSqliteRun,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-usage-" });
  try {
    const main = await helpOf([]);
    const cases: [string[], string, string][] = [
      [["sreve"], 'Unknown command "sreve"; did you mean "serve"?', await helpOf(["serve"])],
      [
        ["backpu", "x.sqlite"],
        'Unknown command "backpu"; did you mean "backup"?',
        await helpOf([
          "backup",
        ]),
      ],
      [["frobnicate"], 'Unknown command "frobnicate"', main],
      [
        ["serve", "--listn", "127.0.0.1:0"],
        "Unknown option --listn; did you mean --listen?",
        await helpOf([
          "serve",
        ]),
      ],
      [["--vresion"], "Unknown option --vresion; did you mean --version?", main],
      [["migrate", "--frobnicate"], "Unknown option --frobnicate", await helpOf(["migrate"])],
      [
        ["admin", "lsit"],
        'Unknown admin command "lsit"; did you mean "list"?',
        await helpOf([
          "admin",
        ]),
      ],
      [
        ["admin"],
        "tessera admin needs a command: add, list, delete or password",
        await helpOf([
          "admin",
        ]),
      ],
      [
        ["migrate", "--email", "a@example.com"],
        "--email is only valid for admin, not for migrate",
        await helpOf(["migrate"]),
      ],
      [
        ["backup", "x.sqlite", "--listen", "127.0.0.1:0"],
        "--listen is only valid for serve and hello, not for backup",
        await helpOf(["backup"]),
      ],
      [
        ["subscription", "sing", "draft.yaml"],
        'Unknown subscription command "sing"; did you mean "sign"?',
        await helpOf(["subscription"]),
      ],
    ];
    for (const [args, first, help] of cases) {
      const r = await tessera([...args, "--data-dir", `${dir}/data`]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stderr, `${first}\n\n${help}`, args.join(" "));
      assert.equal(r.stdout, "");
    }
    // nothing was started, so nothing was created
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "tessera backup: every failure is one 'Error: …' line, exit 1",
  ...onSqliteRun,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-usage-" });
  try {
    const data = `${dir}/data`;
    const cases: [string[], Record<string, string>, string][] = [
      [
        ["backup", `${dir}/copy.sqlite`],
        {},
        `Cannot back up "${data}/tessera.sqlite": no such database file`,
      ],
      [
        ["backup", `${dir}/copy.sqlite`],
        { TESSERA_STORAGE_DATABASE_URL: "postgres://tessera@127.0.0.1:1/tessera" },
        "tessera backup copies SQLite databases; the configured database is PostgreSQL: use " +
        "pg_dump or base backups",
      ],
    ];
    for (const [args, env, message] of cases) {
      const r = await tessera(["--data-dir", data, ...args], env);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr, `Error: ${message}\n`);
      assert.equal(r.stdout, "");
    }
    assert.equal((await tessera(["--data-dir", data, "migrate"])).code, 0);
    await Deno.writeTextFile(`${dir}/taken.sqlite`, "");
    const more: [string, string][] = [
      [
        `${dir}/taken.sqlite`,
        `Cannot back up to "${dir}/taken.sqlite": the file exists (choose a new name)`,
      ],
      [
        `${dir}/missing/copy.sqlite`,
        `Cannot back up to "${dir}/missing/copy.sqlite": its folder does not exist`,
      ],
    ];
    for (const [to, message] of more) {
      const r = await tessera(["--data-dir", data, "backup", to]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr, `Error: ${message}\n`);
      assert.equal(r.stdout, "");
    }
    // the taken file is untouched
    assert.equal(await Deno.readTextFile(`${dir}/taken.sqlite`), "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tessera admin list: a header, then one aligned row per admin", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-usage-" });
  const database = await serverDatabase();
  try {
    const args = ["--data-dir", `${dir}/data`, "admin"];
    const empty = await tessera([...args, "list"], database.env);
    assert.equal(empty.code, 0, empty.stderr);
    assert.equal(empty.stdout, "(no admins)\n");
    for (const [name, email] of [["bob", "bob@example.com"], ["alexandra", ""]]) {
      const extra = email ? ["--email", email] : [];
      const r = await tessera([...args, "add", name, "--password", "Secret-Pass-12", ...extra], {
        ...database.env,
      });
      assert.equal(r.code, 0, r.stderr);
    }
    const r = await tessera([...args, "list"], database.env);
    assert.equal(r.code, 0, r.stderr);
    const time = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`;
    assert.match(
      r.stdout,
      new RegExp(
        `^NAME       EMAIL            CREATED\n` +
          `alexandra                   ${time}\n` +
          `bob        bob@example\\.com  ${time}\n$`,
      ),
    );
  } finally {
    await database.drop();
    await Deno.remove(dir, { recursive: true });
  }
});
