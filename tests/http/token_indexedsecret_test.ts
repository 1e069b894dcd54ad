/**
 * The `indexedsecret` token over HTTP (spec 11 §9): a correct PIN asks for
 * characters at random positions; the answer is accepted once; the count,
 * the text, multi-round challenges and the forced user attribute come from
 * policy and tokeninfo.
 */
import assert from "node:assert/strict";
import { actionTest } from "../policy_actions/_registry.ts";
import { type Json, jsonOf } from "../test_app.ts";
import {
  acceptedOfParallel,
  addPolicy,
  ALICE,
  appWithAlice,
  auditRows,
  challengeOf,
  check,
  enrolOk,
  failcount,
  init,
  listed,
} from "./_challenge_types.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { toHex } from "../../src/lib/random.ts";

const SECRET = "mySecret";

function answerOf(entry: Json, secret = SECRET): string {
  return (entry.attributes.random_positions as number[]).map((p) => secret[p - 1]).join("");
}

async function setup() {
  const t = await appWithAlice();
  const body = await enrolOk(t, {
    type: "indexedsecret",
    otpkey: SECRET,
    pin: "pin",
    user: "alice",
    realm: "realm1",
  });
  return { t, serial: body.detail.serial as string, body };
}

Deno.test("indexedsecret: enrolment keeps the literal secret encrypted; the PIN asks for two positions", async () => {
  const { t, serial, body } = await setup();
  assert.match(serial, /^PIIX/);
  assert.equal(body.detail.otpkey.value, `seed://${SECRET}`);
  const stored = await getTokenBySerial(t.deps, serial);
  assert.match(stored.keyEnc, /^g1:/);
  assert.ok(!stored.keyEnc.includes(toHex(new TextEncoder().encode(SECRET))));
  assert.equal((await listed(t, serial)).tokentype, "indexedsecret");

  const res = await check(t, { user: "alice", pass: "pin" });
  const { tid, entry } = challengeOf(res.body);
  const positions = entry.attributes.random_positions as number[];
  assert.equal(positions.length, 2);
  assert.ok(positions.every((p) => p >= 1 && p <= SECRET.length));
  assert.equal(
    res.body.detail.message,
    `Please enter the positions ${positions.join(",")} from your secret.`,
  );
  assert.equal(entry.attributes.state, null);
  assert.match(entry.attributes.valid_until, /^\d{4}-\d{2}-\d{2} /);

  const wrong = await check(t, { user: "alice", transaction_id: tid, pass: "??" });
  assert.equal(wrong.body.result.value, false);
  assert.equal(wrong.body.detail.message, "Response did not match the challenge.");
  assert.equal(await failcount(t, serial), 1);
  const right = await check(t, { user: "alice", transaction_id: tid, pass: answerOf(entry) });
  assert.equal(right.body.result.value, true);
  assert.equal(right.body.detail.message, "Found matching challenge");
  assert.equal(await failcount(t, serial), 0);
  const replay = await check(t, { user: "alice", transaction_id: tid, pass: answerOf(entry) });
  assert.equal(replay.body.result.value, false);
  // never in one step with the PIN
  const oneStep = await check(t, { user: "alice", pass: "pin" + answerOf(entry) });
  assert.equal(oneStep.body.result.value, false);

  const rows = await auditRows(t, "POST /validate/check");
  assert.equal(rows.at(-1)!.token_type, "indexedsecret");
  assert.ok(!JSON.stringify(rows).includes(SECRET));
  await t.close();
});

Deno.test("indexedsecret: parallel answers to one challenge: exactly one is accepted", async () => {
  const { t, serial } = await setup();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "100" } });
  const { tid, entry } = challengeOf((await check(t, { user: "alice", pass: "pin" })).body);
  assert.equal(
    await acceptedOfParallel(t, { user: "alice", transaction_id: tid, pass: answerOf(entry) }),
    1,
  );
  await t.close();
});

