/**
 * The container domain (spec 13 §2.1–2.2) on the test engine: serials, the one-container rule,
 * owners, realms, states, info protection, timestamps, list filters and paging, templates.
 */
import assert from "node:assert/strict";
import {
  addContainerStates,
  addTokenToContainer,
  assignContainerUser,
  containerOfTokens,
  containerTimestamp,
  containerTypesView,
  createContainer,
  deleteContainer,
  deleteContainerInfo,
  deleteTemplate,
  findContainer,
  getContainer,
  listContainers,
  listTemplates,
  markContainerAuthenticated,
  markContainerSynchronized,
  reloadContainer,
  removeTokenFromContainer,
  setContainerInfo,
  setContainerRealms,
  setContainerStates,
  setInternalContainerInfo,
  setTemplate,
  unassignContainerUser,
} from "../../../src/domain/container/mod.ts";
import { realmExists, resolveUser } from "../../../src/domain/user/mod.ts";
import { getTokenBySerial } from "../../../src/domain/token/mod.ts";
import { challengesOfSerial, createChallenges } from "../../../src/domain/challenge/mod.ts";
import { loadSystemConfig } from "../../../src/domain/system_config/mod.ts";
import { createTestApp, TEST_EPOCH_MS, type TestApp } from "../../test_app.ts";
import { createUsers } from "../../fixtures/users.ts";
import { enroll, enrollHotp, SEED_HEX } from "../../fixtures/tokens.ts";

async function setup(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice" }, { login: "bob" }] });
  await createUsers(t.deps, { realm: "r2", users: [{ login: "carol" }] });
  return t;
}

async function user(t: TestApp, login: string, realm: string) {
  const u = await resolveUser(t.deps, login, realm);
  assert.ok(u, `${login}@${realm}`);
  return u;
}

Deno.test("container: create gives type prefixes, count and random part, state active, creation_date", async () => {
  const t = await setup();
  try {
    const a = await createContainer(t.deps, { type: "Smartphone" });
    assert.match(a.serial, /^SMPH0000[0-9A-F]{4}$/);
    assert.equal(a.type, "smartphone");
    assert.deepEqual(a.states, ["active"]);
    assert.deepEqual(a.info, [{
      key: "creation_date",
      value: "2026-01-01T00:00:00+00:00",
      type: "pi_internal",
      description: "",
    }]);
    const b = await createContainer(t.deps, { type: "smartphone" });
    assert.match(b.serial, /^SMPH0001/);
    assert.match((await createContainer(t.deps, { type: "generic" })).serial, /^CONT0000/);
    assert.match((await createContainer(t.deps, { type: "yubikey" })).serial, /^YUBI0000/);
    await assert.rejects(
      createContainer(t.deps, { type: "phone" }),
      /Type 'phone' is not a valid type!/,
    );
    await assert.rejects(createContainer(t.deps, { type: "" }), /Type parameter is required!/);
    // a chosen serial must not exist in any case
    await createContainer(t.deps, { type: "generic", serial: "MyBox" });
    await assert.rejects(
      createContainer(t.deps, { type: "generic", serial: "MYBOX" }),
      /Container with serial MYBOX already exists!/,
    );
    await assert.rejects(createContainer(t.deps, { type: "generic", serial: "a/b" }), /Invalid/);
    assert.equal((await getContainer(t.deps, "mybox")).serial, "MyBox");
    await assert.rejects(
      getContainer(t.deps, "nope"),
      /Unable to find container with serial nope\./,
    );
    assert.deepEqual(Object.keys(containerTypesView()), ["generic", "smartphone", "yubikey"]);
    assert.equal(
      containerTypesView().smartphone.description,
      "Smartphone: A smartphone that uses an authenticator app.",
    );
  } finally {
    await t.close();
  }
});

