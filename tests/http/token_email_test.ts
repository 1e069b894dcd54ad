/**
 * The `email` token over HTTP (spec 11 §1): enrolment, the code mailed to a
 * real SMTP sink on loopback and read from the received message, answers
 * (right, wrong, replayed, in parallel), the fail counter, policies and the
 * send failure.
 */
import assert from "node:assert/strict";
import { actionTest } from "../policy_actions/_registry.ts";
import { jsonOf, type TestApp } from "../test_app.ts";
import { mailBody, startSmtpSink, type SunkMail } from "../domain/event/_helpers.ts";
import {
  acceptedOfParallel,
  addPolicy,
  ALICE,
  appWithAlice,
  auditRows,
  challengeOf,
  check,
  enrolOk,
  failcount,
  init,
  listed,
  setConfig,
} from "./_challenge_types.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";

/** App, SMTP sink, SMTP definition `mail`, and alice's email token with PIN `pin`. */
async function setup(extra: Record<string, unknown> = {}) {
  const t = await appWithAlice();
  const sink = startSmtpSink();
  const res = await jsonOf(
    await t.asAdmin("POST", "/smtpserver/mail", {
      body: { server: "127.0.0.1", port: String(sink.port), sender: "otp@example.com" },
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const body = await enrolOk(t, {
    type: "email",
    email: ALICE.email,
    "email.identifier": "mail",
    pin: "pin",
    user: "alice",
    realm: "realm1",
    ...extra,
  });
  return { t, sink, serial: body.detail.serial as string, body };
}

function codeOf(mail: SunkMail): string {
  const m = mailBody(mail.data).match(/\d{6}/);
  assert.ok(m, `no code in ${mailBody(mail.data)}`);
  return m[0];
}

async function done(t: TestApp, sink: { close: () => void }) {
  sink.close();
  await t.close();
}

Deno.test("email: enrolment answers the HOTP detail and stores the address; GET /token/ shows it", async () => {
  const { t, sink, serial, body } = await setup();
  assert.match(serial, /^PIEM/);
  assert.equal(body.detail.rollout_state, "enrolled");
  assert.match(body.detail.googleurl.value, /^otpauth:\/\/hotp\//);
  assert.match(body.detail.otpkey.value, /^seed:\/\/[0-9a-f]{40}$/);
  const token = await listed(t, serial);
  assert.equal(token.tokentype, "email");
  assert.equal(token.info.email, ALICE.email);
  assert.equal(token.info["email.identifier"], "mail");
  assert.equal(token.info.hashlib, "sha1");
  assert.equal(token.info.tokenkind, "software");
  // the OTP key is encrypted at rest
  const stored = await getTokenBySerial(t.deps, serial);
  assert.match(stored.keyEnc, /^g1:/);
  assert.ok(!stored.keyEnc.includes(body.detail.otpkey.value.slice(7)));
  const missing = await init(t, { type: "email", user: "alice", realm: "realm1" });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: 'email'");
  const bad = await init(t, { type: "email", email: "a@b\r\nBcc: x@y", user: "alice" });
  assert.equal(bad.status, 400);
  await done(t, sink);
});

Deno.test("email: the PIN sends a mail; its code answers the transaction once; replay and wrong codes fail", async () => {
  const { t, sink, serial } = await setup();
  const first = await check(t, { user: "alice", pass: "pin" });
  const { tid, entry } = challengeOf(first.body);
  assert.equal(first.body.detail.message, "Enter the OTP from the Email");
  assert.equal(entry.type, "email");
  assert.equal(entry.serial, serial);
  assert.equal(entry.client_mode, "interactive");
  assert.equal(entry.attributes.state, null);
  assert.match(entry.attributes.valid_until, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$/);
  assert.deepEqual(first.body.detail.attributes, entry.attributes, "extras also at the top");
  assert.equal(sink.mails.length, 1);
  const mail = sink.mails[0];
  assert.deepEqual(mail.to, [ALICE.email]);
  assert.equal(mail.from, "otp@example.com");
  assert.match(mail.data, /^Subject: Your OTP$/m);
  const code = codeOf(mail);
  assert.equal(mailBody(mail.data), code, "default body: the code alone");

  const wrong = await check(t, { user: "alice", transaction_id: tid, pass: "000000" });
  assert.equal(wrong.body.result.value, false);
  assert.equal(wrong.body.detail.message, "Response did not match the challenge.");
  assert.equal(await failcount(t, serial), 1);

  const right = await check(t, { user: "alice", transaction_id: tid, pass: code });
  assert.equal(right.body.result.value, true);
  assert.equal(right.body.result.authentication, "ACCEPT");
  assert.equal(right.body.detail.message, "Found matching challenge");
  assert.equal(await failcount(t, serial), 0, "a success resets the fail counter");

  const replay = await check(t, { user: "alice", transaction_id: tid, pass: code });
  assert.equal(replay.body.result.value, false);
  // neither as PIN+OTP in one step
  assert.equal((await check(t, { user: "alice", pass: "pin" + code })).body.result.value, false);

  // newest first: PIN+code, replay, right, wrong, trigger
  const rows = await auditRows(t, "POST /validate/check");
  assert.equal(rows[4].info, "Enter the OTP from the Email");
  assert.equal(rows[4].serial, serial);
  assert.equal(rows[4].token_type, "email");
  assert.equal(rows[3].success, 0);
  assert.equal(rows[2].success, 1);
  assert.equal(rows[2].info, "Found matching challenge");
  assert.ok(!JSON.stringify(rows).includes(code), "the code is never in the audit log");
  const initRow = (await auditRows(t, "POST /token/init"))[0];
  assert.equal(initRow.token_type, "email");
  assert.equal(initRow.serial, serial);
  await done(t, sink);
});

Deno.test("email: parallel answers to one challenge: exactly one is accepted", async () => {
  const { t, sink, serial } = await setup();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "100" } });
  const { tid } = challengeOf((await check(t, { user: "alice", pass: "pin" })).body);
  const code = codeOf(sink.mails[0]);
  assert.equal(await acceptedOfParallel(t, { user: "alice", transaction_id: tid, pass: code }), 1);
  await done(t, sink);
});

Deno.test("email: parallel challenges send distinct codes; of all their answers one is accepted", async () => {
  const { t, sink, serial } = await setup();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "100" } });
  const tids = await Promise.all(
    [0, 1, 2].map(async () =>
      challengeOf((await check(t, { user: "alice", pass: "pin" })).body).tid
    ),
  );
  const codes = sink.mails.map(codeOf);
  assert.equal(new Set(codes).size, 3, "each challenge has its own counter");
  // every code against every transaction at once: only the newest code answers its own one
  const bodies = await Promise.all(
    tids.flatMap((tid) =>
      codes.map(async (pass) => (await check(t, { user: "alice", transaction_id: tid, pass })).body)
    ),
  );
  assert.equal(bodies.filter((b) => b.result.value === true).length, 1);
  await done(t, sink);
});

