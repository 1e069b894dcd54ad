/**
 * A `/validate/check` reads the token table once: the user's tokens (several
 * of them), the token of `serial`, and the tokens of a challenge's answer
 * (`transaction_id`) are each looked up in one statement, which the check
 * then acts on. Counted at the database: every statement the server sends
 * (SQLite: the connection's statement observer, which sees the direct path
 * and Kysely's alike; PostgreSQL: the driver's client), SELECTs naming the
 * `token` table counted.
 */
import assert from "node:assert/strict";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { hotp, SEED_HEX } from "../fixtures/tokens.ts";
import { addPolicy, appWithAlice, challengeOf, check, enrolOk } from "./_challenge_types.ts";
import { statementsOf, TOKEN_READ_REGEXP } from "./_statements.ts";

/** The token-table reads of one `/validate/check`, and its answer. */
async function countedCheck(
  t: TestApp,
  body: Record<string, unknown>,
): Promise<{ reads: string[]; body: Json }> {
  let res: { status: number; body: Json } | undefined;
  const statements = await statementsOf(t, async () => {
    res = await check(t, body);
  });
  assert.equal(res!.status, 200, JSON.stringify(res!.body));
  if (Deno.env.get("SHOW_STATEMENTS")) console.log(statements.join("\n---\n"));
  return { reads: statements.filter((s) => TOKEN_READ_REGEXP.test(s)), body: res!.body };
}

/**
 * Moves the token epoch (an administrator's change to a token): the next check
 * finds no token of the owner cache (SQLite) and reads them from the table.
 */
async function changeToken(t: TestApp, serial: string): Promise<void> {
  const res = await jsonOf(
    await t.asAdmin("POST", "/token/description", {
      body: { serial, description: `changed ${crypto.randomUUID()}` },
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function appWithTokens(): Promise<{ t: TestApp; serials: string[] }> {
  const t = await appWithAlice();
  const serials: string[] = [];
  for (const pin of ["pin1", "pin2", "pin3"]) {
    const body = await enrolOk(t, {
      type: "hotp",
      otpkey: SEED_HEX,
      pin,
      user: "alice",
      realm: "realm1",
    });
    serials.push(body.detail.serial);
  }
  await t.adminToken();
  return { t, serials };
}

Deno.test("POST /validate/check of a user with three tokens reads the token table once", async () => {
  const { t, serials } = await appWithTokens();
  await changeToken(t, serials[0]);
  const wrong = await countedCheck(t, { user: "alice", pass: "pin2" + "000000" });
  assert.equal(wrong.body.result.value, false);
  assert.equal(wrong.reads.length, 1, wrong.reads.join("\n---\n"));
  await changeToken(t, serials[0]);
  const right = await countedCheck(t, { user: "alice", pass: "pin2" + hotp(0) });
  assert.equal(right.body.result.value, true, JSON.stringify(right.body));
  assert.equal(right.body.detail.serial, serials[1]);
  assert.equal(right.reads.length, 1, right.reads.join("\n---\n"));
  // a warm owner cache (SQLite) reads it no more often
  const again = await countedCheck(t, { user: "alice", pass: "pin2" + hotp(1) });
  assert.equal(again.body.result.value, true, JSON.stringify(again.body));
  assert.ok(again.reads.length <= 1, again.reads.join("\n---\n"));
  await t.close();
});

Deno.test("POST /validate/check of a serial reads the token table once", async () => {
  const { t, serials } = await appWithTokens();
  await changeToken(t, serials[2]);
  const right = await countedCheck(t, { serial: serials[2], pass: "pin3" + hotp(0) });
  assert.equal(right.body.result.value, true, JSON.stringify(right.body));
  assert.equal(right.reads.length, 1, right.reads.join("\n---\n"));
  const named = await countedCheck(t, {
    user: "alice",
    serial: serials[2],
    pass: "pin3" + hotp(1),
  });
  assert.equal(named.body.result.value, true, JSON.stringify(named.body));
  assert.equal(named.reads.length, 1, named.reads.join("\n---\n"));
  await t.close();
});

Deno.test("POST /validate/check answering a challenge reads the token table once", async () => {
  const { t, serials } = await appWithTokens();
  await addPolicy(t, "cr", { scope: "authentication", action: "challenge_response=hotp" });
  const trigger = await countedCheck(t, { user: "alice", pass: "pin1" });
  const { tid } = challengeOf(trigger.body);
  assert.ok(trigger.reads.length <= 1, trigger.reads.join("\n---\n"));
  await changeToken(t, serials[1]);
  const answer = await countedCheck(t, { user: "alice", transaction_id: tid, pass: hotp(0) });
  assert.equal(answer.body.result.value, true, JSON.stringify(answer.body));
  assert.equal(answer.body.detail.serial, serials[0]);
  assert.equal(answer.reads.length, 1, answer.reads.join("\n---\n"));
  // the same with the serial named
  const again = challengeOf((await check(t, { user: "alice", pass: "pin1" })).body);
  await changeToken(t, serials[1]);
  const bySerial = await countedCheck(t, {
    serial: serials[0],
    transaction_id: again.tid,
    pass: hotp(1),
  });
  assert.equal(bySerial.body.result.value, true, JSON.stringify(bySerial.body));
  assert.equal(bySerial.reads.length, 1, bySerial.reads.join("\n---\n"));
  await t.close();
});
