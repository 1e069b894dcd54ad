/** `tessera serve` with `radius.enabled`: the listener starts, answers, and stops with the server. */
import assert from "node:assert/strict";
import { HAS_RADCLIENT, radclient as send } from "./radclient.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const SECRET = "serve-secret";

async function radclient(port: number, command: string, attrs: string): Promise<string> {
  return (await send(port, SECRET, attrs, { command, timeout: 3 })).out;
}

Deno.test({
  name: "serve with radius.enabled starts the RADIUS listener and stops it on SIGTERM",
  ignore: !HAS_RADCLIENT,
  async fn() {
    const dir = `${await Deno.makeTempDir()}/data`;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "serve", "--data-dir", dir, "--listen", "127.0.0.1:0"],
      stdout: "piped",
      stderr: "piped",
      env: {
        NO_COLOR: "1",
        TESSERA_RADIUS_ENABLED: "true",
        TESSERA_RADIUS_HOST: "127.0.0.1",
        TESSERA_RADIUS_PORT: "0",
        TESSERA_RADIUS_CLIENTS: JSON.stringify([{ address: "127.0.0.1", secret: SECRET }]),
      },
    }).spawn();
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let log = "";
    let port = 0;
    const deadline = Date.now() + 20_000;
    while (!port && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      log += value;
      const m = log.match(/RADIUS listener started address=127\.0\.0\.1:(\d+)/);
      if (m) port = Number(m[1]);
    }
    let exited = false;
    try {
      assert.ok(port > 0, `the RADIUS listener did not start:\n${log}`);
      const status = await radclient(port, "status", "Message-Authenticator = 0x00");
      assert.match(status, /Received Access-Accept/, status);
      const auth = await radclient(port, "auth", 'User-Name = "nobody", User-Password = "x"');
      assert.match(auth, /Received Access-Reject/, auth);
      child.kill("SIGTERM");
      const result = await Promise.race([
        child.status,
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000)),
      ]);
      assert.ok(result, "serve did not exit after SIGTERM");
      exited = true;
      assert.equal(result.code, 0);
    } finally {
      if (!exited) child.kill("SIGKILL");
      await reader.cancel().catch(() => {});
      await child.stdout.cancel().catch(() => {});
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