Deno.test("email: a newer mail invalidates an older one, unless email.concurrent_challenges", async () => {
  const { t, sink } = await setup();
  const trigger = async () =>
    challengeOf((await check(t, { user: "alice", pass: "pin" })).body).tid;
  const tidA = await trigger();
  await trigger();
  const [codeA, codeB] = sink.mails.map(codeOf);
  const old = await check(t, { user: "alice", transaction_id: tidA, pass: codeA });
  assert.equal(old.body.result.value, false);
  // a mail's code answers only its own transaction
  assert.equal(
    (await check(t, { user: "alice", transaction_id: tidA, pass: codeB })).body.result.value,
    false,
  );
  const [tidC, tidD] = [await trigger(), await trigger()];
  const [codeC, codeD] = sink.mails.slice(2).map(codeOf);
  assert.equal(
    (await check(t, { user: "alice", transaction_id: tidD, pass: codeD })).body.result.value,
    true,
  );
  // C's code came before D's, which was used: C is old now
  assert.equal(
    (await check(t, { user: "alice", transaction_id: tidC, pass: codeC })).body.result.value,
    false,
  );
  await setConfig(t, { "email.concurrent_challenges": "True" });
  const [tidE, tidF] = [await trigger(), await trigger()];
  const [codeE, codeF] = sink.mails.slice(4).map(codeOf);
  assert.equal(
    (await check(t, { user: "alice", transaction_id: tidE, pass: codeE })).body.result.value,
    true,
    "the older mail still answers its transaction",
  );
  assert.equal(
    (await check(t, { user: "alice", transaction_id: tidF, pass: codeF })).body.result.value,
    true,
  );
  // used codes stay used, also as PIN+OTP
  assert.equal(
    (await check(t, { user: "alice", transaction_id: tidE, pass: codeE })).body.result.value,
    false,
  );
  assert.equal((await check(t, { user: "alice", pass: "pin" + codeE })).body.result.value, false);
  assert.equal((await check(t, { user: "alice", pass: "pin" + codeF })).body.result.value, false);
  await done(t, sink);
});