Deno.test("indexedsecret: fail counter locks the token at maxfail", async () => {
  const { t, serial } = await setup();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "2" } });
  for (let i = 0; i < 2; i++) {
    const { tid } = challengeOf((await check(t, { user: "alice", pass: "pin" })).body);
    await check(t, { user: "alice", transaction_id: tid, pass: "xx" });
  }
  const locked = await check(t, { user: "alice", pass: "pin" });
  assert.equal(locked.body.detail.message, "Failcounter exceeded");
  await t.close();
});

actionTest(
  "authentication",
  [
    "indexedsecret_count",
    "indexedsecret_challenge_text",
  ],
  "indexedsecret: the number of positions and the challenge text from policy",
  async () => {
    const { t } = await setup();
    // without the policies: two positions and privacyIDEA's text
    const plain = challengeOf((await check(t, { user: "alice", pass: "pin" })).body);
    const two = plain.entry.attributes.random_positions as number[];
    assert.equal(two.length, 2);
    assert.equal(
      plain.entry.message,
      `Please enter the positions ${two.join(",")} from your secret.`,
    );
    await addPolicy(t, "ix", {
      scope: "authentication",
      action: {
        indexedsecret_count: "4",
        indexedsecret_challenge_text: "Characters {0!s} please",
      },
    });
    const res = await check(t, { user: "alice", pass: "pin" });
    const { tid, entry } = challengeOf(res.body);
    const positions = entry.attributes.random_positions as number[];
    assert.equal(positions.length, 4);
    assert.equal(res.body.detail.message, `Characters ${positions.join(",")} please`);
    const ok = await check(t, { user: "alice", transaction_id: tid, pass: answerOf(entry) });
    assert.equal(ok.body.result.value, true);
    await t.close();
  },
);

Deno.test("indexedsecret: tokeninfo multichallenge asks one position per round", async () => {
  const { t, serial } = await setup();
  await addPolicy(t, "ix", { scope: "authentication", action: "indexedsecret_count=3" });
  const info = await jsonOf(
    await t.asAdmin("POST", `/token/info/${serial}/multichallenge`, { body: { value: "1" } }),
  );
  assert.equal(info.status, 200);
  let res = await check(t, { user: "alice", pass: "pin" });
  const tids = new Set<string>();
  for (let round = 1; round <= 3; round++) {
    const { tid, entry } = challengeOf(res.body);
    assert.equal(entry.attributes.random_positions.length, 1, `round ${round}`);
    tids.add(tid);
    res = await check(t, { user: "alice", transaction_id: tid, pass: answerOf(entry) });
    if (round < 3) {
      assert.equal(res.body.result.authentication, "CHALLENGE", `round ${round}`);
      // an answered round's transaction is closed
      const again = await check(t, { user: "alice", transaction_id: tid, pass: answerOf(entry) });
      assert.equal(again.body.result.value, false);
    }
  }
  assert.equal(tids.size, 3, "each round has its own transaction");
  assert.equal(res.body.result.value, true);
  assert.equal(res.body.result.authentication, "ACCEPT");
  await t.close();
});

actionTest(
  "admin",
  "indexedsecret_force_attribute",
  "indexedsecret: a user attribute becomes the secret; a generated secret otherwise",
  async () => {
    const t = await appWithAlice();
    const generated = await enrolOk(t, { type: "indexedsecret" });
    assert.match(generated.detail.otpkey.value, /^seed:\/\/[0-9a-f]{40}$/);
    await addPolicy(t, "force", {
      scope: "admin",
      action: "*, indexedsecret_force_attribute=mobile",
    });
    const forced = await enrolOk(t, {
      type: "indexedsecret",
      otpkey: "ignored",
      pin: "pin",
      user: "alice",
      realm: "realm1",
    });
    assert.equal(forced.detail.otpkey.value, `seed://${ALICE.mobile}`);
    const { tid, entry } = challengeOf(
      (await check(t, { serial: forced.detail.serial, pass: "pin" })).body,
    );
    const ok = await check(t, {
      serial: forced.detail.serial,
      transaction_id: tid,
      pass: answerOf(entry, ALICE.mobile),
    });
    assert.equal(ok.body.result.value, true);
    const noUser = await init(t, { type: "indexedsecret" });
    assert.equal(noUser.status, 400);
    await t.close();
  },
);
