import assert from "node:assert/strict";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

async function run(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) {
  const cmd = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...options.env },
  });
  const child = cmd.spawn();
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(options.stdin));
    await w.close();
  }
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("CLI: --help on every command, exit 0", async () => {
  for (const args of [["--help"], ["serve", "--help"], ["admin", "--help"], ["migrate", "-h"]]) {
    const r = await run(args);
    assert.equal(r.code, 0, args.join(" "));
    assert.match(r.stdout, /Usage: tessera/);
  }
});

Deno.test("CLI: usage and config errors exit 2 with a readable message", async () => {
  const dir = await Deno.makeTempDir();
  const unknown = await run(["frobnicate", "--data-dir", dir]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /Unknown command "frobnicate"/);
  const badFlag = await run(["--nope"]);
  assert.equal(badFlag.code, 2);
  const cfg = `${dir}/bad.toml`;
  await Deno.writeTextFile(cfg, "[server]\nport = -1\n[log]\nlevel = 3\n");
  const bad = await run(["migrate", "--config", cfg, "--data-dir", dir]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /server\.port/);
  assert.match(bad.stderr, /log\.level/);
  const missing = await run(["migrate", "--config", `${dir}/none.toml`]);
  assert.equal(missing.code, 2);
  const env = await run(["migrate", "--data-dir", dir], { env: { TESSERA_SERVER_PORT: "x" } });
  assert.equal(env.code, 2);
  assert.match(env.stderr, /TESSERA_SERVER_PORT/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("CLI: admin add, list, password and delete", async () => {
  const dir = await Deno.makeTempDir();
  const add = await run(["admin", "add", "ops", "--password", "s3cret-pass", "--data-dir", dir]);
  assert.equal(add.code, 0, add.stderr);
  const fromStdin = await run(["admin", "add", "auditor", "--data-dir", dir], {
    stdin: "another-pass\n",
  });
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  const dup = await run(["admin", "add", "ops", "--password", "s3cret-pass", "--data-dir", dir]);
  assert.equal(dup.code, 1);
  assert.match(dup.stderr, /already exists/);
  const short = await run(["admin", "add", "x", "--password", "short", "--data-dir", dir]);
  assert.equal(short.code, 1);
  const list = await run(["admin", "list", "--data-dir", dir]);
  assert.equal(list.code, 0);
  assert.match(list.stdout, /^NAME +EMAIL +CREATED\nauditor /);
  assert.match(list.stdout, /^ops /m);
  assert.ok(!list.stdout.includes("s3cret"));
  const pw = await run(["admin", "password", "ops", "--data-dir", dir], {
    stdin: "new-password-1\n",
  });
  assert.equal(pw.code, 0, pw.stderr);
  const del = await run(["admin", "delete", "auditor", "--data-dir", dir]);
  assert.equal(del.code, 0);
  const delAgain = await run(["admin", "delete", "auditor", "--data-dir", dir]);
  assert.equal(delAgain.code, 1);
  const noName = await run(["admin", "add", "--data-dir", dir]);
  assert.equal(noName.code, 2);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("first start: key file, initial admin password file, login and an authenticated call", async () => {
  const dir = `${await Deno.makeTempDir()}/data`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "serve", "--data-dir", dir, "--listen", "127.0.0.1:0"],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let log = "";
  let port = 0;
  const deadline = Date.now() + 20_000;
  while (!port && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    log += value;
    const m = /Tessera listening address=127\.0\.0\.1:(\d+)/.exec(log);
    if (m) port = Number(m[1]);
  }
  try {
    assert.ok(port > 0, `server did not start:\n${log}`);
    const base = `http://127.0.0.1:${port}`;
    const password = (await Deno.readTextFile(`${dir}/initial-admin-password`)).trim();
    assert.equal((await Deno.stat(`${dir}/initial-admin-password`)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(`${dir}/encKey`)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(`${dir}/encKey`)).size, 96);
    assert.ok(log.includes(`${dir}/initial-admin-password`), "the log names the password file");
    assert.ok(!log.includes(password), "the log never shows the password");

    const health = await (await fetch(`${base}/healthz/`)).json();
    assert.equal(health.result.value.status, "OK");
    const login = await (await fetch(`${base}/auth`, {
      method: "POST",
      body: new URLSearchParams({ username: "admin", password }),
    })).json();
    assert.equal(login.result.value.role, "admin");
    const token = login.result.value.token;
    const sys = await fetch(`${base}/system/`, { headers: { "PI-Authorization": token } });
    assert.equal(sys.status, 200);
    await sys.body?.cancel();
    const anon = await fetch(`${base}/system/`);
    assert.equal(anon.status, 401);
    assert.equal((await anon.json()).result.error.code, 4033);
  } finally {
    child.kill("SIGTERM");
    await reader.cancel().catch(() => {});
    await child.stdout.cancel().catch(() => {});
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