Deno.test("container: a token is in one container at most; adding moves it; unsupported types refused", async () => {
  const t = await setup();
  try {
    const hotp = await getTokenBySerial(t.deps, await enrollHotp(t));
    const spass = await getTokenBySerial(
      t.deps,
      (await enroll(t, { type: "spass", pin: "x" })).serial,
    );
    const g1 = await createContainer(t.deps, { type: "generic" });
    const g2 = await createContainer(t.deps, { type: "generic" });
    const phone = await createContainer(t.deps, { type: "smartphone" });
    assert.equal(await addTokenToContainer(t.deps, g1, hotp), true);
    assert.equal(await addTokenToContainer(t.deps, g1, hotp), false);
    assert.equal(await addTokenToContainer(t.deps, g2, hotp), true);
    assert.deepEqual((await reloadContainer(t.deps, g1)).tokens, []);
    assert.deepEqual((await reloadContainer(t.deps, g2)).tokens.map((x) => x.serial), [
      hotp.serial,
    ]);
    await assert.rejects(
      addTokenToContainer(t.deps, phone, spass),
      /Token type spass not supported for container type smartphone\. Supported types are \['daypassword', 'hotp', 'push', 'sms', 'totp'\]\./,
    );
    assert.equal((await containerOfTokens(t.deps, [spass.id])).size, 0);
    assert.equal((await containerOfTokens(t.deps, [hotp.id])).get(hotp.id)?.serial, g2.serial);
    assert.equal(await removeTokenFromContainer(t.deps, g1, hotp), false);
    assert.equal(await removeTokenFromContainer(t.deps, g2, hotp), true);
    // deleting a container keeps its tokens; deleting a token leaves its container
    await addTokenToContainer(t.deps, g1, hotp);
    await deleteContainer(t.deps, g1);
    assert.equal(await findContainer(t.deps, g1.serial), undefined);
    assert.ok(await getTokenBySerial(t.deps, hotp.serial));
    // the container's challenges (registration, synchronisation) go with it
    const g3 = await createContainer(t.deps, { type: "smartphone" });
    await createChallenges(t.deps, await loadSystemConfig(t.deps), [{
      serial: g3.serial,
      type: "smartphone",
      message: "",
      validity: 120,
    }]);
    assert.equal((await challengesOfSerial(t.deps, g3.serial)).length, 1);
    await deleteContainer(t.deps, g3);
    assert.equal((await challengesOfSerial(t.deps, g3.serial)).length, 0);
    await addTokenToContainer(t.deps, g2, hotp);
    const del = await t.asAdmin("DELETE", `/token/${hotp.serial}`);
    assert.equal(del.status, 200);
    assert.deepEqual((await reloadContainer(t.deps, g2)).tokens, []);
  } finally {
    await t.close();
  }
});

Deno.test("container: one owner; the owner's realm joins and stays; unassign by uid", async () => {
  const t = await setup();
  try {
    const alice = await user(t, "alice", "r1");
    const carol = await user(t, "carol", "r2");
    const c = await createContainer(t.deps, { type: "generic", owner: alice });
    assert.deepEqual(c.owner, alice);
    assert.deepEqual(c.realms, ["r1"]);
    await assert.rejects(
      assignContainerUser(t.deps, c, carol),
      /This container is already assigned to another user\./,
    );
    assert.deepEqual((await reloadContainer(t.deps, c)).owner, alice);
    // realms are replaced, the owner's stays; unknown realms are false
    const res = await setContainerRealms(t.deps, c, ["r2", "nope"], {
      realmExists: (r) => realmExists(t.deps, r),
    });
    assert.deepEqual(res, { deleted: true, r2: true, nope: false, r1: true });
    assert.deepEqual((await reloadContainer(t.deps, c)).realms, ["r1", "r2"]);
    // an admin limited to r1 cannot add r2 nor drop it
    const c2 = await createContainer(t.deps, { type: "generic", realms: ["r2"] });
    const limited = await setContainerRealms(t.deps, c2, ["r1", "r2"], {
      allowedRealms: ["r1"],
      realmExists: (r) => realmExists(t.deps, r),
    });
    assert.deepEqual(limited, { deleted: true, r2: true, r1: true });
    // uids are per resolver: carol's may equal alice's
    assert.equal(
      await unassignContainerUser(t.deps, c, { uid: carol.uid, resolver: carol.resolver }),
      false,
    );
    assert.equal(
      await unassignContainerUser(t.deps, c, { uid: alice.uid, resolver: "other" }),
      false,
    );
    assert.equal(await unassignContainerUser(t.deps, c, { uid: alice.uid }), true);
    assert.equal((await reloadContainer(t.deps, c)).owner, undefined);
    await assignContainerUser(t.deps, c, carol);
    assert.deepEqual((await reloadContainer(t.deps, c)).owner, carol);
  } finally {
    await t.close();
  }
});

