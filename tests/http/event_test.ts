import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";

async function createEvent(t: TestApp, body: Record<string, unknown>, json = false) {
  return await jsonOf(await t.asAdmin("POST", "/event", { body, json }));
}

const BASIC = {
  name: "notify",
  event: "token_init, token_delete",
  handlermodule: "Logging",
  action: "logging",
};

Deno.test("/event endpoints need an admin JWT (401, 4033)", async () => {
  const t = await createTestApp();
  for (const [method, path] of [["GET", "/event/"], ["POST", "/event"], ["DELETE", "/event/1"]]) {
    const { status, body } = await jsonOf(await t.request(method, path));
    assert.equal(status, 401, `${method} ${path}`);
    assert.equal(body.result.error.code, 4033);
  }
  await t.close();
});

Deno.test("POST /event creates a definition and GET /event/ shows it in the spec's shape", async () => {
  const t = await createTestApp();
  const created = await createEvent(t, {
    ...BASIC,
    "option.message": "hello {serial}",
    "option.level": "INFO",
    conditions: JSON.stringify({ result_value: "True", blabla: "yes" }),
  });
  assert.equal(created.status, 200);
  const id = created.body.result.value;
  assert.equal(typeof id, "number");
  const { status, body } = await jsonOf(await t.asAdmin("GET", "/event/"));
  assert.equal(status, 200);
  assert.deepEqual(body.result.value, [{
    id,
    name: "notify",
    active: true,
    ordering: 0,
    position: "post",
    abort_on_error: false,
    event: ["token_init", "token_delete"],
    handlermodule: "Logging",
    action: "logging",
    condition: "",
    options: { message: "hello {serial}", level: "INFO" },
    conditions: { result_value: "True", blabla: "yes" },
  }]);
  await t.close();
});

Deno.test("POST /event with JSON stores option values as strings and lists events", async () => {
  const t = await createTestApp();
  const created = await createEvent(t, {
    name: "j",
    event: ["validate_check"],
    handlermodule: "Counter",
    action: "increase_counter",
    "option.counter_name": "c1",
    "option.flag": true,
    "option.n": 5,
    conditions: { result_value: false },
    ordering: 3,
    position: "pre",
    active: false,
  }, true);
  assert.equal(created.status, 200);
  const one = await jsonOf(await t.asAdmin("GET", `/event/${created.body.result.value}`));
  const def = one.body.result.value[0];
  assert.deepEqual(def.options, { counter_name: "c1", flag: "True", n: "5" });
  assert.deepEqual(def.conditions, { result_value: "False" });
  assert.equal(def.ordering, 3);
  assert.equal(def.position, "pre");
  assert.equal(def.active, false);
  assert.deepEqual(def.event, ["validate_check"]);
  await t.close();
});

Deno.test("POST /event with an id replaces the whole definition (not partial)", async () => {
  const t = await createTestApp();
  const id = (await createEvent(t, {
    ...BASIC,
    ordering: 5,
    position: "pre",
    active: "false",
    abort_on_error: "true",
    "option.message": "x",
    conditions: '{"serial": "OATH"}',
  })).body.result.value;
  const upd = await createEvent(t, { ...BASIC, id, name: "renamed" });
  assert.equal(upd.body.result.value, id);
  const def = (await jsonOf(await t.asAdmin("GET", `/event/${id}`))).body.result.value[0];
  assert.equal(def.name, "renamed");
  assert.equal(def.ordering, 0);
  assert.equal(def.position, "post");
  assert.equal(def.active, true);
  assert.deepEqual(def.options, {});
  assert.deepEqual(def.conditions, {});
  // abort_on_error is kept when absent on update
  assert.equal(def.abort_on_error, true);
  // an id that does not exist creates a row with that id
  const fresh = await createEvent(t, { ...BASIC, id: 77 });
  assert.equal(fresh.body.result.value, 77);
  assert.equal((await jsonOf(await t.asAdmin("GET", "/event/77"))).body.result.value.length, 1);
  await t.close();
});

Deno.test("POST /event refuses bad input with 400/905 and stores nothing", async () => {
  const t = await createTestApp();
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["missing name", { ...BASIC, name: "" }, /Missing parameter: name/],
    ["missing event", { ...BASIC, event: "" }, /Missing parameter: event/],
    ["missing action", { ...BASIC, action: "" }, /Missing parameter: action/],
    ["missing module", { ...BASIC, handlermodule: "" }, /Missing parameter: handlermodule/],
    ["unknown module", { ...BASIC, handlermodule: "Nope" }, /Unknown handler module: Nope/],
    ["bad conditions JSON", { ...BASIC, conditions: "{nope" }, /must be a dictionary/],
    ["conditions list", { ...BASIC, conditions: "[1,2]" }, /must be a dictionary/],
    ["bad id", { ...BASIC, id: "abc" }, /event handler id/],
    ["bad ordering", { ...BASIC, ordering: "x" }, /ordering/],
    ["bad position", { ...BASIC, position: "middle" }, /position/],
    ["bad active", { ...BASIC, active: "maybe" }, /active/],
    ["long name", { ...BASIC, name: "n".repeat(65) }, /name/],
  ];
  for (const [label, body, message] of cases) {
    const res = await createEvent(t, body);
    assert.equal(res.status, 400, label);
    assert.equal(res.body.result.error.code, 905, label);
    assert.match(res.body.result.error.message, message, label);
  }
  const list = await jsonOf(await t.asAdmin("GET", "/event/"));
  assert.deepEqual(list.body.result.value, []);
  await t.close();
});

