/**
 * The authentication actions of a smartphone container registered during a login (spec 13
 * §2.12, §2.13): `enroll_via_multichallenge=SMARTPHONE` and `enroll_via_multichallenge_template`,
 * each against its baseline, over real HTTP with the Authenticator app double.
 */
import assert from "node:assert/strict";
import { actionTest } from "./_registry.ts";
import {
  enrolmentEntry,
  lastCheck,
  login,
  loginDone,
  loginSetup,
  phonesOf,
  poll,
} from "../http/_container_enrol.ts";
import { setTemplate } from "../../src/domain/container/mod.ts";
import { getTokensOfUser } from "../../src/domain/token/mod.ts";
import { resolveUser } from "../../src/domain/user/mod.ts";

actionTest(
  "authentication",
  "enroll_via_multichallenge",
  "SMARTPHONE: a login answers with the registration QR code of a new smartphone container; " +
    "the app's registration completes the login",
  async () => {
    const plain = await loginSetup("enroll_via_multichallenge=totp");
    try {
      // baseline: another type enrols a token, no container
      const res = await login(plain);
      assert.equal(enrolmentEntry(res.body).type, "totp");
      assert.equal((await phonesOf(plain)).length, 0);
    } finally {
      await loginDone(plain);
    }
    const l = await loginSetup("enroll_via_multichallenge=SMARTPHONE");
    try {
      const entry = enrolmentEntry((await login(l)).body);
      assert.equal(entry.type, "smartphone");
      assert.equal(entry.serial, (await phonesOf(l))[0].serial);
      l.app.scan(entry.link);
      assert.equal((await l.app.finalize()).status, 200);
      assert.equal(await poll(l, entry.transaction_id), true);
      const done = await lastCheck(l, entry.transaction_id);
      assert.equal(done.body.result.value, true, JSON.stringify(done.body));
      assert.equal(done.body.detail.serial, entry.serial);
    } finally {
      await loginDone(l);
    }
  },
);

/** A login of alice with `template` named by the policy (null: no template action). */
async function madeFrom(template: string | null) {
  const auth = "enroll_via_multichallenge=smartphone" +
    (template === null ? "" : `, enroll_via_multichallenge_template=${template}`);
  const l = await loginSetup(auth);
  const options = { tokens: [{ type: "totp", genkey: true }] };
  for (const [name, containerType] of [["phone-tpl", "smartphone"], ["generic-tpl", "generic"]]) {
    await setTemplate(l.t.deps, { name, containerType, options, isDefault: false });
  }
  return l;
}

actionTest(
  "authentication",
  "enroll_via_multichallenge_template",
  "the new smartphone container is made from the named smartphone template, its tokens " +
    "enrolled for the user; a template of another type is ignored",
  async () => {
    for (const template of [null, "generic-tpl"]) {
      const l = await madeFrom(template);
      try {
        enrolmentEntry((await login(l)).body);
        const [phone] = await phonesOf(l);
        assert.deepEqual(phone.tokens, [], String(template));
        assert.equal(phone.templateName, "", String(template));
      } finally {
        await loginDone(l);
      }
    }
    const l = await madeFrom("phone-tpl");
    try {
      const entry = enrolmentEntry((await login(l)).body);
      const [phone] = await phonesOf(l);
      assert.equal(phone.templateName, "phone-tpl");
      assert.equal(phone.tokens.length, 1);
      const alice = (await resolveUser(l.t.deps, "alice", "realm1"))!;
      const totp = (await getTokensOfUser(l.t.deps, alice, { withRealms: false }))
        .find((t) => t.type === "totp");
      assert.ok(totp, "the template's TOTP token belongs to alice");
      assert.equal(phone.tokens[0].serial, totp.serial);
      // the app registers and then receives the token on its first synchronisation
      l.app.scan(entry.link);
      assert.equal((await l.app.finalize()).status, 200);
      assert.equal((await lastCheck(l, entry.transaction_id)).body.result.value, true);
      const sync = await l.app.synchronize();
      assert.equal(sync.status, 200, JSON.stringify(sync.body));
      assert.equal(l.app.lastSync.tokens.add.length, 1);
      assert.match(l.app.lastSync.tokens.add[0], /^otpauth:\/\/totp\//);
      // a container the user has already is not made again from the template
      const next = await login(l);
      assert.equal(next.body.result.authentication, "ACCEPT");
      assert.equal((await phonesOf(l)).length, 1);
    } finally {
      await loginDone(l);
    }
  },
);
