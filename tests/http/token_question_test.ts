/**
 * The `question` token over HTTP (spec 11 §10): answers stored encrypted, a
 * correct PIN asks a question, the answer is accepted once, `question_number`
 * asks several in a row.
 */
import assert from "node:assert/strict";
import { actionTest } from "../policy_actions/_registry.ts";
import {
  acceptedOfParallel,
  addPolicy,
  appWithAlice,
  auditRows,
  challengeOf,
  check,
  enrolOk,
  failcount,
  init,
  listed,
  setConfig,
} from "./_challenge_types.ts";

const QUESTIONS: Record<string, string> = {
  "First pet?": "Rex",
  "City of birth?": "Bremen",
  "Favourite colour?": "Blue Green",
};

async function setup() {
  const t = await appWithAlice();
  await setConfig(t, { "question.num_answers": "3" });
  const body = await enrolOk(t, {
    type: "question",
    questions: JSON.stringify(QUESTIONS),
    pin: "pin",
    user: "alice",
    realm: "realm1",
  });
  return { t, serial: body.detail.serial as string };
}

Deno.test("question: enrolment stores each answer encrypted under its question", async () => {
  const { t, serial } = await setup();
  assert.match(serial, /^QUST/);
  const token = await listed(t, serial);
  assert.equal(token.tokentype, "question");
  for (const [question, answer] of Object.entries(QUESTIONS)) {
    assert.equal(token.info[`${question}.type`], "password");
    assert.match(token.info[question], /^g1:/);
    assert.ok(!token.info[question].includes(answer));
  }
  const few = await init(t, { type: "question", questions: { "Only one?": "yes" } });
  assert.equal(few.status, 400);
  assert.equal(few.body.result.error.message, "ERR301: You need to provide at least 3 answers.");
  const missing = await init(t, { type: "question" });
  assert.equal(missing.status, 400);
  const reserved = await init(t, {
    type: "question",
    questions: { count_auth_max: "1", "a?": "b", "c?": "d" },
  });
  assert.equal(reserved.status, 400, "a question cannot take the place of a tokeninfo setting");
  await t.close();
});

Deno.test("question: the PIN asks a question; its answer is accepted once; wrong answers count", async () => {
  const { t, serial } = await setup();
  const res = await check(t, { user: "alice", pass: "pin" });
  const { tid, entry } = challengeOf(res.body);
  const question = res.body.detail.message;
  assert.ok(question in QUESTIONS, question);
  assert.equal(entry.type, "question");
  assert.match(entry.attributes.valid_until, /^\d{4}-\d{2}-\d{2} /);
  const wrong = await check(t, { user: "alice", transaction_id: tid, pass: "rex" });
  assert.equal(wrong.body.result.value, false, "case-sensitive");
  assert.equal(await failcount(t, serial), 1);
  const right = await check(t, { user: "alice", transaction_id: tid, pass: QUESTIONS[question] });
  assert.equal(right.body.result.value, true);
  assert.equal(await failcount(t, serial), 0);
  const replay = await check(t, { user: "alice", transaction_id: tid, pass: QUESTIONS[question] });
  assert.equal(replay.body.result.value, false);
  const oneStep = await check(t, { user: "alice", pass: "pin" + QUESTIONS[question] });
  assert.equal(oneStep.body.result.value, false);
  const rows = await auditRows(t, "POST /validate/check");
  assert.ok(!JSON.stringify(rows).includes(QUESTIONS[question]), "no answer in the audit log");
  assert.equal(rows.at(-1)!.token_type, "question");
  await t.close();
});

Deno.test("question: parallel answers to one challenge: exactly one is accepted", async () => {
  const { t, serial } = await setup();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "100" } });
  const res = await check(t, { user: "alice", pass: "pin" });
  const { tid } = challengeOf(res.body);
  const answer = QUESTIONS[res.body.detail.message];
  assert.equal(
    await acceptedOfParallel(t, { user: "alice", transaction_id: tid, pass: answer }),
    1,
  );
  await t.close();
});

Deno.test("question: fail counter locks the token at maxfail", async () => {
  const { t, serial } = await setup();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "2" } });
  for (let i = 0; i < 2; i++) {
    const { tid } = challengeOf((await check(t, { user: "alice", pass: "pin" })).body);
    await check(t, { user: "alice", transaction_id: tid, pass: "wrong" });
  }
  assert.equal(
    (await check(t, { user: "alice", pass: "pin" })).body.detail.message,
    "Failcounter exceeded",
  );
  await t.close();
});

actionTest(
  "authentication",
  "question_number",
  "question: asks that many different questions in a row",
  async () => {
    const { t } = await setup();
    // without the policy one right answer authenticates
    const one = await check(t, { user: "alice", pass: "pin" });
    const first = await check(t, {
      user: "alice",
      transaction_id: challengeOf(one.body).tid,
      pass: QUESTIONS[one.body.detail.message],
    });
    assert.equal(first.body.result.value, true);
    await addPolicy(t, "qn", { scope: "authentication", action: "question_number=3" });
    let res = await check(t, { user: "alice", pass: "pin" });
    const asked: string[] = [];
    for (let round = 1; round <= 3; round++) {
      const { tid } = challengeOf(res.body);
      asked.push(res.body.detail.message);
      res = await check(t, { user: "alice", transaction_id: tid, pass: QUESTIONS[asked.at(-1)!] });
    }
    assert.equal(res.body.result.value, true);
    assert.deepEqual([...asked].sort(), Object.keys(QUESTIONS).sort(), "no question twice");
    // a wrong intermediate answer ends the series
    res = await check(t, { user: "alice", pass: "pin" });
    const { tid } = challengeOf(res.body);
    const second = await check(t, { user: "alice", transaction_id: tid, pass: "nope" });
    assert.equal(second.body.result.authentication, "REJECT");
    await t.close();
  },
);
