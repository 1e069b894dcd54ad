import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createTestApp, type TestApp } from "../../test_app.ts";
import { type Responder, startResponder } from "./responder.ts";
import { checkContext, getTokenBySerial, initToken } from "../../../src/domain/token/mod.ts";
import { loadSystemConfig, setSystemConfig } from "../../../src/domain/system_config/mod.ts";
import { setRadiusServer } from "../../../src/domain/radius_server/mod.ts";
import {
  RADIUS,
  RADIUS_CHALLENGE_MESSAGE,
  radiusAuthenticate,
} from "../../../src/domain/token/types/radius.ts";
import { tokenTypeOf } from "../../../src/domain/token/types/mod.ts";

const SECRET = "upstream-secret";

/** Upstream: alice/nönäscii, challenge for "pin" and its State answer. */
function upstream(): Promise<Responder> {
  return startResponder(SECRET, (req) => {
    const a = req.attributes;
    const state = a.State ? Buffer.from(a.State as Uint8Array).toString() : undefined;
    if (a["User-Name"] === "nönäscii" && a["User-Password"] === "passwörd") {
      return { code: "Access-Accept" };
    }
    if (a["User-Name"] === "remote" && a["User-Password"] === "pin" && !state) {
      return {
        code: "Access-Challenge",
        attributes: [["Reply-Message", "Please provide more information."], [
          "State",
          Buffer.from("123456"),
        ]],
      };
    }
    if (a["User-Name"] === "remote" && state === "123456" && a["User-Password"] === "287082") {
      return { code: "Access-Accept" };
    }
    if (a["User-Name"] === "silent") return undefined;
    return { code: "Access-Reject", attributes: [["Reply-Message", "no"]] };
  });
}

async function setup(): Promise<{ t: TestApp; up: Responder }> {
  const t = await createTestApp();
  const up = await upstream();
  await setRadiusServer(t.deps, "up", {
    server: "127.0.0.1",
    port: up.port,
    secret: SECRET,
    timeout: 1,
    retries: 1,
  });
  return { t, up };
}

async function contextOf(t: TestApp, serial: string) {
  const token = await getTokenBySerial(t.deps, serial);
  return checkContext(t.deps, await loadSystemConfig(t.deps), token);
}

Deno.test("radius token type is registered with prefix PIRA", () => {
  assert.equal(tokenTypeOf("radius"), RADIUS);
  assert.equal(RADIUS.prefix, "PIRA");
});

Deno.test("radius token init requires radius.user and a server", async () => {
  const t = await createTestApp();
  await assert.rejects(
    initToken(t.deps, { type: "radius", "radius.identifier": "up" }),
    { code: 905, message: "Missing parameter: radius.user" },
  );
  await assert.rejects(
    initToken(t.deps, { type: "radius", "radius.user": "alice" }),
    { code: 905, message: "Missing parameter: radius.identifier" },
  );
  await t.close();
});

Deno.test("radius token init stores identifier, user and local_checkpin; otplen 6", async () => {
  const t = await createTestApp();
  const { serial } = await initToken(t.deps, {
    type: "radius",
    "radius.identifier": "up",
    "radius.user": "alice",
  });
  assert.match(serial, /^PIRA/);
  const token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.otplen, 6);
  assert.equal(token.info["radius.identifier"].value, "up");
  assert.equal(token.info["radius.user"].value, "alice");
  assert.equal(token.info["radius.local_checkpin"].value, "0");
  assert.equal(token.info.tokenkind.value, "virtual");
  assert.equal(RADIUS.pinCheckedRemotely(token), true);
  await t.close();
});

Deno.test("radius token legacy secret is never stored as plain tokeninfo", async () => {
  const t = await createTestApp();
  const { serial } = await initToken(t.deps, {
    type: "radius",
    "radius.server": "127.0.0.1:1812",
    "radius.secret": "legacy-secret",
    "radius.user": "alice",
  });
  const token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.info["radius.secret"].type, "password");
  assert.ok(!token.info["radius.secret"].value.includes("legacy-secret"));
  await t.close();
});

