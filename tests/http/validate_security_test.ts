/**
 * `/validate/check` against guessing and replay: `serial` + `otponly=1`
 * counts failures like any check, one-time codes and challenge transactions
 * are used once, also by parallel requests on two nodes sharing a database.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { enroll, enrollHotp, hotp } from "../fixtures/tokens.ts";
import { findTokenBySerial, getTokenBySerial } from "../../src/domain/token/mod.ts";
import { migrateToLatest, openDatabase } from "../../src/db/database.ts";
import { AuditWriter } from "../../src/domain/audit/mod.ts";
import { keysFromKeyFile } from "../../src/domain/keys/mod.ts";
import { memoryLogger } from "../../src/lib/logger.ts";
import { toHex } from "../../src/lib/random.ts";

async function check(t: TestApp, body: Record<string, unknown>) {
  return await jsonOf(await t.post("/validate/check", body));
}

async function setMaxFail(t: TestApp, serial: string, max: number): Promise<void> {
  const res = await t.asAdmin("POST", "/token/set", {
    body: { serial, max_failcount: String(max) },
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
}

// ---------------------------------------------------------------------------
// serial + otponly=1

Deno.test("otponly: every wrong OTP raises the fail counter by one", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  const wrong = 4;
  for (let i = 0; i < wrong; i++) {
    const bad = await check(t, { serial, otponly: "1", pass: String(100000 + i) });
    assert.equal(bad.status, 200);
    assert.equal(bad.body.result.value, false);
    assert.equal(bad.body.detail.message, "OTP verification failed.");
  }
  assert.equal((await getTokenBySerial(t.deps, serial)).failcount, wrong);
  await t.close();
});

Deno.test("otponly: at the max fail count a correct OTP is refused", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  await setMaxFail(t, serial, 3);
  for (let i = 0; i < 5; i++) await check(t, { serial, otponly: "1", pass: "000000" });
  const token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.failcount, 3, "never beyond maxfail");
  assert.ok(token.info.failcounter_exceeded, "reaching maxfail is stamped");
  const right = await check(t, { serial, otponly: "1", pass: hotp(0) });
  assert.equal(right.body.result.value, false);
  assert.equal(right.body.detail.message, "OTP verification failed.");
  // the OTP was not spent on the locked token
  assert.equal((await getTokenBySerial(t.deps, serial)).count, 0);
  // the full check is refused the same way
  const full = await check(t, { serial, pass: "1234" + hotp(0) });
  assert.equal(full.body.result.value, false);
  assert.equal(full.body.detail.message, "Failcounter exceeded");
  await t.close();
});

Deno.test("otponly: a correct OTP resets the fail counter like any successful check", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  await check(t, { serial, otponly: "1", pass: "000000" });
  await check(t, { serial, otponly: "1", pass: "111111" });
  assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 2);
  assert.equal((await check(t, { serial, otponly: "1", pass: hotp(0) })).body.result.value, true);
  assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 0);
  await t.close();
});

Deno.test("otponly: a registration code works once, then the token is gone", async () => {
  const t = await createTestApp();
  const { serial, detail } = await enroll(t, { type: "registration" });
  const code = detail.registrationcode as string;
  const first = await check(t, { serial, otponly: "1", pass: code });
  assert.equal(first.body.result.value, true);
  assert.equal(first.body.detail.serial, serial);
  assert.equal(await findTokenBySerial(t.deps, serial), undefined);
  const again = await check(t, { serial, otponly: "1", pass: code });
  assert.equal(again.status, 404);
  await t.close();
});

Deno.test("otponly: a spass token (no OTP) is refused, with or without its PIN", async () => {
  const t = await createTestApp();
  const { serial } = await enroll(t, { type: "spass", pin: "secret" });
  for (const pass of ["", "secret"]) {
    const res = await check(t, { serial, otponly: "1", pass });
    assert.equal(res.body.result.value, false, `pass "${pass}"`);
    assert.equal(res.body.detail.message, "OTP verification failed.");
  }
  assert.equal((await check(t, { serial, pass: "secret" })).body.result.value, true);
  await t.close();
});

// ---------------------------------------------------------------------------
// parallel requests on two nodes sharing one database file

interface Node {
  url: string;
  worker: Worker;
}

/** Starts a node (see _node_worker.ts) on the database file. */
async function startNode(dbPath: string, keyHex: string): Promise<Node> {
  const worker = new Worker(new URL("./_node_worker.ts", import.meta.url), { type: "module" });
  const started = new Promise<number>((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data.port);
    worker.onerror = (e) => reject(e.error ?? new Error(e.message));
  });
  worker.postMessage({ dbPath, keyHex });
  return { url: `http://127.0.0.1:${await started}/validate/check`, worker };
}

async function stopNode(node: Node): Promise<void> {
  const closed = new Promise<void>((resolve) => node.worker.onmessage = () => resolve());
  node.worker.postMessage("close");
  await closed;
  node.worker.terminate();
}