Deno.test("GET /event/<id> gives [] for an unknown id and 400 for a non-numeric one", async () => {
  const t = await createTestApp();
  const unknown = await jsonOf(await t.asAdmin("GET", "/event/42"));
  assert.equal(unknown.status, 200);
  assert.deepEqual(unknown.body.result.value, []);
  const bad = await jsonOf(await t.asAdmin("GET", "/event/abc"));
  assert.equal(bad.status, 400);
  assert.equal(bad.body.result.error.code, 905);
  await t.close();
});

Deno.test("GET /event/ orders by ordering", async () => {
  const t = await createTestApp();
  await createEvent(t, { ...BASIC, name: "b", ordering: 10 });
  await createEvent(t, { ...BASIC, name: "a", ordering: 1 });
  await createEvent(t, { ...BASIC, name: "c", ordering: 10 });
  const list = await jsonOf(await t.asAdmin("GET", "/event/"));
  assert.deepEqual(list.body.result.value.map((d: { name: string }) => d.name), ["a", "b", "c"]);
  await t.close();
});

Deno.test("POST /event/enable|disable/<id> toggle active; unknown id → 404/601", async () => {
  const t = await createTestApp();
  const id = (await createEvent(t, BASIC)).body.result.value;
  const dis = await jsonOf(await t.asAdmin("POST", `/event/disable/${id}`));
  assert.equal(dis.status, 200);
  assert.equal(dis.body.result.value, id);
  let def = (await jsonOf(await t.asAdmin("GET", `/event/${id}`))).body.result.value[0];
  assert.equal(def.active, false);
  await t.asAdmin("POST", `/event/enable/${id}`);
  def = (await jsonOf(await t.asAdmin("GET", `/event/${id}`))).body.result.value[0];
  assert.equal(def.active, true);
  for (const path of ["/event/enable/999", "/event/disable/999"]) {
    const nf = await jsonOf(await t.asAdmin("POST", path));
    assert.equal(nf.status, 404);
    assert.equal(nf.body.result.error.code, 601);
    assert.equal(nf.body.result.error.message, "The requested EventHandler could not be found.");
  }
  await t.close();
});

Deno.test("DELETE /event/<id> deletes; unknown → 404/601", async () => {
  const t = await createTestApp();
  const id = (await createEvent(t, BASIC)).body.result.value;
  const del = await jsonOf(await t.asAdmin("DELETE", `/event/${id}`));
  assert.equal(del.status, 200);
  assert.equal(del.body.result.value, id);
  assert.deepEqual((await jsonOf(await t.asAdmin("GET", "/event/"))).body.result.value, []);
  const again = await jsonOf(await t.asAdmin("DELETE", `/event/${id}`));
  assert.equal(again.status, 404);
  assert.equal(again.body.result.error.code, 601);
  await t.close();
});

Deno.test("GET /event/available lists every event name once", async () => {
  const t = await createTestApp();
  const { status, body } = await jsonOf(await t.asAdmin("GET", "/event/available"));
  assert.equal(status, 200);
  const names: string[] = body.result.value;
  assert.equal(new Set(names).size, names.length);
  for (
    const n of [
      "auth",
      "validate_check",
      "token_init",
      "token_delete",
      "user_add",
      "subscription_status",
    ]
  ) {
    assert.ok(names.includes(n), n);
  }
  assert.ok(!names.includes("policy_set"));
  await t.close();
});

Deno.test("GET /event/handlermodules lists the implemented modules in upstream order", async () => {
  const t = await createTestApp();
  const { body } = await jsonOf(await t.asAdmin("GET", "/event/handlermodules"));
  assert.deepEqual(body.result.value, [
    "UserNotification",
    "Token",
    "Script",
    "Federation",
    "Counter",
    "RequestMangler",
    "ResponseMangler",
    "Logging",
    "CustomUserAttributes",
    "WebHook",
    "Container",
  ]);
  await t.close();
});

