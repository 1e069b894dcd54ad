import assert from "node:assert/strict";
import { jsonOf } from "../../test_app.ts";
import { addEvent, createEventTestApp, startSmtpSink } from "./_helpers.ts";
import { createUsers } from "../../fixtures/users.ts";
import { getUserInfo, resolveUser } from "../../../src/domain/user/mod.ts";
import { readCounter } from "../../../src/domain/event/event_store.ts";

// RFC 4226 test key
const OTPKEY = "3132333435363738393031323334353637383930";

Deno.test("a post Token handler disables a token after a failed /validate/check", async () => {
  const t = await createEventTestApp();
  const init = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: { type: "hotp", serial: "HOTP1", otpkey: OTPKEY, pin: "" },
    }),
  );
  assert.equal(init.status, 200, JSON.stringify(init.body));
  await addEvent(t, {
    name: "lock on failure",
    event: "validate_check",
    handlermodule: "Token",
    action: "disable",
    conditions: { result_value: "False" },
  });
  // a correct OTP does not fire the handler
  const good = await jsonOf(await t.post("/validate/check", { serial: "HOTP1", pass: "755224" }));
  assert.equal(good.body.result.value, true);
  let tok = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial: "HOTP1" } }));
  assert.equal(tok.body.result.value.tokens[0].active, true);
  // a wrong one does
  const bad = await jsonOf(await t.post("/validate/check", { serial: "HOTP1", pass: "000000" }));
  assert.equal(bad.status, 200);
  assert.equal(bad.body.result.value, false);
  tok = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial: "HOTP1" } }));
  assert.equal(tok.body.result.value.tokens[0].active, false);
  await t.deps.audit.flush();
  const rows = await t.deps.db.selectFrom("audit").selectAll()
    .where("action", "like", "POST-EVENT%").execute();
  assert.deepEqual(rows.map((r) => [r.action, r.info, r.success]), [
    ["POST-EVENT validate_check>>Token:disable", "lock on failure", 1],
  ]);
  await t.close();
});

Deno.test("Token handler: tokeninfo, description and conditions on the user's single token", async () => {
  const t = await createEventTestApp();
  await createUsers(t.deps, {
    realm: "r1",
    users: [{ login: "alice", password: "pw", email: "alice@example.com", givenname: "Alice" }],
  });
  const init = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: { type: "hotp", serial: "H2", otpkey: OTPKEY, user: "alice", realm: "r1", pin: "" },
    }),
  );
  assert.equal(init.status, 200, JSON.stringify(init.body));
  await addEvent(t, {
    name: "mark",
    event: "validate_check",
    handlermodule: "Token",
    action: "set tokeninfo",
    "option.key": "last_seen_from",
    "option.value": "{client_ip} {username}@{realm}",
    conditions: { realm: "r1", tokentype: "hotp", result_value: "True", failcounter: "<5" },
  });
  await addEvent(t, {
    name: "describe",
    event: "validate_check",
    handlermodule: "Token",
    action: "set description",
    "option.description": "checked {now}+1h",
    conditions: { tokenrealm: "r1", resolver: "no-such-resolver" },
  });
  await addEvent(t, {
    name: "count",
    event: "validate_check",
    handlermodule: "Token",
    action: "increase tokeninfo",
    "option.key": "checks",
    conditions: { realm: "r1" },
  });
  for (let i = 0; i < 2; i++) {
    await (await t.post("/validate/check", { user: "alice", realm: "r1", pass: "wrong" }, {
      remoteAddr: "10.9.8.7",
    })).body?.cancel();
  }
  const good = await jsonOf(
    await t.post("/validate/check", { user: "alice", realm: "r1", pass: "755224" }, {
      remoteAddr: "10.9.8.7",
    }),
  );
  assert.equal(good.body.result.value, true);
  const tok = (await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial: "H2" } })))
    .body.result.value.tokens[0];
  assert.equal(tok.info.last_seen_from, "10.9.8.7 alice@r1");
  assert.equal(tok.info.checks, "3");
  assert.equal(tok.description, "", "the resolver condition does not hold");
  await t.close();
});

