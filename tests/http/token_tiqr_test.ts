/**
 * The `tiqr` token over HTTP (spec 14 §7) with a software double of the TiQR app: it
 * scans the enrolment URL, fetches the metadata, posts a secret it chose, scans the
 * authentication URL and posts its OCRA response, computed here from RFC 6287 with Web
 * Crypto (not with the server's lib/ocra.ts). The client polls the transaction and
 * finishes with `/validate/check` and an empty pass, which succeeds once.
 */
import assert from "node:assert/strict";
import {
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
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import type { Random } from "../../src/lib/random.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";

const REG_SERVER = "https://tessera.example/ttype/tiqr";
// spec 14 §7 vector: this secret answers question 0123456789 (QN10, SHA1, 6 digits) with 618126
const KEY20_HEX = "3132333435363738393031323334353637383930";

function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(hex.match(/../g)!.map((h) => Number.parseInt(h, 16)));
}

/** RFC 6287 §5 for an `OCRA-1:HOTP-SHA<n>-<d>:QN<l>` suite, written from the RFC. */
async function ocraQn(suite: string, keyHex: string, question: string): Promise<string> {
  const m = /^OCRA-1:HOTP-SHA(1|256|512)-(\d+):QN\d\d$/.exec(suite);
  assert.ok(m, `the app double knows numeric suites only: ${suite}`);
  let hex = BigInt(question).toString(16);
  if (hex.length % 2 === 1) hex += "0"; // padded on the right, as privacyIDEA does
  const text = new TextEncoder().encode(suite);
  const input = new Uint8Array(text.length + 1 + 128);
  input.set(text);
  input.set(hexBytes(hex), text.length + 1);
  const key = await crypto.subtle.importKey(
    "raw",
    hexBytes(keyHex),
    { name: "HMAC", hash: `SHA-${m[1]}` },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, input));
  const off = mac[mac.length - 1] & 0x0f;
  const bin = new DataView(mac.buffer).getUint32(off) & 0x7fffffff;
  const digits = Number(m[2]);
  return String(bin % 10 ** digits).padStart(digits, "0");
}

/** The TiQR app double: what it learned from the server and the secret it chose. */
interface AppState {
  serial: string;
  session: string;
  metadata: Json;
  secret: string;
}

/** `/ttype/tiqr` as the app calls it: form fields, GET or POST. */
async function appCall(
  t: TestApp,
  method: "GET" | "POST",
  fields: Record<string, string>,
): Promise<Response> {
  return method === "GET"
    ? await t.get("/ttype/tiqr", { query: fields })
    : await t.post("/ttype/tiqr", fields);
}

/** Reads the `tiqrenroll://` URL the way the app scans it. */
function scanEnrolment(value: string): { server: string; session: string; serial: string } {
  const m = /^tiqrenroll:\/\/(.+)\?action=metadata&session=([0-9a-f]{40})&serial=(.+)$/.exec(
    value,
  );
  assert.ok(m, value);
  return { server: m[1], session: m[2], serial: m[3] };
}

