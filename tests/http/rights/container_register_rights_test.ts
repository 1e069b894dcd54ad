/**
 * Rights of the smartphone registration routes: `POST /container/register/initialize` needs
 * `container_register` (with `rollover`: `container_rollover`) and
 * `POST /container/register/<serial>/terminate` `container_unregister`, reaching the
 * container's owner or realms; a user acts only on their own container; no JWT is 401. The
 * app's own routes take no JWT (their signatures are checked in container_register_test.ts).
 * Refusals change nothing (state read back).
 */
import assert from "node:assert/strict";
import { jsonOf, type TestApp } from "../../test_app.ts";
import { createUsers } from "../../fixtures/users.ts";
import { savePolicy } from "../../../src/domain/policy/mod.ts";
import { issueJwt } from "../../../src/http/jwt.ts";
import {
  containerInfoValue,
  createContainer,
  getContainer,
  setInternalContainerInfo,
} from "../../../src/domain/container/mod.ts";
import { challengesOfSerial } from "../../../src/domain/challenge/mod.ts";
import { resolveUser } from "../../../src/domain/user/mod.ts";
import { appWithAlice } from "../_challenge_types.ts";

interface World {
  t: TestApp;
  /** alice's container (realm1) and carol's (realm2). */
  mine: string;
  other: string;
}

async function world(): Promise<World> {
  const t = await appWithAlice();
  await createUsers(t.deps, { realm: "realm2", users: [{ login: "carol", password: "carolpw" }] });
  await savePolicy(t.deps, "phone", {
    scope: "container",
    action: "privacyIDEA_server_url=https://mfa.example.com/",
  });
  const alice = await resolveUser(t.deps, "alice", "realm1");
  const carol = await resolveUser(t.deps, "carol", "realm2");
  const mine = await createContainer(t.deps, { type: "smartphone", owner: alice });
  const other = await createContainer(t.deps, { type: "smartphone", owner: carol });
  return { t, mine: mine.serial, other: other.serial };
}

async function userJwt(t: TestApp, username: string, realm: string): Promise<string> {
  return (await issueJwt(t.deps, {
    username,
    realm,
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  })).token;
}

async function initialize(t: TestApp, serial: string, token?: string, rollover = false) {
  const body = { container_serial: serial, ...(rollover ? { rollover: 1 } : {}) };
  const res = token === undefined
    ? await t.asAdmin("POST", "/container/register/initialize", { body })
    : await t.request("POST", "/container/register/initialize", { body, token });
  return await jsonOf(res);
}

async function state(t: TestApp, serial: string) {
  const c = await getContainer(t.deps, serial);
  return {
    registration: containerInfoValue(c, "registration_state"),
    challenges: (await challengesOfSerial(t.deps, serial)).length,
  };
}

Deno.test("container registration rights: an admin of realm1 registers realm1's containers, not realm2's", async () => {
  const { t, mine, other } = await world();
  try {
    await savePolicy(t.deps, "helpdesk", {
      scope: "admin",
      realm: "realm1",
      action: "container_register, container_unregister",
    });
    const ok = await initialize(t, mine);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const refused = await initialize(t, other);
    assert.equal(refused.status, 403);
    assert.equal(
      refused.body.result.error.message,
      "Admin actions are defined, but the action container_register is not allowed!",
    );
    assert.deepEqual(await state(t, other), { registration: undefined, challenges: 0 });

    // unregister: realm1 yes, realm2 no (carol's container registered meanwhile)
    await setInternalContainerInfo(t.deps, await getContainer(t.deps, other), {
      registration_state: "registered",
      public_key_client: "x",
    });
    const term = await jsonOf(await t.asAdmin("POST", `/container/register/${other}/terminate`));
    assert.equal(term.status, 403);
    assert.equal((await state(t, other)).registration, "registered");
    const own = await jsonOf(await t.asAdmin("POST", `/container/register/${mine}/terminate`));
    assert.equal(own.status, 200);
    assert.deepEqual(own.body.result.value, { success: true });
    assert.deepEqual(await state(t, mine), { registration: undefined, challenges: 0 });
  } finally {
    await t.close();
  }
});

Deno.test("container registration rights: a rollover needs container_rollover, not container_register", async () => {
  const { t, mine } = await world();
  try {
    await savePolicy(t.deps, "helpdesk", { scope: "admin", action: "container_register" });
    await setInternalContainerInfo(t.deps, await getContainer(t.deps, mine), {
      registration_state: "registered",
    });
    const refused = await initialize(t, mine, undefined, true);
    assert.equal(refused.status, 403);
    assert.equal(
      refused.body.result.error.message,
      "Admin actions are defined, but the action container_rollover is not allowed!",
    );
    assert.deepEqual(await state(t, mine), { registration: "registered", challenges: 0 });
    await savePolicy(t.deps, "helpdesk", {
      scope: "admin",
      action: "container_register, container_rollover",
    });
    const ok = await initialize(t, mine, undefined, true);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await state(t, mine)).registration, "rollover");
  } finally {
    await t.close();
  }
});

Deno.test("container registration rights: a user registers only their own container", async () => {
  const { t, mine, other } = await world();
  try {
    const token = await userJwt(t, "alice", "realm1");
    const ok = await initialize(t, mine, token);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const refused = await initialize(t, other, token);
    assert.equal(refused.status, 403);
    assert.deepEqual(await state(t, other), { registration: undefined, challenges: 0 });
    const term = await jsonOf(
      await t.request("POST", `/container/register/${other}/terminate`, { token }),
    );
    assert.equal(term.status, 403);

    // with user policies: the action must be granted
    await savePolicy(t.deps, "users", { scope: "user", action: "container_list" });
    const denied = await initialize(t, mine, token);
    assert.equal(denied.status, 403);
    assert.equal(
      denied.body.result.error.message,
      "User actions are defined, but the action container_register is not allowed!",
    );
  } finally {
    await t.close();
  }
});

Deno.test("container registration rights: no JWT is 401; an unknown container is 404", async () => {
  const { t, mine } = await world();
  try {
    const anon = await jsonOf(
      await t.request("POST", "/container/register/initialize", {
        body: { container_serial: mine },
      }),
    );
    assert.equal(anon.status, 401);
    const anonTerm = await jsonOf(
      await t.request("POST", `/container/register/${mine}/terminate`),
    );
    assert.equal(anonTerm.status, 401);
    assert.deepEqual(await state(t, mine), { registration: undefined, challenges: 0 });
    const unknown = await initialize(t, "SMPH9999");
    assert.equal(unknown.status, 404);
    const missing = await jsonOf(
      await t.asAdmin("POST", "/container/register/initialize", { body: {} }),
    );
    assert.equal(missing.status, 400);
    assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: container_serial");
  } finally {
    await t.close();
  }
});