Deno.test("CustomUserAttributes and UserNotification reach the token owner", async () => {
  const t = await createEventTestApp();
  const sink = startSmtpSink();
  await createUsers(t.deps, {
    realm: "r1",
    users: [{ login: "bob", password: "pw", email: "bob@example.com", givenname: "Bob" }],
  });
  await (await t.asAdmin("POST", "/smtpserver/sink", {
    body: { server: "127.0.0.1", port: String(sink.port), sender: "pi@example.com" },
  })).body?.cancel();
  await (await t.asAdmin("POST", "/token/init", {
    body: { type: "hotp", serial: "H3", otpkey: OTPKEY, user: "bob", realm: "r1", pin: "" },
  })).body?.cancel();
  await addEvent(t, {
    name: "attr",
    event: "validate_check",
    handlermodule: "CustomUserAttributes",
    action: "set_custom_user_attributes",
    "option.user": "tokenowner",
    "option.attrkey": "last_failure",
    "option.attrvalue": "yes",
    conditions: { result_value: "False" },
  });
  await addEvent(t, {
    name: "tell bob",
    event: "validate_check",
    handlermodule: "UserNotification",
    action: "sendmail",
    "option.emailconfig": "sink",
    "option.To": "tokenowner",
    "option.body": "Hello {user}, token {serial} ({tokentype}) of {username} failed",
    conditions: { result_value: "False" },
  });
  await (await t.post("/validate/check", { serial: "H3", pass: "000000" })).body?.cancel();
  const ref = await resolveUser(t.deps, "bob", "r1");
  assert.ok(ref);
  assert.equal((await getUserInfo(t.deps, ref)).last_failure, "yes");
  assert.equal(sink.mails.length, 1);
  assert.deepEqual(sink.mails[0].to, ["bob@example.com"]);
  const [, body] = sink.mails[0].data.split("\r\n\r\n");
  const text = new TextDecoder().decode(
    Uint8Array.from(atob(body.replace(/\r\n/g, "")), (c) => c.charCodeAt(0)),
  );
  assert.equal(text, "Hello Bob, token H3 (hotp) of bob failed");
  sink.close();
  await t.close();
});

Deno.test("Token 'set random pin' sets a new PIN and hands it back in detail.pin", async () => {
  const t = await createEventTestApp();
  await (await t.asAdmin("POST", "/token/init", {
    body: { type: "hotp", serial: "H4", otpkey: OTPKEY, pin: "old" },
  })).body?.cancel();
  await addEvent(t, {
    name: "new pin",
    event: "validate_check",
    handlermodule: "Token",
    action: "set random pin",
    "option.length": "8",
    conditions: { result_value: "True" },
  });
  const first = await jsonOf(await t.post("/validate/check", { serial: "H4", pass: "old755224" }));
  assert.equal(first.body.result.value, true);
  const pin = first.body.detail.pin;
  assert.match(pin, /^\d{8}$/);
  // the old PIN no longer works, the new one does (next HOTP value of RFC 4226)
  const old = await jsonOf(await t.post("/validate/check", { serial: "H4", pass: "old287082" }));
  assert.equal(old.body.result.value, false);
  const fresh = await jsonOf(
    await t.post("/validate/check", { serial: "H4", pass: `${pin}287082` }),
  );
  assert.equal(fresh.body.result.value, true);
  await t.close();
});

Deno.test("pre Token handlers of a user-role caller only reach the caller's own tokens", async () => {
  const t = await createEventTestApp();
  await createUsers(t.deps, {
    realm: "r1",
    users: [{ login: "alice", password: "alice-pw" }, { login: "bob", password: "bob-pw" }],
  });
  for (const [serial, user] of [["ALICE1", "alice"], ["BOB1", "bob"]]) {
    const res = await t.asAdmin("POST", "/token/init", {
      body: { type: "hotp", serial, otpkey: OTPKEY, user, realm: "r1" },
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
  }
  await addEvent(t, {
    name: "touch",
    event: "token_disable",
    handlermodule: "Token",
    action: "set tokeninfo",
    position: "pre",
    "option.key": "touched",
    "option.value": "yes",
  });
  const login = await jsonOf(await t.post("/auth", { username: "alice@r1", password: "alice-pw" }));
  assert.equal(login.status, 200, JSON.stringify(login.body));
  const token = login.body.result.value.token;
  const foreign = await t.request("POST", "/token/disable/BOB1", { token });
  await foreign.body?.cancel();
  const own = await t.request("POST", "/token/disable/ALICE1", { token });
  await own.body?.cancel();
  const info = async (serial: string) =>
    (await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }))).body.result.value
      .tokens[0];
  assert.equal((await info("BOB1")).info.touched, undefined);
  assert.equal((await info("BOB1")).active, true);
  assert.equal((await info("ALICE1")).info.touched, "yes");
  await t.close();
});

