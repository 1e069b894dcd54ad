import assert from "node:assert/strict";
import { jsonOf, type TestApp } from "../../test_app.ts";
import {
  addEvent,
  createEventTestApp,
  mailBody,
  startReceiver,
  startSmtpSink,
} from "./_helpers.ts";
import { readCounter } from "../../../src/domain/event/event_store.ts";

async function auditRows(t: TestApp, prefix: string) {
  await t.deps.audit.flush();
  const rows = await t.deps.db.selectFrom("audit").selectAll().orderBy("id").execute();
  return rows.filter((r) => r.action.startsWith(prefix));
}

Deno.test("a pre RequestMangler changes a parameter the endpoint sees", async () => {
  const t = await createEventTestApp();
  await addEvent(t, {
    name: "set foo",
    event: "ttype",
    handlermodule: "RequestMangler",
    action: "set",
    position: "pre",
    "option.parameter": "foo",
    "option.value": "mangled",
  });
  await addEvent(t, {
    name: "rewrite user",
    event: "ttype",
    handlermodule: "RequestMangler",
    action: "set",
    position: "pre",
    "option.parameter": "user",
    "option.value": "{1}@{0}",
    "option.match_parameter": "user",
    "option.match_pattern": "(\\w+)\\\\(\\w+)",
  });
  await addEvent(t, {
    name: "drop secret",
    event: "ttype",
    handlermodule: "RequestMangler",
    action: "delete",
    position: "pre",
    "option.parameter": "secret",
  });
  const { status, body } = await jsonOf(
    await t.post("/ttype/hotp", { foo: "original", user: "realm1\\alice", secret: "x" }),
  );
  assert.equal(status, 200);
  assert.deepEqual(body.result.value.params, { foo: "mangled", user: "alice@realm1" });
  const audit = await auditRows(t, "PRE-EVENT");
  assert.deepEqual(audit.map((a) => [a.action, a.info, a.success]), [
    ["PRE-EVENT ttype>>RequestMangler:set", "set foo", 1],
    ["PRE-EVENT ttype>>RequestMangler:set", "rewrite user", 1],
    ["PRE-EVENT ttype>>RequestMangler:delete", "drop secret", 1],
  ]);
  await t.close();
});

Deno.test("a pre RequestMangler on /auth lets an alias log in as the admin", async () => {
  const t = await createEventTestApp();
  await t.adminToken(); // creates the admin
  await addEvent(t, {
    name: "alias",
    event: "auth",
    handlermodule: "RequestMangler",
    action: "set",
    position: "pre",
    "option.parameter": "username",
    "option.value": "admin",
    "option.match_parameter": "username",
    "option.match_pattern": "root",
  });
  const res = await jsonOf(
    await t.post("/auth", { username: "root", password: "test-admin-password" }),
  );
  assert.equal(res.status, 200);
  assert.equal(res.body.result.value.username, "admin");
  const other = await jsonOf(
    await t.post("/auth", { username: "rooty", password: "test-admin-password" }),
  );
  assert.equal(other.status, 401);
  await t.close();
});

Deno.test("pre handlers are ordered; a later ordering overrides an earlier one", async () => {
  const t = await createEventTestApp();
  for (const [value, ordering] of [["second", 5], ["first", 1]] as const) {
    await addEvent(t, {
      name: value,
      event: "ttype",
      handlermodule: "RequestMangler",
      action: "set",
      position: "pre",
      ordering,
      "option.parameter": "p",
      "option.value": value,
    });
  }
  const { body } = await jsonOf(await t.get("/ttype/x"));
  assert.equal(body.result.value.params.p, "second");
  await t.close();
});

Deno.test("a WebHook reaches a local receiver with the templated JSON body", async () => {
  const t = await createEventTestApp();
  const rx = startReceiver();
  await addEvent(t, {
    name: "hook",
    event: "ttype",
    handlermodule: "WebHook",
    action: "post_webhook",
    "option.URL": rx.url,
    "option.content_type": "application/json",
    "option.replace": "True",
    "option.data": JSON.stringify({
      serial: "{serial}",
      path: "{action}",
      client: "{client_ip}",
      "{token_serial}": ["{date}", 7],
      owner: "{token_owner}",
    }),
  });
  const res = await t.get("/ttype/abc", { remoteAddr: "10.1.2.3" });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  assert.equal(rx.received.length, 1);
  const got = rx.received[0];
  assert.equal(got.method, "POST");
  assert.equal(got.contentType, "application/json");
  assert.deepEqual(JSON.parse(got.body), {
    serial: "S1",
    path: "/ttype/abc",
    client: "10.1.2.3",
    S1: ["2026-01-01", 7],
    owner: "",
  });
  const audit = await auditRows(t, "POST-EVENT");
  assert.equal(audit.length, 1);
  assert.equal(audit[0].action, "POST-EVENT ttype>>WebHook:post_webhook");
  assert.equal(audit[0].success, 1);
  await rx.close();
  await t.close();
});