Deno.test("container: states exclude each other; info keys of the server are protected", async () => {
  const t = await setup();
  try {
    const c = await createContainer(t.deps, { type: "generic" });
    assert.deepEqual(await setContainerStates(t.deps, c, ["lost", "bogus", "disabled"]), {
      bogus: false,
      lost: true,
      disabled: true,
    });
    assert.deepEqual((await reloadContainer(t.deps, c)).states, ["disabled", "lost"]);
    await assert.rejects(
      setContainerStates(t.deps, c, ["active", "disabled"]),
      /The state list \['active', 'disabled'\] contains exclusive states!/,
    );
    assert.deepEqual((await reloadContainer(t.deps, c)).states, ["disabled", "lost"]);
    await addContainerStates(t.deps, await reloadContainer(t.deps, c), ["active"]);
    assert.deepEqual((await reloadContainer(t.deps, c)).states, ["active", "lost"]);

    await setContainerInfo(t.deps, c, "colour", "blue");
    await setContainerInfo(t.deps, c, "colour", "red");
    await assert.rejects(
      setContainerInfo(t.deps, c, "creation_date", "x"),
      /The key creation_date is an internal entry and can not be modified\./,
    );
    await setInternalContainerInfo(t.deps, c, { registration_state: "client_wait" });
    await assert.rejects(setContainerInfo(t.deps, c, "registration_state", "registered"));
    assert.equal(await deleteContainerInfo(t.deps, c, "registration_state"), false);
    assert.equal(await deleteContainerInfo(t.deps, c, "missing"), false);
    const info = Object.fromEntries(
      (await reloadContainer(t.deps, c)).info.map((i) => [i.key, [i.value, i.type]]),
    );
    assert.deepEqual(info, {
      creation_date: ["2026-01-01T00:00:00+00:00", "pi_internal"],
      colour: ["red", ""],
      registration_state: ["client_wait", "pi_internal"],
    });
    assert.equal(await deleteContainerInfo(t.deps, c, "colour"), true);
  } finally {
    await t.close();
  }
});