/** The app's enrolment: metadata, then its secret; returns what the app keeps. */
async function appEnrol(t: TestApp, enrollUrl: string, secret = KEY20_HEX): Promise<AppState> {
  const scan = scanEnrolment(enrollUrl);
  assert.equal(scan.server, REG_SERVER);
  const meta = await appCall(t, "GET", {
    action: "metadata",
    session: scan.session,
    serial: scan.serial,
  });
  assert.equal(meta.status, 200);
  assert.match(meta.headers.get("content-type") ?? "", /^application\/json/);
  const metadata = await meta.json();
  const url = new URL(metadata.service.enrollmentUrl);
  const res = await appCall(t, "POST", {
    action: "enrollment",
    serial: url.searchParams.get("serial")!,
    session: url.searchParams.get("session")!,
    secret,
    operation: "register",
    notificationType: "APNS",
    notificationAddress: "0000",
    language: "en",
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
  assert.equal(await res.text(), "OK");
  return { serial: scan.serial, session: scan.session, metadata, secret };
}

/** Reads the `tiqrauth://` URL the way the app scans it. */
function scanAuth(value: string) {
  const m = /^tiqrauth:\/\/([^@]+)@([^/]+)\/(\d{20})\/(\d+)\/(.+)$/.exec(value);
  assert.ok(m, value);
  return { user: m[1], service: m[2], sessionKey: m[3], question: m[4], name: m[5] };
}

/** The app's answer to a scanned challenge: the text the server answers. */
async function appAnswer(
  t: TestApp,
  app: AppState,
  authUrl: string,
  response?: string,
): Promise<string> {
  const scan = scanAuth(authUrl);
  const res = await appCall(t, "POST", {
    userId: scan.user,
    sessionKey: scan.sessionKey,
    response: response ?? await ocraQn(app.metadata.service.ocraSuite, app.secret, scan.question),
    operation: "login",
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
  return await res.text();
}

async function setup(options: { pin?: string } = {}) {
  const t = await appWithAlice();
  await setConfig(t, { "tiqr.regServer": REG_SERVER });
  const body = await enrolOk(t, {
    type: "tiqr",
    pin: options.pin ?? "pin",
    user: "alice",
    realm: "realm1",
  });
  return { t, body, serial: body.detail.serial as string };
}

async function challenge(t: TestApp) {
  const res = await check(t, { user: "alice", realm: "realm1", pass: "pin" });
  return challengeOf(res.body);
}

async function poll(t: TestApp, tid: string): Promise<boolean> {
  const res = await jsonOf(
    await t.get("/validate/polltransaction", { query: { transaction_id: tid } }),
  );
  assert.equal(res.status, 200);
  return res.body.result.value;
}

async function finish(t: TestApp, tid: string) {
  return await check(t, { user: "alice", realm: "realm1", transaction_id: tid, pass: "" });
}

async function tokenCount(t: TestApp): Promise<number> {
  return (await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count;
}

Deno.test("tiqr: the app double computes the spec vector (618126) and RFC 6287's QN08 vector", async () => {
  assert.equal(await ocraQn("OCRA-1:HOTP-SHA1-6:QN10", KEY20_HEX, "0123456789"), "618126");
  assert.equal(await ocraQn("OCRA-1:HOTP-SHA1-6:QN08", KEY20_HEX, "11111111"), "243178");
});

Deno.test("tiqr: /token/init needs an owner and tiqr.regServer; stores the suite and an encrypted session; answers tiqrenroll", async () => {
  const t = await appWithAlice();
  const noUser = await init(t, { type: "tiqr" });
  assert.equal(noUser.status, 400);
  assert.equal(noUser.body.result.error.code, 905);
  assert.equal(noUser.body.result.error.message, "ERR905: Missing parameter: 'user'");
  const noServer = await init(t, { type: "tiqr", user: "alice", realm: "realm1" });
  assert.equal(noServer.status, 400);
  assert.match(noServer.body.result.error.message, /"tiqr\.regServer".*is not set/);
  assert.equal(await tokenCount(t), 0, "refused enrolments created nothing");

  await setConfig(t, { "tiqr.regServer": REG_SERVER });
  const body = await enrolOk(t, { type: "tiqr", user: "alice", realm: "realm1" });
  const serial = body.detail.serial;
  assert.match(serial, /^TiQR[0-9A-F]{8}$/);
  const enroll = body.detail.tiqrenroll;
  assert.equal(enroll.description, "URL for TiQR enrollment");
  const scan = scanEnrolment(enroll.value);
  assert.equal(
    enroll.value,
    `tiqrenroll://${REG_SERVER}?action=metadata&session=${scan.session}&serial=${serial}`,
  );
  assert.match(enroll.img, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
  const token = await listed(t, serial);
  assert.equal(token.tokentype, "tiqr");
  assert.equal(token.info.ocrasuite, "OCRA-1:HOTP-SHA1-6:QN10");
  assert.equal(token.otplen, 6);
  assert.equal(token.info["session.type"], "password");
  assert.notEqual(token.info.session, scan.session, "the session is stored encrypted");
  assert.equal((await getTokenBySerial(t.deps, serial)).keyEnc, "", "no key before the app's");
  // tiqr.ocrasuite: a valid question-only suite is taken, others are refused
  const bad = await jsonOf(
    await t.asAdmin("POST", "/system/setConfig", {
      body: { "tiqr.ocrasuite": "OCRA-1:HOTP-SHA1-6:C-QN10" },
    }),
  );
  assert.equal(bad.status, 400);
  await setConfig(t, { "tiqr.ocrasuite": "OCRA-1:HOTP-SHA256-8:QN08" });
  const other = await enrolOk(t, { type: "tiqr", user: "alice", realm: "realm1" });
  const second = await listed(t, other.detail.serial);
  assert.equal(second.info.ocrasuite, "OCRA-1:HOTP-SHA256-8:QN08");
  assert.equal(second.otplen, 8);
  await t.close();
});

Deno.test("tiqr: metadata as the app reads it (raw JSON, defaults and configured values); the session is checked and used up by the enrolment", async () => {
  const { t, body, serial } = await setup();
  const scan = scanEnrolment(body.detail.tiqrenroll.value);
  const meta = await appCall(t, "POST", { action: "metadata", session: scan.session, serial });
  assert.equal(meta.status, 200);
  assert.deepEqual(await meta.json(), {
    identity: { displayName: "Alice Anders", identifier: "alice_realm1" },
    service: {
      authenticationUrl: REG_SERVER,
      displayName: "privacyIDEA",
      enrollmentUrl: `${REG_SERVER}?action=enrollment&session=${scan.session}&serial=${serial}`,
      identifier: "org.privacyidea",
      infoUrl: "https://www.privacyidea.org",
      logoUrl: null,
      ocraSuite: "OCRA-1:HOTP-SHA1-6:QN10",
    },
  });
  await setConfig(t, {
    "tiqr.authServer": "https://auth.example/ttype/tiqr",
    "tiqr.serviceIdentifier": "org.example",
    "tiqr.serviceDisplayname": "Example Login",
    "tiqr.logoUrl": "https://example.org/logo.png",
    "tiqr.infoUrl": "https://example.org/",
  });
  const configured = await (await appCall(t, "GET", {
    action: "metadata",
    session: scan.session,
    serial,
  })).json();
  assert.equal(configured.service.authenticationUrl, "https://auth.example/ttype/tiqr");
  assert.equal(configured.service.identifier, "org.example");
  assert.equal(configured.service.displayName, "Example Login");
  assert.equal(configured.service.logoUrl, "https://example.org/logo.png");
  assert.equal(configured.service.infoUrl, "https://example.org/");
  assert.equal(configured.service.enrollmentUrl.startsWith(`${REG_SERVER}?`), true);

  // a wrong session: nothing told, nothing written
  for (const action of ["metadata", "enrollment"]) {
    const res = await jsonOf(
      await appCall(t, "POST", { action, serial, session: "0".repeat(40), secret: KEY20_HEX }),
    );
    assert.equal(res.status, 400, action);
    assert.equal(res.body.result.error.code, 905);
    assert.equal(res.body.result.error.message, "ERR905: Invalid Session");
  }
  // a bad secret is refused and leaves the session open
  const badSecret = await jsonOf(
    await appCall(t, "POST", {
      action: "enrollment",
      serial,
      session: scan.session,
      secret: "xyz",
    }),
  );
  assert.equal(badSecret.status, 400);
  assert.match(badSecret.body.result.error.message, /parameter "secret"/);
  assert.equal((await getTokenBySerial(t.deps, serial)).keyEnc, "");

  const app = await appEnrol(t, body.detail.tiqrenroll.value);
  const stored = await getTokenBySerial(t.deps, serial);
  assert.notEqual(stored.keyEnc, "");
  assert.equal(stored.keyEnc.includes(KEY20_HEX), false, "the secret is stored encrypted");
  assert.equal(stored.info.session, undefined, "the session is deleted");
  // the session is used up: a second enrolment or a metadata request is refused
  for (const action of ["metadata", "enrollment"]) {
    const res = await jsonOf(
      await appCall(t, "POST", { action, serial, session: app.session, secret: "ab".repeat(20) }),
    );
    assert.equal(res.body.result.error.message, "ERR905: Invalid Session", action);
  }
  assert.equal((await getTokenBySerial(t.deps, serial)).keyEnc, stored.keyEnc, "key unchanged");
  await t.close();
});

Deno.test("tiqr: the PIN starts a poll challenge; the app's OCRA response answers it; the final check succeeds once", async () => {
  const { t, body, serial } = await setup();
  const app = await appEnrol(t, body.detail.tiqrenroll.value);
  const { tid, entry } = await challenge(t);
  const res = await check(t, { user: "alice", realm: "realm1", pass: "pin" });
  assert.equal(res.body.detail.client_mode, "poll");
  assert.equal(entry.message, "Please scan the QR Code");
  assert.equal(entry.type, "tiqr");
  assert.equal(entry.serial, serial);
  assert.equal(entry.client_mode, "poll");
  assert.equal(entry.attributes.poll, true);
  assert.equal(entry.attributes.hideResponseInput, true);
  assert.match(entry.attributes.img, /^data:image\/png;base64,/);
  assert.equal(entry.image, entry.attributes.img);
  const scan = scanAuth(entry.attributes.value);
  assert.equal(scan.user, "alice_realm1");
  assert.equal(scan.service, "org.privacyidea");
  assert.equal(scan.sessionKey, tid);
  assert.match(scan.question, /^\d{10}$/);
  assert.equal(scan.name, "privacyIDEA");

  assert.equal(await poll(t, tid), false);
  // a wrong response: the fail counter goes up and the app learns how many tries are left
  assert.equal(await appAnswer(t, app, entry.attributes.value, "000000"), "INVALID_RESPONSE:9");
  assert.equal(await failcount(t, serial), 1);
  // the client's final check before the answer is a wrong answer too (as in privacyIDEA)
  assert.equal((await finish(t, tid)).body.result.value, false, "not answered yet");
  assert.equal(await failcount(t, serial), 2);
  assert.equal(await appAnswer(t, app, entry.attributes.value, "111111"), "INVALID_RESPONSE:7");
  assert.equal(await failcount(t, serial), 3);
  assert.equal(await poll(t, tid), false);
  // the right response
  assert.equal(await appAnswer(t, app, entry.attributes.value), "OK");
  assert.equal(
    await appAnswer(t, app, entry.attributes.value),
    "INVALID_CHALLENGE",
    "answered once",
  );
  assert.equal(await poll(t, tid), true);
  const ok = await finish(t, tid);
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.result.authentication, "ACCEPT");
  assert.equal(await failcount(t, serial), 0, "a success resets the fail counter");
  const replay = await finish(t, tid);
  assert.equal(replay.body.result.value, false, "the challenge is consumed");
  assert.equal(await poll(t, tid), false);
  // PIN + a response without a challenge never matches
  const direct = await check(t, { user: "alice", realm: "realm1", pass: "pin618126" });
  assert.equal(direct.body.result.value, false);
  await t.close();
});

Deno.test("tiqr: the spec vector end to end (question 0123456789, response 618126) and /validate/triggerchallenge", async () => {
  const { t, body, serial } = await setup();
  await appEnrol(t, body.detail.tiqrenroll.value);
  const saved = t.deps.random;
  // every draw of the trigger gives 0, 1, 2, …: the question is 0123456789
  (t.deps as { random: Random }).random = {
    bytes: (n) => Uint8Array.from({ length: n }, (_, i) => i % 10),
  };
  let res;
  try {
    res = await jsonOf(await t.asAdmin("POST", "/validate/triggerchallenge", { body: { serial } }));
  } finally {
    (t.deps as { random: Random }).random = saved;
  }
  assert.equal(res.body.result.value, 1, JSON.stringify(res.body));
  const entry = res.body.detail.multi_challenge[0];
  const tid = res.body.detail.transaction_id;
  assert.equal(
    entry.attributes.value,
    `tiqrauth://alice_realm1@org.privacyidea/${tid}/0123456789/privacyIDEA`,
  );
  const answer = await t.post("/ttype/tiqr", {
    action: "authentication",
    userId: "alice_realm1",
    sessionKey: tid,
    response: "618126",
    operation: "login",
  });
  assert.equal(await answer.text(), "OK");
  const ok = await check(t, { serial, transaction_id: tid, pass: "" });
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  await t.close();
});

Deno.test("tiqr: parallel final checks and parallel app answers: exactly one succeeds", async () => {
  const { t, body } = await setup();
  const app = await appEnrol(t, body.detail.tiqrenroll.value);
  const { tid, entry } = await challenge(t);
  const answers = await Promise.all(
    Array.from({ length: 4 }, () => appAnswer(t, app, entry.attributes.value)),
  );
  assert.deepEqual(answers.filter((a) => a === "OK").length, 1, answers.join());
  assert.equal(answers.filter((a) => a === "INVALID_CHALLENGE").length, 3, answers.join());
  const finals = await Promise.all(Array.from({ length: 4 }, () => finish(t, tid)));
  assert.equal(finals.filter((r) => r.body.result.value === true).length, 1);
  await t.close();
});

Deno.test("tiqr: expired and unknown challenges, a maxed fail counter, missing parameters and an unknown action", async () => {
  const { t, body, serial } = await setup();
  const app = await appEnrol(t, body.detail.tiqrenroll.value);
  // unknown transaction
  const unknown = await t.post("/ttype/tiqr", {
    userId: "alice_realm1",
    sessionKey: "12345678901234567890",
    response: "123456",
    operation: "login",
  });
  assert.equal(await unknown.text(), "INVALID_CHALLENGE");
  // expired: refused, and its row is deleted
  const { tid, entry } = await challenge(t);
  t.clock.advance(121_000);
  assert.equal(await appAnswer(t, app, entry.attributes.value), "INVALID_CHALLENGE");
  const listedChallenges = await jsonOf(
    await t.asAdmin("GET", "/token/challenges/", { query: { serial } }),
  );
  assert.equal(listedChallenges.body.result.value.count, 0);
  assert.equal(await failcount(t, serial), 0, "an expired challenge raises no fail counter");
  assert.equal((await finish(t, tid)).body.result.value, false);
  await jsonOf(await t.asAdmin("POST", "/token/reset", { body: { serial } }));

  // the fail counter at its limit: no response is checked any more
  const second = await challenge(t);
  await jsonOf(await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: 2 } }));
  assert.equal(
    await appAnswer(t, app, second.entry.attributes.value, "000000"),
    "INVALID_RESPONSE:1",
  );
  assert.equal(
    await appAnswer(t, app, second.entry.attributes.value, "000000"),
    "INVALID_RESPONSE:0",
  );
  assert.equal(await appAnswer(t, app, second.entry.attributes.value), "INVALID_RESPONSE:0");
  assert.equal(await failcount(t, serial), 2);
  assert.equal(
    await poll(t, second.tid),
    false,
    "the right response after the limit answered nothing",
  );

  // missing parameters and an unknown action: the envelope's errors
  for (
    const [fields, message] of [
      [{ sessionKey: "1", response: "1", operation: "login" }, "Missing parameter: 'userId'"],
      [
        { action: "authentication", userId: "u", response: "1", operation: "x" },
        "Missing parameter: 'sessionKey'",
      ],
      [{ action: "metadata", serial }, "Missing parameter: 'session'"],
      [{ action: "enrollment", serial, session: "s" }, "Missing parameter: 'secret'"],
      [{ action: "unknown" }, "Allowed actions are ['metadata', 'enrollment', 'authentication']"],
    ] as const
  ) {
    const res = await jsonOf(await t.post("/ttype/tiqr", fields));
    assert.equal(res.status, 400, message);
    assert.equal(res.body.result.status, false);
    assert.equal(res.body.result.error.code, 905);
    assert.equal(res.body.result.error.message, `ERR905: ${message}`);
  }
  // an unknown serial, or one of another type
  const hotp = await enrolOk(t, { type: "hotp", genkey: 1 });
  for (const s of ["TiQR00000000", hotp.detail.serial]) {
    const res = await jsonOf(
      await t.post("/ttype/tiqr", { action: "metadata", serial: s, session: "s" }),
    );
    assert.equal(res.status, 404, s);
    assert.equal(res.body.result.error.code, 601);
  }
  await t.close();
});

Deno.test("tiqr: TiqrChallengeValidityTime sets the challenge's lifetime; a disabled token answers nothing", async () => {
  const { t, body, serial } = await setup();
  const app = await appEnrol(t, body.detail.tiqrenroll.value);
  await setConfig(t, { TiqrChallengeValidityTime: "600" });
  const { tid, entry } = await challenge(t);
  t.clock.advance(300_000);
  assert.equal(await appAnswer(t, app, entry.attributes.value), "OK");
  assert.equal((await finish(t, tid)).body.result.value, true);
  const next = await challenge(t);
  await jsonOf(await t.asAdmin("POST", "/token/disable", { body: { serial } }));
  assert.equal(await appAnswer(t, app, next.entry.attributes.value), "INVALID_CHALLENGE");
  assert.equal(await failcount(t, serial), 0);
  await t.close();
});

Deno.test("tiqr: two tiqr tokens challenged in one transaction: the app of either answers; a wrong response counts for both", async () => {
  const { t, body, serial } = await setup();
  const second = await enrolOk(t, { type: "tiqr", pin: "pin", user: "alice", realm: "realm1" });
  await appEnrol(t, body.detail.tiqrenroll.value);
  const app2 = await appEnrol(
    t,
    second.detail.tiqrenroll.value,
    "0102030405060708090a0b0c0d0e0f1011121314",
  );
  const res = await check(t, { user: "alice", realm: "realm1", pass: "pin" });
  const tid = res.body.detail.transaction_id;
  const entries = res.body.detail.multi_challenge as Json[];
  assert.equal(entries.length, 2);
  const mine = entries.find((e) => e.serial === second.detail.serial)!;
  assert.equal(mine.transaction_id, tid);
  assert.equal(await appAnswer(t, app2, mine.attributes.value, "000000"), "INVALID_RESPONSE:9");
  assert.equal(await failcount(t, serial), 1);
  assert.equal(await failcount(t, second.detail.serial), 1);
  // the second token's app answers its own question
  assert.equal(await appAnswer(t, app2, mine.attributes.value), "OK");
  const ok = await finish(t, tid);
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.detail.serial, second.detail.serial);
  assert.equal((await finish(t, tid)).body.result.value, false);
  await t.close();
});

Deno.test("tiqr: /ttype/tiqr writes one audit row per request: token type, serial, the answer, success", async () => {
  const { t, body, serial } = await setup();
  const app = await appEnrol(t, body.detail.tiqrenroll.value);
  const { entry } = await challenge(t);
  assert.equal(await appAnswer(t, app, entry.attributes.value, "000000"), "INVALID_RESPONSE:9");
  assert.equal(await appAnswer(t, app, entry.attributes.value), "OK");
  const rows = await auditRows(t, "POST /ttype/tiqr");
  // newest first: the answer, the wrong answer, the enrolment
  assert.equal(rows.length, 3, JSON.stringify(rows));
  for (const r of rows) {
    assert.equal(r.token_type, "tiqr");
    assert.equal(r.serial, serial);
  }
  assert.deepEqual(rows.map((r) => [r.info, r.success]), [
    ["OK", 1],
    ["INVALID_RESPONSE:9", 0],
    ["OK", 1],
  ]);
  const meta = await auditRows(t, "GET /ttype/tiqr");
  assert.equal(meta.length, 1);
  assert.equal(meta[0].success, 1);
  assert.equal(meta[0].serial, serial);
  await t.close();
});
