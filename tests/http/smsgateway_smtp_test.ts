/**
 * The SMTP SMS provider over HTTP (spec 14 §21.1): its parameters in
 * `/smsgateway/providers`, definitions checked on save (nothing stored when
 * refused), and the `sms` token's code mailed through an `/smtpserver/`
 * definition to a local SMTP sink with MAILTO, SUBJECT and BODY filled; an
 * unreachable mail server fails the send.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { SMTP_PROVIDER } from "../../src/domain/smsgateway/mod.ts";
import { challengeOf, check } from "./_challenge_types.ts";
import {
  answersOnce,
  failsToSend,
  gatewaysListed,
  saveGateway,
  smsTokenThrough,
} from "./_sms_providers.ts";
import { mailBody, startSmtpSink } from "../domain/event/_helpers.ts";

const SMTP = {
  name: "mail",
  module: SMTP_PROVIDER,
  "option.MAILTO": "{phone}@sms.example.com",
  "option.SMTPIDENTIFIER": "mail1",
};

/** An sms token sending through an SMTP gateway to the mail server on `port`. */
async function throughSmtp(port: number, body?: string) {
  return await smsTokenThrough({
    module: SMTP_PROVIDER,
    "option.MAILTO": "{phone}@sms.example.com",
    "option.SMTPIDENTIFIER": "sink",
    "option.REGEXP": "/[\\+ ]//",
    ...(body ? { "option.BODY": body } : {}),
  }, async (t: TestApp) => {
    const saved = await jsonOf(
      await t.asAdmin("POST", "/smtpserver/sink", {
        body: { server: "127.0.0.1", port: String(port), sender: "otp@example.com", timeout: "2" },
      }),
    );
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
  });
}

Deno.test("GET /smsgateway/providers lists the SMTP provider with the SMTP server definitions", async () => {
  const t = await createTestApp();
  await t.asAdmin("POST", "/smtpserver/mail1", { body: { server: "localhost" } });
  const res = await jsonOf(await t.asAdmin("GET", "/smsgateway/providers"));
  assert.equal(res.status, 200);
  const smtp = res.body.result.value[SMTP_PROVIDER];
  assert.equal(smtp.options_allowed, false);
  assert.equal(smtp.headers_allowed, false);
  assert.deepEqual(Object.keys(smtp.parameters), [
    "MAILTO",
    "SMTPIDENTIFIER",
    "SUBJECT",
    "BODY",
    "REGEXP",
  ]);
  assert.deepEqual(smtp.parameters.SMTPIDENTIFIER.values, ["mail1"]);
  assert.equal(smtp.parameters.SMTPIDENTIFIER.required, true);
  assert.deepEqual(smtp.parameters.MAILTO, {
    required: true,
    description: "The recipient of the email. Use tags {phone} and {otp}.",
  });
  assert.equal(smtp.parameters.BODY.type, "text");
  await t.close();
});

Deno.test("POST /smsgateway checks SMTP definitions; refused ones store nothing", async () => {
  const t = await createTestApp();
  await t.asAdmin("POST", "/smtpserver/mail1", { body: { server: "localhost" } });
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...SMTP, "option.MAILTO": undefined }, /^ERR905: Missing parameter: option\.MAILTO$/],
    [
      { ...SMTP, "option.SMTPIDENTIFIER": undefined },
      /^ERR905: Missing parameter: option\.SMTPIDENTIFIER$/,
    ],
    [{ ...SMTP, "option.SMTPIDENTIFIER": "nope" }, /no SMTP server "nope"/],
    [{ ...SMTP, "option.BODY": "Code {code}" }, /option\.BODY.*Unknown tag "code"/],
    [{ ...SMTP, "option.SUBJECT": "{phone" }, /option\.SUBJECT/],
    [{ ...SMTP, "option.MAILTO": "{phone}" }, /option\.MAILTO.*email address/],
    [{ ...SMTP, "option.URL": "https://x" }, /SmtpSMSProvider takes no option "URL"/],
    [{ ...SMTP, "header.X": "y" }, /SmtpSMSProvider takes no headers/],
  ];
  for (const [definition, message] of cases) {
    const body = Object.fromEntries(Object.entries(definition).filter(([, v]) => v !== undefined));
    const res = await saveGateway(t, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.result.error.code, 905, JSON.stringify(res.body));
    assert.match(res.body.result.error.message, message);
  }
  assert.deepEqual(await gatewaysListed(t), []);
  const ok = await saveGateway(t, { ...SMTP, "option.SUBJECT": "SMS {{{phone}}}" });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  await t.close();
});

Deno.test("sms token through SMTP: the mail goes to MAILTO with the tags filled; the code answers", async () => {
  const sink = startSmtpSink();
  const { t } = await throughSmtp(sink.port, "Code: {otp}");
  try {
    const res = await check(t, { user: "alice", pass: "pin" });
    const { tid } = challengeOf(res.body);
    assert.equal(res.body.detail.message, "Enter the OTP from the SMS:");
    assert.equal(sink.mails.length, 1);
    const mail = sink.mails[0];
    assert.equal(mail.from, "otp@example.com");
    assert.deepEqual(mail.to, ["491605550123@sms.example.com"], "REGEXP applied, then {phone}");
    assert.match(mail.data, /^To: 491605550123@sms\.example\.com$/m);
    assert.match(mail.data, /^Subject: 491605550123$/m, "default subject: {phone}");
    assert.match(mail.data, /^Content-Type: text\/plain; charset="utf-8"$/m);
    const m = mailBody(mail.data).match(/^Code: (\d{6})$/);
    assert.ok(m, mailBody(mail.data));
    await answersOnce(t, tid, m[1]);
  } finally {
    sink.close();
    await t.close();
  }
});

Deno.test("sms token through SMTP: an unreachable mail server fails the send", async () => {
  const sink = startSmtpSink();
  const port = sink.port;
  sink.close();
  const { t, serial } = await throughSmtp(port);
  await failsToSend(t, serial);
  await t.close();
});
