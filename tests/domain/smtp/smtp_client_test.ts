import assert from "node:assert/strict";
import { buildMessage, sendSmtp, SmtpError } from "../../../src/domain/smtp/smtp_client.ts";
import { mailBody, startSmtpSink } from "../event/_helpers.ts";

const MSG = {
  from: "Tessera <pi@example.com>",
  to: ["a@example.com"],
  subject: "Grüße",
  body: "line one\r\n.line two with a dot\r\nÜmlaut",
  date: Date.UTC(2026, 0, 1),
  messageId: "abc",
};

Deno.test("buildMessage encodes non-ASCII subjects and bodies, refuses header injection", () => {
  const text = buildMessage(MSG);
  assert.match(text, /^Subject: =\?utf-8\?B\?R3LDvMOfZQ==\?=$/m);
  assert.match(text, /^Message-ID: <abc@example.com>$/m);
  assert.equal(mailBody(text), MSG.body);
  assert.throws(() => buildMessage({ ...MSG, subject: "x\r\nBcc: evil@example.com" }), SmtpError);
});

Deno.test("sendSmtp delivers to a local sink and reports a refused connection", async () => {
  const sink = startSmtpSink();
  const settings = {
    server: "127.0.0.1",
    port: sink.port,
    tls: false,
    username: "",
    password: "",
    timeout: 5,
  };
  await sendSmtp(settings, MSG);
  assert.equal(sink.mails.length, 1);
  assert.equal(sink.mails[0].from, "pi@example.com");
  assert.equal(mailBody(sink.mails[0].data), MSG.body);
  // the sink does not offer STARTTLS: a required TLS upgrade fails cleanly
  await assert.rejects(sendSmtp({ ...settings, tls: true }, MSG), SmtpError);
  sink.close();
  await assert.rejects(sendSmtp(settings, MSG), SmtpError);
});
