/**
 * `/smsgateway/`: a password inside a URL option (`http://user:pw@host/`) is
 * shown as `__CENSORED__`; sending the censored view back keeps the working
 * password (the gateway still delivers with Basic auth from the URL) only
 * while the URL's scheme, host, port and path stay the same; it reaches no
 * response, log line or audit entry.
 */
import assert from "node:assert/strict";
import { jsonOf, type TestApp } from "../test_app.ts";
import { HTTP_PROVIDER } from "../../src/domain/smsgateway/mod.ts";
import {
  appWithAlice,
  auditRows,
  check,
  enrolOk,
  setConfig,
  startSmsSink,
} from "./_challenge_types.ts";

const PASSWORD = "s3cretPw9x";

async function save(t: TestApp, body: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin("POST", "/smsgateway", { body }));
}

async function shown(t: TestApp) {
  const res = await jsonOf(await t.asAdmin("GET", "/smsgateway/"));
  assert.equal(res.status, 200);
  assert.ok(!JSON.stringify(res.body).includes(PASSWORD), "no password in GET");
  return res.body.result.value[0];
}

async function storedUrl(t: TestApp): Promise<string> {
  const row = await t.deps.db.selectFrom("smsgatewayoption").select(["value"])
    .where("key", "=", "URL").executeTakeFirstOrThrow();
  return row.value;
}

/** The view sent back as a save (what a UI does on "save" without editing). */
function asSave(view: Record<string, Record<string, string> | string>) {
  const body: Record<string, string> = {
    name: view.name as string,
    module: view.providermodule as string,
  };
  for (const [k, v] of Object.entries(view.options)) body[`option.${k}`] = v;
  for (const [k, v] of Object.entries(view.headers)) body[`header.${k}`] = v;
  return body;
}

Deno.test("smsgateway URL password: censored in GET, the censored round trip keeps it and the SMS goes out with it", async () => {
  const t = await appWithAlice();
  const sink = startSmsSink({ reply: "SENT" });
  const port = new URL(sink.url).port;
  const url = `http://gwuser:${PASSWORD}@127.0.0.1:${port}/send`;
  const created = await save(t, {
    name: "gw",
    module: HTTP_PROVIDER,
    "option.URL": url,
    "option.HTTP_METHOD": "GET",
    "option.to": "{phone}",
    "option.text": "{otp}",
    "option.RETURN_SUCCESS": "SENT",
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const view = await shown(t);
  assert.equal(view.options.URL, `http://gwuser:__CENSORED__@127.0.0.1:${port}/send`);

  // the censored view saved back: 200, the stored URL (and password) unchanged
  const again = await save(t, asSave(view));
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(await storedUrl(t), url);

  // the gateway still delivers with Basic auth from the URL
  await setConfig(t, { "sms.identifier": "gw" });
  const token = await enrolOk(t, {
    type: "sms",
    phone: "+49 160 5550123",
    pin: "pin",
    user: "alice",
    realm: "realm1",
  });
  const res = await check(t, { user: "alice", realm: "realm1", pass: "pin" });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(sink.requests.length, 1, "one SMS sent");
  assert.equal(
    sink.requests[0].headers.get("authorization"),
    `Basic ${btoa(`gwuser:${PASSWORD}`)}`,
  );
  assert.ok(!JSON.stringify(res.body).includes(PASSWORD));
  assert.ok(token.detail.serial);

  // nothing in logs or audit
  const audit = [
    ...(await auditRows(t, "POST /smsgateway")),
    ...(await auditRows(t, "GET /smsgateway/")),
    ...(await auditRows(t, "POST /validate/check")),
  ];
  assert.ok(audit.length >= 3, "audited");
  for (const text of [JSON.stringify(audit), t.log.lines.join("\n")]) {
    assert.ok(!text.includes(PASSWORD), "no password in audit or logs");
  }
  await sink.close();
  await t.close();
});

Deno.test("smsgateway URL password: __CENSORED__ with a moved URL, or none stored, is refused and changes nothing", async () => {
  const t = await appWithAlice();
  const url = `https://gwuser:${PASSWORD}@sms.example/send`;
  const base = { name: "gw", module: HTTP_PROVIDER, "option.text": "{otp}" };
  assert.equal((await save(t, { ...base, "option.URL": url })).status, 200);
  for (
    const moved of [
      "https://gwuser:__CENSORED__@evil.example/send",
      "https://gwuser:__CENSORED__@sms.example:8443/send",
      "http://gwuser:__CENSORED__@sms.example/send",
      "https://gwuser:__CENSORED__@sms.example/other",
    ]
  ) {
    const res = await save(t, { ...base, "option.URL": moved });
    assert.equal(res.status, 400, moved);
    assert.equal(res.body.result.status, false);
    assert.match(res.body.result.error.message, /Cannot keep the stored "option\.URL password"/);
    assert.ok(!JSON.stringify(res.body).includes(PASSWORD));
    assert.equal(await storedUrl(t), url, "nothing changed");
  }
  // the same target with another query keeps it; a new password replaces it
  const kept = await save(t, {
    ...base,
    "option.URL": "https://gwuser:__CENSORED__@sms.example/send?x=1",
  });
  assert.equal(kept.status, 200, JSON.stringify(kept.body));
  assert.equal(await storedUrl(t), `${url}?x=1`);
  assert.equal(
    (await save(t, { ...base, "option.URL": "https://gwuser:new@evil.example/send" })).status,
    200,
  );
  assert.equal(await storedUrl(t), "https://gwuser:new@evil.example/send");
  // no password stored: the placeholder is refused, not stored as a password
  assert.equal(
    (await save(t, { ...base, "option.URL": "https://gwuser@sms.example/send" })).status,
    200,
  );
  const none = await save(t, {
    ...base,
    "option.URL": "https://gwuser:__CENSORED__@sms.example/send",
  });
  assert.equal(none.status, 400);
  assert.match(none.body.result.error.message, /none is stored/);
  assert.equal(await storedUrl(t), "https://gwuser@sms.example/send");
  await t.close();
});
