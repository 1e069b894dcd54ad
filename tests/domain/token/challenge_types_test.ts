/**
 * The new token types' building blocks with the spec's vectors (spec 11
 * §13): day password codes, the privacyIDEA TAN hash, indexed-secret
 * answers, message tags, `valid_until`, phone mangling.
 */
import assert from "node:assert/strict";
import { checkContext, getTokenBySerial, initToken } from "../../../src/domain/token/mod.ts";
import { tokenTypeOf } from "../../../src/domain/token/types/mod.ts";
import { loadSystemConfig } from "../../../src/domain/system_config/mod.ts";
import {
  MessageTagError,
  renderMessage,
  validUntil,
} from "../../../src/domain/token/types/_challenge.ts";
import { piTanHash } from "../../../src/domain/token/types/tan.ts";
import { parseTimeStep } from "../../../src/domain/token/types/daypassword.ts";
import { isPhoneNumber, manglePhone } from "../../../src/domain/smsgateway/mod.ts";
import { createTestApp, type TestApp } from "../../test_app.ts";
import { SEED_HEX } from "../../fixtures/tokens.ts";

async function ctxOf(t: TestApp, serial: string) {
  return checkContext(
    t.deps,
    await loadSystemConfig(t.deps),
    await getTokenBySerial(t.deps, serial),
  );
}

Deno.test("daypassword: spec 11 §13 vectors (1d and 1h steps)", async () => {
  const t = await createTestApp();
  await initToken(t.deps, { type: "daypassword", serial: "D1", otpkey: SEED_HEX });
  await initToken(t.deps, { type: "daypassword", serial: "D2", otpkey: SEED_HEX, timeStep: "1h" });
  const day = tokenTypeOf("daypassword")!;
  for (
    const [serial, seconds, code] of [
      ["D1", 1700000000, "523690"],
      ["D1", 1700006399, "523690"],
      ["D2", 1700000000, "475782"],
    ] as const
  ) {
    const ctx = { ...(await ctxOf(t, serial)), nowMs: seconds * 1000 };
    assert.deepEqual(await day.checkOtp(ctx, code), { isValid: true }, `${serial} ${seconds}`);
  }
  const ctx = { ...(await ctxOf(t, "D1")), nowMs: 1700000000_000 + 86_400_000 };
  assert.equal((await day.checkOtp(ctx, "523690")).isValid, false);
  assert.equal(parseTimeStep("1d"), 86400);
  assert.equal(parseTimeStep("24h"), 86400);
  assert.equal(parseTimeStep("7h"), 25200);
  assert.equal(parseTimeStep("90"), 90);
  assert.equal(parseTimeStep("1y"), 365 * 86400);
  for (const bad of ["", "0", "1w", "-1d", "x"]) assert.equal(parseTimeStep(bad), undefined, bad);
  await t.close();
});

Deno.test("tan: privacyIDEA's TAN hash vector (spec 11 §13) is verified, and used once", async () => {
  assert.equal(
    piTanHash("123456", "a1b2c3d4"),
    "a1b2c3d4:880f3e82359804f51d9f769ed4791544c301619fd3550e0326e77961cb917056",
  );
  const t = await createTestApp();
  await initToken(t.deps, { type: "tan", serial: "TAN1", tans: "999999" });
  // an entry as privacyIDEA stores it (an imported token)
  await t.deps.db.insertInto("tokeninfo").values({
    token_id: (await getTokenBySerial(t.deps, "TAN1")).id,
    key: "tan.tan7",
    value: piTanHash("123456", "a1b2c3d4"),
    type: "",
  }).execute();
  const tan = tokenTypeOf("tan")!;
  const ctx = await ctxOf(t, "TAN1");
  assert.deepEqual(await tan.checkOtp(ctx, "123456"), { isValid: true, consumeInfo: "tan.tan7" });
  assert.deepEqual(await tan.checkOtp(ctx, "999999"), { isValid: true, consumeInfo: "tan.tan0" });
  assert.equal((await tan.checkOtp(ctx, "123457")).isValid, false);
  await t.close();
});

Deno.test("indexedsecret: secret mySecret, positions 2,4 → answer ye (spec 11 §13)", async () => {
  const t = await createTestApp();
  await initToken(t.deps, { type: "indexedsecret", serial: "IX1", otpkey: "mySecret" });
  const ix = tokenTypeOf("indexedsecret")!;
  const ctx = await ctxOf(t, "IX1");
  assert.deepEqual(await ix.checkAnswer!(ctx, "ye", { positions: [2, 4] }), { isValid: true });
  assert.equal((await ix.checkAnswer!(ctx, "yE", { positions: [2, 4] })).isValid, false);
  assert.equal((await ix.checkAnswer!(ctx, "y", { positions: [2, 4] })).isValid, false);
  assert.equal((await ix.checkAnswer!(ctx, "ye", { positions: [2, 99] })).isValid, false);
  assert.equal((await ix.checkAnswer!(ctx, "ye", {})).isValid, false);
  assert.equal((await ix.checkOtp(ctx, "ye")).isValid, false, "no answer without a challenge");
  await t.close();
});

Deno.test("message texts: {tags}, legacy <otp>/<serial>, escapes; unknown tags and lone braces throw", () => {
  const tags = { otp: "123456", serial: "PIEM1", user: "Alice" };
  assert.equal(renderMessage("{user}: <otp> for <serial>", tags), "Alice: 123456 for PIEM1");
  assert.equal(renderMessage("{otp!s} {{literal}}\\, done", tags), "123456 {literal}, done");
  // a tag's value is not expanded again
  assert.equal(renderMessage("{user}", { user: "{otp}" }), "{otp}");
  assert.throws(() => renderMessage("{nope}", tags), MessageTagError);
  assert.throws(() => renderMessage("a { b", tags), MessageTagError);
  assert.throws(() => renderMessage("a } b", tags), MessageTagError);
  assert.match(
    validUntil(Date.UTC(2026, 0, 1), 120),
    /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.000000$/,
  );
});

Deno.test("phone numbers: REGEXP mangling (spec 11 §3) and what counts as a number", () => {
  assert.equal(manglePhone("+49/170 123", "/[\\+/]//"), "49170 123");
  assert.equal(manglePhone("0170123", "/^0(\\d+)/+49\\1/"), "+49170123");
  assert.equal(manglePhone("+49170", "/[/x/"), "+49170", "an invalid expression changes nothing");
  assert.equal(manglePhone("+49170", ""), "+49170");
  assert.equal(manglePhone("+49170", "/9/$&/"), "+4$&170", "no JavaScript replacement patterns");
  for (const ok of ["+49 170 1234567", "0170/123-45", "(030) 12.34"]) {
    assert.ok(isPhoneNumber(ok), ok);
  }
  for (const bad of ["", "-rf", "abc", "+49\n170", "1".repeat(41)]) {
    assert.ok(!isPhoneNumber(bad), bad);
  }
});
