import assert from "node:assert/strict";
import { Hono } from "hono";
import { authenticationOf } from "../../src/http/envelope.ts";
import { createTestApp, jsonOf } from "../test_app.ts";

Deno.test("result.authentication follows spec 01 §2.1", () => {
  const cases: [unknown, Record<string, unknown> | undefined, string][] = [
    [true, undefined, "ACCEPT"],
    [true, { multi_challenge: [{ serial: "x" }] }, "CHALLENGE"],
    ["CHALLENGE", undefined, "CHALLENGE"],
    [false, { multi_challenge: [{ serial: "x" }] }, "CHALLENGE"],
    [false, { passkey: {} }, "CHALLENGE"],
    [false, { challenge_status: "declined" }, "DECLINED"],
    [false, { challenge_status: "cancelled" }, "DECLINED"],
    [false, { multi_challenge: [] }, "REJECT"],
    [0, undefined, "REJECT"],
    [3, { multi_challenge: [{}] }, "CHALLENGE"],
  ];
  for (const [value, detail, expected] of cases) {
    assert.equal(authenticationOf(value, detail), expected, JSON.stringify([value, detail]));
  }
});

Deno.test("an unexpected error becomes a generic 500 envelope; the cause goes to the log only", async () => {
  const t = await createTestApp({ routeRules: { "GET /test/boom": { roles: "public" } } });
  // mount a failing route on a parent app that shares the middleware chain
  const parent = new Hono();
  parent.get("/boom", () => {
    throw new Error("secret internal detail");
  });
  t.app.route("/test", parent);
  const { status, body } = await jsonOf(await t.get("/test/boom"));
  assert.equal(status, 500);
  assert.equal(body.result.error.code, -500);
  assert.ok(!JSON.stringify(body).includes("secret internal detail"));
  assert.ok(t.log.lines.some((l) => l.includes("secret internal detail")));
  await t.close();
});
