/**
 * The `sms` token over HTTP (spec 11 §2, §3.1–3.2): enrolment, the code sent
 * through an HTTP gateway to a local sink (read from the request) or through
 * a script, answers (right, wrong, replayed, in parallel), the fail counter,
 * `sms_gateways`, `smstext`, phone mangling and send failures.
 */
import assert from "node:assert/strict";
import { actionTest } from "../policy_actions/_registry.ts";
import { jsonOf, type TestApp } from "../test_app.ts";
import { HTTP_PROVIDER, SCRIPT_PROVIDER } from "../../src/domain/smsgateway/mod.ts";
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
  startSmsSink,
  type SunkRequest,
} from "./_challenge_types.ts";

const PHONE = "+49 160 5550123";

async function addGateway(t: TestApp, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", "/smsgateway", { body }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** App, HTTP sink, gateway `gw` (GET, to={phone}, text={otp}), alice's sms token (PIN `pin`). */
async function setup(
  gateway: Record<string, unknown> = {},
  token: Record<string, unknown> = {},
  sinkOptions: { status?: number; reply?: string } = {},
) {
  const t = await appWithAlice();
  const sink = startSmsSink(sinkOptions);
  const definition = {
    name: "gw",
    module: HTTP_PROVIDER,
    "option.URL": sink.url,
    "option.HTTP_METHOD": "GET",
    "option.to": "{phone}",
    "option.text": "{otp}",
    "option.from": "Tessera",
    "option.RETURN_SUCCESS": "SENT",
    "header.Authorization": "Bearer gw-secret",
    ...gateway,
  };
  // an undefined value leaves the option out
  await addGateway(
    t,
    Object.fromEntries(Object.entries(definition).filter(([, v]) => v !== undefined)),
  );
  await setConfig(t, { "sms.identifier": "gw" });
  const body = await enrolOk(t, {
    type: "sms",
    phone: PHONE,
    pin: "pin",
    user: "alice",
    realm: "realm1",
    ...token,
  });
  return { t, sink, serial: body.detail.serial as string, body };
}

function codeOf(req: SunkRequest): string {
  const text = req.method === "GET" ? req.url.searchParams.get("text") ?? "" : req.body;
  const m = text.match(/\d{6}/);
  assert.ok(m, `no code in ${text}`);
  return m[0];
}

Deno.test("sms: enrolment stores the phone; the PIN sends the code to the HTTP gateway; it answers once", async () => {
  const { t, sink, serial, body } = await setup();
  assert.match(serial, /^PISM/);
  assert.equal(body.detail.rollout_state, "enrolled");
  const token = await listed(t, serial);
  assert.equal(token.tokentype, "sms");
  assert.equal(token.info.phone, PHONE);
  assert.equal(token.info.hashlib, "sha1");

  const res = await check(t, { user: "alice", pass: "pin" });
  const { tid, entry } = challengeOf(res.body);
  assert.equal(res.body.detail.message, "Enter the OTP from the SMS:");
  assert.equal(entry.type, "sms");
  assert.match(entry.attributes.valid_until, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$/);
  assert.equal(sink.requests.length, 1);
  const req = sink.requests[0];
  assert.equal(req.method, "GET");
  assert.equal(req.url.searchParams.get("to"), PHONE);
  assert.equal(req.url.searchParams.get("from"), "Tessera");
  assert.equal(req.headers.get("authorization"), "Bearer gw-secret", "the decrypted secret header");
  const code = codeOf(req);
  assert.equal(req.url.searchParams.get("text"), code, "default text: the code alone");

  const wrong = await check(t, { user: "alice", transaction_id: tid, pass: "000000" });
  assert.equal(wrong.body.result.value, false);
  assert.equal(wrong.body.detail.message, "Response did not match the challenge.");
  assert.equal(await failcount(t, serial), 1);
  const right = await check(t, { user: "alice", transaction_id: tid, pass: code });
  assert.equal(right.body.result.value, true);
  assert.equal(right.body.detail.message, "Found matching challenge");
  assert.equal(await failcount(t, serial), 0);
  const replay = await check(t, { user: "alice", transaction_id: tid, pass: code });
  assert.equal(replay.body.result.value, false);

  const rows = await auditRows(t, "POST /validate/check");
  assert.equal(rows[1].token_type, "sms");
  assert.equal(rows[1].success, 1);
  assert.ok(!JSON.stringify(rows).includes(code));
  await sink.close();
  await t.close();
});

Deno.test("sms: parallel answers to one challenge: exactly one is accepted", async () => {
  const { t, sink, serial } = await setup();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "100" } });
  const { tid } = challengeOf((await check(t, { user: "alice", pass: "pin" })).body);
  const code = codeOf(sink.requests[0]);
  assert.equal(await acceptedOfParallel(t, { user: "alice", transaction_id: tid, pass: code }), 1);
  await sink.close();
  await t.close();
});

