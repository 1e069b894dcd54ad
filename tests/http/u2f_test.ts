/**
 * `u2f` tokens (spec 14 §8): enrolment refused as privacyIDEA 3.12 refuses it,
 * authentication of registrations carried over (the real device's vector of
 * §8.3 and answers signed by a key the test makes), and `GET /ttype/u2f`.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { jsonOf } from "../test_app.ts";
import { addPolicy, setConfig } from "./_challenge_types.ts";
import {
  newKey,
  seedU2f,
  signAnswer,
  tokenState,
  U2F_PIN,
  u2fApp,
  u2fChallenge,
  u2fCheck,
  VECTOR,
} from "./_u2f.ts";

const APP_ID = "https://u2f.example.com";

Deno.test("u2f: the real device's answer (spec 14 §8.3) authenticates once; the same answer again fails on its counter", async () => {
  const { t, random } = await u2fApp();
  try {
    await seedU2f(t, { serial: VECTOR.serial, pubKeyHex: VECTOR.pubKey });
    random.next(VECTOR.nonceHex);
    const { tid, entry, body } = await u2fChallenge(t);
    assert.equal(body.detail.message, `Please confirm with your U2F token (${VECTOR.description})`);
    assert.equal(entry.client_mode, "u2f");
    assert.equal(entry.serial, VECTOR.serial);
    assert.equal(entry.type, "u2f");
    assert.deepEqual(entry.attributes, {
      u2fSignRequest: {
        appId: VECTOR.appId,
        version: "U2F_V2",
        challenge: VECTOR.nonceB64url,
        keyHandle: VECTOR.keyHandle,
      },
      hideResponseInput: true,
      img: "",
    });
    assert.equal(entry.image, "");
    const answer = {
      user: "alice",
      realm: "realm1",
      pass: "",
      transaction_id: tid,
      clientdata: VECTOR.clientData,
      signaturedata: VECTOR.signatureData,
    };
    const ok = await u2fCheck(t, answer);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    assert.equal(ok.body.detail.serial, VECTOR.serial);
    assert.equal((await tokenState(t, VECTOR.serial)).count, VECTOR.counter);

    // a new challenge with the same nonce: the device's old answer carries counter 3, not above
    random.next(VECTOR.nonceHex);
    const again = await u2fChallenge(t);
    const replay = await u2fCheck(t, { ...answer, transaction_id: again.tid });
    assert.equal(replay.status, 200);
    assert.equal(replay.body.result.value, false);
    assert.equal(replay.body.detail.message, "Response did not match the challenge.");
    assert.deepEqual(await tokenState(t, VECTOR.serial), { count: 3, failcount: 1, active: true });
  } finally {
    await t.close();
  }
});

Deno.test("u2f: a token whose stored counter is already 3 refuses the vector's answer", async () => {
  const { t, random } = await u2fApp();
  try {
    await seedU2f(t, { serial: VECTOR.serial, pubKeyHex: VECTOR.pubKey, count: 3 });
    random.next(VECTOR.nonceHex);
    const { tid } = await u2fChallenge(t);
    const res = await u2fCheck(t, {
      user: "alice",
      pass: "",
      transaction_id: tid,
      clientdata: VECTOR.clientData,
      signaturedata: VECTOR.signatureData,
    });
    assert.equal(res.body.result.value, false);
    assert.equal((await tokenState(t, VECTOR.serial)).count, 3);
  } finally {
    await t.close();
  }
});

Deno.test("u2f: answers that fail (wrong key, other challenge, old counter, missing data) change no counter; the right one then succeeds", async () => {
  const { t } = await u2fApp();
  try {
    const key = newKey();
    await seedU2f(t, { serial: "U2FNEG", pubKeyHex: key.pubKeyHex, appId: APP_ID, count: 5 });
    const { tid, entry } = await u2fChallenge(t);
    const challenge = entry.attributes.u2fSignRequest.challenge as string;
    assert.match(challenge, /^[A-Za-z0-9_-]{43}$/);
    const send = (a: Record<string, string>) =>
      u2fCheck(t, { user: "alice", pass: "", transaction_id: tid, ...a });
    const cases: [string, Record<string, string>][] = [
      ["another key's signature", signAnswer(newKey(), { appId: APP_ID, challenge, counter: 9 })],
      [
        "another challenge",
        signAnswer(key, {
          appId: APP_ID,
          challenge: Buffer.alloc(32).toString("base64url"),
          counter: 9,
        }),
      ],
      ["another appId", signAnswer(key, { appId: "https://evil.example", challenge, counter: 9 })],
      ["an old counter", signAnswer(key, { appId: APP_ID, challenge, counter: 5 })],
      ["no signaturedata", {
        clientdata: signAnswer(key, { appId: APP_ID, challenge, counter: 9 }).clientdata,
      }],
      ["garbage", { clientdata: "!!!", signaturedata: "AQ" }],
    ];
    for (const [what, answer] of cases) {
      const res = await send(answer);
      assert.equal(res.status, 200, what);
      assert.equal(res.body.result.value, false, what);
      assert.equal(res.body.detail.message, "Response did not match the challenge.", what);
      assert.equal((await tokenState(t, "U2FNEG")).count, 5, what);
    }
    // the user presence byte is not required to be 1 (privacyIDEA signs over it as sent)
    const good = await send(signAnswer(key, { appId: APP_ID, challenge, counter: 6, up: 0 }));
    assert.equal(good.body.result.value, true, JSON.stringify(good.body));
    assert.deepEqual(await tokenState(t, "U2FNEG"), { count: 6, failcount: 0, active: true });
  } finally {
    await t.close();
  }
});

Deno.test("u2f: client data of another typ answers ERR401 Incorrect navigator.id and changes nothing", async () => {
  const { t } = await u2fApp();
  try {
    const key = newKey();
    await seedU2f(t, { serial: "U2FTYP", pubKeyHex: key.pubKeyHex, appId: APP_ID });
    const { tid, entry } = await u2fChallenge(t);
    const challenge = entry.attributes.u2fSignRequest.challenge as string;
    const res = await u2fCheck(t, {
      user: "alice",
      pass: "",
      transaction_id: tid,
      ...signAnswer(key, {
        appId: APP_ID,
        challenge,
        counter: 1,
        typ: "navigator.id.finishEnrollment",
      }),
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.result.status, false);
    assert.equal(res.body.result.error.code, 401);
    assert.equal(res.body.result.error.message, "ERR401: Incorrect navigator.id");
    assert.equal((await tokenState(t, "U2FTYP")).count, 0);
    // the challenge is still open: the right answer succeeds (pass may be left out)
    const ok = await u2fCheck(t, {
      user: "alice",
      transaction_id: tid,
      ...signAnswer(key, { appId: APP_ID, challenge, counter: 1 }),
    });
    assert.equal(ok.body.result.value, true);
  } finally {
    await t.close();
  }
});

Deno.test("u2f: one answer sent ten times at once succeeds once; answers to two transactions with one counter succeed once", async () => {
  const { t } = await u2fApp();
  try {
    const key = newKey();
    await seedU2f(t, { serial: "U2FPAR", pubKeyHex: key.pubKeyHex, appId: APP_ID });
    const one = await u2fChallenge(t);
    const answer = {
      user: "alice",
      pass: "",
      transaction_id: one.tid,
      ...signAnswer(key, {
        appId: APP_ID,
        challenge: one.entry.attributes.u2fSignRequest.challenge,
        counter: 4,
      }),
    };
    const results = await Promise.all(Array.from({ length: 10 }, () => u2fCheck(t, answer)));
    assert.equal(results.filter((r) => r.body.result.value === true).length, 1);
    assert.ok(results.every((r) => r.status === 200));
    assert.equal((await tokenState(t, "U2FPAR")).count, 4);

    // two open transactions, each answered with a valid signature of counter 7: the counter's
    // compare-and-set lets one through
    const a = await u2fChallenge(t);
    const b = await u2fChallenge(t);
    const answerTo = (c: typeof a) => ({
      user: "alice",
      pass: "",
      transaction_id: c.tid,
      ...signAnswer(key, {
        appId: APP_ID,
        challenge: c.entry.attributes.u2fSignRequest.challenge,
        counter: 7,
      }),
    });
    const both = await Promise.all([u2fCheck(t, answerTo(a)), u2fCheck(t, answerTo(b))]);
    assert.equal(both.filter((r) => r.body.result.value === true).length, 1);
    assert.equal((await tokenState(t, "U2FPAR")).count, 7);
  } finally {
    await t.close();
  }
});

Deno.test("u2f: /validate/triggerchallenge makes the challenge; two u2f tokens of one transaction share its nonce", async () => {
  const { t } = await u2fApp();
  try {
    const key = newKey();
    await seedU2f(t, { serial: "U2FTR1", pubKeyHex: key.pubKeyHex, appId: APP_ID });
    await seedU2f(t, {
      serial: "U2FTR2",
      pubKeyHex: newKey().pubKeyHex,
      appId: APP_ID,
      keyHandle: new Uint8Array([1, 2, 3, 4]),
      description: "second key",
    });
    const res = await jsonOf(
      await t.asAdmin("POST", "/validate/triggerchallenge", {
        body: { user: "alice", realm: "realm1" },
      }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const entries = res.body.detail.multi_challenge;
    assert.equal(entries.length, 2);
    const bySerial = Object.fromEntries(entries.map((e: { serial: string }) => [e.serial, e]));
    const c1 = bySerial.U2FTR1.attributes.u2fSignRequest;
    const c2 = bySerial.U2FTR2.attributes.u2fSignRequest;
    assert.equal(c1.challenge, c2.challenge);
    assert.equal(c2.keyHandle, "AQIDBA");
    assert.equal(bySerial.U2FTR2.message, "Please confirm with your U2F token (second key)");
    const ok = await u2fCheck(t, {
      user: "alice",
      pass: "",
      transaction_id: res.body.detail.transaction_id,
      ...signAnswer(key, { appId: APP_ID, challenge: c1.challenge, counter: 1 }),
    });
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    assert.equal(ok.body.detail.serial, "U2FTR1");
  } finally {
    await t.close();
  }
});

Deno.test("u2f: a wrong PIN makes no challenge; a PIN plus anything is no u2f answer", async () => {
  const { t } = await u2fApp();
  try {
    await seedU2f(t, { serial: "U2FPIN", pubKeyHex: newKey().pubKeyHex, appId: APP_ID });
    const wrong = await u2fCheck(t, { user: "alice", pass: "nope" });
    assert.equal(wrong.body.result.value, false);
    assert.equal(wrong.body.detail.transaction_id, undefined);
    const otp = await u2fCheck(t, { user: "alice", pass: `${U2F_PIN}123456` });
    assert.equal(otp.body.result.value, false);
    assert.equal(otp.body.detail.transaction_id, undefined);
  } finally {
    await t.close();
  }
});

Deno.test("POST /token/init type=u2f is refused with ERR1610 as in privacyIDEA 3.12, both steps, and creates nothing", async () => {
  const { t } = await u2fApp();
  try {
    for (
      const body of [
        { type: "u2f", serial: "U2FNEW" },
        { type: "u2f", serial: "U2FNEW", regdata: "BQ", clientdata: "e30" },
        { type: "U2F", user: "alice", realm: "realm1" },
      ]
    ) {
      const res = await jsonOf(await t.asAdmin("POST", "/token/init", { body }));
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.result.error.code, 1610);
      assert.equal(
        res.body.result.error.message,
        "ERR1610: init token failed. Unknown token type: u2f",
      );
    }
    const list = await jsonOf(await t.asAdmin("GET", "/token/"));
    assert.equal(list.body.result.value.count, 0);
  } finally {
    await t.close();
  }
});

Deno.test("GET /policy/defs lists the u2f actions but no enrollU2F and no enrolment actions of u2f", async () => {
  const { t } = await u2fApp();
  try {
    const defs = (await jsonOf(await t.asAdmin("GET", "/policy/defs"))).body.result.value;
    assert.equal(defs.authentication.u2f_facets.type, "str");
    assert.equal(defs.authentication.u2f_challenge_text.type, "str");
    assert.equal(defs.authorization.u2f_req.type, "str");
    assert.equal(defs.admin.enrollU2F, undefined);
    assert.equal(defs.user.enrollU2F, undefined);
    assert.equal(defs.enrollment.u2f_req, undefined);
    assert.equal(defs.enrollment.u2f_no_verify_certificate, undefined);
    assert.equal(defs.enrollment.u2f_max_token_per_user, undefined);
  } finally {
    await t.close();
  }
});

Deno.test("GET /ttype/u2f: ERR905 without u2f.appId; then the facets of u2f_facets and the appId, unauthenticated", async () => {
  const { t } = await u2fApp();
  try {
    const none = await jsonOf(await t.get("/ttype/u2f"));
    assert.equal(none.status, 400);
    assert.equal(none.body.result.error.code, 905);
    assert.equal(none.body.result.error.message, "ERR905: u2f is not configured");

    await setConfig(t, { "u2f.appId": "https://puck.az.intern/" });
    const plain = await t.get("/ttype/u2f");
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get("content-type"), "application/fido.trusted-apps+json");
    assert.deepEqual(await plain.json(), {
      trustedFacets: [{ version: { major: 1, minor: 0 }, ids: ["https://puck.az.intern"] }],
    });

    await addPolicy(t, "facets", {
      scope: "authentication",
      action: "u2f_facets=host1.example host2.example",
    });
    const withFacets = await t.get("/ttype/u2f");
    assert.deepEqual((await withFacets.json()).trustedFacets[0].ids, [
      "https://host1.example",
      "https://host2.example",
      "https://puck.az.intern",
    ]);
    // no login needed, and a JWT changes nothing
    const asAdmin = await t.asAdmin("GET", "/ttype/u2f");
    assert.equal(asAdmin.status, 200);
    assert.deepEqual((await asAdmin.json()).trustedFacets[0].ids, [
      "https://host1.example",
      "https://host2.example",
      "https://puck.az.intern",
    ]);
    // POST answers as GET does, as privacyIDEA's /ttype/<type>
    const posted = await t.post("/ttype/u2f", {});
    assert.equal(posted.status, 200);
    assert.equal(posted.headers.get("content-type"), "application/fido.trusted-apps+json");
    assert.deepEqual((await posted.json()).trustedFacets[0].ids, [
      "https://host1.example",
      "https://host2.example",
      "https://puck.az.intern",
    ]);
  } finally {
    await t.close();
  }
});