Deno.test("a WebHook sends urlencoded data; GET puts it in the query", async () => {
  const t = await createEventTestApp();
  const rx = startReceiver();
  await addEvent(t, {
    name: "form",
    event: "ttype",
    handlermodule: "WebHook",
    action: "post_webhook",
    "option.URL": rx.url,
    "option.content_type": "urlencoded",
    "option.replace": "True",
    "option.data": "serial={serial}&path={action}",
  });
  await addEvent(t, {
    name: "get",
    event: "ttype",
    handlermodule: "WebHook",
    action: "post_webhook",
    "option.URL": rx.url,
    "option.content_type": "application/x-www-form-urlencoded",
    "option.replace": "False",
    "option.data": "a={serial}",
    "option.method": "GET",
  });
  await (await t.get("/ttype/u")).body?.cancel();
  assert.equal(rx.received.length, 2);
  assert.equal(rx.received[0].body, "serial=S1&path=/ttype/u");
  assert.equal(rx.received[0].contentType, "application/x-www-form-urlencoded");
  assert.equal(rx.received[1].method, "GET");
  assert.equal(new URL(rx.received[1].url).searchParams.get("a"), "{serial}");
  await rx.close();
  await t.close();
});

Deno.test("a failing WebHook is audited as failed and the request still succeeds", async () => {
  const t = await createEventTestApp();
  const rx = startReceiver();
  const url = rx.url;
  await rx.close(); // nothing listens there any more
  await addEvent(t, {
    name: "dead",
    event: "ttype",
    handlermodule: "WebHook",
    action: "post_webhook",
    "option.URL": url,
    "option.content_type": "application/json",
    "option.replace": "False",
    "option.data": "{}",
  });
  const res = await jsonOf(await t.get("/ttype/x"));
  assert.equal(res.status, 200);
  const audit = await auditRows(t, "POST-EVENT");
  assert.equal(audit.length, 1);
  assert.equal(audit[0].success, 0);
  await t.close();
});

Deno.test("UserNotification delivers a templated mail to a local SMTP sink", async () => {
  const t = await createEventTestApp();
  const sink = startSmtpSink();
  const saved = await t.asAdmin("POST", "/smtpserver/sink", {
    body: {
      server: "127.0.0.1",
      port: String(sink.port),
      sender: "tessera@example.com",
      username: "mailer",
      password: "s3cret",
    },
  });
  assert.equal(saved.status, 200);
  await saved.body?.cancel();
  await addEvent(t, {
    name: "mail",
    event: "ttype",
    handlermodule: "UserNotification",
    action: "sendmail",
    "option.emailconfig": "sink",
    "option.To": "email",
    "option.To email": "alice@example.com, bob@example.com",
    "option.subject": "Token {serial}",
    "option.body": "Action {action} on {serial} from {client_ip}",
  });
  const res = await t.get("/ttype/mailme", { remoteAddr: "192.0.2.7" });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  assert.equal(sink.mails.length, 1);
  const mail = sink.mails[0];
  assert.equal(mail.from, "tessera@example.com");
  assert.deepEqual(mail.to, ["alice@example.com", "bob@example.com"]);
  assert.equal(mail.auth, "\0mailer\0s3cret");
  assert.match(mail.data, /^Subject: Token S1$/m);
  assert.equal(mailBody(mail.data), "Action /ttype/mailme on S1 from 192.0.2.7");
  const audit = await auditRows(t, "POST-EVENT");
  assert.equal(audit[0].success, 1);
  sink.close();
  await t.close();
});

