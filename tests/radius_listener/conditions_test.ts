/**
 * Policy conditions on HTTP request headers for logins through the native RADIUS listener:
 * the listener calls the validate path in-process, so there are no headers (nor an HTTP
 * environment or request parameters). A header condition finds its section unavailable and
 * `handle_missing_data` decides: `condition_is_false` leaves the policy out,
 * `condition_is_true` applies it, `raise_error` (the default) fails the login (Access-Reject,
 * the audit row says why).
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { Buffer } from "node:buffer";
import Radius from "radius";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enroll } from "../fixtures/tokens.ts";
import { validateCheck } from "../../src/domain/validate/mod.ts";
import { type RadiusListener, startRadiusListener } from "../../src/radius_listener/listener.ts";

// deno-lint-ignore no-explicit-any
const lib = Radius as any;
const SECRET = "nas-secret";

async function accessRequest(listener: RadiusListener, id: number): Promise<string> {
  const socket = dgram.createSocket("udp4");
  try {
    const reply = new Promise<Buffer>((resolve) => socket.on("message", resolve));
    await new Promise<void>((r) => socket.bind(0, "127.0.0.1", () => r()));
    const packet = lib.encode({
      code: "Access-Request",
      identifier: id,
      secret: SECRET,
      attributes: [["User-Name", "alice@realm1"], ["User-Password", "pin"]],
    });
    socket.send(Buffer.from(packet), listener.port, "127.0.0.1");
    return lib.decode({ packet: await reply, secret: SECRET }).code;
  } finally {
    await new Promise<void>((r) => socket.close(() => r()));
  }
}

async function denyOnHeader(t: TestApp, missing: string) {
  const res = await jsonOf(
    await t.asAdmin("POST", "/policy/deny", {
      body: {
        scope: "authorization",
        action: { authorized: "deny_access" },
        conditions: [["HTTP Request header", "X-Site", "equals", "vpn", true, missing]],
      },
      json: true,
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

Deno.test("RADIUS listener: a header condition has no headers to read; handle_missing_data decides", async () => {
  const t = await createTestApp();
  const listener = await startRadiusListener(t.deps, {
    host: "127.0.0.1",
    port: 0,
    clients: [{ address: "127.0.0.1", secret: SECRET, name: "loopback" }],
    check: validateCheck,
  });
  try {
    await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "pw" }] });
    await enroll(t, { type: "spass", pin: "pin", user: "alice", realm: "realm1" });
    assert.equal(await accessRequest(listener, 1), "Access-Accept");
    // over HTTP the same policy reads the header
    await denyOnHeader(t, "raise_error");
    const http = async (value: string) =>
      (await jsonOf(
        await t.post("/validate/check", { user: "alice@realm1", pass: "pin" }, {
          headers: { "X-Site": value },
        }),
      )).body.result.value;
    assert.equal(await http("office"), true);
    assert.notEqual(await http("vpn"), true);
    // raise_error: the login fails, the audit row names the policy
    assert.equal(await accessRequest(listener, 2), "Access-Reject");
    const row = await t.deps.db.selectFrom("audit").select(["success", "info"])
      .where("action", "like", "RADIUS%").orderBy("id", "desc").executeTakeFirstOrThrow();
    assert.equal(row.success, 0);
    assert.equal(
      row.info,
      "Policy 'deny' has a condition on the section 'HTTP Request header' with key 'X-Site', " +
        "but a request is unavailable!",
    );
    await denyOnHeader(t, "condition_is_false");
    assert.equal(await accessRequest(listener, 3), "Access-Accept");
    await denyOnHeader(t, "condition_is_true");
    assert.equal(await accessRequest(listener, 4), "Access-Reject");
  } finally {
    await listener.close();
    await t.close();
  }
});
