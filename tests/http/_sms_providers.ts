/**
 * Helpers of the SMS provider tests (SMTP, Sipgate, SMPP): an app with alice's
 * `sms` token sending through a gateway, the checks of a sent and a failed
 * SMS, and the stored gateway rows.
 *
 * @module
 */
import assert from "node:assert/strict";
import { jsonOf, type TestApp } from "../test_app.ts";
import { appWithAlice, check, enrolOk, setConfig } from "./_challenge_types.ts";

/** The phone number of alice's token. */
export const PHONE = "+49 160 5550123";
/** privacyIDEA's answer when the SMS of a challenge could not be sent. */
export const SMS_FAILED = "The PIN was correct, but the SMS could not be sent!";

/** `POST /smsgateway` as admin → `{status, body}`. */
export async function saveGateway(t: TestApp, body: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin("POST", "/smsgateway", { body }));
}

/** `GET /smsgateway/` as admin → the definitions. */
export async function gatewaysListed(t: TestApp) {
  return (await jsonOf(await t.asAdmin("GET", "/smsgateway/"))).body.result.value;
}

/** The stored option rows of every gateway, in a stable order. */
export async function storedRows(t: TestApp) {
  return await t.deps.db.selectFrom("smsgatewayoption").select(["key", "value", "is_secret"])
    .orderBy("key").orderBy("value").execute();
}

/**
 * App with gateway `gw` (the definition given; `prepare` runs first, e.g. to
 * add an SMTP server) as `sms.identifier`, and alice's sms token to
 * {@link PHONE} with PIN `pin`.
 */
export async function smsTokenThrough(
  gateway: Record<string, unknown>,
  prepare?: (t: TestApp) => Promise<void>,
): Promise<{ t: TestApp; serial: string }> {
  const t = await appWithAlice();
  await prepare?.(t);
  const res = await saveGateway(t, { name: "gw", ...gateway });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  await setConfig(t, { "sms.identifier": "gw" });
  const body = await enrolOk(t, {
    type: "sms",
    phone: PHONE,
    pin: "pin",
    user: "alice",
    realm: "realm1",
  });
  return { t, serial: body.detail.serial };
}

/** The code answers the challenge `tid` once. */
export async function answersOnce(t: TestApp, tid: string, code: string): Promise<void> {
  const ok = await check(t, { user: "alice", transaction_id: tid, pass: code });
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  const again = await check(t, { user: "alice", transaction_id: tid, pass: code });
  assert.equal(again.body.result.value, false);
}

/** The PIN of alice's token gives privacyIDEA's send failure and stores no challenge. */
export async function failsToSend(t: TestApp, serial: string): Promise<void> {
  const res = await check(t, { user: "alice", pass: "pin" });
  assert.equal(res.status, 200);
  assert.equal(res.body.result.value, false);
  assert.equal(res.body.result.authentication, "REJECT");
  assert.equal(res.body.detail.message, SMS_FAILED);
  const open = await jsonOf(await t.asAdmin("GET", `/token/challenges/${serial}`));
  assert.equal(open.body.result.value.count, 0, "no challenge stored");
}
