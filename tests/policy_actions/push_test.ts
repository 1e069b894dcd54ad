/**
 * The push token's policy actions (spec 13 §1.2): each against its baseline, with the
 * Authenticator app double over real HTTP.
 */
import assert from "node:assert/strict";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { enrolPush, postForm, pushSetup } from "../http/_push_app.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { actionTest } from "./_registry.ts";

async function initUrl(t: TestApp): Promise<{ status: number; body: Json }> {
  return await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: { type: "push", genkey: 1, user: "alice", realm: "realm1" },
      json: true,
    }),
  );
}

async function countTokens(t: TestApp): Promise<number> {
  return (await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count;
}

actionTest(
  "enrollment",
  ["push_firebase_configuration", "push_registration_url"],
  "a push enrolment needs both; 'poll only' sets poll_only=True, another value is refused",
  async () => {
    const { t, served } = await pushSetup();
    try {
      assert.equal((await initUrl(t)).status, 200);
      await savePolicy(t.deps, "push_enrol", {
        scope: "enrollment",
        action: `push_registration_url=${served.url}/ttype/push`,
      });
      const n = await countTokens(t);
      const noConfig = await initUrl(t);
      assert.equal(noConfig.status, 403);
      assert.equal(
        noConfig.body.result.error.message,
        "Missing enrollment policy for push token: push_firebase_configuration",
      );
      await savePolicy(t.deps, "push_enrol", {
        scope: "enrollment",
        action: "push_firebase_configuration=poll only",
      });
      const noUrl = await initUrl(t);
      assert.equal(noUrl.status, 403);
      assert.equal(
        noUrl.body.result.error.message,
        "Missing enrollment policy for push token: push_registration_url",
      );
      await savePolicy(t.deps, "push_enrol", {
        scope: "enrollment",
        action:
          "push_firebase_configuration=myfirebase, push_registration_url=https://x/ttype/push",
      });
      const unknown = await initUrl(t);
      assert.equal(unknown.status, 400);
      assert.equal(unknown.body.result.error.message, "ERR905: Unknown Firebase configuration!");
      assert.equal(await countTokens(t), n, "the refused enrolments created nothing");
      await savePolicy(t.deps, "push_enrol", {
        scope: "enrollment",
        action:
          "push_firebase_configuration=poll only, push_registration_url=https://pi.example.com/ttype/push",
      });
      const good = await initUrl(t);
      assert.match(
        good.body.detail.pushurl.value,
        /\?url=https%3A\/\/pi\.example\.com\/ttype\/push&/,
      );
      assert.match(good.body.detail.pushurl.value, /&poll_only=True$/);
      const token = await getTokenBySerial(t.deps, good.body.detail.serial);
      assert.equal(token.info.push_firebase_configuration.value, "poll only");
    } finally {
      await served.close();
      await t.close();
    }
  },
);

/** One enrolment URL parameter with and without an enrolment action. */
const URL_CASES: [string, string, RegExp, RegExp][] = [
  ["push_ttl", "push_ttl=5", /&ttl=10&/, /&ttl=5&/],
  ["push_ssl_verify", "push_ssl_verify=0", /&sslverify=1&/, /&sslverify=0&/],
  ["push_use_pia_scheme", "push_use_pia_scheme", /^otpauth:\/\/pipush\//, /^pia:\/\/pipush\//],
  [
    "push_force_app_pin",
    "push_force_app_pin",
    /&poll_only=True$/,
    /&poll_only=True&pin=True&app_force_unlock=pin$/,
  ],
  [
    "push_app_force_unlock",
    "push_app_force_unlock=biometric",
    /&poll_only=True$/,
    /&poll_only=True&app_force_unlock=biometric$/,
  ],
];

for (const [action, setting, before, after] of URL_CASES) {
  actionTest("enrollment", action, "changes the push enrolment URL", async () => {
    const { t, served } = await pushSetup();
    try {
      const plain = await initUrl(t);
      assert.match(plain.body.detail.pushurl.value, before);
      await savePolicy(t.deps, "push_extra", { scope: "enrollment", action: setting });
      const changed = await initUrl(t);
      assert.match(changed.body.detail.pushurl.value, after);
    } finally {
      await served.close();
      await t.close();
    }
  });
}

actionTest(
  "authentication",
  "push_challenge_text",
  "replaces the challenge message of push tokens",
  async () => {
    const { t, served, app } = await pushSetup();
    try {
      await enrolPush(t, app);
      const plain = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      assert.equal(
        plain.body.detail.message,
        "Please confirm the authentication on your mobile device!",
      );
      await savePolicy(t.deps, "a", {
        scope: "authentication",
        action: "push_challenge_text=Look at your phone\\, please",
      });
      const res = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      assert.equal(res.body.detail.multi_challenge[0].message, "Look at your phone, please");
    } finally {
      await served.close();
      await t.close();
    }
  },
);

actionTest(
  "authentication",
  ["push_text_on_mobile", "push_title_on_mobile", "push_ssl_verify"],
  "shape the signed challenge the app polls",
  async () => {
    const { t, served, app } = await pushSetup();
    try {
      const { serial } = await enrolPush(t, app);
      await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      const [plain] = (await app.poll()).body.result.value;
      assert.equal(plain.question, "Do you want to confirm the login?");
      assert.equal(plain.title, "privacyIDEA");
      assert.equal(plain.sslverify, "1");
      await savePolicy(t.deps, "a", {
        scope: "authentication",
        action: "push_text_on_mobile=Log in {username} with {serial}?, " +
          "push_title_on_mobile=ACME, push_ssl_verify=0",
      });
      const [c] = (await app.poll()).body.result.value;
      assert.equal(c.question, `Log in alice with ${serial}?`);
      assert.equal(c.title, "ACME");
      assert.equal(c.sslverify, "0");
      assert.ok(app.isServerSigned(c));
      // an unknown tag: privacyIDEA's default question
      await savePolicy(t.deps, "a", {
        scope: "authentication",
        action: "push_text_on_mobile=Hello {nosuchtag}",
      });
      assert.equal(
        (await app.poll()).body.result.value[0].question,
        "Do you want to confirm the login?",
      );
    } finally {
      await served.close();
      await t.close();
    }
  },
);

actionTest(
  "authentication",
  "push_allow_polling",
  "deny refuses every poll; token asks the token's polling_allowed",
  async () => {
    const { t, served, app } = await pushSetup();
    try {
      const { serial } = await enrolPush(t, app);
      await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      assert.equal((await app.poll()).status, 200);
      await savePolicy(t.deps, "a", { scope: "authentication", action: "push_allow_polling=deny" });
      const denied = await app.poll();
      assert.equal(denied.status, 403);
      assert.equal(denied.body.result.error.message, "Polling not allowed!");
      await savePolicy(t.deps, "a", {
        scope: "authentication",
        action: "push_allow_polling=token",
      });
      assert.equal((await app.poll()).status, 200, "no tokeninfo: allowed");
      await jsonOf(
        await t.asAdmin("POST", `/token/info/${serial}/polling_allowed`, {
          body: { value: "False" },
        }),
      );
      const byToken = await app.poll();
      assert.equal(byToken.status, 403);
      assert.equal(byToken.body.result.error.message, "Polling not allowed!");
    } finally {
      await served.close();
      await t.close();
    }
  },
);

actionTest(
  "authentication",
  ["push_require_presence", "push_presence_options", "push_presence_num_options"],
  "the user must press the right one of the offered buttons",
  async () => {
    const { t, served, app } = await pushSetup();
    try {
      await enrolPush(t, app);
      const plain = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      assert.equal(plain.body.detail.multi_challenge[0].presence_answer, undefined);
      const [c0] = (await app.poll()).body.result.value;
      assert.equal(c0.require_presence, undefined);
      await app.answer(c0);
      await savePolicy(t.deps, "a", {
        scope: "authentication",
        action: "push_require_presence, push_presence_options=NUMERIC, push_presence_num_options=5",
      });
      const res = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      const entry = res.body.detail.multi_challenge[0];
      const correct = entry.presence_answer;
      assert.match(correct, /^\d\d$/);
      assert.equal(
        entry.message,
        `Please confirm the authentication on your mobile device! Please press: ${correct}`,
      );
      const [c] = (await app.poll()).body.result.value;
      const options = c.require_presence.split(",");
      assert.equal(options.length, 5);
      assert.ok(options.every((o: string) => /^\d\d$/.test(o)));
      assert.ok(options.includes(correct));
      assert.equal(c.version, "2");
      assert.ok(app.isServerSigned(c));
      const tid = res.body.detail.transaction_id;
      const wrong = options.find((o: string) => o !== correct);
      assert.equal((await app.answer(c, { presence: wrong })).body.result.value, false);
      assert.equal((await app.answer(c)).body.result.value, false, "no presence answer");
      const pending = await fetch(`${served.url}/validate/polltransaction?transaction_id=${tid}`);
      assert.equal((await pending.json()).detail.challenge_status, "pending");
      assert.equal((await app.answer(c, { presence: correct })).body.result.value, true);
      const done = await postForm(served, "/validate/check", {
        user: "alice",
        transaction_id: tid,
        pass: "",
      });
      assert.equal(done.body.result.value, true);
    } finally {
      await served.close();
      await t.close();
    }
  },
);

actionTest(
  "authentication",
  "push_presence_custom_options",
  "with CUSTOM the buttons come from the list",
  async () => {
    const { t, served, app } = await pushSetup({
      authentication: "push_require_presence, push_presence_num_options=2",
    });
    try {
      await enrolPush(t, app);
      await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      const [plain] = (await app.poll()).body.result.value;
      assert.ok(plain.require_presence.split(",").every((o: string) => /^[A-Z]$/.test(o)));
      await savePolicy(t.deps, "custom", {
        scope: "authentication",
        action: "push_presence_options=CUSTOM, push_presence_custom_options=1A:1B",
      });
      const res = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      assert.match(res.body.detail.multi_challenge[0].presence_answer, /^1[AB]$/);
      const open = (await app.poll()).body.result.value;
      assert.deepEqual(open[open.length - 1].require_presence.split(",").sort(), ["1A", "1B"]);
    } finally {
      await served.close();
      await t.close();
    }
  },
);

actionTest(
  "authentication",
  ["push_code_to_phone", "push_code_to_phone_message"],
  "the app confirms and shows a code the user types at the client (privacyIDEA 3.13)",
  async () => {
    const { t, served, app } = await pushSetup();
    try {
      const { serial } = await enrolPush(t, app);
      const plain = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      assert.equal(plain.body.detail.multi_challenge[0].client_mode, "poll");
      await app.answer((await app.poll()).body.result.value[0]);
      await savePolicy(t.deps, "a", { scope: "authentication", action: "push_code_to_phone" });
      const res = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      const entry = res.body.detail.multi_challenge[0];
      assert.equal(entry.client_mode, "interactive");
      assert.deepEqual(entry.attributes, { hideResponseInput: false });
      assert.equal(entry.message, "Please enter the code displayed on your smartphone.");
      const tid = res.body.detail.transaction_id;
      const finish = (pass: string) =>
        postForm(served, "/validate/check", { user: "alice", transaction_id: tid, pass });
      // before the app confirmed nothing answers
      assert.equal((await finish("00")).body.result.value, false);
      const [c] = (await app.poll()).body.result.value;
      const confirmed = await app.answer(c);
      assert.equal(confirmed.body.result.value, true);
      const code = confirmed.body.detail.display_code;
      assert.match(code, /^\d\d$/);
      assert.equal(confirmed.body.detail.message, "Enter the code to log in");
      // confirmed: no longer offered to the app, a repeated confirmation changes nothing
      assert.deepEqual((await app.poll()).body.result.value, []);
      assert.equal(
        (await app.answer(c, { signature: confirmed.signature })).body.result.value,
        false,
      );
      const poll = await fetch(`${served.url}/validate/polltransaction?transaction_id=${tid}`);
      assert.equal((await poll.json()).detail.challenge_status, "pending");
      const before = (await getTokenBySerial(t.deps, serial)).failcount;
      const wrong = await finish(code === "00" ? "01" : "00");
      assert.equal(wrong.body.result.value, false);
      assert.equal((await getTokenBySerial(t.deps, serial)).failcount, before + 1);
      const right = await finish(code);
      assert.equal(right.body.result.value, true, JSON.stringify(right.body));
      // the message policy, and push_require_presence winning over code to phone
      await savePolicy(t.deps, "a", {
        scope: "authentication",
        action: "push_code_to_phone, push_code_to_phone_message=Type this at your computer",
      });
      await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      const [c2] = (await app.poll()).body.result.value;
      assert.equal(
        (await app.answer(c2)).body.detail.message,
        "Type this at your computer",
      );
      await savePolicy(t.deps, "a", {
        scope: "authentication",
        action: "push_code_to_phone, push_require_presence",
      });
      const both = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      assert.equal(both.body.detail.multi_challenge[0].client_mode, "poll");
      assert.match(both.body.detail.multi_challenge[0].presence_answer, /^[A-Z]$/);
    } finally {
      await served.close();
      await t.close();
    }
  },
);

actionTest(
  "authentication",
  "enroll_via_multichallenge",
  "PUSH: a login without a push token enrols one; the app's registration completes the login",
  async () => {
    const { t, served, app } = await pushSetup();
    try {
      const spass = await jsonOf(
        await t.asAdmin("POST", "/token/init", {
          body: { type: "spass", user: "alice", realm: "realm1", pin: "s3cret" },
        }),
      );
      assert.equal(spass.status, 200);
      const plain = await postForm(served, "/validate/check", { user: "alice", pass: "s3cret" });
      assert.equal(plain.body.result.value, true);
      await savePolicy(t.deps, "a", {
        scope: "authentication",
        action: "enroll_via_multichallenge=push",
      });
      const res = await postForm(served, "/validate/check", { user: "alice", pass: "s3cret" });
      assert.equal(res.body.result.authentication, "CHALLENGE", JSON.stringify(res.body));
      const entry = res.body.detail.multi_challenge[0];
      assert.equal(entry.type, "push");
      assert.equal(entry.client_mode, "poll");
      assert.equal(entry.message, "Please scan the QR code!");
      assert.match(entry.link, /^otpauth:\/\/pipush\/PIPU/);
      assert.match(entry.image, /^data:image\/png;base64,/);
      const tid = res.body.detail.transaction_id;
      const status = async () =>
        (await (await fetch(`${served.url}/validate/polltransaction?transaction_id=${tid}`))
          .json()).detail.challenge_status;
      assert.equal(await status(), "pending");
      assert.equal((await getTokenBySerial(t.deps, entry.serial)).rolloutState, "clientwait");
      const reg = await app.enrol(entry.link);
      assert.equal(reg.status, 200, JSON.stringify(reg.body));
      assert.equal(await status(), "accept");
      // the enrolment is no login request for the app
      assert.deepEqual((await app.poll()).body.result.value, []);
      const done = await postForm(served, "/validate/check", {
        user: "alice",
        transaction_id: tid,
        pass: "",
      });
      assert.equal(done.body.result.value, true, JSON.stringify(done.body));
      assert.equal(done.body.result.authentication, "ACCEPT");
    } finally {
      await served.close();
      await t.close();
    }
  },
);

actionTest(
  "authentication",
  "push_wait",
  "one /validate/check with the PIN waits for the app: accepted in time succeeds, else fails",
  async () => {
    const { t, served, app } = await pushSetup();
    try {
      const { serial } = await enrolPush(t, app);
      const plain = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      assert.equal(plain.body.result.authentication, "CHALLENGE");
      const [first] = (await app.poll()).body.result.value as Record<string, string>[];
      // presence needs a button at the client: a waiting request goes without it
      await savePolicy(t.deps, "a", {
        scope: "authentication",
        action: "push_wait=5, push_require_presence",
      });
      const started = performance.now();
      const pending = postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      let fresh: Record<string, string> | undefined;
      while (!fresh) {
        await new Promise((r) => setTimeout(r, 50));
        const open = (await app.poll()).body.result.value as Record<string, string>[];
        fresh = open.find((c) => c.nonce !== first.nonce);
      }
      assert.equal(fresh.require_presence, undefined);
      assert.ok(app.isServerSigned(fresh));
      assert.equal((await app.answer(fresh)).body.result.value, true);
      const res = await pending;
      assert.equal(res.status, 200);
      assert.equal(res.body.result.value, true, JSON.stringify(res.body));
      assert.equal(res.body.result.authentication, "ACCEPT");
      assert.equal(res.body.detail.serial, serial);
      assert.equal(res.body.detail.multi_challenge, undefined);
      assert.ok(performance.now() - started < 5000, "answered before the wait ran out");
      // the waited-for transaction is closed: the app has nothing left but the first challenge
      assert.equal((await app.poll()).body.result.value.length, 1);

      await savePolicy(t.deps, "a", { scope: "authentication", action: "push_wait=1" });
      const before = (await getTokenBySerial(t.deps, serial)).failcount;
      const t0 = performance.now();
      const late = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
      const waited = performance.now() - t0;
      assert.equal(late.status, 200);
      assert.equal(late.body.result.value, false);
      assert.equal(late.body.result.authentication, "REJECT");
      assert.equal(late.body.detail.message, "wrong otp value");
      assert.equal(late.body.detail.multi_challenge, undefined);
      assert.ok(waited >= 1000 && waited < 4000, `waited ${waited} ms`);
      assert.equal((await getTokenBySerial(t.deps, serial)).failcount, before + 1);
      // a wrong PIN does not wait
      const t1 = performance.now();
      const wrong = await postForm(served, "/validate/check", { user: "alice", pass: "9999" });
      assert.equal(wrong.body.detail.message, "wrong otp pin");
      assert.ok(performance.now() - t1 < 900);
    } finally {
      await served.close();
      await t.close();
    }
  },
);
