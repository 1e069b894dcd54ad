/**
 * `tessera api createtoken`: the key it prints opens the validate API of a server on the
 * same data directory (policy api_key_required), and nothing else; bad options exit 2.
 *
 * @module
 */
import assert from "node:assert/strict";
import { decode } from "hono/jwt";
import { TEST_ENGINE } from "../test_db.ts";
import { loadConfig } from "../../src/config.ts";
import { closeRuntime, openRuntime } from "../../src/runtime.ts";
import { createApp } from "../../src/app.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { memoryLogger } from "../../src/lib/logger.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

async function tessera(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", TESSERA_SIGNING_ENABLED: "false" },
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

// the command works on the data directory's SQLite database; one engine is enough
const onSqliteRun = { ignore: TEST_ENGINE !== "sqlite" };

Deno.test({
  name: "tessera api createtoken: a validate key a server on the same data directory accepts",
  ...onSqliteRun,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-apikey-" });
  try {
    const dataDir = `${dir}/data`;
    const started = Date.now();
    const r = await tessera([
      "--data-dir",
      dataDir,
      "api",
      "createtoken",
      "--username",
      "radius1",
      "--days",
      "7",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const token = r.stdout.match(/^Auth-Token: (\S+)$/m)?.[1];
    assert.ok(token, r.stdout);
    assert.match(r.stdout, /^Username: {3}radius1$/m);
    assert.match(r.stdout, /^Realm: {6}API$/m);
    assert.match(r.stdout, /^Role: {7}validate$/m);
    assert.match(r.stdout, /^Validity: {3}7 days \(until \d{4}-/m);
    const claims = decode(token).payload as Record<string, unknown>;
    assert.equal(claims.role, "validate");
    assert.equal(claims.authtype, "API");
    assert.equal(claims.username, "radius1");
    assert.equal(claims.realm, "API");
    const exp = (claims.exp as number) * 1000;
    assert.ok(Math.abs(exp - (started + 7 * 86_400_000)) < 120_000, String(exp));

    // a server on that data directory (same key file) takes it where a policy asks for a key
    const config = loadConfig({ overrides: { dataDir } });
    const deps = await openRuntime(config, memoryLogger());
    try {
      await savePolicy(deps, "apikey", { scope: "authorization", action: "api_key_required" });
      const app = createApp(deps);
      const ask = (
        headers: Record<string, string>,
        path = "/validate/polltransaction?transaction_id=1",
      ) =>
        app.request(`http://localhost${path}`, { headers }, {
          remoteAddr: { hostname: "127.0.0.1" },
        });
      let res = await ask({});
      assert.equal(res.status, 403);
      assert.equal((await res.json()).result.error.message, "No valid API key was passed.");
      res = await ask({ Authorization: token });
      assert.equal(res.status, 200);
      assert.equal((await res.json()).result.value, false);
      // no admin rights come with it
      res = await ask({ Authorization: token }, "/token/");
      assert.equal(res.status, 401);
      await res.body?.cancel();
    } finally {
      await deps.audit.flush();
      await closeRuntime(deps);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "tessera api createtoken: wrong options exit 2 and create nothing",
  ...onSqliteRun,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-apikey-" });
  try {
    const dataDir = `${dir}/data`;
    const cases: [string[], string][] = [
      [["createtoken"], "tessera api createtoken needs --username <name>"],
      [
        ["createtoken", "--username", "x", "--role", "admin"],
        'Cannot parse --role "admin": an API key has the role "validate"',
      ],
      [
        ["createtoken", "--username", "x", "--days", "0"],
        'Cannot parse --days "0": expected an integer from 1 to 3650',
      ],
      [
        ["createtoken", "--username", "x", "--days", "1.5"],
        'Cannot parse --days "1.5": expected an integer from 1 to 3650',
      ],
      [
        ["createtoke", "--username", "x"],
        'Unknown api command "createtoke"; did you mean "createtoken"?',
      ],
      [[], "tessera api needs a command: createtoken"],
    ];
    for (const [args, message] of cases) {
      const r = await tessera(["--data-dir", dataDir, "api", ...args]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stderr.split("\n")[0], message);
      assert.equal(r.stdout, "");
    }
    // nothing was created: no data directory, no key file, no database
    assert.equal(await Deno.stat(dataDir).then(() => true, () => false), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