Deno.test("UserNotification with an unreachable SMTP server returns false, request succeeds", async () => {
  const t = await createEventTestApp();
  const sink = startSmtpSink();
  const port = sink.port;
  sink.close();
  await (await t.asAdmin("POST", "/smtpserver/gone", {
    body: { server: "127.0.0.1", port: String(port), timeout: "2" },
  })).body?.cancel();
  await addEvent(t, {
    name: "mail",
    event: "ttype",
    handlermodule: "UserNotification",
    action: "sendmail",
    "option.emailconfig": "gone",
    "option.To": "email",
    "option.To email": "alice@example.com",
  });
  const res = await jsonOf(await t.get("/ttype/x"));
  assert.equal(res.status, 200);
  const audit = await auditRows(t, "POST-EVENT");
  assert.equal(audit[0].success, 0);
  assert.equal(audit[0].info, "mail (Failed: alice@example.com.)");
  await t.close();
});

Deno.test("a ResponseMangler sets and deletes keys of the response", async () => {
  const t = await createEventTestApp();
  await addEvent(t, {
    name: "set",
    event: "ttype",
    handlermodule: "ResponseMangler",
    action: "set",
    "option.JSON pointer": "/detail/extra/level",
    "option.type": "integer",
    "option.value": "42",
  });
  await addEvent(t, {
    name: "del",
    event: "ttype",
    handlermodule: "ResponseMangler",
    action: "delete",
    "option.JSON pointer": "/detail/message",
  });
  const { status, body } = await jsonOf(await t.get("/ttype/x"));
  assert.equal(status, 200);
  assert.deepEqual(body.detail.extra, { level: 42 });
  assert.equal("message" in body.detail, false);
  assert.equal(body.detail.serial, "S1");
  await t.close();
});

Deno.test("conditions decide whether a handler fires (result_value, detail_message, serial)", async () => {
  const t = await createEventTestApp();
  const counter = (name: string, conditions: Record<string, string>) =>
    addEvent(t, {
      name,
      event: "ttype",
      handlermodule: "Counter",
      action: "increase_counter",
      "option.counter_name": name,
      conditions,
    });
  await counter("always", {});
  await counter("value_true", { result_value: "True" });
  await counter("value_false", { result_value: "False" });
  await counter("msg_echo", { detail_message: "ch+o" });
  await counter("msg_other", { detail_message: "^nope" });
  await counter("serial_s", { serial: "S" });
  await counter("serial_x", { serial: "X" });
  await counter("unknown_ignored", { no_such_condition: "whatever" });
  await counter("ip_in", { client_ip: "10.0.0.0/8, -10.0.0.9" });
  await counter("ip_excluded", { client_ip: "10.0.0.0/8, -10.0.0.1" });
  await (await t.get("/ttype/x", { remoteAddr: "10.0.0.1" })).body?.cancel();
  const values: Record<string, number> = {};
  for (
    const n of [
      "always",
      "value_true",
      "value_false",
      "msg_echo",
      "msg_other",
      "serial_s",
      "serial_x",
      "unknown_ignored",
      "ip_in",
      "ip_excluded",
    ]
  ) values[n] = await readCounter(t.deps.db, n);
  assert.deepEqual(values, {
    always: 1,
    value_true: 1,
    value_false: 0,
    msg_echo: 1,
    msg_other: 0,
    serial_s: 1,
    serial_x: 0,
    unknown_ignored: 1,
    ip_in: 1,
    ip_excluded: 0,
  });
  await t.close();
});

Deno.test("Counter: increase, decrease floored at 0, reset, and the counter condition", async () => {
  const t = await createEventTestApp();
  await addEvent(t, {
    name: "inc",
    event: "ttype",
    handlermodule: "Counter",
    action: "increase_counter",
    "option.counter_name": "hits",
  });
  await addEvent(t, {
    name: "flag",
    event: "ttype",
    handlermodule: "Counter",
    action: "increase_counter",
    ordering: 10,
    "option.counter_name": "over2",
    conditions: { counter: "hits>2" },
  });
  for (let i = 0; i < 4; i++) await (await t.get("/ttype/x")).body?.cancel();
  assert.equal(await readCounter(t.deps.db, "hits"), 4);
  assert.equal(await readCounter(t.deps.db, "over2"), 2);
  await addEvent(t, {
    name: "dec",
    event: "ttype",
    handlermodule: "Counter",
    action: "decrease_counter",
    "option.counter_name": "low",
  });
  await (await t.get("/ttype/x")).body?.cancel();
  assert.equal(await readCounter(t.deps.db, "low"), 0);
  await addEvent(t, {
    name: "reset",
    event: "ttype",
    handlermodule: "Counter",
    action: "reset_counter",
    ordering: 20,
    "option.counter_name": "hits",
  });
  await (await t.get("/ttype/x")).body?.cancel();
  assert.equal(await readCounter(t.deps.db, "hits"), 0);
  await t.close();
});

