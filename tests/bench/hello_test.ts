import assert from "node:assert/strict";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

Deno.test("tessera hello serves 'hello' on the --listen address and stops on SIGTERM", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "hello", "--listen", "127.0.0.1:0"],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let port = 0;
  try {
    while (port === 0) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
      const m = text.match(/hello listening on 127\.0\.0\.1:(\d+)/);
      if (m) port = Number(m[1]);
    }
    assert.ok(port > 0, `no listening line in: ${text}`);
    for (const path of ["/", "/anything/else"]) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), "hello");
    }
  } finally {
    child.kill("SIGTERM");
    const status = await child.status;
    assert.equal(status.code, 0);
    await reader.cancel();
    await child.stderr.cancel();
  }
});

Deno.test("tessera hello refuses extra arguments and a bad --listen (exit 2)", async () => {
  for (const args of [["hello", "extra"], ["hello", "--listen", "nonsense"]]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", MAIN, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 2, args.join(" "));
  }
});
