import assert from "node:assert/strict";
import { checkPin, pinHashOf, splitPinPass } from "../../../src/domain/token/pin.ts";
import { createTestApp } from "../../test_app.ts";

Deno.test("splitPinPass splits by otplen with PrependPin on and off", () => {
  assert.deepEqual(splitPinPass("1234567890", 6, true), { pin: "1234", otp: "567890" });
  assert.deepEqual(splitPinPass("5678901234", 6, false), { pin: "1234", otp: "567890" });
  assert.deepEqual(splitPinPass("123456", 6, true), { pin: "", otp: "123456" });
  assert.equal(splitPinPass("12345", 6, true), undefined);
});

Deno.test("an empty stored PIN matches only an empty PIN; hashes are salted", async () => {
  const t = await createTestApp();
  assert.equal(pinHashOf(t.deps, ""), "");
  assert.equal(checkPin(t.deps, "", ""), true);
  assert.equal(checkPin(t.deps, "", "x"), false);
  const a = pinHashOf(t.deps, "1234");
  const b = pinHashOf(t.deps, "1234");
  assert.notEqual(a, b);
  assert.equal(checkPin(t.deps, a, "1234"), true);
  assert.equal(checkPin(t.deps, a, "12345"), false);
  assert.equal(checkPin(t.deps, a, ""), false);
  await t.close();
});
