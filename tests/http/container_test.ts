/**
 * `/container/…` (spec 13 §2.5, without registration/synchronisation) over real HTTP handling:
 * values, errors, and refusals that change nothing.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enroll, enrollHotp, hotp } from "../fixtures/tokens.ts";
import { findContainer, listContainers } from "../../src/domain/container/mod.ts";
import { deletePolicy, savePolicy } from "../../src/domain/policy/mod.ts";

async function setup(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "staff", users: [{ login: "alice", password: "a-pass" }] });
  await createUsers(t.deps, { realm: "sales", users: [{ login: "sam", password: "s-pass" }] });
  return t;
}

async function call(t: TestApp, method: string, path: string, body?: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin(method, path, { body, json: true }));
}

Deno.test("POST /container/init, GET /container/: created as asked, listed in privacyIDEA's shape", async () => {
  const t = await setup();
  try {
    const init = await call(t, "POST", "/container/init", {
      type: "smartphone",
      description: "Phone",
      user: "alice",
      realm: "staff",
    });
    assert.equal(init.status, 200, JSON.stringify(init.body));
    const serial = init.body.result.value.container_serial;
    assert.match(serial, /^SMPH0000[0-9A-F]{4}$/);
    const hotp = await enrollHotp(t, { user: "alice", realm: "staff" });
    const add = await call(t, "POST", `/container/${serial}/add`, { serial: hotp });
    assert.equal(add.body.result.value, true);
    const list = await call(t, "GET", "/container/");
    assert.equal(list.status, 200);
    const [c] = list.body.result.value.containers;
    assert.deepEqual({ ...c, tokens: undefined }, {
      type: "smartphone",
      serial,
      description: "Phone",
      last_authentication: null,
      last_synchronization: null,
      states: ["active"],
      info: { creation_date: "2026-01-01T00:00:00+00:00" },
      internal_info_keys: ["creation_date"],
      template: "",
      realms: ["staff"],
      users: [{
        user_realm: "staff",
        user_resolver: "sql-staff",
        user_name: "alice",
        user_id: c.users[0].user_id,
      }],
      tokens: undefined,
    });
    assert.equal(c.tokens.length, 1);
    assert.equal(c.tokens[0].serial, hotp);
    assert.equal(c.tokens[0].container_serial, serial);
    assert.equal(c.tokens[0].username, "alice");
    // no_token=1: no tokens key; paging fields only when paginated
    const noToken = await call(t, "GET", "/container/?no_token=1");
    assert.equal("tokens" in noToken.body.result.value.containers[0], false);
    assert.equal("count" in noToken.body.result.value, false);
    const paged = await call(t, "GET", "/container/?pagesize=1&type=smart*");
    assert.deepEqual(
      { ...paged.body.result.value, containers: paged.body.result.value.containers.length },
      { containers: 1, count: 1, current: 1, next: null, prev: null },
    );
    // the realm alone puts it in the realm; a user alone (default realm none) nothing more
    const realmOnly = await call(t, "POST", "/container/init", { type: "generic", realm: "sales" });
    const r = await findContainer(t.deps, realmOnly.body.result.value.container_serial);
    assert.deepEqual(r?.realms, ["sales"]);
    assert.equal(r?.owner, undefined);
    // errors: no type, unknown type, existing serial (any case), both template forms
    for (
      const [body, code, message] of [
        [{}, 404, "ERR404: Type parameter is required!"],
        [{ type: "phone" }, 404, "ERR404: Type 'phone' is not a valid type!"],
        [
          { type: "generic", container_serial: serial.toLowerCase() },
          404,
          `ERR404: Container with serial ${serial.toLowerCase()} already exists!`,
        ],
        [
          { type: "generic", template: { name: "x" }, template_name: "x" },
          905,
          "ERR905: Both template and template_name are given. Choose only one!",
        ],
      ] as const
    ) {
      const res = await call(t, "POST", "/container/init", body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.result.error.code, code);
      assert.equal(res.body.result.error.message, message);
    }
    assert.equal((await listContainers(t.deps, {})).containers.length, 2);
  } finally {
    await t.close();
  }
});

Deno.test("/container/<serial>/add|addall|remove|removeall: moves tokens, reports per serial", async () => {
  const t = await setup();
  try {
    const a = (await call(t, "POST", "/container/init", { type: "generic" })).body.result.value
      .container_serial;
    const phone = (await call(t, "POST", "/container/init", { type: "smartphone" })).body.result
      .value.container_serial;
    const h1 = await enrollHotp(t);
    const h2 = await enrollHotp(t);
    const sp = (await enroll(t, { type: "spass", pin: "1234" })).serial;
    const all = await call(t, "POST", `/container/${phone}/addall`, {
      serial: `${h1},${sp},NOPE`,
    });
    assert.deepEqual(all.body.result.value, { [h1]: true, [sp]: false, NOPE: false });
    // a single add of an unsupported type: ERR905, nothing added
    const bad = await call(t, "POST", `/container/${phone}/add`, { serial: sp });
    assert.equal(bad.status, 400);
    assert.equal(
      bad.body.result.error.message,
      `ERR905: Token type spass not supported for container type smartphone. Supported types are ['daypassword', 'hotp', 'push', 'sms', 'totp'].`,
    );
    // adding to another container moves it
    assert.equal(
      (await call(t, "POST", `/container/${a}/add`, { serial: h1 })).body.result.value,
      true,
    );
    assert.deepEqual((await findContainer(t.deps, phone))?.tokens, []);
    assert.equal(
      (await call(t, "POST", `/container/${a}/add`, { serial: h1 })).body.result.value,
      false,
    );
    const unknown = await call(t, "POST", `/container/${a}/add`, { serial: "NOPE" });
    assert.equal(unknown.status, 404);
    const noSerial = await call(t, "POST", `/container/${a}/add`, {});
    assert.equal(noSerial.status, 400);
    assert.equal(noSerial.body.result.error.code, 905);
    const removeAll = await call(t, "POST", `/container/${a}/removeall`, { serial: `${h1},${h2}` });
    assert.deepEqual(removeAll.body.result.value, { [h1]: true, [h2]: false });
    const remove = await call(t, "POST", `/container/${a}/remove`, { serial: h1 });
    assert.equal(remove.body.result.value, false);
    const removeUnknown = await call(t, "POST", `/container/${a}/remove`, { serial: "NOPE" });
    assert.equal(removeUnknown.status, 404);
    assert.equal(removeUnknown.body.result.error.message, "Token with serial NOPE does not exist.");
    const missing = await call(t, "POST", "/container/CONTNOPE/add", { serial: h1 });
    assert.equal(missing.status, 404);
    assert.equal(
      missing.body.result.error.message,
      "Unable to find container with serial CONTNOPE.",
    );
    // deleting a container keeps its tokens; GET /token/ shows the membership
    await call(t, "POST", `/container/${a}/add`, { serial: h2 });
    const del = await call(t, "DELETE", `/container/${a}`);
    assert.equal(del.body.result.value, true);
    assert.equal(await findContainer(t.deps, a), undefined);
    const tokens = await call(t, "GET", `/token/?serial=${h2}`);
    assert.equal(tokens.body.result.value.tokens.length, 1);
  } finally {
    await t.close();
  }
});

Deno.test("/container/<serial>: assign, unassign, description, states, realms, info", async () => {
  const t = await setup();
  try {
    const s = (await call(t, "POST", "/container/init", { type: "generic" })).body.result.value
      .container_serial;
    const assign = await call(t, "POST", `/container/${s}/assign`, {
      user: "alice",
      realm: "staff",
    });
    assert.equal(assign.body.result.value, true);
    const again = await call(t, "POST", `/container/${s}/assign`, { user: "sam", realm: "sales" });
    assert.equal(again.status, 400);
    assert.equal(
      again.body.result.error.message,
      "ERR301: This container is already assigned to another user.",
    );
    const nobody = await call(t, "POST", `/container/${s}/assign`, { user: "zed", realm: "staff" });
    assert.equal(nobody.status, 400);
    assert.equal(nobody.body.result.error.code, 904);
    assert.equal((await findContainer(t.deps, s))?.owner?.login, "alice");

    const noUser = await call(t, "POST", `/container/${s}/unassign`, {});
    assert.equal(
      noUser.body.result.error.message,
      "ERR905: Missing one of the following parameters: ['user', 'user_id']",
    );
    const wrong = await call(t, "POST", `/container/${s}/unassign`, {
      user: "sam",
      realm: "sales",
    });
    assert.equal(wrong.body.result.value, false);
    const un = await call(t, "POST", `/container/${s}/unassign`, { user: "alice", realm: "staff" });
    assert.equal(un.body.result.value, true);
    assert.equal((await findContainer(t.deps, s))?.owner, undefined);

    assert.equal(
      (await call(t, "POST", `/container/${s}/description`, { description: "Desk" })).body.result
        .value,
      true,
    );
    const noDesc = await call(t, "POST", `/container/${s}/description`, {});
    assert.equal(noDesc.body.result.error.code, 905);
    assert.equal((await findContainer(t.deps, s))?.description, "Desk");

    const states = await call(t, "POST", `/container/${s}/states`, { states: "lost, disabled,x" });
    assert.deepEqual(states.body.result.value, { x: false, lost: true, disabled: true });
    const exclusive = await call(t, "POST", `/container/${s}/states`, {
      states: "active,disabled",
    });
    assert.equal(
      exclusive.body.result.error.message,
      "ERR905: The state list ['active', 'disabled'] contains exclusive states!",
    );
    const empty = await call(t, "POST", `/container/${s}/states`, { states: "" });
    assert.equal(empty.body.result.error.message, "ERR905: Parameter 'states' must not be empty");
    assert.deepEqual((await findContainer(t.deps, s))?.states, ["disabled", "lost"]);

    const realms = await call(t, "POST", `/container/${s}/realms`, { realms: "sales,nope" });
    assert.deepEqual(realms.body.result.value, { deleted: true, sales: true, nope: false });
    assert.deepEqual((await findContainer(t.deps, s))?.realms, ["sales"]);

    assert.equal(
      (await call(t, "POST", `/container/${s}/info/colour`, { value: "blue" })).body.result.value,
      true,
    );
    const internal = await call(t, "POST", `/container/${s}/info/creation_date`, { value: "x" });
    assert.equal(internal.status, 403);
    assert.equal(
      internal.body.result.error.message,
      "The key creation_date is an internal entry and can not be modified.",
    );
    const delInternal = await call(t, "DELETE", `/container/${s}/info/delete/creation_date`);
    assert.equal(delInternal.body.result.value, false);
    const info = (await findContainer(t.deps, s))?.info.map((i) => [i.key, i.value]);
    assert.deepEqual(info, [["creation_date", "2026-01-01T00:00:00+00:00"], ["colour", "blue"]]);
    assert.equal(
      (await call(t, "DELETE", `/container/${s}/info/delete/colour`)).body.result.value,
      true,
    );

    const types = await call(t, "GET", "/container/types");
    assert.deepEqual(Object.keys(types.body.result.value), ["generic", "smartphone", "yubikey"]);
    assert.deepEqual(types.body.result.value.yubikey.token_types, [
      "certificate",
      "hotp",
      "passkey",
      "webauthn",
      "yubico",
      "yubikey",
    ]);
    const stateTypes = await call(t, "GET", "/container/statetypes");
    assert.deepEqual(stateTypes.body.result.value, {
      active: ["disabled"],
      disabled: ["active"],
      lost: [],
      damaged: [],
    });
  } finally {
    await t.close();
  }
});

Deno.test("/container templates: create, update, list, compare, delete", async () => {
  const t = await setup();
  try {
    const created = await call(t, "POST", "/container/smartphone/template/phone", {
      template_options: { tokens: [{ type: "hotp", genkey: true }, { type: "totp" }] },
      default: true,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(typeof created.body.result.value.template_id, "number");
    const bad = await call(t, "POST", "/container/smartphone/template/bad", {
      template_options: { tokens: [{ type: "spass" }] },
    });
    assert.equal(
      bad.body.result.error.message,
      "ERR905: Unsupported token type spass for smartphone templates!",
    );
    const notDict = await call(t, "POST", "/container/generic/template/bad", {
      template_options: "[1]",
    });
    assert.equal(
      notDict.body.result.error.message,
      "ERR905: 'template_options' must be a dictionary!",
    );
    const list = await call(t, "GET", "/container/templates");
    assert.deepEqual(list.body.result.value.templates, [{
      name: "phone",
      container_type: "smartphone",
      template_options: { tokens: [{ type: "hotp", genkey: true }, { type: "totp" }] },
      default: true,
    }]);
    // a container made with the template name, then compared
    const s = (await call(t, "POST", "/container/init", {
      type: "generic",
      template_name: "phone",
    })).body.result.value.container_serial;
    // the template is of another type: ignored
    assert.equal((await findContainer(t.deps, s))?.templateName, "");
    const tt = await call(t, "GET", "/container/template/tokentypes");
    assert.deepEqual(tt.body.result.value.yubikey.token_types, ["hotp"]);
    // a template with tokens: they are enrolled into the new container (user: the owner's)
    const withTokens = await call(t, "POST", "/container/init", {
      type: "smartphone",
      template_name: "phone",
      user: "alice",
      realm: "staff",
    });
    assert.equal(withTokens.status, 200, JSON.stringify(withTokens.body));
    const made = withTokens.body.result.value;
    const phone = await findContainer(t.deps, made.container_serial);
    assert.equal(phone?.templateName, "phone");
    const serials = Object.keys(made.tokens).sort();
    assert.deepEqual(phone?.tokens.map((x) => x.serial).sort(), serials);
    assert.deepEqual(
      serials.map((x) => made.tokens[x].type).sort(),
      ["hotp", "totp"],
    );
    for (const x of serials) {
      assert.equal(made.tokens[x].serial, x);
      assert.match(String(made.tokens[x].googleurl?.value ?? ""), /^otpauth:\/\//);
      assert.equal(made.tokens[x].init_params.type, made.tokens[x].type);
    }
    // no `user` in the template: the tokens belong to nobody
    const owners = await call(t, "GET", `/token/?container_serial=${made.container_serial}`);
    assert.deepEqual(
      owners.body.result.value.tokens.map((x: { username: string }) => x.username),
      ["", ""],
    );
    // `user: true`: the token belongs to the container's owner
    await call(t, "POST", "/container/generic/template/mine", {
      template_options: { tokens: [{ type: "hotp", genkey: true, user: true }] },
    });
    const owned = await call(t, "POST", "/container/init", {
      type: "generic",
      template_name: "mine",
      user: "alice",
      realm: "staff",
    });
    const [ownedSerial] = Object.keys(owned.body.result.value.tokens);
    const ownedList = await call(t, "GET", `/token/?serial=${ownedSerial}`);
    assert.equal(ownedList.body.result.value.tokens[0].username, "alice");
    assert.equal(
      ownedList.body.result.value.tokens[0].container_serial,
      owned.body.result.value.container_serial,
    );
    await call(t, "DELETE", "/container/template/mine");
    // a template token the caller may not enrol is left out, the others are made
    await savePolicy(t.deps, "admins", { scope: "admin", action: "enrollHOTP, container_create" });
    const limited = await call(t, "POST", "/container/init", {
      type: "smartphone",
      template_name: "phone",
    });
    assert.equal(limited.status, 200, JSON.stringify(limited.body));
    assert.deepEqual(
      Object.values(limited.body.result.value.tokens).map((x) => (x as { type: string }).type),
      ["hotp"],
    );
    await deletePolicy(t.deps, "admins");
    await call(t, "POST", "/container/smartphone/template/empty", { template_options: {} });
    const fromEmpty = (await call(t, "POST", "/container/init", {
      type: "smartphone",
      template_name: "empty",
    })).body.result.value.container_serial;
    const hotp = await enrollHotp(t);
    await call(t, "POST", `/container/${fromEmpty}/add`, { serial: hotp });
    const compare = await call(t, "GET", "/container/template/empty/compare");
    assert.deepEqual(compare.body.result.value, {
      [fromEmpty]: { tokens: { missing: [], additional: ["hotp"], equal: false } },
    });
    const phoneCompare = await call(
      t,
      "GET",
      `/container/template/phone/compare?container_serial=${fromEmpty}`,
    );
    assert.deepEqual(phoneCompare.body.result.value, {
      [fromEmpty]: { tokens: { missing: ["totp"], additional: [], equal: false } },
    });
    assert.equal((await call(t, "DELETE", "/container/template/phone")).body.result.value, true);
    const gone = await call(t, "DELETE", "/container/template/phone");
    assert.equal(gone.status, 404);
    assert.equal(gone.body.result.error.message, "Template phone does not exist.");
  } finally {
    await t.close();
  }
});

Deno.test("tokens and containers: /token/init container_serial, GET /token/ shows and filters", async () => {
  const t = await setup();
  try {
    const phone = (await call(t, "POST", "/container/init", { type: "smartphone" })).body.result
      .value.container_serial;
    const init = await call(t, "POST", "/token/init", {
      type: "hotp",
      genkey: 1,
      container_serial: phone.toLowerCase(),
    });
    assert.equal(init.status, 200, JSON.stringify(init.body));
    const serial = init.body.detail.serial;
    assert.equal(init.body.detail.container_serial, phone);
    assert.deepEqual((await findContainer(t.deps, phone))?.tokens.map((x) => x.serial), [serial]);
    // a type the container cannot hold: refused before anything is created
    const before = (await call(t, "GET", "/token/")).body.result.value.count;
    const spass = await call(t, "POST", "/token/init", {
      type: "spass",
      pin: "1",
      container_serial: phone,
    });
    assert.equal(spass.status, 400);
    assert.equal(spass.body.result.error.code, 905);
    assert.equal((await call(t, "GET", "/token/")).body.result.value.count, before);
    // an unknown container is ignored: the token is created, in no container
    const loose = await call(t, "POST", "/token/init", {
      type: "hotp",
      genkey: 1,
      container_serial: "NOPE",
    });
    assert.equal(loose.status, 200);
    assert.equal("container_serial" in loose.body.detail, false);
    const other = loose.body.detail.serial;

    const list = await call(t, "GET", "/token/");
    const bySerial = Object.fromEntries(
      list.body.result.value.tokens.map((x: { serial: string; container_serial: string }) => [
        x.serial,
        x.container_serial,
      ]),
    );
    assert.deepEqual(bySerial, { [serial]: phone, [other]: "" });
    const inPhone = await call(t, "GET", `/token/?container_serial=${phone}`);
    assert.deepEqual(inPhone.body.result.value.tokens.map((x: { serial: string }) => x.serial), [
      serial,
    ]);
    const inNone = await call(t, "GET", "/token/?container_serial=");
    assert.deepEqual(inNone.body.result.value.tokens.map((x: { serial: string }) => x.serial), [
      other,
    ]);
    const unknown = await call(t, "GET", "/token/?container_serial=NOPE");
    assert.equal(unknown.status, 400);
    assert.equal(
      unknown.body.result.error.message,
      "ERR10: No container with the serial NOPE exists.",
    );
    // deleting the token takes it out of its container
    assert.equal((await call(t, "DELETE", `/token/${serial}`)).status, 200);
    assert.deepEqual((await findContainer(t.deps, phone))?.tokens, []);
  } finally {
    await t.close();
  }
});

Deno.test("/validate/check: a success sets last_authentication of the token's container, a failure and other containers stay", async () => {
  const t = await setup();
  try {
    const inUse = (await call(t, "POST", "/container/init", { type: "generic" })).body.result.value
      .container_serial;
    const other = (await call(t, "POST", "/container/init", { type: "generic" })).body.result
      .value.container_serial;
    const hotpSerial = await enrollHotp(t, { user: "alice", realm: "staff", pin: "" });
    const spare = await enrollHotp(t, { user: "sam", realm: "sales", pin: "" });
    const check = async (pass: string) =>
      (await jsonOf(
        await t.post("/validate/check", { user: "alice", realm: "staff", pass }),
      )).body.result.value;
    // a success while no token is in any container (the check then writes no container row)
    assert.equal(await check(hotp(0)), true);
    await call(t, "POST", `/container/${inUse}/add`, { serial: hotpSerial });
    await call(t, "POST", `/container/${other}/add`, { serial: spare });
    const seen = async () => {
      const list = (await call(t, "GET", "/container/")).body.result.value.containers;
      return Object.fromEntries(
        list.map((c: { serial: string; last_authentication: unknown }) => [
          c.serial,
          c.last_authentication,
        ]),
      );
    };
    assert.equal(await check("000000"), false);
    assert.deepEqual(await seen(), { [inUse]: null, [other]: null });
    t.clock.advance(90_000);
    // the very next check after the token joined a container records it
    assert.equal(await check(hotp(1)), true);
    const after = await seen();
    assert.equal(after[other], null);
    assert.equal(typeof after[inUse], "string");
    // the time of the check, in privacyIDEA's container timestamp format
    const atCheck = (await findContainer(t.deps, inUse))?.lastSeen;
    assert.equal(atCheck, t.clock.now());
  } finally {
    await t.close();
  }
});
