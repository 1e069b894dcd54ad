/**
 * Tessera's outgoing RADIUS (test_request, radius token) against a real
 * FreeRADIUS server: UTF-8 PAP, reject, Access-Challenge/State round trip, and a
 * wrong shared secret (the server's reply does not verify, so it is ignored).
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../../test_app.ts";
import { type FreeRadius, HAS_FREERADIUS, startFreeRadius } from "./freeradius.ts";
import { setRadiusServer } from "../../../src/domain/radius_server/mod.ts";
import { checkContext, getTokenBySerial, initToken } from "../../../src/domain/token/mod.ts";
import { loadSystemConfig } from "../../../src/domain/system_config/mod.ts";
import { radiusAuthenticate } from "../../../src/domain/token/types/radius.ts";

async function testRequest(
  t: TestApp,
  fr: FreeRadius,
  username: string,
  password: string,
  secret = fr.secret,
) {
  return await jsonOf(
    await t.asAdmin("POST", "/radiusserver/test_request", {
      body: {
        identifier: "fr",
        server: "127.0.0.1",
        port: String(fr.port),
        secret,
        username,
        password,
        timeout: "1",
        retries: "1",
      },
    }),
  );
}

Deno.test({
  name: "test_request against FreeRADIUS: accept (UTF-8), reject, challenge, wrong secret",
  ignore: !HAS_FREERADIUS,
  async fn() {
    const fr = await startFreeRadius();
    const t = await createTestApp();
    try {
      const ok = await testRequest(t, fr, "nönäscii", "passwörd");
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.result.value, true);
      assert.equal((await testRequest(t, fr, "nönäscii", "wrong")).body.result.value, false);
      assert.equal((await testRequest(t, fr, "challenge", "x")).body.result.value, false);
      const started = performance.now();
      const wrong = await testRequest(t, fr, "nönäscii", "passwörd", "not-the-secret");
      assert.equal(wrong.body.result.value, false);
      assert.ok(performance.now() - started >= 900, "the unverifiable reply was ignored");
    } finally {
      await t.close();
      await fr.stop();
    }
  },
});

Deno.test({
  name: "radius token against FreeRADIUS: Access-Challenge, then the answer with its State",
  ignore: !HAS_FREERADIUS,
  async fn() {
    const fr = await startFreeRadius();
    const t = await createTestApp();
    try {
      await setRadiusServer(t.deps, "fr", {
        server: "127.0.0.1",
        port: fr.port,
        secret: fr.secret,
        timeout: 1,
        retries: 1,
      });
      const { serial } = await initToken(t.deps, {
        type: "radius",
        "radius.identifier": "fr",
        "radius.user": "challenge",
      });
      const ctx = checkContext(
        t.deps,
        await loadSystemConfig(t.deps),
        await getTokenBySerial(t.deps, serial),
      );
      const first = await radiusAuthenticate(ctx, "x", { challengeAllowed: true });
      assert.deepEqual(first, {
        result: "challenge",
        message: "Please enter OTP",
        data: { radius_state: "313233343536" },
      });
      if (first.result !== "challenge") throw new Error("unreachable");
      const wrong = await radiusAuthenticate(ctx, "000000", { challengeData: first.data });
      assert.equal(wrong.result, "reject");
      const answer = await radiusAuthenticate(ctx, "287082", { challengeData: first.data });
      assert.deepEqual(answer, { result: "accept" });
      const noState = await radiusAuthenticate(ctx, "287082");
      assert.equal(noState.result, "reject", "without the State FreeRADIUS challenges again");
    } finally {
      await t.close();
      await fr.stop();
    }
  },
});