Deno.test("a change to the definitions is seen by the next request (version counter)", async () => {
  const t = await createEventTestApp();
  const id = await addEvent(t, {
    name: "inc",
    event: "ttype",
    handlermodule: "Counter",
    action: "increase_counter",
    "option.counter_name": "c",
  });
  await (await t.get("/ttype/x")).body?.cancel();
  await (await t.asAdmin("POST", `/event/disable/${id}`)).body?.cancel();
  await (await t.get("/ttype/x")).body?.cancel();
  assert.equal(await readCounter(t.deps.db, "c"), 1);
  await (await t.asAdmin("POST", `/event/enable/${id}`)).body?.cancel();
  await (await t.get("/ttype/x")).body?.cancel();
  assert.equal(await readCounter(t.deps.db, "c"), 2);
  await t.close();
});

Deno.test("no post handlers run when the endpoint raises; no pre handlers without a JWT", async () => {
  const t = await createEventTestApp();
  await addEvent(t, {
    name: "post",
    event: "ttype",
    handlermodule: "Counter",
    action: "increase_counter",
    "option.counter_name": "post",
  });
  await addEvent(t, {
    name: "pre",
    event: "tokengroup_add",
    handlermodule: "Counter",
    action: "increase_counter",
    position: "pre",
    "option.counter_name": "pre",
  });
  const failed = await jsonOf(await t.get("/ttype/fail"));
  assert.equal(failed.status, 400);
  assert.equal(await readCounter(t.deps.db, "post"), 0);
  const denied = await jsonOf(await t.post("/tokengroup/g1"));
  assert.equal(denied.status, 401);
  assert.equal(await readCounter(t.deps.db, "pre"), 0);
  const allowed = await jsonOf(await t.asAdmin("POST", "/tokengroup/g1"));
  assert.equal(allowed.status, 200);
  assert.equal(await readCounter(t.deps.db, "pre"), 1);
  await t.close();
});

Deno.test("a handler error is audited and skipped, or aborts with abort_on_error", async () => {
  const t = await createEventTestApp();
  const id = await addEvent(t, {
    name: "broken",
    event: "ttype",
    handlermodule: "Logging",
    action: "logging",
    "option.message": "unknown {tag}",
  });
  const res = await jsonOf(await t.get("/ttype/x"));
  assert.equal(res.status, 200);
  const audit = await auditRows(t, "POST-EVENT");
  assert.equal(audit.length, 1);
  assert.equal(audit[0].success, 0);
  assert.equal(audit[0].info, "broken (TemplateError)");
  await addEvent(t, {
    id,
    name: "broken",
    event: "ttype",
    handlermodule: "Logging",
    action: "logging",
    "option.message": "unknown {tag}",
    abort_on_error: true,
  });
  const aborted = await jsonOf(await t.get("/ttype/x"));
  assert.equal(aborted.status, 500);
  assert.equal(aborted.body.result.error.code, -500);
  await t.close();
});

Deno.test("Logging writes the templated message at the configured level", async () => {
  const t = await createEventTestApp();
  await addEvent(t, {
    name: "log",
    event: "ttype",
    handlermodule: "Logging",
    action: "logging",
    "option.message": "event {action} serial={serial} pin={pin}",
    "option.level": "WARNING",
  });
  await (await t.get("/ttype/x")).body?.cancel();
  const line = t.log.lines.find((l) => l.includes("event /ttype/x"));
  assert.ok(line, t.log.lines.join("\n"));
  assert.match(line, / WARN event \/ttype\/x serial=S1 pin=None/);
  await t.close();
});

