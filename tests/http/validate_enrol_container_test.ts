/**
 * `enroll_via_multichallenge=smartphone` over real HTTP (spec 13 §2.12, §4 step 7) with the
 * Authenticator app double: a login answers with the registration QR code of a new smartphone
 * container, the app registers, the poll turns true and the last check accepts with the
 * container's serial. Early, foreign and repeated last checks are refused and change nothing
 * (read back); without the server URL policy the login keeps its success and no container is
 * left; an unregistered container is registered again, a registered one left alone.
 */
import assert from "node:assert/strict";
import {
  enrolmentEntry,
  lastCheck,
  login,
  loginDone,
  loginSetup,
  phonesOf,
  poll,
} from "./_container_enrol.ts";
import { challengesOfTransaction } from "../../src/domain/challenge/mod.ts";
import {
  containerInfoValue,
  createContainer,
  setTemplate,
} from "../../src/domain/container/mod.ts";
import { getTokensOfUser } from "../../src/domain/token/mod.ts";
import { resolveUser } from "../../src/domain/user/mod.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";

Deno.test("enroll_via_multichallenge=smartphone: login, QR code, app registration, poll, last check", async () => {
  const l = await loginSetup("enroll_via_multichallenge=SmartPhone");
  try {
    assert.equal((await phonesOf(l)).length, 0);
    const res = await login(l);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const entry = enrolmentEntry(res.body);
    const [phone] = await phonesOf(l);
    assert.ok(phone, "a smartphone container was made for alice");
    assert.deepEqual(Object.keys(entry).sort(), [
      "client_mode",
      "image",
      "link",
      "message",
      "serial",
      "transaction_id",
      "type",
    ]);
    assert.equal(entry.serial, phone.serial);
    assert.equal(entry.type, "smartphone");
    assert.equal(entry.message, "Please scan the QR code to register the container.");
    assert.equal(entry.client_mode, "poll");
    assert.match(entry.transaction_id, /^\d{20}$/);
    assert.ok(entry.link.startsWith(`pia://container/${phone.serial}?issuer=privacyIDEA&ttl=10&`));
    assert.match(entry.image, /^data:image\//);
    // the entry's keys are also the detail's (privacyIDEA merges them)
    for (const [k, v] of Object.entries(entry)) assert.deepEqual(res.body.detail[k], v, k);
    assert.equal(containerInfoValue(phone, "registration_state"), "client_wait");
    assert.equal(phone.realms.join(), "realm1");
    const tid = entry.transaction_id as string;
    const [stored] = await challengesOfTransaction(l.t.deps, tid);
    assert.equal(stored.session, "enrollment");
    assert.equal(stored.serial, phone.serial);

    // before the app registered: the poll is false and the last check is refused
    assert.equal(await poll(l, tid), false);
    const early = await lastCheck(l, tid);
    assert.equal(early.status, 200);
    assert.equal(early.body.result.value, false, JSON.stringify(early.body));
    assert.equal(early.body.result.authentication, "REJECT");
    assert.equal((await challengesOfTransaction(l.t.deps, tid)).length, 1);

    l.app.scan(entry.link);
    const fin = await l.app.finalize({ brand: "XY", model: "Z1" });
    assert.equal(fin.status, 200, JSON.stringify(fin.body));
    assert.equal(fin.body.result.value.success, true);
    assert.equal(
      containerInfoValue((await phonesOf(l))[0], "registration_state"),
      "registered",
    );
    // the answered challenge cannot be answered again
    const replay = await l.app.post(fin.path, fin.form);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.result.error.code, 3002);
    assert.equal(await poll(l, tid), true);

    // bob naming alice's transaction: refused, the challenge stays
    const foreign = await lastCheck(l, tid, "bob");
    assert.equal(foreign.body.result.value, false, JSON.stringify(foreign.body));
    assert.notEqual(foreign.body.detail?.serial, phone.serial);
    assert.equal(await poll(l, tid), true);

    const done = await lastCheck(l, tid);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.result.value, true, JSON.stringify(done.body));
    assert.equal(done.body.result.authentication, "ACCEPT");
    const { threadid: _, ...detail } = done.body.detail;
    assert.deepEqual(detail, { serial: phone.serial, message: "Found matching challenge" });
    assert.deepEqual(await challengesOfTransaction(l.t.deps, tid), []);
    assert.equal(await poll(l, tid), false);

    // used up: a second last check fails; the registered container is left alone
    const again = await lastCheck(l, tid);
    assert.equal(again.body.result.value, false);
    assert.equal(again.body.result.authentication, "REJECT");
    const next = await login(l);
    assert.equal(next.body.result.value, true, JSON.stringify(next.body));
    assert.equal(next.body.result.authentication, "ACCEPT");
    assert.equal((await phonesOf(l)).length, 1);
  } finally {
    await loginDone(l);
  }
});

