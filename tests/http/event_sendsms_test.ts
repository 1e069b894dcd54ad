/**
 * The `sendsms` action of the UserNotification handler over HTTP (spec 14
 * §21.4): an admin disables a token, and the token owner's `mobile` gets the
 * rendered text through an SMS gateway (a local Sipgate endpoint and a local
 * SMSC). A failing gateway or a token without owner: the action fails, the
 * request does not.
 */
import assert from "node:assert/strict";
import { jsonOf, type TestApp } from "../test_app.ts";
import { SIPGATE_PROVIDER, SMPP_PROVIDER } from "../../src/domain/smsgateway/mod.ts";
import { addEvent } from "../domain/event/_helpers.ts";
import { appWithAlice, enrolOk } from "./_challenge_types.ts";
import { startSipgateStub } from "../domain/smsgateway/_sipgate_stub.ts";
import { startSmscStub } from "../domain/smsgateway/_smsc_stub.ts";

async function postEventRows(t: TestApp) {
  await t.deps.audit.flush();
  const rows = await t.deps.db.selectFrom("audit").selectAll().orderBy("id").execute();
  return rows.filter((r) => r.action.startsWith("POST-EVENT"));
}

async function addGateway(t: TestApp, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", "/smsgateway", { body }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function disable(t: TestApp, serial: string) {
  const res = await jsonOf(await t.asAdmin("POST", "/token/disable", { body: { serial } }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.value, 1);
}

Deno.test("GET /event/actions/UserNotification offers sendsms with the SMS gateways", async () => {
  const t = await appWithAlice();
  await addGateway(t, {
    name: "notify",
    module: SIPGATE_PROVIDER,
    "option.USERNAME": "u",
    "option.PASSWORD": "p",
  });
  const { body } = await jsonOf(await t.asAdmin("GET", "/event/actions/UserNotification"));
  const sendsms = body.result.value.sendsms;
  assert.deepEqual(Object.keys(sendsms), ["smsconfig", "body", "To"]);
  assert.deepEqual(sendsms.smsconfig.value, ["notify"]);
  assert.equal(sendsms.smsconfig.required, true);
  assert.equal(sendsms.body.type, "text");
  assert.deepEqual(sendsms.To.value, ["tokenowner"]);
  assert.equal(sendsms.To.required, true);
  await t.close();
});

Deno.test("sendsms: disabling a token texts its owner's mobile through the gateway, tags filled", async () => {
  const sipgate = startSipgateStub();
  const t = await appWithAlice();
  try {
    await addGateway(t, {
      name: "notify",
      module: SIPGATE_PROVIDER,
      "option.USERNAME": "notifier",
      "option.PASSWORD": "sipgate-secret",
      "option.URL": sipgate.url,
    });
    await addEvent(t, {
      name: "sms-on-disable",
      event: "token_disable",
      handlermodule: "UserNotification",
      action: "sendsms",
      position: "post",
      "option.smsconfig": "notify",
      "option.To": "tokenowner",
      "option.body": "Hello {givenname}, {admin} disabled your token {serial} ({tokentype}).",
    });
    const { detail } = await enrolOk(t, { type: "hotp", genkey: "1", user: "alice" });
    assert.equal(sipgate.requests.length, 0, "the event is token_disable only");
    await disable(t, detail.serial);
    assert.equal(sipgate.requests.length, 1);
    const req = sipgate.requests[0];
    assert.equal(req.method, "POST");
    assert.equal(req.path, "/v2/sessions/sms");
    assert.equal(req.authorization, `Basic ${btoa("notifier:sipgate-secret")}`);
    assert.deepEqual(JSON.parse(req.body), {
      smsId: "s0",
      recipient: "+491701234567",
      message: `Hello Alice, admin disabled your token ${detail.serial} (hotp).`,
    });
    const rows = await postEventRows(t);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].action, "POST-EVENT token_disable>>UserNotification:sendsms");
    assert.equal(rows[0].success, 1);
  } finally {
    await sipgate.close();
    await t.close();
  }
});

Deno.test("sendsms: the default text goes through SMPP", async () => {
  const smsc = startSmscStub();
  const t = await appWithAlice();
  try {
    await addGateway(t, {
      name: "smsc",
      module: SMPP_PROVIDER,
      "option.SMSC_HOST": "127.0.0.1",
      "option.SMSC_PORT": String(smsc.port),
      "option.REGEXP": "/[\\+ ]//",
    });
    await addEvent(t, {
      name: "sms",
      event: "token_disable",
      handlermodule: "UserNotification",
      action: "sendsms",
      "option.smsconfig": "smsc",
      "option.To": "tokenowner",
    });
    const { detail } = await enrolOk(t, { type: "hotp", genkey: "1", user: "alice" });
    await disable(t, detail.serial);
    const submits = smsc.received.filter((r) => r.pdu.command === "submit_sm").map((r) => r.pdu);
    assert.equal(submits.length, 1);
    assert.equal(submits[0].destination_addr, "491701234567");
    assert.equal(submits[0].esm_class, 0);
    assert.equal(
      submits[0].short_message.message,
      `Hello Alice,\n\nthe administrator admin@ performed the action\n` +
        `/token/disable on your token ${detail.serial}.\n\n` +
        `To check your tokens you may login to the Web UI:\nNone\n`,
    );
    assert.equal((await postEventRows(t))[0].success, 1);
  } finally {
    smsc.close();
    await t.close();
  }
});

Deno.test("sendsms: a failing gateway or a token without owner fails the action, not the request", async () => {
  const sipgate = startSipgateStub({ status: 500 });
  const t = await appWithAlice();
  try {
    await addGateway(t, {
      name: "notify",
      module: SIPGATE_PROVIDER,
      "option.USERNAME": "u",
      "option.PASSWORD": "p",
      "option.URL": sipgate.url,
    });
    await addEvent(t, {
      name: "sms",
      event: "token_disable",
      handlermodule: "UserNotification",
      action: "sendsms",
      "option.smsconfig": "notify",
      "option.To": "tokenowner",
      "option.body": "{serial} disabled",
    });
    const owned = await enrolOk(t, { type: "hotp", genkey: "1", user: "alice" });
    await disable(t, owned.detail.serial);
    assert.equal(sipgate.requests.length, 1);
    const orphan = await enrolOk(t, { type: "hotp", genkey: "1" });
    await disable(t, orphan.detail.serial);
    assert.equal(sipgate.requests.length, 1, "no owner: no SMS");
    const rows = await postEventRows(t);
    assert.deepEqual(rows.map((r) => r.success), [0, 0]);
  } finally {
    await sipgate.close();
    await t.close();
  }
});