Deno.test("Script runs only files of the script directory, with the spec's arguments", async () => {
  const t = await createEventTestApp();
  const dir = await Deno.makeTempDir();
  t.deps.config.events.scriptDir = dir;
  const out = `${dir}/out.txt`;
  await Deno.writeTextFile(`${dir}/record.sh`, `#!/bin/sh\necho "$@" > ${out}\n`);
  await Deno.writeTextFile(`${dir}/fail.sh`, "#!/bin/sh\nexit 3\n");
  await Deno.chmod(`${dir}/record.sh`, 0o755);
  await Deno.chmod(`${dir}/fail.sh`, 0o755);
  await addEvent(t, {
    name: "rec",
    event: "ttype",
    handlermodule: "Script",
    action: "record.sh",
    "option.background": "wait",
    "option.serial": "True",
    "option.user": "True",
    "option.logged_in_role": "True",
  });
  await (await t.get("/ttype/x")).body?.cancel();
  assert.equal(
    (await Deno.readTextFile(out)).trim(),
    "--serial S1 --user none --logged_in_role none",
  );
  // a name outside the directory never runs
  await addEvent(t, {
    name: "escape",
    event: "ttype",
    handlermodule: "Script",
    action: "../record.sh",
    "option.background": "wait",
  });
  await addEvent(t, {
    name: "fails",
    event: "ttype",
    handlermodule: "Script",
    action: "fail.sh",
    "option.background": "wait",
    "option.raise_error": "True",
    ordering: 9,
  });
  const res = await jsonOf(await t.get("/ttype/x"));
  assert.equal(res.status, 400);
  assert.equal(res.body.result.error.code, 903);
  assert.equal(res.body.result.error.message, "ERR903: Error during execution of the script.");
  const audit = await auditRows(t, "POST-EVENT ttype>>Script");
  const escape = audit.filter((a) => a.info === "escape");
  assert.equal(escape.length, 1);
  assert.equal(escape[0].success, 0);
  await Deno.remove(dir, { recursive: true });
  await t.close();
});

Deno.test("a changed response is signed again when response signing is on", async () => {
  const signed: string[] = [];
  const { createTestApp } = await import("../../test_app.ts");
  const { ok } = await import("../../../src/http/envelope.ts");
  const t = await createTestApp({
    routeRules: {
      "GET /ttype/:type": { roles: "public" },
      "POST /ttype/:type": { roles: "public" },
    },
    deps: {
      signer: {
        sign(text: string) {
          signed.push(text);
          return Promise.resolve(`sig${signed.length}`);
        },
      },
    },
  });
  t.app.on(["GET", "POST"], "/ttype/:type", (c) => ok(c, "plain", { detail: { message: "echo" } }));
  await addEvent(t, {
    name: "set",
    event: "ttype",
    handlermodule: "ResponseMangler",
    action: "set",
    "option.JSON pointer": "/detail/message",
    "option.type": "string",
    "option.value": "mangled",
  });
  signed.length = 0;
  const res = await t.get("/ttype/x");
  const text = await res.text();
  const body = JSON.parse(text);
  assert.equal(body.detail.message, "mangled");
  assert.equal(signed.length, 2, "signed once by the endpoint, once after the change");
  assert.equal(body.signature, "rsa_sha256_pss:sig2");
  const { signature: _s, ...unsigned } = body;
  assert.deepEqual(JSON.parse(signed[1]), unsigned);
  await t.close();
});

Deno.test("UserNotification savefile writes into the spool directory and never outside", async () => {
  const t = await createEventTestApp();
  await addEvent(t, {
    name: "spool",
    event: "ttype",
    handlermodule: "UserNotification",
    action: "savefile",
    "option.filename": "note-{serial}.txt",
    "option.body": "serial {serial} at {action}",
  });
  await addEvent(t, {
    name: "escape",
    event: "ttype",
    handlermodule: "UserNotification",
    action: "savefile",
    "option.filename": "../../escaped-{serial}.txt",
    "option.body": "x",
  });
  await (await t.get("/ttype/x")).body?.cancel();
  const dir = t.deps.config.storage.dataDir;
  assert.equal(
    await Deno.readTextFile(`${dir}/notifications/note-S1.txt`),
    "serial S1 at /ttype/x",
  );
  await assert.rejects(Deno.stat(`${dir}/../escaped-S1.txt`));
  const audit = await auditRows(t, "POST-EVENT");
  assert.deepEqual(audit.map((a) => [a.info, a.success]), [["spool", 1], ["escape", 0]]);
  await t.close();
});
