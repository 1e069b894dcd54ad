/**
 * OCRA questions the client chooses (spec 14 §3.3 step 1) over HTTP: `challenge` (the text
 * to sign), `addrandomchallenge` (random letters and digits appended) and `hashchallenge`
 * (the question is the text's SHA-1, SHA-256 or SHA-512 hex digest), at /validate/check and
 * /validate/triggerchallenge; the reply shows the text and its QR code; the OCRA response
 * over the stored question answers once; bad values are refused with nothing stored. The
 * expected responses are computed here with Web Crypto (RFC 6287 §5), not with Tessera's code.
 */
import assert from "node:assert/strict";
import { appWithAlice, challengeOf, check, enrolOk, failcount } from "./_challenge_types.ts";
import { jsonOf } from "../test_app.ts";
import { challengesOfSerial } from "../../src/domain/challenge/mod.ts";

const KEY20 = "12345678901234567890";
const KEY32 = "12345678901234567890123456789012";
const hexOf = (text: string) =>
  Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("");

/** The OCRA response of a question-only suite (`QA` text or `QH` hex) by RFC 6287 §5. */
async function ocraRef(key: string, suite: string, question: string): Promise<string> {
  const [, crypto_, data] = suite.split(":");
  const [, hash, digits] = crypto_.split("-");
  const q = data.startsWith("QH")
    ? Uint8Array.from(question.match(/../g)!, (b) => parseInt(b, 16))
    : new TextEncoder().encode(question);
  const suiteBytes = new TextEncoder().encode(suite);
  const input = new Uint8Array(suiteBytes.length + 1 + 128);
  input.set(suiteBytes);
  input.set(q, suiteBytes.length + 1);
  const k = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(key),
    { name: "HMAC", hash: hash.replace("SHA", "SHA-") },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", k, input));
  const off = mac[mac.length - 1] & 0x0f;
  const bin = new DataView(mac.buffer).getUint32(off) & 0x7fffffff;
  return String(bin % 10 ** Number(digits)).padStart(Number(digits), "0");
}

async function digestHex(name: string, text: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest(name, new TextEncoder().encode(text)));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function setup(suite: string, key: string) {
  const t = await appWithAlice();
  const body = await enrolOk(t, {
    type: "ocra",
    otpkey: hexOf(key),
    ocrasuite: suite,
    pin: "pin",
    user: "alice",
    realm: "realm1",
  });
  return { t, serial: body.detail.serial as string };
}

/** Asserts the `qrcode` attribute is a PNG data URI. */
function assertPng(uri: string) {
  assert.match(uri, /^data:image\/png;base64,/);
  const bytes = Uint8Array.from(atob(uri.split(",")[1]), (c) => c.charCodeAt(0));
  assert.deepEqual([...bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
}

Deno.test("ocra question: the spec's transfer text, hashed with SHA-1, answered once", async () => {
  const { t, serial } = await setup("OCRA-1:HOTP-SHA1-8:QH40", KEY20);
  const text = "83507112  ~320,00~1399458665_G6HNVF";
  const res = await check(t, { user: "alice", pass: "pin", challenge: text, hashchallenge: 1 });
  const { tid, entry } = challengeOf(res.body);
  assert.equal(entry.message, "Please answer the challenge");
  assert.deepEqual(Object.keys(entry.attributes).sort(), [
    "challenge",
    "original_challenge",
    "qrcode",
  ]);
  assert.equal(entry.attributes.challenge, "7196501689c356046867728f4feb74458dcfd079");
  assert.equal(entry.attributes.challenge, await digestHex("SHA-1", text));
  assert.equal(entry.attributes.original_challenge, text);
  assertPng(entry.attributes.qrcode);
  const rows = await challengesOfSerial(t.deps, serial);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].challenge, "7196501689c356046867728f4feb74458dcfd079");
  // a wrong response fails, the spec's response answers, a replay fails
  assert.equal(
    (await check(t, { serial, transaction_id: tid, pass: "90065297" })).body.result
      .value,
    false,
  );
  const ok = await check(t, { serial, transaction_id: tid, pass: "90065298" });
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.result.authentication, "ACCEPT");
  const replay = await check(t, { serial, transaction_id: tid, pass: "90065298" });
  assert.equal(replay.body.result.value, false, "a transaction is answered once");
  await t.close();
});

Deno.test("ocra question: hashchallenge sha256 and SHA512 make that hex digest the question", async () => {
  const suite = "OCRA-1:HOTP-SHA256-8:QH64";
  const { t, serial } = await setup(suite, KEY32);
  for (const [param, name] of [["sha256", "SHA-256"], ["SHA512", "SHA-512"]]) {
    const text = `Pay 100,00 EUR to DE02 1203 0000 0000 2020 51 (${name})`;
    const res = await check(t, { serial, pass: "pin", challenge: text, hashchallenge: param });
    const { tid, entry } = challengeOf(res.body);
    const digest = await digestHex(name, text);
    assert.equal(entry.attributes.challenge, digest, param);
    assert.equal(entry.attributes.original_challenge, text);
    assertPng(entry.attributes.qrcode);
    const answer = await ocraRef(KEY32, suite, digest);
    const ok = await check(t, { serial, transaction_id: tid, pass: answer });
    assert.equal(ok.body.result.value, true, `${param}: ${JSON.stringify(ok.body)}`);
  }
  await t.close();
});

