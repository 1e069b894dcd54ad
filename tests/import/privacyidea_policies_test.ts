/**
 * `tessera import privacyidea` and policies naming actions Tessera does not have: such a
 * policy is not imported at all (never in part), the output names it with those actions, the
 * rest of the installation is imported, and the command exits with code 3.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createTestApp, jsonOf } from "../test_app.ts";
import { importCommand } from "../../src/cli/import.ts";
import { importPrivacyidea } from "../../src/domain/import/mod.ts";
import { listPolicies } from "../../src/domain/policy/mod.ts";
import { listTokens } from "../../src/domain/token/mod.ts";
import { createPiSqlite, ENC_KEY } from "./_pi_fixture.ts";
import { serverDatabase } from "../cli/_server.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** The fixture installation plus two policies with actions of features Tessera lacks. */
async function sourceWithUnsupportedPolicies(dir: string, nowMs: number): Promise<string> {
  const { url } = await createPiSqlite(dir, nowMs);
  const db = new DatabaseSync(`${dir}/privacyidea.db`);
  const insert = db.prepare(
    `insert into policy (id, active, check_all_resolvers, name, scope, action, realm, adminrealm,
       adminuser, resolver, pinode, user, client, time, priority, user_agents,
       user_case_insensitive) values (?, ?, 0, ?, ?, ?, '', '', '', '', '', '', '', '', 1, '', 0)`,
  );
  // the only active admin policy: leaving it out would open the admin scope
  insert.run(10, 1, "pol_containers", "admin", "enable, -set_hsm_password");
  insert.run(11, 1, "pol_remember", "authentication", "otppin=userstore, remember_device");
  db.close();
  return url;
}

const CONTAINERS = "policies pol_containers (scope admin, actions Tessera does not have: " +
  "set_hsm_password)";
const REMEMBER = "policies pol_remember (scope authentication, actions Tessera does not have: " +
  "remember_device)";
const OPEN_ADMIN = "warning: no active admin policy is left: every admin may do everything " +
  "until you add one (privacyIDEA limited them with pol_containers, not imported)";

Deno.test("import privacyidea: a policy with an action Tessera does not have is left out whole, named with its actions", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-pol-" });
  try {
    const url = await sourceWithUnsupportedPolicies(dir, t.clock.now());
    const dry = await importPrivacyidea(t.deps, url, { encKey: ENC_KEY, dryRun: true });
    assert.ok(dry.log.includes(`would not import: ${CONTAINERS}`), dry.log.join("\n"));
    assert.ok(dry.log.includes(`would not import: ${REMEMBER}`));
    assert.ok(dry.log.includes("would import: policies pol_auth"));
    assert.ok(dry.log.includes(OPEN_ADMIN), "the dry run warns too");
    assert.deepEqual(dry.policiesNotImported, ["pol_containers", "pol_remember"]);
    assert.deepEqual(await listPolicies(t.deps), []);

    const real = await importPrivacyidea(t.deps, url, { encKey: ENC_KEY });
    assert.ok(real.log.includes(`not imported: ${CONTAINERS}`), real.log.join("\n"));
    assert.ok(real.log.includes(`not imported: ${REMEMBER}`));
    assert.ok(real.log.includes(OPEN_ADMIN));
    assert.deepEqual(real.policiesNotImported, ["pol_containers", "pol_remember"]);
    const policies = real.summary.find((r) => r.what === "policies")!;
    assert.deepEqual([policies.found, policies.imported, policies.failed], [4, 2, 2]);
    // the rest of the installation is there; the refused policies are not, not even in part
    assert.deepEqual((await listPolicies(t.deps)).map((p) => p.name).sort(), [
      "pol_admin",
      "pol_auth",
    ]);
    assert.equal((await listTokens(t.deps, {})).count, 6);
    const listed = await jsonOf(await t.asAdmin("GET", "/policy/"));
    assert.deepEqual(Object.keys(listed.body.result.value).sort(), ["pol_admin", "pol_auth"]);
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tessera import privacyidea exits with code 3 when it leaves out policies", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-pol-" });
  try {
    const url = await sourceWithUnsupportedPolicies(dir, t.clock.now());
    await Deno.writeFile(`${dir}/encKey`, ENC_KEY);
    const run = async (extra: [string, true][]) => {
      const lines: string[] = [];
      const flags = new Map<string, string | true>([
        ["database", url],
        ["enckey", `${dir}/encKey`],
        ...extra,
      ]);
      const code = await importCommand(t.deps, flags, { line: (l) => lines.push(l) });
      return { code, lines };
    };
    const dry = await run([["dry-run", true]]);
    assert.equal(dry.code, 3);
    assert.equal(
      dry.lines.at(-1),
      "Would leave out 2 policies (pol_containers, pol_remember): see above; exit code 3.",
    );
    const real = await run([]);
    assert.equal(real.code, 3);
    assert.ok(real.lines.includes(`not imported: ${CONTAINERS}`));
    assert.equal(
      real.lines.at(-1),
      "Left out 2 policies (pol_containers, pol_remember): see above; exit code 3.",
    );
    // a second run: the imported ones exist, the refused ones are still refused
    const again = await run([]);
    assert.equal(again.code, 3);
    assert.ok(again.lines.includes("exists, skipped: policies pol_auth"));
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tessera import privacyidea as a process: exit code 3 and the left-out policies on stdout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-pol-" });
  const target = await serverDatabase();
  try {
    const url = await sourceWithUnsupportedPolicies(dir, Date.now());
    await Deno.writeFile(`${dir}/encKey`, ENC_KEY);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        MAIN,
        "--data-dir",
        `${dir}/data`,
        "import",
        "privacyidea",
        "--database",
        url,
        "--enckey",
        `${dir}/encKey`,
      ],
      stdin: "null",
      env: { NO_COLOR: "1", ...target.env },
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 3, stdout + new TextDecoder().decode(out.stderr));
    assert.match(stdout, /^not imported: policies pol_containers \(scope admin, actions Tessera/m);
    assert.match(stdout, /^Left out 2 policies \(pol_containers, pol_remember\)/m);
  } finally {
    await target.drop();
    await Deno.remove(dir, { recursive: true });
  }
});
