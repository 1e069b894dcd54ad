import assert from "node:assert/strict";
import { jsonOf, type TestApp } from "../../test_app.ts";
import { addEvent, createEventTestApp } from "./_helpers.ts";
import { createUsers } from "../../fixtures/users.ts";
import { resolveUser } from "../../../src/domain/user/mod.ts";
import {
  addTokenToContainer,
  type Container,
  createContainer,
  findContainer,
  listContainers,
  setContainerInfo,
} from "../../../src/domain/container/mod.ts";
import { findTokenBySerial } from "../../../src/domain/token/mod.ts";

// RFC 4226 test key
const OTPKEY = "3132333435363738393031323334353637383930";

async function appWithAlice(): Promise<TestApp> {
  const t = await createEventTestApp();
  await createUsers(t.deps, {
    realm: "r1",
    users: [{ login: "alice", password: "alice-pw" }, { login: "bob", password: "bob-pw" }],
  });
  return t;
}

async function initToken(t: TestApp, serial: string, user?: string) {
  const body: Record<string, unknown> = { type: "hotp", serial, otpkey: OTPKEY, pin: "" };
  if (user) Object.assign(body, { user, realm: "r1" });
  const res = await jsonOf(await t.asAdmin("POST", "/token/init", { body }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** A container holding the tokens `serials` (made through the domain module). */
async function containerWith(
  t: TestApp,
  serial: string,
  serials: string[],
  owner?: string,
): Promise<Container> {
  const ref = owner ? await resolveUser(t.deps, owner, "r1") : undefined;
  const c = await createContainer(t.deps, { type: "generic", serial, owner: ref });
  for (const s of serials) {
    const token = await findTokenBySerial(t.deps, s);
    await addTokenToContainer(t.deps, c, token!);
  }
  return (await findContainer(t.deps, serial))!;
}

async function tokenOf(t: TestApp, serial: string) {
  const res = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
  return res.body.result.value.tokens[0];
}

async function eventAudit(t: TestApp) {
  await t.deps.audit.flush();
  const rows = await t.deps.db.selectFrom("audit").selectAll()
    .where("action", "like", "%-EVENT%").orderBy("id").execute();
  return rows.map((r) => [r.action, r.info, r.success]);
}

Deno.test("the Container module is listed with its actions, positions and conditions", async () => {
  const t = await createEventTestApp();
  const get = async (path: string) => (await jsonOf(await t.asAdmin("GET", path))).body;
  const modules = (await get("/event/handlermodules")).result.value;
  assert.equal(modules.at(-1), "Container");
  assert.deepEqual((await get("/event/positions/Container")).result.value, ["post", "pre"]);
  const actions = (await get("/event/actions/Container")).result.value;
  assert.deepEqual(Object.keys(actions), [
    "create",
    "delete",
    "unassign",
    "assign",
    "set states",
    "add states",
    "set description",
    "remove all tokens",
    "set container info",
    "add container info",
    "delete container info",
    "disable all tokens",
    "enable all tokens",
    "unregister",
  ]);
  assert.deepEqual(actions.create.type.value, ["generic", "smartphone", "yubikey"]);
  assert.equal(actions.create.type.required, true);
  assert.deepEqual(Object.keys(actions["set states"]), ["active", "disabled", "lost", "damaged"]);
  assert.equal(actions["set states"].lost.type, "bool");
  const conditions = (await get("/event/conditions/Container")).result.value;
  assert.deepEqual(conditions.container_exact_state.value, [
    { name: "active" },
    { name: "disabled" },
    { name: "lost" },
    { name: "damaged" },
  ]);
  assert.deepEqual(conditions.container_type.value, ["generic", "smartphone", "yubikey"]);
  assert.equal((await get("/event/defaults/Container")).result.value.abort_on_error, false);
  const events: string[] = (await get("/event/available")).result.value;
  for (const name of ["container_init", "container_add_token", "container_delete"]) {
    assert.ok(events.includes(name), name);
  }
  await t.close();
});

Deno.test("Container create after /token/init: an owned container holding the new token", async () => {
  const t = await appWithAlice();
  await addEvent(t, {
    name: "box it",
    event: "token_init",
    handlermodule: "Container",
    action: "create",
    "option.type": "generic",
    "option.description": "made by an event",
    "option.user": "True",
    "option.token": "True",
  });
  await initToken(t, "HOTPA", "alice");
  const alice = (await resolveUser(t.deps, "alice", "r1"))!;
  const list = await listContainers(t.deps, { owner: { uid: alice.uid, realm: "r1" } });
  assert.equal(list.containers.length, 1);
  const c = list.containers[0];
  assert.equal(c.type, "generic");
  assert.equal(c.description, "made by an event");
  assert.match(c.serial, /^CONT0000[0-9A-F]{4}$/);
  assert.deepEqual(c.tokens.map((x) => x.serial), ["HOTPA"]);
  assert.equal(c.owner?.login, "alice");
  assert.deepEqual(c.realms, ["r1"]);
  assert.deepEqual(c.states, ["active"]);
  assert.deepEqual(await eventAudit(t), [
    ["POST-EVENT token_init>>Container:create", `box it (${c.serial})`, 1],
  ]);
  await t.close();
});

Deno.test("Container actions on the token's container, gated by container conditions", async () => {
  const t = await appWithAlice();
  await initToken(t, "HA");
  await initToken(t, "HB");
  await containerWith(t, "CONTX", ["HA", "HB"]);
  // 1: a failed check marks the container lost and disabled
  await addEvent(t, {
    name: "mark",
    event: "validate_check",
    handlermodule: "Container",
    action: "set states",
    ordering: 1,
    "option.disabled": "True",
    "option.lost": "True",
    "option.active": "False",
    conditions: { result_value: "False", container_state: "active", container_has_token: "True" },
  });
  // 2: then (exactly these states) every token of it is disabled
  await addEvent(t, {
    name: "lock",
    event: "validate_check",
    handlermodule: "Container",
    action: "disable all tokens",
    ordering: 2,
    conditions: { container_exact_state: "disabled,lost", container_type: "generic" },
  });
  // never: the container is not a smartphone
  await addEvent(t, {
    name: "phones only",
    event: "validate_check",
    handlermodule: "Container",
    action: "set description",
    "option.description": "phone",
    conditions: { container_type: "smartphone" },
  });
  // a correct OTP: nothing happens
  const good = await jsonOf(await t.post("/validate/check", { serial: "HA", pass: "755224" }));
  assert.equal(good.body.result.value, true);
  let c = (await findContainer(t.deps, "CONTX"))!;
  assert.deepEqual(c.states, ["active"]);
  const bad = await jsonOf(await t.post("/validate/check", { serial: "HA", pass: "000000" }));
  assert.equal(bad.body.result.value, false);
  c = (await findContainer(t.deps, "CONTX"))!;
  assert.deepEqual([...c.states].sort(), ["disabled", "lost"]);
  assert.equal(c.description, "");
  assert.equal((await tokenOf(t, "HA")).active, false);
  assert.equal((await tokenOf(t, "HB")).active, false);
  assert.deepEqual(await eventAudit(t), [
    ["POST-EVENT validate_check>>Container:set states", "mark (CONTX)", 1],
    ["POST-EVENT validate_check>>Container:disable all tokens", "lock (CONTX)", 1],
  ]);
  await t.close();
});

Deno.test("Container info actions: internal keys are kept and cannot be added", async () => {
  const t = await appWithAlice();
  await initToken(t, "HI");
  const c = await containerWith(t, "CONTI", ["HI"]);
  await setContainerInfo(t.deps, c, "old", "1");
  await addEvent(t, {
    name: "replace",
    event: "token_disable",
    handlermodule: "Container",
    action: "set container info",
    ordering: 1,
    "option.key": "disabled_by",
    "option.value": "event",
  });
  await addEvent(t, {
    name: "internal",
    event: "token_disable",
    handlermodule: "Container",
    action: "add container info",
    ordering: 2,
    "option.key": "creation_date",
    "option.value": "forged",
  });
  const res = await jsonOf(await t.asAdmin("POST", "/token/disable/HI"));
  assert.equal(res.status, 200);
  const after = (await findContainer(t.deps, "CONTI"))!;
  const info = Object.fromEntries(after.info.map((i) => [i.key, i.value]));
  assert.deepEqual(Object.keys(info).sort(), ["creation_date", "disabled_by"]);
  assert.equal(info.disabled_by, "event");
  assert.notEqual(info.creation_date, "forged");
  assert.deepEqual(await eventAudit(t), [
    ["POST-EVENT token_disable>>Container:set container info", "replace (CONTI)", 1],
    ["POST-EVENT token_disable>>Container:add container info", "internal (PolicyError)", 0],
  ]);
  // delete container info leaves only the internal keys
  await addEvent(t, {
    name: "clear",
    event: "token_enable",
    handlermodule: "Container",
    action: "delete container info",
  });
  await (await t.asAdmin("POST", "/token/enable/HI")).body?.cancel();
  const cleared = (await findContainer(t.deps, "CONTI"))!;
  assert.deepEqual(cleared.info.map((i) => i.key), ["creation_date"]);
  await t.close();
});

Deno.test("Container unassign, assign, remove all tokens and delete", async () => {
  const t = await appWithAlice();
  await initToken(t, "HU", "alice");
  await containerWith(t, "CONTU", ["HU"], "alice");
  await addEvent(t, {
    name: "drop owner",
    event: "token_unassign",
    handlermodule: "Container",
    action: "unassign",
    position: "pre",
  });
  const un = await jsonOf(await t.asAdmin("POST", "/token/unassign", { body: { serial: "HU" } }));
  assert.equal(un.status, 200, JSON.stringify(un.body));
  assert.equal((await findContainer(t.deps, "CONTU"))!.owner, undefined);
  // assign: the request user becomes the owner
  await addEvent(t, {
    name: "take owner",
    event: "token_assign",
    handlermodule: "Container",
    action: "assign",
  });
  const as = await jsonOf(
    await t.asAdmin("POST", "/token/assign", { body: { serial: "HU", user: "bob", realm: "r1" } }),
  );
  assert.equal(as.status, 200, JSON.stringify(as.body));
  assert.equal((await findContainer(t.deps, "CONTU"))!.owner?.login, "bob");
  await addEvent(t, {
    name: "empty",
    event: "token_set",
    handlermodule: "Container",
    action: "remove all tokens",
  });
  await (await t.asAdmin("POST", "/token/description/HU", { body: { description: "x" } })).body
    ?.cancel();
  assert.deepEqual((await findContainer(t.deps, "CONTU"))!.tokens, []);
  // no container any more (the token left it): the action reports failure
  await addEvent(t, {
    name: "gone",
    event: "token_resync",
    handlermodule: "Container",
    action: "delete",
  });
  await (await t.asAdmin("POST", "/token/resync/HU", { body: { otp1: "1", otp2: "2" } })).body
    ?.cancel();
  assert.ok(await findContainer(t.deps, "CONTU"));
  // named by container_serial: deleted (its token stays)
  await (await t.asAdmin("POST", "/token/resync/HU", {
    body: { otp1: "1", otp2: "2", container_serial: "contu" },
  })).body?.cancel();
  assert.equal(await findContainer(t.deps, "CONTU"), undefined);
  assert.ok(await tokenOf(t, "HU"));
  const audit = (await eventAudit(t)).filter((r) => String(r[0]).includes("delete"));
  assert.deepEqual(audit, [
    ["POST-EVENT token_resync>>Container:delete", "gone", 0],
    ["POST-EVENT token_resync>>Container:delete", "gone (CONTU)", 1],
  ]);
  await t.close();
});

Deno.test("a user-role request cannot make a Container handler act on another's container", async () => {
  const t = await appWithAlice();
  await initToken(t, "HAL", "alice");
  await initToken(t, "HBO", "bob");
  await containerWith(t, "CONTBOB", ["HBO"], "bob");
  await containerWith(t, "CONTAL", ["HAL"], "alice");
  await addEvent(t, {
    name: "wipe",
    event: "token_disable",
    handlermodule: "Container",
    action: "delete",
    position: "pre",
  });
  const login = await jsonOf(await t.post("/auth", { username: "alice@r1", password: "alice-pw" }));
  const token = login.body.result.value.token;
  const res = await t.request("POST", "/token/disable/HAL", {
    token,
    body: { container_serial: "CONTBOB" },
  });
  await res.body?.cancel();
  assert.ok(await findContainer(t.deps, "CONTBOB"), "bob's container stays");
  // the user's own container (of the token) is the one acted on
  const own = await t.request("POST", "/token/disable/HAL", { token });
  await own.body?.cancel();
  assert.equal(await findContainer(t.deps, "CONTAL"), undefined);
  await t.close();
});

Deno.test("token_is_in_container and user_container_number conditions", async () => {
  const t = await appWithAlice();
  await initToken(t, "HC1", "alice");
  await initToken(t, "HC2", "alice");
  await containerWith(t, "CONTC", ["HC1"], "alice");
  await addEvent(t, {
    name: "in",
    event: "token_disable",
    handlermodule: "Token",
    action: "set tokeninfo",
    "option.key": "in_container",
    "option.value": "yes",
    conditions: { token_is_in_container: "True", user_container_number: "==1" },
  });
  for (const serial of ["HC1", "HC2"]) {
    await (await t.asAdmin("POST", "/token/disable", { body: { serial } })).body?.cancel();
  }
  assert.equal((await tokenOf(t, "HC1")).info.in_container, "yes");
  assert.equal((await tokenOf(t, "HC2")).info.in_container, undefined);
  await t.close();
});