Deno.test("email: fail counter: wrong answers count up to maxfail, then the token is locked", async () => {
  const { t, sink, serial } = await setup();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "2" } });
  for (let i = 0; i < 2; i++) {
    const { tid } = challengeOf((await check(t, { user: "alice", pass: "pin" })).body);
    await check(t, { user: "alice", transaction_id: tid, pass: "111111" });
  }
  assert.equal(await failcount(t, serial), 2);
  const locked = await check(t, { user: "alice", pass: "pin" });
  assert.equal(locked.body.result.value, false);
  assert.equal(locked.body.detail.message, "Failcounter exceeded");
  assert.equal(sink.mails.length, 2, "a locked token sends no mail");
  await done(t, sink);
});

actionTest(
  "authentication",
  [
    "emailsubject",
    "emailtext",
    "email_challenge_text",
  ],
  "email: subject, body with tags, challenge text (and validity from config)",
  async () => {
    const { t, sink, serial } = await setup();
    // without the policies: privacyIDEA's defaults
    const plain = await check(t, { user: "alice", pass: "pin" });
    assert.equal(plain.body.detail.message, "Enter the OTP from the Email");
    assert.match(sink.mails[0].data, /^Subject: Your OTP$/m);
    assert.equal(mailBody(sink.mails[0].data), codeOf(sink.mails[0]));
    sink.mails.length = 0;
    await addPolicy(t, "mailtext", {
      scope: "authentication",
      action: {
        emailsubject: "Code for {user}",
        // "\\," is a literal comma in a policy value
        emailtext:
          "Hello {givenname} {surname} ({username}@{userrealm})\\, your {tokentype} code: {otp} (<serial>)",
        email_challenge_text: "Look into your mailbox",
      },
    });
    await setConfig(t, { "email.validtime": "60" });
    const res = await check(t, { user: "alice", pass: "pin" });
    const { tid } = challengeOf(res.body);
    assert.equal(res.body.detail.message, "Look into your mailbox");
    const text = mailBody(sink.mails[0].data);
    assert.match(sink.mails[0].data, /^Subject: Code for Alice$/m);
    const code = codeOf(sink.mails[0]);
    assert.equal(
      text,
      `Hello Alice Anders (alice@realm1), your email code: ${code} (${serial})`,
    );
    // 60 s validity: after 61 s the code no longer answers the transaction
    t.clock.advance(61_000);
    const late = await check(t, { user: "alice", transaction_id: tid, pass: code });
    assert.equal(late.body.result.value, false);
    await done(t, sink);
  },
);

Deno.test("email: dynamic_email sends to the user's email attribute; a bad tag or an unreachable server fails cleanly", async () => {
  const { t, sink, serial } = await setup({ email: "", dynamic_email: "1" });
  assert.equal((await listed(t, serial)).info.dynamic_email, "True");
  challengeOf((await check(t, { user: "alice", pass: "pin" })).body);
  assert.deepEqual(sink.mails[0].to, [ALICE.email]);

  await addPolicy(t, "badtag", { scope: "authentication", action: { emailtext: "{nope}" } });
  const bad = await check(t, { user: "alice", pass: "pin" });
  assert.equal(bad.body.result.value, false);
  assert.equal(bad.body.result.authentication, "REJECT");
  assert.equal(bad.body.detail.message, "The PIN was correct, but the EMail could not be sent!");
  assert.equal(bad.body.detail.multi_challenge, undefined);
  await jsonOf(await t.asAdmin("DELETE", "/policy/badtag"));

  sink.close();
  const down = await check(t, { user: "alice", pass: "pin" });
  assert.equal(down.body.detail.message, "The PIN was correct, but the EMail could not be sent!");
  // no challenge was stored for the failed sends
  const open = await jsonOf(await t.asAdmin("GET", `/token/challenges/${serial}`));
  assert.equal(open.body.result.value.count, 1);
  await t.close();
});

Deno.test("email: conflicting emailtext policies fail the send, not the request", async () => {
  const { t, sink } = await setup();
  await addPolicy(t, "text1", { scope: "authentication", action: { emailtext: "A {otp}" } });
  await addPolicy(t, "text2", { scope: "authentication", action: { emailtext: "B {otp}" } });
  const res = await check(t, { user: "alice", pass: "pin" });
  assert.equal(res.status, 200);
  assert.equal(res.body.detail.message, "The PIN was correct, but the EMail could not be sent!");
  assert.equal(sink.mails.length, 0);
  await done(t, sink);
});

Deno.test("email: /validate/triggerchallenge mails a code that answers the transaction", async () => {
  const { t, sink, serial } = await setup();
  const res = await jsonOf(
    await t.asAdmin("POST", "/validate/triggerchallenge", { body: { user: "alice" } }),
  );
  assert.equal(res.body.result.value, 1);
  assert.equal(res.body.detail.serial, serial);
  const code = codeOf(sink.mails[0]);
  const ok = await check(t, { serial, transaction_id: res.body.detail.transaction_id, pass: code });
  assert.equal(ok.body.result.value, true);
  await done(t, sink);
});
