/**
 * The `/container/…` routes fire their `container_*` events: the Container handler acts on
 * the container of the answer (`container_init`) or of the path (`/container/<serial>/…`),
 * gated by the container conditions; state read back over HTTP.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp } from "../fixtures/tokens.ts";
import { challengesOfTransaction, createChallenges } from "../../src/domain/challenge/mod.ts";
import { findContainer, setInternalContainerInfo } from "../../src/domain/container/mod.ts";
import { loadSystemConfig } from "../../src/domain/system_config/mod.ts";

async function call(t: TestApp, method: string, path: string, body?: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin(method, path, { body, json: true }));
}

async function addEvent(t: TestApp, body: Record<string, unknown>): Promise<void> {
  const res = await call(t, "POST", "/event", body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function containerOf(t: TestApp, serial: string) {
  const res = await call(t, "GET", `/container/?container_serial=${serial}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.containers[0];
}

Deno.test("container_init: the Container handler acts on the new container of the answer", async () => {
  const t = await createTestApp();
  try {
    await addEvent(t, {
      name: "tag generic",
      event: "container_init",
      handlermodule: "Container",
      action: "add container info",
      "option.key": "origin",
      "option.value": "event",
      conditions: { container_type: "generic" },
    });
    const generic = await call(t, "POST", "/container/init", { type: "generic" });
    assert.equal(generic.status, 200, JSON.stringify(generic.body));
    const g = await containerOf(t, generic.body.result.value.container_serial);
    assert.equal(g.info.origin, "event");
    const phone = await call(t, "POST", "/container/init", { type: "smartphone" });
    const p = await containerOf(t, phone.body.result.value.container_serial);
    assert.equal(p.info.origin, undefined, "the condition did not hold");
    const events = (await call(t, "GET", "/event/available")).body.result.value;
    assert.ok(events.includes("container_init") && events.includes("container_assign"));
  } finally {
    await t.close();
  }
});

Deno.test("/container/<serial>/… events: the handler acts on the path's container", async () => {
  const t = await createTestApp();
  try {
    await createUsers(t.deps, { realm: "staff", users: [{ login: "alice", password: "a-pass" }] });
    await addEvent(t, {
      name: "lock unowned",
      event: "container_add_token",
      handlermodule: "Container",
      action: "disable all tokens",
      conditions: { container_has_owner: "False" },
    });
    await addEvent(t, {
      name: "mark owned",
      event: "container_assign",
      handlermodule: "Container",
      action: "add states",
      "option.lost": "True",
      conditions: { container_has_owner: "True", container_state: "active" },
    });
    const init = await call(t, "POST", "/container/init", { type: "generic" });
    const serial = init.body.result.value.container_serial;
    const hotp = await enrollHotp(t, {});
    const add = await call(t, "POST", `/container/${serial}/add`, { serial: hotp });
    assert.equal(add.status, 200, JSON.stringify(add.body));
    const token = await call(t, "GET", `/token/?serial=${hotp}`);
    assert.equal(token.body.result.value.tokens[0].active, false);
    assert.equal(token.body.result.value.tokens[0].container_serial, serial);
    const assign = await call(t, "POST", `/container/${serial}/assign`, {
      user: "alice",
      realm: "staff",
    });
    assert.equal(assign.status, 200, JSON.stringify(assign.body));
    const c = await containerOf(t, serial);
    assert.deepEqual([...c.states].sort(), ["active", "lost"]);
    assert.equal(c.users[0].user_name, "alice");
  } finally {
    await t.close();
  }
});

Deno.test("Token enroll with option container puts the new token into the request's container", async () => {
  const t = await createTestApp();
  try {
    await addEvent(t, {
      name: "second factor",
      event: "container_init",
      handlermodule: "Token",
      action: "enroll",
      "option.tokentype": "hotp",
      "option.container": "True",
    });
    await addEvent(t, {
      name: "without container",
      event: "container_set_description",
      handlermodule: "Token",
      action: "enroll",
      "option.tokentype": "totp",
    });
    const init = await call(t, "POST", "/container/init", { type: "generic" });
    const serial = init.body.result.value.container_serial;
    const c = await containerOf(t, serial);
    assert.equal(c.tokens.length, 1);
    assert.equal(c.tokens[0].tokentype, "hotp");
    const described = await call(t, "POST", `/container/${serial}/description`, {
      description: "d",
    });
    assert.equal(described.status, 200, JSON.stringify(described.body));
    // the option is off: the new TOTP token is made outside the container
    const totp = await call(t, "GET", "/token/?type=totp");
    assert.equal(totp.body.result.value.count, 1);
    assert.equal(totp.body.result.value.tokens[0].container_serial, "");
    assert.equal((await containerOf(t, serial)).tokens.length, 1);
  } finally {
    await t.close();
  }
});

Deno.test("challenge conditions look at the container's challenge when no token is named", async () => {
  const t = await createTestApp();
  try {
    await addEvent(t, {
      name: "fresh challenge",
      event: "container_set_description",
      handlermodule: "Container",
      action: "add container info",
      "option.key": "challenged",
      "option.value": "yes",
      conditions: { challenge_expired: "False" },
    });
    const init = await call(t, "POST", "/container/init", { type: "smartphone" });
    const serial = init.body.result.value.container_serial;
    const { transactionId } = await createChallenges(t.deps, await loadSystemConfig(t.deps), [
      { serial, type: "container", message: "", validity: 120 },
    ]);
    const other = await call(t, "POST", `/container/${serial}/description`, {
      description: "a",
      transaction_id: "00000000000000000001",
    });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.equal((await containerOf(t, serial)).info.challenged, undefined);
    const same = await call(t, "POST", `/container/${serial}/description`, {
      description: "b",
      transaction_id: transactionId,
    });
    assert.equal(same.status, 200, JSON.stringify(same.body));
    assert.equal((await containerOf(t, serial)).info.challenged, "yes");
  } finally {
    await t.close();
  }
});

Deno.test("Container unregister ends a smartphone's registration; other types fail the action", async () => {
  const t = await createTestApp();
  try {
    await addEvent(t, {
      name: "forget the phone",
      event: "container_set_description",
      handlermodule: "Container",
      action: "unregister",
    });
    const phone = (await call(t, "POST", "/container/init", { type: "smartphone" })).body.result
      .value.container_serial;
    const c = (await findContainer(t.deps, phone))!;
    await setInternalContainerInfo(t.deps, c, {
      registration_state: "registered",
      public_key_client: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
      server_url: "https://tessera.example/",
    });
    const { transactionId } = await createChallenges(t.deps, await loadSystemConfig(t.deps), [
      { serial: phone, type: "container", message: "", validity: 120 },
    ]);
    const res = await call(t, "POST", `/container/${phone}/description`, { description: "x" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const info = (await containerOf(t, phone)).info;
    assert.equal(info.registration_state, undefined);
    assert.equal(info.server_url, undefined);
    assert.ok(info.creation_date, "other info stays");
    assert.deepEqual(await challengesOfTransaction(t.deps, transactionId, [phone]), []);
    const generic = (await call(t, "POST", "/container/init", { type: "generic" })).body.result
      .value.container_serial;
    const other = await call(t, "POST", `/container/${generic}/description`, { description: "y" });
    assert.equal(other.status, 200, "the request goes on");
    await t.deps.audit.flush();
    const rows = await t.deps.db.selectFrom("audit").select(["info", "success"])
      .where("action", "=", "POST-EVENT container_set_description>>Container:unregister")
      .orderBy("id").execute();
    assert.deepEqual(rows.map((r) => [r.info, r.success]), [
      [`forget the phone (${phone})`, 1],
      ["forget the phone (NotImplementedError)", 0],
    ]);
  } finally {
    await t.close();
  }
});
