import assert from "node:assert/strict";
import { checkContext, getTokenBySerial, initToken } from "../../../src/domain/token/mod.ts";
import { tokenTypeOf } from "../../../src/domain/token/types/mod.ts";
import { loadSystemConfig } from "../../../src/domain/system_config/mod.ts";
import { createTestApp, type TestApp } from "../../test_app.ts";
import { hotp, SEED_HEX, totp } from "../../fixtures/tokens.ts";

async function ctxOf(t: TestApp, serial: string) {
  return checkContext(
    t.deps,
    await loadSystemConfig(t.deps),
    await getTokenBySerial(t.deps, serial),
  );
}

Deno.test("TOTP accepts steps inside ±timeWindow and stores the step and time shift", async () => {
  const t = await createTestApp();
  await initToken(t.deps, { type: "totp", serial: "T1", otpkey: SEED_HEX });
  const totpType = tokenTypeOf("totp")!;
  const now = t.clock.now();
  const ctx = await ctxOf(t, "T1");
  const step = Math.floor(now / 30_000);
  const early = await totpType.checkOtp(ctx, totp(now - 150_000));
  assert.deepEqual(early, { isValid: true, counter: step - 5, info: { timeShift: "-150" } });
  assert.equal((await totpType.checkOtp(ctx, totp(now - 210_000))).isValid, false);
  assert.equal((await totpType.checkOtp(ctx, totp(now + 150_000))).isValid, true);
  assert.equal((await totpType.checkOtp(ctx, totp(now + 180_000))).isValid, false);
  // a step at or before the stored one is a replay
  ctx.token.count = step;
  assert.equal((await totpType.checkOtp(ctx, totp(now))).isValid, false);
  assert.equal((await totpType.checkOtp(ctx, totp(now + 30_000))).isValid, true);
  await t.close();
});

Deno.test("HOTP resync finds two consecutive values in the sync window", async () => {
  const t = await createTestApp();
  await initToken(t.deps, { type: "hotp", serial: "H1", otpkey: SEED_HEX });
  const hotpType = tokenTypeOf("hotp")!;
  const ctx = await ctxOf(t, "H1");
  assert.deepEqual(await hotpType.resync!(ctx, hotp(500), hotp(501)), {
    isValid: true,
    counter: 502,
  });
  assert.equal((await hotpType.resync!(ctx, hotp(500), hotp(502))).isValid, false);
  assert.equal((await hotpType.resync!(ctx, hotp(1500), hotp(1501))).isValid, false);
  await t.close();
});

Deno.test("an 8-digit SHA-256 HOTP token checks against its own hash", async () => {
  const t = await createTestApp();
  const key = "3132333435363738393031323334353637383930313233343536373839303132";
  await initToken(t.deps, {
    type: "hotp",
    serial: "H256",
    otpkey: key,
    otplen: "8",
    hashlib: "sha256",
  });
  const ctx = await ctxOf(t, "H256");
  const { hotpAt } = await import("../../../src/lib/otp.ts");
  const { fromHex } = await import("../../../src/lib/random.ts");
  const otp = hotpAt(fromHex(key), 2, 8, "sha256");
  assert.deepEqual(await tokenTypeOf("hotp")!.checkOtp(ctx, otp), { isValid: true, counter: 3 });
  assert.equal(
    (await tokenTypeOf("hotp")!.checkOtp(ctx, hotpAt(fromHex(key), 2, 8, "sha1"))).isValid,
    false,
  );
  await t.close();
});