Deno.test("/validate/radiuscheck (empty 204/400) fires post handlers with its outcome", async () => {
  const t = await createEventTestApp();
  await (await t.asAdmin("POST", "/token/init", {
    body: { type: "hotp", serial: "R1", otpkey: OTPKEY, pin: "" },
  })).body?.cancel();
  for (const [name, value] of [["ok", "True"], ["fail", "False"]]) {
    await addEvent(t, {
      name,
      event: "validate_check",
      handlermodule: "Counter",
      action: "increase_counter",
      "option.counter_name": name,
      conditions: { result_value: value },
    });
  }
  const good = await t.post("/validate/radiuscheck", { serial: "R1", pass: "755224" });
  assert.equal(good.status, 204);
  const bad = await t.post("/validate/radiuscheck", { serial: "R1", pass: "000000" });
  assert.equal(bad.status, 400);
  assert.equal(await good.text(), "");
  assert.equal(await bad.text(), "");
  assert.equal(await readCounter(t.deps.db, "ok"), 1);
  assert.equal(await readCounter(t.deps.db, "fail"), 1);
  await t.close();
});

Deno.test("UserNotification 'admin realm' mails every user of a superuser realm", async () => {
  const t = await createEventTestApp();
  const sink = startSmtpSink();
  await createUsers(t.deps, {
    realm: "admins",
    users: [
      { login: "a1", email: "a1@example.com" },
      { login: "a2", email: "a2@example.com" },
      { login: "a3" },
    ],
  });
  await createUsers(t.deps, { realm: "plain", users: [{ login: "p1", email: "p1@example.com" }] });
  t.deps.config.auth.superuserRealms = ["admins"];
  await (await t.asAdmin("POST", "/smtpserver/sink", {
    body: { server: "127.0.0.1", port: String(sink.port) },
  })).body?.cancel();
  for (const realm of ["admins", "plain"]) {
    await addEvent(t, {
      name: `to ${realm}`,
      event: "ttype",
      handlermodule: "UserNotification",
      action: "sendmail",
      "option.emailconfig": "sink",
      "option.To": "admin realm",
      "option.To admin realm": realm,
    });
  }
  await (await t.get("/ttype/x")).body?.cancel();
  // only the superuser realm is mailed; "plain" is not a superuser realm
  assert.equal(sink.mails.length, 1);
  assert.deepEqual(sink.mails[0].to.sort(), ["a1@example.com", "a2@example.com"]);
  sink.close();
  await t.close();
});

Deno.test("Token 'set failcounter' and 'change failcounter' change the fail counter", async () => {
  const t = await createEventTestApp();
  await (await t.asAdmin("POST", "/token/init", {
    body: { type: "hotp", serial: "F1", otpkey: OTPKEY, pin: "" },
  })).body?.cancel();
  const failcount = async () =>
    (await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial: "F1" } }))).body.result
      .value.tokens[0].failcount;
  const id = await addEvent(t, {
    name: "set",
    event: "validate_check",
    handlermodule: "Token",
    action: "set failcounter",
    "option.fail counter": "4",
  });
  await (await t.post("/validate/check", { serial: "F1", pass: "755224" })).body?.cancel();
  assert.equal(await failcount(), 4);
  await addEvent(t, {
    id,
    name: "change",
    event: "validate_check",
    handlermodule: "Token",
    action: "change failcounter",
    "option.change fail counter": "-3",
  });
  // a failed check counts 4 → 5, then the handler takes 3 off
  await (await t.post("/validate/check", { serial: "F1", pass: "000000" })).body?.cancel();
  assert.equal(await failcount(), 2);
  await t.close();
});

Deno.test("challenge_expired and challenge_session look at the transaction's challenge", async () => {
  const t = await createEventTestApp();
  await (await t.asAdmin("POST", "/token/init", {
    body: { type: "hotp", serial: "C1", otpkey: OTPKEY, pin: "1234" },
  })).body?.cancel();
  const counter = (name: string, conditions: Record<string, string>) =>
    addEvent(t, {
      name,
      event: "validate_triggerchallenge",
      handlermodule: "Counter",
      action: "increase_counter",
      "option.counter_name": name,
      conditions,
    });
  await counter("fresh", { challenge_expired: "False" });
  await counter("expired", { challenge_expired: "True" });
  await counter("no_session", { challenge_session: "enrollment" });
  const res = await jsonOf(
    await t.asAdmin("POST", "/validate/triggerchallenge", {
      body: { serial: "C1" },
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.ok(res.body.detail.transaction_id);
  assert.equal(await readCounter(t.deps.db, "fresh"), 1);
  assert.equal(await readCounter(t.deps.db, "expired"), 0);
  assert.equal(await readCounter(t.deps.db, "no_session"), 0);
  await t.close();
});
