/**
 * The Sipgate SMS provider over HTTP (spec 14 §21.2, Sipgate's REST API): its
 * parameters, PASSWORD encrypted and censored, a stored password not kept
 * when URL or PROXY changes, definitions checked on save, and the `sms`
 * token's code sent to a local Sipgate endpoint that checks method, path,
 * basic auth and JSON body; an error answer or no answer fails the send.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";
import { SIPGATE_PROVIDER } from "../../src/domain/smsgateway/mod.ts";
import { challengeOf, check } from "./_challenge_types.ts";
import {
  answersOnce,
  failsToSend,
  gatewaysListed,
  saveGateway,
  smsTokenThrough,
  storedRows,
} from "./_sms_providers.ts";
import { startSipgateStub } from "../domain/smsgateway/_sipgate_stub.ts";

const SIPGATE = {
  name: "sipgate",
  module: SIPGATE_PROVIDER,
  "option.USERNAME": "token-id",
  "option.PASSWORD": "sipgate-secret",
};

Deno.test("GET /smsgateway/providers lists the Sipgate provider with privacyIDEA's parameters", async () => {
  const t = await createTestApp();
  const res = await jsonOf(await t.asAdmin("GET", "/smsgateway/providers"));
  const sipgate = res.body.result.value[SIPGATE_PROVIDER];
  assert.equal(sipgate.options_allowed, false);
  assert.equal(sipgate.headers_allowed, false);
  assert.deepEqual(Object.keys(sipgate.parameters), [
    "USERNAME",
    "PASSWORD",
    "PROXY",
    "REGEXP",
    "SMSID",
    "URL",
    "TIMEOUT",
  ]);
  assert.deepEqual(sipgate.parameters.USERNAME, {
    required: true,
    description: "The sipgate username.",
  });
  assert.deepEqual(sipgate.parameters.PASSWORD, {
    required: true,
    description: "The sipgate password.",
  });
  assert.deepEqual(sipgate.parameters.PROXY, { description: "An optional proxy URI." });
  await t.close();
});

Deno.test("POST /smsgateway: the Sipgate password is encrypted and censored; kept only while URL and PROXY stay", async () => {
  const t = await createTestApp();
  const saved = await saveGateway(t, SIPGATE);
  assert.equal(saved.status, 200, JSON.stringify(saved.body));
  const [gw] = await gatewaysListed(t);
  assert.deepEqual(gw.options, { USERNAME: "token-id", PASSWORD: "__CENSORED__" });
  const rows = await storedRows(t);
  assert.ok(!JSON.stringify(rows).includes("sipgate-secret"));
  const password = rows.find((r) => r.key === "PASSWORD")!;
  assert.equal(Number(password.is_secret), 1);
  assert.match(password.value, /^g1:/);

  const cases: [Record<string, unknown>, string][] = [
    [{ "option.URL": "https://evil.example.com/sms" }, '"option.URL" changed'],
    [{ "option.PROXY": "http://proxy.evil.example.com:3128" }, '"option.PROXY" changed'],
  ];
  for (const [change, message] of cases) {
    const res = await saveGateway(t, { ...SIPGATE, "option.PASSWORD": "__CENSORED__", ...change });
    assert.equal(res.status, 400, JSON.stringify(change));
    assert.equal(res.body.result.error.code, 905);
    assert.equal(
      res.body.result.error.message,
      `ERR905: Cannot keep the stored "option.PASSWORD": ${message}, which decides where it is ` +
        `sent. Send "option.PASSWORD" again`,
    );
  }
  assert.deepEqual(await storedRows(t), rows, "nothing changed");
  // the same target keeps the stored password; a new password may go anywhere
  const kept = await saveGateway(t, { ...SIPGATE, "option.PASSWORD": "__CENSORED__" });
  assert.equal(kept.status, 200);
  assert.deepEqual(await storedRows(t), rows);
  const moved = await saveGateway(t, { ...SIPGATE, "option.URL": "https://sms.example.com/v2" });
  assert.equal(moved.status, 200);
  await t.close();
});

Deno.test("POST /smsgateway checks Sipgate definitions; refused ones store nothing", async () => {
  const t = await createTestApp();
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...SIPGATE, "option.PASSWORD": "" }, /^ERR905: Missing parameter: option\.PASSWORD$/],
    [{ ...SIPGATE, "option.USERNAME": undefined }, /^ERR905: Missing parameter: option\.USERNAME$/],
    [{ ...SIPGATE, "option.URL": "file:///etc/passwd" }, /option\.URL.*http\(s\) URL/],
    [{ ...SIPGATE, "option.PROXY": "not a url" }, /option\.PROXY/],
    [{ ...SIPGATE, "option.SMSID": "s0;x" }, /option\.SMSID/],
    [{ ...SIPGATE, "option.TIMEOUT": "61" }, /option\.TIMEOUT/],
    [{ ...SIPGATE, "option.text": "{otp}" }, /SipgateSMSProvider takes no option "text"/],
    [{ ...SIPGATE, "header.X": "y" }, /SipgateSMSProvider takes no headers/],
  ];
  for (const [definition, message] of cases) {
    const body = Object.fromEntries(Object.entries(definition).filter(([, v]) => v !== undefined));
    const res = await saveGateway(t, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.result.error.code, 905);
    assert.match(res.body.result.error.message, message);
  }
  assert.deepEqual(await gatewaysListed(t), []);
  await t.close();
});

Deno.test("sms token through Sipgate: POST /v2/sessions/sms with basic auth and the JSON body; the code answers", async () => {
  const sipgate = startSipgateStub();
  const { t } = await smsTokenThrough({
    module: SIPGATE_PROVIDER,
    "option.USERNAME": "token-id",
    "option.PASSWORD": "sipgate-secret",
    "option.URL": sipgate.url,
    "option.SMSID": "s7",
  });
  try {
    const res = await check(t, { user: "alice", pass: "pin" });
    const { tid } = challengeOf(res.body);
    assert.equal(sipgate.requests.length, 1);
    const req = sipgate.requests[0];
    assert.equal(req.method, "POST");
    assert.equal(req.path, "/v2/sessions/sms");
    assert.equal(req.authorization, `Basic ${btoa("token-id:sipgate-secret")}`);
    assert.equal(req.contentType, "application/json");
    const body = JSON.parse(req.body);
    assert.deepEqual(Object.keys(body), ["smsId", "recipient", "message"]);
    assert.equal(body.smsId, "s7");
    assert.equal(body.recipient, "+491605550123", "E.164, separators removed");
    assert.match(body.message, /^\d{6}$/, "default text: the code alone");
    await answersOnce(t, tid, body.message);
  } finally {
    await sipgate.close();
    await t.close();
  }
});

Deno.test("sms token through Sipgate: an error answer or no answer within TIMEOUT fails the send", async () => {
  for (const behaviour of [{ status: 401 }, { status: 500 }, { isSilent: true }]) {
    const sipgate = startSipgateStub(behaviour);
    const { t, serial } = await smsTokenThrough({
      module: SIPGATE_PROVIDER,
      "option.USERNAME": "u",
      "option.PASSWORD": "p",
      "option.URL": sipgate.url,
      "option.TIMEOUT": "1",
    });
    const started = Date.now();
    await failsToSend(t, serial);
    assert.ok(Date.now() - started < 4000, "bounded by TIMEOUT");
    assert.equal(sipgate.requests.length, 1);
    await sipgate.close();
    await t.close();
  }
});
