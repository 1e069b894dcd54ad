/**
 * What an operator reads when starting and stopping the server goes wrong:
 * each message is asserted exactly as printed.
 *
 * @module
 */
import assert from "node:assert/strict";
import { startTessera } from "./_server.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

async function run(args: string[], env: Record<string, string> = {}) {
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

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("serve on a busy port: one readable line, exit 1, nothing created on disk", async () => {
  const holder = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (holder.addr as Deno.NetAddr).port;
  const dir = await Deno.makeTempDir({ prefix: "tessera-busy-" });
  try {
    for (const extra of [[], ["--workers", "2"]]) {
      const r = await run([
        "serve",
        "--listen",
        `127.0.0.1:${port}`,
        "--data-dir",
        `${dir}/data`,
        ...extra,
      ]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(
        r.stderr,
        `Error: Cannot listen on 127.0.0.1:${port}: the address is already in use. Another ` +
          `program (or another Tessera) listens there: stop it, or set another server.port ` +
          `(TESSERA_SERVER_PORT).\n`,
      );
      assert.equal(r.stdout, "");
      assert.equal(await exists(`${dir}/data`), false, "the data directory is not created");
    }
  } finally {
    holder.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a TOML syntax error names the file, line and column and shows the place", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-toml-" });
  try {
    const cfg = `${dir}/tessera.toml`;
    await Deno.writeTextFile(cfg, '[server]\nport = 8080\nhost = "127.0.0.1\n[log]\n');
    const r = await run(["serve", "--config", cfg, "--data-dir", `${dir}/data`]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      [
        "Invalid configuration:",
        `  - ${cfg}:3:18: cannot parse TOML: control characters are not allowed in strings`,
        "      2:  port = 8080",
        '      3:  host = "127.0.0.1',
        "                           ^",
        "      4:  [log]",
        "",
      ].join("\n"),
    );
    await Deno.writeTextFile(cfg, "[server]\nport = = 8080\n");
    const second = await run(["migrate", "--config", cfg, "--data-dir", `${dir}/data`]);
    assert.equal(second.code, 2);
    assert.match(
      second.stderr,
      new RegExp(`^Invalid configuration:\n  - ${cfg}:2:8: cannot parse TOML: invalid value\n`),
    );
    assert.equal(await exists(`${dir}/data`), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGINT (twice, as a terminal and a task runner both send it): one 'Shutting down', then 'Stopped', exit 0", async () => {
  const server = await startTessera(["serve", "--listen", "127.0.0.1:0"]);
  try {
    await server.waitFor(/Tessera listening address=127\.0\.0\.1:\d+/);
    const from = server.log().length;
    server.child.kill("SIGINT");
    server.child.kill("SIGINT");
    const status = await server.status;
    assert.equal(status.code, 0, server.log());
    const tail = server.log().slice(from).trimEnd().split("\n");
    assert.equal(tail.length, 2, server.log());
    assert.match(tail[0], /^\S+Z INFO Shutting down reason=SIGINT$/);
    assert.match(tail[1], /^\S+Z INFO Stopped$/);
  } finally {
    await server.cleanup();
  }
});

Deno.test("log.format = json: every line is one JSON object; a request's lines carry its id", async () => {
  // the test plays the proxy in front, whose X-Request-ID is kept
  const server = await startTessera(["serve", "--listen", "127.0.0.1:0"], {
    env: { TESSERA_LOG_FORMAT: "json", TESSERA_SERVER_TRUSTED_PROXIES: "127.0.0.1/32" },
  });
  try {
    const [, port] = await server.waitFor(
      /"msg":"Tessera listening","address":"127\.0\.0\.1:(\d+)"/,
    );
    const res = await fetch(`http://127.0.0.1:${port}/auth`, {
      method: "POST",
      headers: { "x-request-id": "lb-4711" },
      body: new URLSearchParams({ username: "admin", password: "wrong" }),
    });
    await res.body?.cancel();
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("x-request-id"), "lb-4711");
    await server.waitFor(/"msg":"Login failed"/);
    server.child.kill("SIGTERM");
    assert.equal((await server.status).code, 0, server.log());
    const events = server.log().trimEnd().split("\n").map((line) => JSON.parse(line));
    for (const e of events) {
      assert.equal(typeof e.time, "string");
      assert.ok(["debug", "info", "warn", "error"].includes(e.level), JSON.stringify(e));
      assert.equal(typeof e.msg, "string");
    }
    const failed = events.find((e) => e.msg === "Login failed");
    assert.deepEqual(
      { username: failed.username, reason: failed.reason, request_id: failed.request_id },
      { username: "admin", reason: "wrong local admin password", request_id: "lb-4711" },
    );
    assert.equal(events.at(-1).msg, "Stopped");
    assert.equal(events.filter((e) => e.msg === "Shutting down").length, 1);
  } finally {
    await server.cleanup();
  }
});

Deno.test("a failed login's log line says whether the admin exists (the password was wrong) or not", async () => {
  const server = await startTessera(["serve", "--listen", "127.0.0.1:0"], {
    env: { TESSERA_SERVER_TRUSTED_PROXIES: "127.0.0.1/32" },
  });
  try {
    const [, port] = await server.waitFor(/Tessera listening address=127\.0\.0\.1:(\d+)/);
    for (const [username, id] of [["admin", "req-a"], ["nobody", "req-b"]]) {
      const res = await fetch(`http://127.0.0.1:${port}/auth`, {
        method: "POST",
        headers: { "x-request-id": id },
        body: new URLSearchParams({ username, password: "wrong-password" }),
      });
      await res.body?.cancel();
      assert.equal(res.status, 401);
    }
    await server.waitFor(/request_id=req-b/);
    const lines = server.log().split("\n").filter((l) => l.includes("Login failed"))
      .map((l) => l.replace(/^\S+Z /, ""));
    assert.deepEqual(lines, [
      'INFO Login failed username=admin realm= reason="wrong local admin password" request_id=req-a',
      'INFO Login failed username=nobody realm= reason="no local admin or realm user of that name" request_id=req-b',
    ]);
  } finally {
    await server.cleanup();
  }
});