Deno.test("enroll_via_multichallenge=smartphone: the policy's text; without the policy a login is a plain success", async () => {
  const l = await loginSetup(
    "enroll_via_multichallenge=smartphone, enroll_via_multichallenge_text=Scan it now",
  );
  try {
    const entry = enrolmentEntry((await login(l)).body);
    assert.equal(entry.message, "Scan it now");
  } finally {
    await loginDone(l);
  }
  const plain = await loginSetup(null);
  try {
    const res = await login(plain);
    assert.equal(res.body.result.value, true);
    assert.equal(res.body.result.authentication, "ACCEPT");
    assert.equal(res.body.detail.multi_challenge, undefined);
    assert.equal((await phonesOf(plain)).length, 0);
  } finally {
    await loginDone(plain);
  }
});

Deno.test("enroll_via_multichallenge=smartphone: without privacyIDEA_server_url the login succeeds and no container is left", async () => {
  const l = await loginSetup(null, "");
  try {
    const res = await login(l);
    assert.equal(res.body.result.value, true);
    // now with the policy, still without a server URL
    await savePolicy(l.t.deps, "evm", {
      scope: "authentication",
      action: "enroll_via_multichallenge=smartphone",
    });
    const after = await login(l);
    assert.equal(after.status, 200);
    assert.equal(after.body.result.value, true, JSON.stringify(after.body));
    assert.equal(after.body.result.authentication, "ACCEPT");
    assert.equal(after.body.detail.multi_challenge, undefined);
    assert.equal((await phonesOf(l)).length, 0);
  } finally {
    await loginDone(l);
  }
});

Deno.test("enroll_via_multichallenge=smartphone: an unregistered container is registered again; a registered one or two containers: nothing", async () => {
  const l = await loginSetup();
  try {
    const alice = (await resolveUser(l.t.deps, "alice", "realm1"))!;
    const own = await createContainer(l.t.deps, { type: "smartphone", owner: alice });
    const first = enrolmentEntry((await login(l)).body);
    assert.equal(first.serial, own.serial);
    // the next login starts a new registration of the same container; the old QR code is void
    const second = enrolmentEntry((await login(l)).body);
    assert.equal(second.serial, own.serial);
    assert.notEqual(second.transaction_id, first.transaction_id);
    assert.deepEqual(await challengesOfTransaction(l.t.deps, first.transaction_id), []);
    assert.equal((await phonesOf(l)).length, 1);

    // registered: a login is a plain success
    l.app.scan(second.link);
    assert.equal((await l.app.finalize()).status, 200);
    assert.equal((await lastCheck(l, second.transaction_id)).body.result.value, true);
    const plain = await login(l);
    assert.equal(plain.body.result.authentication, "ACCEPT");

    // bob with two unregistered smartphone containers: nothing is made or started
    const bob = (await resolveUser(l.t.deps, "bob", "realm1"))!;
    await createContainer(l.t.deps, { type: "smartphone", owner: bob });
    await createContainer(l.t.deps, { type: "smartphone", owner: bob });
    const two = await login(l, "bob");
    assert.equal(two.body.result.authentication, "ACCEPT");
    assert.equal((await phonesOf(l, "bob")).length, 2);
    for (const c of await phonesOf(l, "bob")) {
      assert.equal(containerInfoValue(c, "registration_state"), undefined);
    }
  } finally {
    await loginDone(l);
  }
});

Deno.test("enroll_via_multichallenge=smartphone: a template token the user may not enrol is left out, the registration goes on", async () => {
  const l = await loginSetup(
    "enroll_via_multichallenge=smartphone, enroll_via_multichallenge_template=tpl",
  );
  try {
    await setTemplate(l.t.deps, {
      name: "tpl",
      containerType: "smartphone",
      options: { tokens: [{ type: "totp", genkey: true }, { type: "hotp", genkey: true }] },
      isDefault: false,
    });
    // users may enrol HOTP only
    await savePolicy(l.t.deps, "users", { scope: "user", action: "enrollHOTP" });
    const entry = enrolmentEntry((await login(l)).body);
    const [phone] = await phonesOf(l);
    assert.equal(entry.serial, phone.serial);
    const alice = (await resolveUser(l.t.deps, "alice", "realm1"))!;
    const types = (await getTokensOfUser(l.t.deps, alice, { withRealms: false }))
      .map((t) => t.type).sort();
    assert.deepEqual(types, ["hotp", "spass"]);
    assert.equal(phone.tokens.length, 1);
  } finally {
    await loginDone(l);
  }
});

Deno.test("enroll_via_multichallenge=smartphone: of two parallel last checks only one is accepted", async () => {
  const l = await loginSetup();
  try {
    const entry = enrolmentEntry((await login(l)).body);
    l.app.scan(entry.link);
    assert.equal((await l.app.finalize()).status, 200);
    const both = await Promise.all([
      lastCheck(l, entry.transaction_id),
      lastCheck(l, entry.transaction_id),
    ]);
    assert.deepEqual(both.map((r) => r.body.result.value).sort(), [false, true]);
  } finally {
    await loginDone(l);
  }
});
