/**
 * The README's quick start, run as a reader would: a fresh `tessera serve`
 * (on the run's engine: SQLite in its data directory, or a PostgreSQL test
 * database), then every shell block of the "Quick start" section in one bash,
 * in order. The only changes to the text: the server's address (a free
 * port instead of 5000) and this Deno for `npx -y deno@…`.
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { dropTestDatabase, openTestDatabase, TEST_ENGINE } from "./test_db.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** The shell blocks of the README section `title`, in order. */
export function shellBlocks(readme: string, title: string): string[] {
  const start = readme.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `README has no section "${title}"`);
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

async function freePort(): Promise<number> {
  return await new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** A fresh `tessera serve` in a temporary folder (its data directory `./data`), on the run's engine. */
async function withServer(
  run: (server: { dir: string; base: string }) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tessera-readme-" });
  const port = await freePort();
  const env: Record<string, string> = { NO_COLOR: "1", TESSERA_SIGNING_ENABLED: "false" };
  let pgUrl: string | undefined;
  if (TEST_ENGINE === "postgres") {
    const t = await openTestDatabase();
    await t.db.destroy();
    pgUrl = t.url;
    env.TESSERA_STORAGE_DATABASE_URL = pgUrl;
  }
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}main.ts`, "serve", "--listen", `127.0.0.1:${port}`],
    cwd: dir,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz/`).then(async (r) => {
        await r.body?.cancel();
        return r.ok;
      }).catch(() => false);
      if (ok) break;
      assert.ok(Date.now() < deadline, "the server did not start within 30 s");
      await new Promise((r) => setTimeout(r, 200));
    }
    await run({ dir, base: `http://127.0.0.1:${port}` });
  } finally {
    try {
      server.kill("SIGTERM");
    } catch { /* gone */ }
    await server.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    if (pgUrl) await dropTestDatabase(pgUrl);
  }
}

/** Runs `blocks` in one bash in `dir`, the server at `base` instead of localhost:5000. */
async function runBlocks(blocks: string[], dir: string, base: string) {
  let script = "set -euo pipefail\n" + blocks.join("\n");
  assert.ok(script.includes("TESSERA=http://localhost:5000"));
  script = script.replaceAll("TESSERA=http://localhost:5000", `TESSERA=${base}`)
    .replaceAll("npx -y deno@2.9.6", '"$DENO"');
  const out = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd: dir,
    env: { DENO: Deno.execPath(), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, `the README's commands failed:\n${stdout}\n${stderr}`);
  return stdout;
}

Deno.test("README quick start: every command runs against a fresh server and answers as the text says", async () => {
  await withServer(async ({ dir, base }) => {
    const readme = await Deno.readTextFile(`${ROOT}README.md`);
    const blocks = shellBlocks(readme, "Quick start");
    assert.ok(blocks.length >= 6, `${blocks.length} blocks`);
    const stdout = await runBlocks(blocks, dir, base);
    const answers = [...stdout.matchAll(/"authentication":"([A-Z]+)"/g)].map((m) => m[1]);
    // HOTP right, the same again, wrong; TOTP right; the challenge answered
    assert.deepEqual(answers, ["ACCEPT", "REJECT", "REJECT", "ACCEPT", "ACCEPT"], stdout);
    assert.match(stdout, /\{"username":"alice","email":"alice@example.com"\}/);
    assert.match(stdout, /"action":"POST \/validate\/check","success":1,"user":"alice"/);
  });
});

Deno.test("README quick start: the hotp helper gives RFC 4226's test values", async () => {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const helper = shellBlocks(readme, "Quick start").join("\n").match(/^hotp\(\) \{[\s\S]*?^\}$/m);
  assert.ok(helper, "the quick start defines hotp()");
  const out = await new Deno.Command("bash", {
    args: [
      "-c",
      `set -euo pipefail\n${helper[0]}\nfor c in 0 1 2 3 4 5 6 7 8 9; do hotp "$KEY" $c; done`,
    ],
    // RFC 4226 appendix D: the ASCII secret "12345678901234567890"
    env: { KEY: "3132333435363738393031323334353637383930" },
    stdout: "piped",
  }).output();
  assert.equal(out.code, 0);
  assert.deepEqual(new TextDecoder().decode(out.stdout).trimEnd().split("\n"), [
    "755224",
    "287082",
    "359152",
    "969429",
    "338314",
    "254676",
    "287922",
    "162583",
    "399871",
    "520489",
  ]);
});

Deno.test("README machines: the example attaches the SSH key token it enrols and fetches it for the host", async () => {
  await withServer(async ({ dir, base }) => {
    const readme = await Deno.readTextFile(`${ROOT}README.md`);
    // the quick start's login defines $TESSERA and $TOKEN, as the section says
    const login = shellBlocks(readme, "Quick start")[0];
    const blocks = shellBlocks(readme, "Machines");
    assert.equal(blocks.length, 1);
    const lines = (await runBlocks([login, ...blocks], dir, base)).trimEnd().split("\n");
    const key =
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH3ENGQeeXM1lYtgqmAuol1peZzvT/2Rz4IK8DKP9r7V alice@laptop";
    assert.equal(lines.length, 4, lines.join("\n"));
    for (const line of lines.slice(0, 3)) assert.equal(JSON.parse(line).status, true, line);
    // as privacyIDEA: the attachment's options, and the request's serial (none here)
    assert.deepEqual(JSON.parse(lines[3]), { ssh: [{ sshkey: key, user: "root", serial: null }] });
  });
});
