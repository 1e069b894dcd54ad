/**
 * The SMPP SMS provider over HTTP (spec 14 §21.3): the provider list in
 * privacyIDEA's order with SMPP's parameters, PASSWORD encrypted and
 * censored, a stored password not kept when SMSC_HOST, SMSC_PORT or the
 * module changes, definitions checked on save, and the `sms` token's code
 * sent to a local SMSC (bind_transmitter, submit_sm, unbind); a refused bind
 * fails the send.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";
import {
  FIREBASE_PROVIDER,
  HTTP_PROVIDER,
  SCRIPT_PROVIDER,
  SIPGATE_PROVIDER,
  SMPP_PROVIDER,
  SMTP_PROVIDER,
} from "../../src/domain/smsgateway/mod.ts";
import { challengeOf, check } from "./_challenge_types.ts";
import {
  answersOnce,
  failsToSend,
  gatewaysListed,
  saveGateway,
  smsTokenThrough,
  storedRows,
} from "./_sms_providers.ts";
import { startSmscStub } from "../domain/smsgateway/_smsc_stub.ts";

const SMPP = {
  name: "smsc",
  module: SMPP_PROVIDER,
  "option.SMSC_HOST": "smsc.example.com",
  "option.SMSC_PORT": "2775",
  "option.SYSTEM_ID": "tessera",
  "option.PASSWORD": "smpp-secret",
  "option.S_ADDR": "Tessera",
};

Deno.test("GET /smsgateway/providers lists HTTP, Sipgate, SMTP, SMPP, Script and Firebase; SMPP with privacyIDEA's parameters", async () => {
  const t = await createTestApp();
  const res = await jsonOf(await t.asAdmin("GET", "/smsgateway/providers"));
  assert.equal(res.status, 200);
  const providers = res.body.result.value;
  assert.deepEqual(Object.keys(providers), [
    HTTP_PROVIDER,
    SIPGATE_PROVIDER,
    SMTP_PROVIDER,
    SMPP_PROVIDER,
    SCRIPT_PROVIDER,
    FIREBASE_PROVIDER,
  ]);
  const smpp = providers[SMPP_PROVIDER];
  assert.equal(smpp.options_allowed, false);
  assert.equal(smpp.headers_allowed, false);
  assert.deepEqual(Object.keys(smpp.parameters), [
    "SMSC_HOST",
    "SMSC_PORT",
    "SYSTEM_ID",
    "PASSWORD",
    "S_ADDR_TON",
    "S_ADDR_NPI",
    "S_ADDR",
    "D_ADDR_TON",
    "D_ADDR_NPI",
    "REGEXP",
    "TIMEOUT",
  ]);
  assert.deepEqual(smpp.parameters.SMSC_HOST, { required: true, description: "SMSC Host IP" });
  assert.deepEqual(smpp.parameters.SMSC_PORT, { required: true, description: "SMSC Port" });
  assert.deepEqual(smpp.parameters.PASSWORD, {
    description: "Password for authentication on SMSC",
  });
  await t.close();
});

Deno.test("POST /smsgateway: the SMPP password is encrypted and censored; kept only while the SMSC and the module stay", async () => {
  const t = await createTestApp();
  const saved = await saveGateway(t, SMPP);
  assert.equal(saved.status, 200, JSON.stringify(saved.body));
  const [gw] = await gatewaysListed(t);
  assert.deepEqual(gw.options, {
    SMSC_HOST: "smsc.example.com",
    SMSC_PORT: "2775",
    SYSTEM_ID: "tessera",
    PASSWORD: "__CENSORED__",
    S_ADDR: "Tessera",
  });
  assert.deepEqual(gw.headers, {});
  const rows = await storedRows(t);
  assert.ok(!JSON.stringify(rows).includes("smpp-secret"));
  const password = rows.find((r) => r.key === "PASSWORD")!;
  assert.equal(Number(password.is_secret), 1);
  assert.match(password.value, /^g1:/);

  const kept = { ...SMPP, "option.PASSWORD": "__CENSORED__" };
  const cases: [Record<string, unknown>, string][] = [
    [{ ...kept, "option.SMSC_HOST": "evil.example.com" }, '"option.SMSC_HOST" changed'],
    [{ ...kept, "option.SMSC_PORT": "2776" }, '"option.SMSC_PORT" changed'],
    [
      {
        name: "smsc",
        module: SIPGATE_PROVIDER,
        "option.USERNAME": "u",
        "option.PASSWORD": "__CENSORED__",
      },
      '"module" changed',
    ],
  ];
  for (const [body, message] of cases) {
    const res = await saveGateway(t, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.result.error.code, 905);
    assert.equal(
      res.body.result.error.message,
      `ERR905: Cannot keep the stored "option.PASSWORD": ${message}, which decides where it is ` +
        `sent. Send "option.PASSWORD" again`,
    );
  }
  assert.deepEqual(await storedRows(t), rows, "nothing changed");
  const same = await saveGateway(t, { ...kept, "option.S_ADDR": "Other", description: "x" });
  assert.equal(same.status, 200, JSON.stringify(same.body));
  assert.deepEqual(
    (await storedRows(t)).find((r) => r.key === "PASSWORD"),
    password,
    "the stored password kept as it was",
  );
  await t.close();
});

Deno.test("POST /smsgateway checks SMPP definitions; refused ones store nothing", async () => {
  const t = await createTestApp();
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...SMPP, "option.SMSC_HOST": undefined }, /^ERR905: Missing parameter: option\.SMSC_HOST$/],
    [{ ...SMPP, "option.SMSC_PORT": "" }, /^ERR905: Missing parameter: option\.SMSC_PORT$/],
    [{ ...SMPP, "option.SMSC_PORT": "70000" }, /option\.SMSC_PORT.*1 to 65535/],
    [{ ...SMPP, "option.SMSC_HOST": "a b" }, /option\.SMSC_HOST/],
    [{ ...SMPP, "option.S_ADDR_TON": "international" }, /option\.S_ADDR_TON.*0 to 255/],
    [{ ...SMPP, "option.D_ADDR_NPI": "0x100" }, /option\.D_ADDR_NPI/],
    [{ ...SMPP, "option.TIMEOUT": "0" }, /option\.TIMEOUT/],
    [{ ...SMPP, "option.URL": "https://x" }, /SmppSMSProvider takes no option "URL"/],
    [{ ...SMPP, "header.X": "y" }, /SmppSMSProvider takes no headers/],
    [{ ...SMPP, "option.S_ADDR": "a\0b" }, /option\.S_ADDR/],
  ];
  for (const [definition, message] of cases) {
    const body = Object.fromEntries(Object.entries(definition).filter(([, v]) => v !== undefined));
    const res = await saveGateway(t, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.result.error.code, 905);
    assert.match(res.body.result.error.message, message);
  }
  assert.deepEqual(await gatewaysListed(t), []);
  // TON/NPI as privacyIDEA reads them: decimal, else hex
  const ok = await saveGateway(t, {
    ...SMPP,
    "option.S_ADDR_TON": "0x5",
    "option.D_ADDR_NPI": "1",
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  await t.close();
});

Deno.test("sms token through SMPP: bind_transmitter and submit_sm reach the SMSC; the code answers", async () => {
  const smsc = startSmscStub();
  const { t } = await smsTokenThrough({
    module: SMPP_PROVIDER,
    "option.SMSC_HOST": "127.0.0.1",
    "option.SMSC_PORT": String(smsc.port),
    "option.SYSTEM_ID": "tessera",
    "option.PASSWORD": "smpp-secret",
    "option.S_ADDR_TON": "5",
    "option.S_ADDR": "Tessera",
    "option.D_ADDR_TON": "1",
    "option.D_ADDR_NPI": "1",
    "option.REGEXP": "/[\\+ ]//",
  });
  try {
    const res = await check(t, { user: "alice", pass: "pin" });
    const { tid } = challengeOf(res.body);
    assert.equal(res.body.detail.message, "Enter the OTP from the SMS:");
    assert.deepEqual(smsc.received.map((r) => r.pdu.command), [
      "bind_transmitter",
      "submit_sm",
      "unbind",
    ]);
    const bind = smsc.received[0].pdu;
    assert.equal(bind.system_id, "tessera");
    assert.equal(bind.password, "smpp-secret", "the decrypted password");
    assert.equal(bind.interface_version, 0x34);
    const submit = smsc.received[1].pdu;
    assert.equal(submit.source_addr_ton, 5);
    assert.equal(submit.source_addr_npi, 0);
    assert.equal(submit.source_addr, "Tessera");
    assert.equal(submit.dest_addr_ton, 1);
    assert.equal(submit.dest_addr_npi, 1);
    assert.equal(submit.destination_addr, "491605550123", "REGEXP applied");
    assert.equal(submit.data_coding, 0);
    assert.equal(submit.esm_class, 0);
    const code = submit.short_message.message;
    assert.match(code, /^\d{6}$/, "default text: the code alone");
    await answersOnce(t, tid, code);
  } finally {
    smsc.close();
    await t.close();
  }
});

Deno.test("sms token through SMPP: a refused bind or submit, or a closed port, fails the send", async () => {
  for (const behaviour of [{ bindStatus: 0x0e }, { submitStatus: 0x45 }]) {
    const smsc = startSmscStub(behaviour);
    const { t, serial } = await smsTokenThrough({
      module: SMPP_PROVIDER,
      "option.SMSC_HOST": "127.0.0.1",
      "option.SMSC_PORT": String(smsc.port),
      "option.PASSWORD": "wrong",
    });
    await failsToSend(t, serial);
    const commands = smsc.received.map((r) => r.pdu.command);
    assert.deepEqual(
      commands,
      behaviour.bindStatus ? ["bind_transmitter"] : ["bind_transmitter", "submit_sm"],
    );
    smsc.close();
    await t.close();
  }
  const closed = startSmscStub();
  const port = closed.port;
  closed.close();
  const { t, serial } = await smsTokenThrough({
    module: SMPP_PROVIDER,
    "option.SMSC_HOST": "127.0.0.1",
    "option.SMSC_PORT": String(port),
  });
  await failsToSend(t, serial);
  await t.close();
});