Deno.test("ocra question: addrandomchallenge appends letters and digits (check and trigger)", async () => {
  const suite = "OCRA-1:HOTP-SHA1-8:QA64";
  const { t, serial } = await setup(suite, KEY20);
  const res = await check(t, {
    user: "alice",
    pass: "pin",
    challenge: "transfer42",
    addrandomchallenge: "12",
  });
  const { tid, entry } = challengeOf(res.body);
  const original = entry.attributes.original_challenge;
  assert.match(original, /^transfer42[A-Za-z0-9]{12}$/);
  // not hashed: the question is the text with its suffix
  assert.equal(entry.attributes.challenge, original);
  assert.equal((await challengesOfSerial(t.deps, serial))[0].challenge, original);
  const ok = await check(t, {
    serial,
    transaction_id: tid,
    pass: await ocraRef(KEY20, suite, original),
  });
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  // two draws differ
  const again = challengeOf(
    (await check(t, {
      serial,
      pass: "pin",
      challenge: "transfer42",
      addrandomchallenge: 12,
    })).body,
  );
  assert.notEqual(again.entry.attributes.original_challenge, original);
  // /validate/triggerchallenge takes them too: suffix, then the SHA-1 of the whole
  const trig = await jsonOf(
    await t.asAdmin("POST", "/validate/triggerchallenge", {
      body: { serial, challenge: "abc", addrandomchallenge: "4", hashchallenge: "false" },
    }),
  );
  assert.equal(trig.status, 200, JSON.stringify(trig.body));
  const te = trig.body.detail.multi_challenge[0];
  assert.match(te.attributes.original_challenge, /^abc[A-Za-z0-9]{4}$/);
  assert.equal(te.attributes.challenge, await digestHex("SHA-1", te.attributes.original_challenge));
  const tok = await check(t, {
    serial,
    transaction_id: trig.body.detail.transaction_id,
    pass: await ocraRef(KEY20, suite, te.attributes.challenge),
  });
  assert.equal(tok.body.result.value, true, JSON.stringify(tok.body));
  await t.close();
});

Deno.test("ocra question: without challenge the server draws it; other types ignore the three", async () => {
  const { t } = await setup("OCRA-1:HOTP-SHA1-8:QH40", KEY20);
  const res = await check(t, {
    user: "alice",
    pass: "pin",
    addrandomchallenge: "5",
    hashchallenge: "sha256",
  });
  const { entry } = challengeOf(res.body);
  assert.deepEqual(Object.keys(entry.attributes), ["challenge"]);
  assert.match(entry.attributes.challenge, /^[0-9a-f]{40}$/);
  // other types ignore the three, also values OCRA would refuse
  const spass = await enrolOk(t, { type: "spass", pin: "sp" });
  const res2 = await check(t, {
    serial: spass.detail.serial,
    pass: "sp",
    challenge: "x".repeat(2000),
    addrandomchallenge: "bad",
  });
  assert.equal(res2.body.result.value, true, JSON.stringify(res2.body));
  await t.close();
});

Deno.test("ocra question: bad values are refused with ERR905 and nothing stored", async () => {
  const { t, serial } = await setup("OCRA-1:HOTP-SHA1-8:QH40", KEY20);
  const numeric = await enrolOk(t, {
    type: "ocra",
    otpkey: hexOf(KEY20),
    ocrasuite: "OCRA-1:HOTP-SHA1-6:QN08",
    pin: "pin2",
  });
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ serial, challenge: "abc", addrandomchallenge: "x" }, /addrandomchallenge.*whole number/],
    [{ serial, challenge: "abc", addrandomchallenge: "-1" }, /addrandomchallenge/],
    [{ serial, challenge: "abc", addrandomchallenge: "1025" }, /addrandomchallenge/],
    [{ serial, challenge: "a".repeat(1020), addrandomchallenge: 5 }, /at most 1024/],
    // the hex suite cannot take an unhashed text
    [{ serial, challenge: "83507112  ~320,00~1399458665_G6HNVF" }, /cannot be a question.*QH40/],
    // a numeric suite cannot take a hex digest
    [{ serial: numeric.detail.serial, challenge: "12345678", hashchallenge: "sha256" }, /QN08/],
  ];
  for (const [params, why] of cases) {
    const pass = params.serial === serial ? "pin" : "pin2";
    const res = await check(t, { ...params, pass });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.result.status, false);
    assert.equal(res.body.result.error.code, 905);
    assert.match(res.body.result.error.message, why);
    const trig = await jsonOf(
      await t.asAdmin("POST", "/validate/triggerchallenge", { body: params }),
    );
    assert.equal(trig.status, 400, JSON.stringify(trig.body));
    assert.equal(trig.body.result.error.code, 905);
  }
  assert.deepEqual(await challengesOfSerial(t.deps, serial), []);
  assert.deepEqual(await challengesOfSerial(t.deps, numeric.detail.serial), []);
  assert.equal(await failcount(t, serial), 0);
  assert.equal(await failcount(t, numeric.detail.serial), 0);
  await t.close();
});