Deno.test("radius token checkOtp forwards radius.user and the OTP (UTF-8) upstream", async () => {
  const { t, up } = await setup();
  try {
    const { serial } = await initToken(t.deps, {
      type: "radius",
      "radius.identifier": "up",
      "radius.user": "nönäscii",
      "radius.local_checkpin": "1",
    });
    const ctx = await contextOf(t, serial);
    assert.equal(RADIUS.pinCheckedRemotely(ctx.token), false);
    assert.deepEqual(await RADIUS.checkOtp(ctx, "passwörd"), { isValid: true });
    assert.deepEqual(await RADIUS.checkOtp(ctx, "wrong"), { isValid: false });
    assert.equal(up.seen[0].attributes["User-Name"], "nönäscii");
    assert.equal(up.seen[0].attributes["NAS-Identifier"], "privacyIDEA");
    await setSystemConfig(t.deps, { "radius.nas_identifier": "node-7" });
    await RADIUS.checkOtp(await contextOf(t, serial), "passwörd");
    assert.equal(up.seen.at(-1)!.attributes["NAS-Identifier"], "node-7");
  } finally {
    await up.close();
    await t.close();
  }
});

Deno.test("radius token: upstream Access-Challenge, then the answer with State is accepted", async () => {
  const { t, up } = await setup();
  try {
    const { serial } = await initToken(t.deps, {
      type: "radius",
      "radius.identifier": "up",
      "radius.user": "remote",
    });
    const ctx = await contextOf(t, serial);
    const first = await radiusAuthenticate(ctx, "pin", { challengeAllowed: true });
    assert.deepEqual(first, {
      result: "challenge",
      message: "Please provide more information.",
      data: { radius_state: "313233343536" },
    });
    const denied = await radiusAuthenticate(ctx, "pin", { challengeAllowed: false });
    assert.equal(denied.result, "reject");
    if (first.result !== "challenge") throw new Error("unreachable");
    const second = await radiusAuthenticate(ctx, "287082", { challengeData: first.data });
    assert.deepEqual(second, { result: "accept" });
    const wrong = await radiusAuthenticate(ctx, "000000", { challengeData: first.data });
    assert.deepEqual(wrong, { result: "reject", message: "no" });
  } finally {
    await up.close();
    await t.close();
  }
});

Deno.test("radius token: a silent upstream is a reject, a missing definition is error 302", async () => {
  const { t, up } = await setup();
  try {
    const { serial } = await initToken(t.deps, {
      type: "radius",
      "radius.identifier": "up",
      "radius.user": "silent",
    });
    const ctx = await contextOf(t, serial);
    assert.deepEqual(await radiusAuthenticate(ctx, "x"), { result: "reject", message: undefined });
    const gone = await initToken(t.deps, {
      type: "radius",
      "radius.identifier": "gone",
      "radius.user": "alice",
    });
    const goneCtx = await contextOf(t, gone.serial);
    await assert.rejects(async () => await RADIUS.checkOtp(goneCtx, "123456"), {
      code: 302,
    });
  } finally {
    await up.close();
    await t.close();
  }
});

Deno.test("radius token legacy radius.server/radius.secret reach the upstream", async () => {
  const { t, up } = await setup();
  try {
    const { serial } = await initToken(t.deps, {
      type: "radius",
      "radius.server": `127.0.0.1:${up.port}`,
      "radius.secret": SECRET,
      "radius.user": "nönäscii",
    });
    const ctx = await contextOf(t, serial);
    assert.deepEqual(await radiusAuthenticate(ctx, "passwörd"), { result: "accept" });
  } finally {
    await up.close();
    await t.close();
  }
});

Deno.test("radius token local-PIN challenge message", () => {
  assert.deepEqual(RADIUS.challengeExtras?.({} as never), { message: RADIUS_CHALLENGE_MESSAGE });
  assert.equal(RADIUS_CHALLENGE_MESSAGE, "Enter your RADIUS tokencode:");
});

Deno.test("radiusPassthru: true only for Access-Accept of the named definition", async () => {
  const { t, up } = await setup();
  try {
    const { radiusPassthru } = await import("../../../src/domain/radius_server/mod.ts");
    assert.equal(await radiusPassthru(t.deps, "up", { login: "nönäscii", pass: "passwörd" }), true);
    assert.equal(await radiusPassthru(t.deps, "up", { login: "nönäscii", pass: "wrong" }), false);
    assert.equal(
      await radiusPassthru(t.deps, "up", { login: "remote", pass: "pin" }),
      false,
      "challenge",
    );
    await assert.rejects(radiusPassthru(t.deps, "missing", { login: "a", pass: "b" }), {
      code: 302,
    });
  } finally {
    await up.close();
    await t.close();
  }
});