Deno.test("container: last authentication and synchronisation; list filters and paging", async () => {
  const t = await setup();
  try {
    const alice = await user(t, "alice", "r1");
    const hotp = await getTokenBySerial(t.deps, await enrollHotp(t, { otpkey: SEED_HEX }));
    const a = await createContainer(t.deps, { type: "generic", owner: alice, description: "Desk" });
    const b = await createContainer(t.deps, { type: "smartphone", realms: ["r2"] });
    await createContainer(t.deps, { type: "yubikey" });
    await addTokenToContainer(t.deps, b, hotp);
    t.clock.advance(1234);
    await markContainerAuthenticated(t.deps, [hotp.id]);
    await markContainerSynchronized(t.deps, a);
    const b2 = await reloadContainer(t.deps, b);
    assert.equal(b2.lastSeen, TEST_EPOCH_MS + 1234);
    assert.equal(containerTimestamp(b2.lastSeen), "2026-01-01T00:00:01.234000+00:00");
    assert.equal(containerTimestamp(TEST_EPOCH_MS), "2026-01-01T00:00:00+00:00");
    assert.equal((await reloadContainer(t.deps, a)).lastSeen, null);

    const serials = async (q: Parameters<typeof listContainers>[1]) =>
      (await listContainers(t.deps, q)).containers.map((c) => c.serial);
    assert.deepEqual(await serials({ owner: { uid: alice.uid, realm: "r1" } }), [a.serial]);
    assert.deepEqual(await serials({ type: "SMART*" }), [b.serial]);
    assert.deepEqual(await serials({ tokenSerial: hotp.serial.toLowerCase() }), [b.serial]);
    assert.deepEqual(await serials({ realm: "r2" }), [b.serial]);
    assert.deepEqual(await serials({ allowedRealms: ["r1", "r2"] }), [a.serial, b.serial].sort());
    assert.deepEqual(await serials({ allowedRealms: [] }), []);
    assert.deepEqual(await serials({ description: "desk" }), [a.serial]);
    assert.deepEqual(await serials({ assigned: true }), [a.serial]);
    assert.equal((await serials({ assigned: false })).length, 2);
    assert.deepEqual(await serials({ state: "ACT*", type: "generic" }), [a.serial]);
    assert.deepEqual(
      await serials({ infoKey: "creation_*", type: "yubikey" }).then((s) => s.length),
      1,
    );
    assert.deepEqual(await serials({ lastAuthDelta: "1h" }), [b.serial]);
    assert.deepEqual(await serials({ lastSyncDelta: "1h" }), [a.serial]);
    t.clock.advance(2 * 3_600_000);
    assert.deepEqual(await serials({ lastAuthDelta: "1h" }), []);
    await assert.rejects(listContainers(t.deps, { lastAuthDelta: "soon" }), /last_auth_delta/);
    // `%` and `_` are literal
    assert.deepEqual(await serials({ serial: "%" }), []);
    const page = await listContainers(t.deps, { pagesize: 2, sortby: "serial", sortdir: "desc" });
    assert.equal(page.count, 3);
    assert.equal(page.current, 1);
    assert.equal(page.next, 2);
    assert.equal(page.prev, null);
    assert.equal(page.containers.length, 2);
    const all = await serials({ sortby: "bogus" });
    assert.deepEqual(all, [...all].sort());
  } finally {
    await t.close();
  }
});

Deno.test("container: templates keep tokens only, check token types, one default per type", async () => {
  const t = await setup();
  try {
    await setTemplate(t.deps, {
      name: "phone",
      containerType: "smartphone",
      options: { tokens: [{ type: "HOTP", genkey: true }], other: 1 },
      isDefault: true,
    });
    await setTemplate(t.deps, {
      name: "phone2",
      containerType: "smartphone",
      options: { tokens: [{ type: "totp" }] },
      isDefault: true,
    });
    await assert.rejects(
      setTemplate(t.deps, {
        name: "bad",
        containerType: "smartphone",
        options: { tokens: [{ type: "spass" }] },
        isDefault: false,
      }),
      /Unsupported token type spass for smartphone templates!/,
    );
    await assert.rejects(
      setTemplate(t.deps, { name: "bad", containerType: "x", options: {}, isDefault: false }),
      /Type 'x' is not a valid type!/,
    );
    await assert.rejects(
      setTemplate(t.deps, {
        name: "bad",
        containerType: "generic",
        options: [],
        isDefault: false,
      }),
      /'template_options' must be a dictionary!/,
    );
    const list = await listTemplates(t.deps, {});
    assert.deepEqual(list.templates, [
      {
        name: "phone",
        container_type: "smartphone",
        template_options: { tokens: [{ type: "hotp", genkey: true }] },
        default: false,
      },
      {
        name: "phone2",
        container_type: "smartphone",
        template_options: { tokens: [{ type: "totp" }] },
        default: true,
      },
    ]);
    const c = await createContainer(t.deps, { type: "smartphone", templateName: "phone" });
    assert.equal(c.templateName, "phone");
    assert.deepEqual(
      (await listContainers(t.deps, { template: "phone" })).containers.map((x) => x.serial),
      [c.serial],
    );
    await deleteTemplate(t.deps, "phone");
    assert.equal((await reloadContainer(t.deps, c)).templateName, "");
    await assert.rejects(deleteTemplate(t.deps, "phone"), /Template phone does not exist\./);
  } finally {
    await t.close();
  }
});