/**
 * Runs `setUp`, then `fn`, with a test app on a database file (for set-up and
 * reading back) and, for `fn`, two nodes serving `/validate/check` from worker threads on the same
 * file: requests to different nodes run truly in parallel, as on two hosts.
 */
async function withTwoNodes(
  setUp: (t: TestApp) => Promise<void>,
  fn: (t: TestApp, nodes: Node[]) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tessera-nodes-" });
  const dbPath = `${dir}/tessera.sqlite`;
  const keyBytes = crypto.getRandomValues(new Uint8Array(96));
  const db = openDatabase(`sqlite:${dbPath}`);
  await migrateToLatest(db);
  const log = memoryLogger();
  const t = await createTestApp({
    deps: { db, keys: keysFromKeyFile(keyBytes), audit: new AuditWriter(db, log), log },
  });
  const nodes: Node[] = [];
  try {
    await setUp(t);
    // started after the set-up: the nodes read policies and tokens as any node would
    nodes.push(await startNode(dbPath, toHex(keyBytes)), await startNode(dbPath, toHex(keyBytes)));
    await fn(t, nodes);
  } finally {
    for (const node of nodes) await stopNode(node);
    await t.close();
    await db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
}

/** POSTs a form; returns the status and the JSON body. */
async function postForm(
  url: string,
  body: Record<string, string>,
): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body).toString(),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) };
}

/** POSTs a form that must be answered with 200 (no 5xx under the race either). */
async function post(url: string, body: Record<string, string>): Promise<Json> {
  const res = await postForm(url, body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

Deno.test("two nodes: parallel uses of one registration code authenticate once", async () => {
  for (const otponly of [true, false]) {
    let serial = "";
    let code = "";
    await withTwoNodes(async (t) => {
      const { serial: s, detail } = await enroll(t, { type: "registration" });
      serial = s;
      code = detail.registrationcode as string;
    }, async (t, nodes) => {
      const body: Record<string, string> = { serial, pass: code };
      if (otponly) body.otponly = "1";
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => postForm(nodes[i % 2].url, body)),
      );
      const text = `otponly=${otponly}: ${JSON.stringify(answers)}`;
      // a request that comes after the deletion finds no token (404); nothing fails with a 5xx
      assert.ok(answers.every((a) => a.status === 200 || a.status === 404), text);
      assert.equal(answers.filter((a) => a.body.result.value === true).length, 1, text);
      assert.equal(await findTokenBySerial(t.deps, serial), undefined);
    });
  }
});

Deno.test("two nodes: ten different valid answers to one transaction_id, in parallel, accept one", async () => {
  let serial = "";
  await withTwoNodes(async (t) => {
    serial = await enrollHotp(t, { pin: "pin" });
    // the losers count as failed answers; keep the token usable for all rounds
    await setMaxFail(t, serial, 100_000);
    const policy = await t.asAdmin("POST", "/policy/cr", {
      body: { scope: "authentication", action: "challenge_response=hotp" },
      json: true,
    });
    assert.equal(policy.status, 200);
    await policy.body?.cancel();
  }, async (t, nodes) => {
    const acceptedPerRound: number[] = [];
    for (let round = 0; round < 20; round++) {
      const counter = (await getTokenBySerial(t.deps, serial)).count;
      const challenge = await post(nodes[round % 2].url, { serial, pass: "pin" });
      assert.equal(challenge.result.authentication, "CHALLENGE");
      const tid = challenge.detail.transaction_id as string;
      // ten different OTPs, all inside the look-ahead window of the current counter
      const answers = await Promise.all(
        Array.from(
          { length: 10 },
          (_, i) =>
            post(nodes[i % 2].url, { serial, transaction_id: tid, pass: hotp(counter + i) }),
        ),
      );
      const accepted = answers.filter((a) => a.result.value === true);
      acceptedPerRound.push(accepted.length);
      for (const a of answers) {
        if (a.result.value !== true) assert.equal(a.result.authentication, "REJECT");
      }
      if (accepted.length === 1) {
        // the counter moved just past the winner's OTP: no loser moved it
        const winner = answers.indexOf(accepted[0]);
        assert.equal((await getTokenBySerial(t.deps, serial)).count, counter + winner + 1);
      }
      // the transaction is closed: nothing answers it any more
      const late = await post(nodes[0].url, {
        serial,
        transaction_id: tid,
        pass: hotp(counter + 9),
      });
      assert.equal(late.result.value, false);
    }
    assert.ok(
      acceptedPerRound.every((n) => n <= 1),
      `accepted answers per round: ${acceptedPerRound.join(" ")}`,
    );
    // single use is not no use: one right answer always wins
    assert.ok(
      acceptedPerRound.every((n) => n === 1),
      `accepted answers per round: ${acceptedPerRound.join(" ")}`,
    );
  });
});