Deno.test("sms: fail counter reaches maxfail; a locked token sends no SMS", async () => {
  const { t, sink, serial } = await setup();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "2" } });
  for (let i = 0; i < 2; i++) {
    const { tid } = challengeOf((await check(t, { user: "alice", pass: "pin" })).body);
    await check(t, { user: "alice", transaction_id: tid, pass: "999999" });
  }
  const locked = await check(t, { user: "alice", pass: "pin" });
  assert.equal(locked.body.detail.message, "Failcounter exceeded");
  assert.equal(sink.requests.length, 2);
  await sink.close();
  await t.close();
});

actionTest(
  "authentication",
  [
    "smstext",
    "sms_challenge_text",
  ],
  "sms: POST as JSON, smstext with tags, REGEXP on the number, dynamic_phone",
  async () => {
    const { t, sink, serial } = await setup(
      {
        "option.HTTP_METHOD": "POST",
        "option.SEND_DATA_AS_JSON": "yes",
        "option.REGEXP": "/[\\+ ]//",
        "option.msg": "{otp}",
        "option.text": undefined,
      },
      { phone: "", dynamic_phone: "1" },
    );
    assert.equal((await listed(t, serial)).info.dynamic_phone, "True");
    // without the policies: the default challenge text, and the SMS is the code alone
    const plain = await check(t, { user: "alice", pass: "pin" });
    assert.equal(plain.body.detail.message, "Enter the OTP from the SMS:");
    assert.match(String(JSON.parse(sink.requests[0].body).msg), /^\d+$/, "the code alone");
    sink.requests.length = 0;
    await addPolicy(t, "smstext", {
      scope: "authentication",
      action: { smstext: "{user}: your code is {otp}", sms_challenge_text: "Check your phone" },
    });
    const res = await check(t, { user: "alice", pass: "pin" });
    assert.equal(res.body.detail.message, "Check your phone");
    const req = sink.requests[0];
    assert.equal(req.method, "POST");
    assert.equal(req.headers.get("content-type"), "application/json");
    const sent = JSON.parse(req.body);
    assert.equal(sent.to, 491701234567, "the mangled mobile number parses as JSON (spec)");
    const code = sent.msg.match(/\d{6}$/)[0];
    assert.equal(sent.msg, `Alice: your code is ${code}`);
    const ok = await check(t, {
      user: "alice",
      transaction_id: res.body.detail.transaction_id,
      pass: code,
    });
    assert.equal(ok.body.result.value, true);
    await sink.close();
    await t.close();
  },
);

