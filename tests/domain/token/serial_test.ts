import assert from "node:assert/strict";
import { checkSerial, generateSerial } from "../../../src/domain/token/serial.ts";
import { initToken } from "../../../src/domain/token/mod.ts";
import { seededRandom } from "../../../src/lib/random.ts";
import { createTestApp } from "../../test_app.ts";

Deno.test("checkSerial accepts letters, digits, - and _ up to 40 characters", () => {
  checkSerial("OATH0001A3F9");
  checkSerial("a-b_C");
  for (const bad of ["", "a b", "a/b", "a*", "ä", "x".repeat(41)]) {
    assert.throws(() => checkSerial(bad), /Invalid serial number/, bad);
  }
});

Deno.test("generateSerial counts tokens of the type and retries until unique", async () => {
  const t = await createTestApp({ deps: { random: seededRandom(7) } });
  const first = await generateSerial(t.deps, "hotp", "OATH", 8);
  assert.match(first, /^OATH0000[0-9A-F]{4}$/);
  await initToken(t.deps, { type: "hotp", serial: first });
  const second = await generateSerial(t.deps, "hotp", "OATH", 8);
  assert.match(second, /^OATH0001[0-9A-F]{4}$/);
  assert.match(await generateSerial(t.deps, "spass", "PISP", 12), /^PISP0000[0-9A-F]{8}$/);
  await t.close();
});

Deno.test("setRandomPin sets one generated PIN of the policy's length", async () => {
  const { setRandomPin, getTokenBySerial, checkPin } = await import(
    "../../../src/domain/token/mod.ts"
  );
  const t = await createTestApp();
  await initToken(t.deps, { type: "spass", serial: "RP1" });
  const tokens = [await getTokenBySerial(t.deps, "RP1")];
  await assert.rejects(() => setRandomPin(t.deps, tokens), /otp_pin_set_random/);
  const res = await setRandomPin(t.deps, tokens, { length: "12" });
  assert.equal(res.count, 1);
  assert.equal(res.pin.length, 12);
  const tok = await getTokenBySerial(t.deps, "RP1");
  assert.equal(checkPin(t.deps, tok.pinHash, res.pin), true);
  await t.close();
});
