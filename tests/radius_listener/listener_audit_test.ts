/**
 * The RADIUS listener's audit row of a request whose check fails after the
 * user's tokens were loaded (the database went away): a reject, about those
 * tokens, committed before the reply leaves.
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { Buffer } from "node:buffer";
import Radius from "radius";
import { createTestApp } from "../test_app.ts";
import { type RadiusCheck, startRadiusListener } from "../../src/radius_listener/listener.ts";

// deno-lint-ignore no-explicit-any
const lib = Radius as any;
const SECRET = "nas-secret";

Deno.test("listener: a check that fails after loading the tokens is audited with them", async () => {
  const t = await createTestApp();
  // the validate path found alice's tokens, then the database went away
  const failing: RadiusCheck = (_deps, req) => {
    req.onTokens?.(["TOTP0001", "HOTP0002"]);
    return Promise.reject(new Error("Connection terminated unexpectedly"));
  };
  const listener = await startRadiusListener(t.deps, {
    host: "127.0.0.1",
    port: 0,
    clients: [{ address: "127.0.0.1", secret: SECRET, name: "loopback" }],
    check: failing,
  });
  const socket = dgram.createSocket("udp4");
  try {
    const reply = new Promise<Buffer>((resolve) => socket.on("message", resolve));
    await new Promise<void>((r) => socket.bind(0, "127.0.0.1", () => r()));
    const packet = lib.encode({
      code: "Access-Request",
      identifier: 9,
      secret: SECRET,
      attributes: [["User-Name", "alice"], ["User-Password", "123456"]],
    });
    socket.send(Buffer.from(packet), listener.port, "127.0.0.1");
    const decoded = lib.decode({ packet: await reply, secret: SECRET });
    assert.equal(decoded.code, "Access-Reject");
    // the row is committed before the reply: no flush needed
    const rows = await t.deps.db.selectFrom("audit").select(["success", "serial", "user", "info"])
      .where("action", "like", "RADIUS%").execute();
    assert.deepEqual(rows.map((r) => ({ ...r })), [{
      success: 0,
      serial: "TOTP0001,HOTP0002",
      user: "alice",
      info: "internal error",
    }]);
  } finally {
    await new Promise<void>((r) => socket.close(() => r()));
    await listener.close();
    await t.close();
  }
});