Deno.test("sms: a gateway error or a missing success marker fails the send; no challenge is stored", async () => {
  for (const sinkOptions of [{ status: 500 }, { reply: "ERROR" }]) {
    const { t, sink, serial } = await setup({}, {}, sinkOptions);
    const res = await check(t, { user: "alice", pass: "pin" });
    assert.equal(res.body.result.value, false);
    assert.equal(res.body.result.authentication, "REJECT");
    assert.equal(res.body.detail.message, "The PIN was correct, but the SMS could not be sent!");
    assert.equal(sink.requests.length, 1);
    const open = await jsonOf(await t.asAdmin("GET", `/token/challenges/${serial}`));
    assert.equal(open.body.result.value.count, 0);
    await sink.close();
    await t.close();
  }
});

actionTest(
  "admin",
  "sms_gateways",
  "sms: sms.identifier at enrolment needs a policy naming the gateway",
  async () => {
    const { t, sink } = await setup();
    const refused = await init(t, {
      type: "sms",
      phone: PHONE,
      "sms.identifier": "gw",
      user: "alice",
      realm: "realm1",
    });
    assert.equal(refused.status, 403);
    assert.equal(
      refused.body.result.error.message,
      "The requested sms.identifier is not allowed to be enrolled.",
    );
    await addPolicy(t, "gateways", { scope: "admin", action: "*, sms_gateways=gw other" });
    const allowed = await init(t, {
      type: "sms",
      phone: PHONE,
      "sms.identifier": "gw",
      user: "alice",
      realm: "realm1",
    });
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    assert.equal((await listed(t, allowed.body.detail.serial)).info["sms.identifier"], "gw");
    const other = await init(t, { type: "sms", phone: PHONE, "sms.identifier": "nope" });
    assert.equal(other.status, 403);
    const missing = await init(t, { type: "sms", user: "alice", realm: "realm1" });
    assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: 'phone'");
    const bad = await init(t, { type: "sms", phone: "-rf /" });
    assert.equal(bad.status, 400);
    await sink.close();
    await t.close();
  },
);

Deno.test("sms: the script provider runs a script of sms.script_dir with the number and the text on stdin", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-sms-scripts-" });
  const out = `${dir}/out.txt`;
  await Deno.writeTextFile(
    `${dir}/send.sh`,
    `#!/bin/sh\nprintf '%s|' "$1" > "${out}"\ncat >> "${out}"\n`,
  );
  await Deno.chmod(`${dir}/send.sh`, 0o755);
  await Deno.writeTextFile(`${dir}/fail.sh`, "#!/bin/sh\nexit 3\n");
  await Deno.chmod(`${dir}/fail.sh`, 0o755);
  const t = await appWithAlice(`[sms]\nscript_dir = "${dir}"\n`);
  await addGateway(t, {
    name: "script",
    module: SCRIPT_PROVIDER,
    "option.script": "send.sh",
    "option.background": "wait",
  });
  await addGateway(t, {
    name: "broken",
    module: SCRIPT_PROVIDER,
    "option.script": "fail.sh",
    "option.background": "wait",
  });
  await addGateway(t, {
    name: "absent",
    module: SCRIPT_PROVIDER,
    "option.script": "missing.sh",
    "option.background": "wait",
  });
  await setConfig(t, { "sms.identifier": "script" });
  const { detail } = await enrolOk(t, {
    type: "sms",
    phone: ALICE.mobile,
    pin: "pin",
    user: "alice",
    realm: "realm1",
  });
  const res = await check(t, { user: "alice", pass: "pin" });
  const { tid } = challengeOf(res.body);
  const [number, text] = (await Deno.readTextFile(out)).split("|");
  assert.equal(number, ALICE.mobile);
  assert.match(text, /^\d{6}$/);
  assert.equal(
    (await check(t, { user: "alice", transaction_id: tid, pass: text })).body.result.value,
    true,
  );
  for (const gateway of ["broken", "absent"]) {
    await setConfig(t, { "sms.identifier": gateway });
    const failed = await check(t, { serial: detail.serial, pass: "pin" });
    assert.equal(failed.body.detail.message, "The PIN was correct, but the SMS could not be sent!");
  }
  await t.close();
  await Deno.remove(dir, { recursive: true });
});