Deno.test("GET /event/actions/<module> gives option definitions; unknown module → []", async () => {
  const t = await createTestApp();
  const counter = (await jsonOf(await t.asAdmin("GET", "/event/actions/Counter"))).body;
  assert.deepEqual(Object.keys(counter.result.value).sort(), [
    "decrease_counter",
    "increase_counter",
    "reset_counter",
  ]);
  assert.equal(counter.result.value.increase_counter.counter_name.type, "str");
  assert.equal(counter.result.value.increase_counter.counter_name.required, true);
  const logging = (await jsonOf(await t.asAdmin("GET", "/event/actions/Logging"))).body;
  assert.equal(logging.result.value.logging.level.default, "INFO");
  const token = (await jsonOf(await t.asAdmin("GET", "/event/actions/Token"))).body;
  assert.deepEqual(token.result.value.disable, {});
  const webhook = (await jsonOf(await t.asAdmin("GET", "/event/actions/WebHook"))).body;
  assert.equal(webhook.result.value.post_webhook.URL.required, true);
  const unknown = (await jsonOf(await t.asAdmin("GET", "/event/actions/Nope"))).body;
  assert.deepEqual(unknown.result.value, []);
  await t.close();
});

Deno.test("GET /event/actions/UserNotification offers the SMTP server ids", async () => {
  const t = await createTestApp();
  await t.asAdmin("POST", "/smtpserver/mail1", { body: { server: "localhost" } });
  const { body } = await jsonOf(await t.asAdmin("GET", "/event/actions/UserNotification"));
  assert.deepEqual(body.result.value.sendmail.emailconfig.value, ["mail1"]);
  assert.equal(body.result.value.sendmail.To.required, true);
  await t.close();
});

Deno.test("GET /event/actions/Script lists the scripts of the script directory", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir();
  t.deps.config.events.scriptDir = dir;
  await Deno.writeTextFile(`${dir}/notify.sh`, "#!/bin/sh\n");
  const { body } = await jsonOf(await t.asAdmin("GET", "/event/actions/Script"));
  assert.deepEqual(Object.keys(body.result.value), ["notify.sh"]);
  assert.deepEqual(body.result.value["notify.sh"].background.value, ["background", "wait"]);
  t.deps.config.events.scriptDir = `${dir}/missing`;
  const bad = await jsonOf(await t.asAdmin("GET", "/event/actions/Script"));
  assert.equal(bad.status, 400);
  assert.equal(bad.body.result.error.code, 302);
  assert.match(bad.body.result.error.message, /Unable to open script directory/);
  await Deno.remove(dir, { recursive: true });
  await t.close();
});

Deno.test("GET /event/conditions/<module> is the same for every module; unknown → []", async () => {
  const t = await createTestApp();
  const a = (await jsonOf(await t.asAdmin("GET", "/event/conditions/Token"))).body.result.value;
  const b = (await jsonOf(await t.asAdmin("GET", "/event/conditions/Logging"))).body.result.value;
  assert.deepEqual(a, b);
  assert.deepEqual(a.result_value, {
    type: "str",
    desc: a.result_value.desc,
    group: "general",
    value: ["True", "False"],
  });
  assert.equal(a.serial.type, "regexp");
  assert.equal(a.failcounter.group, "token");
  const unknown = (await jsonOf(await t.asAdmin("GET", "/event/conditions/Nope"))).body;
  assert.deepEqual(unknown.result.value, []);
  await t.close();
});

Deno.test("GET /event/positions/<module> and /event/defaults/<module>", async () => {
  const t = await createTestApp();
  const pos = async (m: string) =>
    (await jsonOf(await t.asAdmin("GET", `/event/positions/${m}`))).body.result.value;
  assert.deepEqual(await pos("Token"), ["post", "pre"]);
  assert.deepEqual(await pos("ResponseMangler"), ["post"]);
  assert.deepEqual(await pos("Nope"), []);
  const def = async (m: string) =>
    (await jsonOf(await t.asAdmin("GET", `/event/defaults/${m}`))).body.result.value;
  assert.deepEqual(await def("Token"), { abort_on_error: false });
  assert.deepEqual(await pos("Federation"), ["post"]);
  assert.deepEqual(await def("Federation"), { abort_on_error: true });
  assert.equal(await def("Nope"), false);
  await t.close();
});

Deno.test("POST /event bounds options and survives parallel creates with one id", async () => {
  const t = await createTestApp();
  const big = await createEvent(t, { ...BASIC, "option.body": "x".repeat(10_001) });
  assert.equal(big.status, 400);
  assert.equal(big.body.result.error.code, 905);
  const results = await Promise.all(
    Array.from({ length: 5 }, (_, i) => createEvent(t, { ...BASIC, id: 5, name: `p${i}` })),
  );
  for (const r of results) {
    assert.equal(r.status, 200);
    assert.equal(r.body.result.value, 5);
  }
  const list = await jsonOf(await t.asAdmin("GET", "/event/"));
  assert.equal(list.body.result.value.length, 1);
  await t.close();
});
