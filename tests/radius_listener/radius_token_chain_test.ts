/**
 * The whole chain: radclient → Tessera's RADIUS listener → validateCheck →
 * radius token (remote PIN) → an upstream RADIUS server, with the upstream
 * Access-Challenge travelling back to radclient and the answer forwarded with
 * the upstream State.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createTestApp, jsonOf } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { startResponder } from "../domain/radius_server/responder.ts";
import { setRadiusServer } from "../../src/domain/radius_server/mod.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { validateCheck } from "../../src/domain/validate/mod.ts";
import { startRadiusListener } from "../../src/radius_listener/listener.ts";
import { HAS_RADCLIENT, radclient as send } from "./radclient.ts";

const NAS_SECRET = "nas-secret";

async function radclient(port: number, attrs: string): Promise<string> {
  return (await send(port, NAS_SECRET, attrs, { timeout: 3 })).out;
}

Deno.test({
  name: "radclient → listener → radius token → upstream: challenge with State, then accept",
  ignore: !HAS_RADCLIENT,
  async fn() {
    const t = await createTestApp();
    const upstream = await startResponder("up-secret", (req) => {
      const a = req.attributes;
      const state = a.State ? Buffer.from(a.State as Uint8Array).toString() : undefined;
      if (a["User-Name"] !== "remote-alice") return { code: "Access-Reject" };
      if (!state && a["User-Password"] === "1234") {
        return {
          code: "Access-Challenge",
          attributes: [
            ["Reply-Message", "Please provide more information."],
            ["State", Buffer.from("123456")],
          ],
        };
      }
      if (state === "123456" && a["User-Password"] === "287082") return { code: "Access-Accept" };
      return { code: "Access-Reject" };
    });
    const listener = await startRadiusListener(t.deps, {
      host: "127.0.0.1",
      port: 0,
      clients: [{ address: "127.0.0.1", secret: NAS_SECRET, name: "lo" }],
      check: validateCheck,
    });
    try {
      await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "x" }] });
      await setRadiusServer(t.deps, "up", {
        server: "127.0.0.1",
        port: upstream.port,
        secret: "up-secret",
        timeout: 1,
        retries: 1,
      });
      const init = await jsonOf(
        await t.asAdmin("POST", "/token/init", {
          body: {
            type: "radius",
            "radius.identifier": "up",
            "radius.user": "remote-alice",
            user: "alice",
            realm: "r1",
          },
        }),
      );
      assert.equal(init.status, 200, JSON.stringify(init.body));
      await savePolicy(t.deps, "cr", {
        scope: "authentication",
        action: "challenge_response=radius",
      });

      const first = await radclient(
        listener.port,
        'User-Name = "alice@r1", User-Password = "1234"',
      );
      assert.match(first, /Received Access-Challenge/, first);
      assert.match(first, /Reply-Message = "Please provide more information."/);
      const state = first.match(/State = (0x[0-9a-f]+)/)?.[1];
      assert.ok(state, first);
      const second = await radclient(
        listener.port,
        `User-Name = "alice@r1", User-Password = "287082", State = ${state}`,
      );
      assert.match(second, /Received Access-Accept/, second);
      const forwarded = upstream.seen.at(-1)!.attributes;
      assert.equal(Buffer.from(forwarded.State as Uint8Array).toString(), "123456");
      assert.equal(forwarded["User-Password"], "287082");
    } finally {
      await listener.close();
      await upstream.close();
      await t.close();
    }
  },
});
