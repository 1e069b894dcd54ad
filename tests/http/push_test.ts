/**
 * Push tokens with the Authenticator app double (tests/http/_push_app.ts), poll-only, over
 * real HTTP: enrolment in two steps, challenge, signed poll, signed answer (accept,
 * decline), /validate/polltransaction and the final /validate/check; forged, late and
 * replayed polls and answers are refused and change nothing. Spec 13 §1, §3.1.
 */
import assert from "node:assert/strict";
import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { jsonOf, type TestApp } from "../test_app.ts";
import type { ServedApp } from "./_serve_app.ts";
import { enrolPush, postForm, pushSetup, signB32 } from "./_push_app.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { phoneKeyOf, signText, verifyText } from "../../src/domain/token/types/push.ts";

async function pollTx(served: ServedApp, tid: string) {
  const res = await fetch(`${served.url}/validate/polltransaction?transaction_id=${tid}`);
  return await res.json();
}

async function openChallenges(t: TestApp, serial: string) {
  const res = await jsonOf(await t.asAdmin("GET", "/token/challenges/", { query: { serial } }));
  return res.body.result.value.challenges as Record<string, unknown>[];
}

Deno.test("push: enrolment in two steps gives the app the server key, poll-only login", async () => {
  const { t, served, app } = await pushSetup();
  try {
    const init = await jsonOf(
      await t.asAdmin("POST", "/token/init", {
        body: { type: "push", genkey: 1, user: "alice", realm: "realm1", pin: "1234" },
        json: true,
      }),
    );
    assert.equal(init.status, 200, JSON.stringify(init.body));
    const d = init.body.detail;
    assert.equal(d.rollout_state, "clientwait");
    assert.match(d.serial, /^PIPU[0-9A-F]{8}$/);
    assert.match(d.enrollment_credential, /^[0-9a-f]{40}$/);
    assert.equal(
      d.pushurl.value,
      `otpauth://pipush/${d.serial}?url=${
        served.url.replace("http://", "http%3A//").replace(/:(\d+)$/, "%3A$1")
      }/ttype/push&ttl=10&issuer=privacyIDEA&enrollment_credential=${d.enrollment_credential}` +
        `&v=1&serial=${d.serial}&sslverify=1&poll_only=True`,
    );
    assert.equal(d.pushurl.description, "URL for privacyIDEA Push Token");
    assert.match(d.pushurl.img, /^<img /);
    assert.equal(d.otpkey, undefined);
    let token = await getTokenBySerial(t.deps, d.serial);
    assert.equal(token.active, false);
    // a PIN check before the app registered: not yet enrolled
    const early = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    assert.equal(early.body.result.value, false);

    const reg = await app.enrol(d.pushurl.value);
    assert.equal(reg.status, 200, JSON.stringify(reg.body));
    assert.equal(reg.body.result.value, true);
    assert.equal(reg.body.detail.rollout_state, "enrolled");
    assert.equal(reg.body.detail.serial, d.serial);
    assert.ok(!reg.body.detail.public_key.includes("BEGIN"));
    token = await getTokenBySerial(t.deps, d.serial);
    assert.equal(token.rolloutState, "enrolled");
    assert.equal(token.active, true);
    assert.equal(token.info.public_key_smartphone.value, app.pubkey());
    assert.equal(token.info.firebase_token.value, "");
    assert.equal(token.info.enrollment_credential, undefined);
    assert.match(token.info.public_key_server.value, /^-----BEGIN RSA PUBLIC KEY-----/);
    // the server's private key is stored encrypted
    assert.equal(token.info.private_key_server.type, "password");
    assert.ok(!token.info.private_key_server.value.includes("PRIVATE KEY"));
    const listed = await jsonOf(
      await t.asAdmin("GET", "/token/", { query: { serial: d.serial } }),
    );
    assert.ok(!JSON.stringify(listed.body).includes("PRIVATE KEY"));

    // login: PIN → challenge
    const first = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    assert.equal(first.body.result.authentication, "CHALLENGE");
    const entry = first.body.detail.multi_challenge[0];
    assert.equal(entry.type, "push");
    assert.equal(entry.client_mode, "poll");
    assert.equal(entry.message, "Please confirm the authentication on your mobile device!");
    assert.deepEqual(entry.attributes, { hideResponseInput: true });
    const tid = first.body.detail.transaction_id;
    assert.match(tid, /^\d{20}$/);
    assert.equal((await pollTx(served, tid)).detail.challenge_status, "pending");
    // the final check before the app answered: rejected
    const tooEarly = await postForm(served, "/validate/check", {
      user: "alice",
      transaction_id: tid,
      pass: "",
    });
    assert.equal(tooEarly.body.result.authentication, "REJECT");

    const poll = await app.poll();
    assert.equal(poll.status, 200, JSON.stringify(poll.body));
    assert.equal(poll.body.result.value.length, 1);
    const c = poll.body.result.value[0];
    assert.deepEqual(Object.keys(c), [
      "nonce",
      "question",
      "serial",
      "title",
      "sslverify",
      "url",
      "signature",
    ]);
    assert.equal(c.question, "Do you want to confirm the login?");
    assert.equal(c.title, "privacyIDEA");
    assert.equal(c.sslverify, "1");
    assert.equal(c.url, `${served.url}/ttype/push`);
    assert.match(c.nonce, /^[A-Z2-7]{32}$/);
    assert.ok(app.isServerSigned(c), "the server signed the challenge");

    const answer = await app.answer(c);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.result.value, true);
    const accepted = await pollTx(served, tid);
    assert.equal(accepted.result.value, true);
    assert.equal(accepted.result.authentication, "ACCEPT");
    assert.equal(accepted.detail.challenge_status, "accept");
    // an answered challenge is no longer offered
    assert.deepEqual((await app.poll()).body.result.value, []);

    const done = await postForm(served, "/validate/check", {
      user: "alice",
      transaction_id: tid,
      pass: "",
    });
    assert.equal(done.body.result.value, true, JSON.stringify(done.body));
    assert.equal(done.body.result.authentication, "ACCEPT");
    // the transaction is used up
    assert.equal((await pollTx(served, tid)).detail.challenge_status, "pending");
    const again = await postForm(served, "/validate/check", {
      user: "alice",
      transaction_id: tid,
      pass: "",
    });
    assert.equal(again.body.result.value, false);
  } finally {
    await served.close();
    await t.close();
  }
});

Deno.test("push: a declined challenge gives DECLINED and the login fails", async () => {
  const { t, served, app } = await pushSetup();
  try {
    await enrolPush(t, app);
    const first = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    const tid = first.body.detail.transaction_id;
    const [c] = (await app.poll()).body.result.value;
    const declined = await app.answer(c, { decline: true });
    assert.equal(declined.body.result.value, true);
    const polled = await pollTx(served, tid);
    assert.equal(polled.result.value, false);
    assert.equal(polled.result.authentication, "DECLINED");
    assert.equal(polled.detail.challenge_status, "declined");
    // a declined challenge is no longer offered and cannot be accepted afterwards
    assert.deepEqual((await app.poll()).body.result.value, []);
    assert.equal((await app.answer(c)).body.result.value, false);
    assert.equal((await pollTx(served, tid)).detail.challenge_status, "declined");
    const done = await postForm(served, "/validate/check", {
      user: "alice",
      transaction_id: tid,
      pass: "",
    });
    assert.equal(done.body.result.value, false);
    assert.equal(done.body.result.authentication, "REJECT");
  } finally {
    await served.close();
    await t.close();
  }
});

Deno.test("push: forged, late and replayed polls are refused", async () => {
  const { t, served, app } = await pushSetup();
  try {
    const { serial } = await enrolPush(t, app);
    await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    const before = (await getTokenBySerial(t.deps, serial)).info;
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const ts = app.timestamp();
    const forged = await app.poll({
      timestamp: ts,
      signature: signB32(other.privateKey, `${serial}|${ts}`),
    });
    assert.equal(forged.status, 400);
    assert.equal(forged.body.result.error.code, 10);
    assert.equal(forged.body.result.error.message, "ERR10: Could not verify signature!");
    const late = await app.poll({ timestamp: app.timestamp(-120_000) });
    assert.equal(late.status, 400);
    assert.match(late.body.result.error.message, /^ERR10: Timestamp .* not in valid range\.$/);
    const future = await app.poll({ timestamp: app.timestamp(120_000) });
    assert.equal(future.status, 400);
    const bad = await app.poll({ timestamp: "yesterday" });
    assert.equal(
      bad.body.result.error.message,
      "ERR10: Could not parse timestamp yesterday. ISO-Format required.",
    );
    const unknown = await fetch(
      `${served.url}/ttype/push?serial=PIPU00000000&timestamp=${
        encodeURIComponent(app.timestamp())
      }&signature=AAAA`,
    );
    assert.equal((await unknown.json()).result.error.message, "ERR10: Could not verify signature!");
    const missing = await fetch(`${served.url}/ttype/push?serial=${serial}`);
    assert.equal(missing.status, 400);
    assert.equal(
      (await missing.json()).result.error.message,
      "ERR905: Missing parameter: 'timestamp'",
    );
    // nothing the refused polls did changed the token
    assert.deepEqual((await getTokenBySerial(t.deps, serial)).info, before);
    const good = await app.poll();
    assert.equal(good.status, 200);
    assert.equal(good.body.result.value.length, 1);
    // the same poll again (replay) is refused, a fresh one is not
    const replay = await app.poll({ timestamp: good.timestamp, signature: good.signature });
    assert.equal(replay.status, 400);
    assert.equal(replay.body.result.error.message, "ERR10: Could not verify signature!");
    assert.equal((await app.poll()).status, 200);
  } finally {
    await served.close();
    await t.close();
  }
});

Deno.test("push: forged, replayed and late answers change nothing", async () => {
  const { t, served, app } = await pushSetup();
  try {
    const { serial } = await enrolPush(t, app);
    const first = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    const tid = first.body.detail.transaction_id;
    const [c] = (await app.poll()).body.result.value;
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const forged = await app.answer(c, {
      signature: signB32(other.privateKey, `${c.nonce}|${serial}`),
    });
    assert.equal(forged.status, 200);
    assert.equal(forged.body.result.value, false);
    // a signature of the accept string does not decline, and the other way round
    const acceptSig = signB32(app.keys.privateKey, `${c.nonce}|${serial}`);
    assert.equal(
      (await app.answer(c, { decline: true, signature: acceptSig })).body.result.value,
      false,
    );
    const notB32 = await app.answer(c, { signature: "not base32!" });
    assert.equal(notB32.body.result.value, false);
    assert.equal((await pollTx(served, tid)).detail.challenge_status, "pending");
    assert.equal((await openChallenges(t, serial))[0].otp_status, false);
    assert.equal((await app.poll()).body.result.value.length, 1);
    // accepted once; the same answer again is refused
    const ok = await app.answer(c);
    assert.equal(ok.body.result.value, true);
    assert.equal((await app.answer(c, { signature: ok.signature })).body.result.value, false);
    // unknown serial
    const unknown = await postForm(served, "/ttype/push", {
      serial: "PIPU00000000",
      nonce: c.nonce,
      signature: ok.signature,
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.result.error.message, "The requested token could not be found.");
    // a late answer: the next challenge expires (120 s) before the app answers
    const second = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    const tid2 = second.body.detail.transaction_id;
    const [c2] = (await app.poll()).body.result.value;
    t.clock.advance(121_000);
    assert.equal((await app.answer(c2)).body.result.value, false);
    t.clock.advance(-121_000);
    assert.equal((await pollTx(served, tid2)).detail.challenge_status, "pending");
  } finally {
    await served.close();
    await t.close();
  }
});

Deno.test("push: the second enrolment step needs the credential and a token in clientwait", async () => {
  const { t, served, app } = await pushSetup();
  try {
    const init = await jsonOf(
      await t.asAdmin("POST", "/token/init", {
        body: { type: "push", genkey: 1, user: "alice", realm: "realm1" },
        json: true,
      }),
    );
    const serial = init.body.detail.serial;
    const wrong = await app.enrol(init.body.detail.pushurl.value, { credential: "00".repeat(20) });
    assert.equal(wrong.status, 400);
    assert.equal(
      wrong.body.result.error.message,
      "ERR905: Invalid enrollment credential. You are not authorized to finalize this token.",
    );
    let token = await getTokenBySerial(t.deps, serial);
    assert.equal(token.rolloutState, "clientwait");
    assert.equal(token.info.public_key_smartphone, undefined);
    assert.equal(token.info.private_key_server, undefined);
    const noCred = await postForm(served, "/ttype/push", { serial, fbtoken: "", pubkey: "x" });
    assert.equal(
      noCred.body.result.error.message,
      "ERR905: Missing parameter: 'enrollment_credential'",
    );
    const missing = await postForm(served, "/ttype/push", {});
    assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: 'serial'");
    const neither = await postForm(served, "/ttype/push", { serial });
    assert.equal(neither.body.result.error.message, "ERR905: Missing parameters!");
    assert.equal((await app.enrol(init.body.detail.pushurl.value)).status, 200);
    token = await getTokenBySerial(t.deps, serial);
    const keys = token.info.public_key_server.value;
    // the step again (a replay): the token is no longer waiting, its keys stay
    const replay = await app.enrol(init.body.detail.pushurl.value);
    assert.equal(replay.status, 404);
    assert.equal(
      replay.body.result.error.message,
      "No token with this serial number in the rollout state 'clientwait'.",
    );
    assert.equal((await getTokenBySerial(t.deps, serial)).info.public_key_server.value, keys);
    // without genkey: privacyIDEA's message
    const noGenkey = await jsonOf(
      await t.asAdmin("POST", "/token/init", { body: { type: "push", user: "alice" } }),
    );
    assert.equal(
      noGenkey.body.result.error.message,
      "ERR905: Invalid Parameters. Either provide (genkey) or (serial, fbtoken, pubkey).",
    );
  } finally {
    await served.close();
    await t.close();
  }
});

Deno.test("push: /validate/triggerchallenge challenges a push token", async () => {
  const { t, served, app } = await pushSetup();
  try {
    const { serial } = await enrolPush(t, app);
    const res = await jsonOf(
      await t.asAdmin("POST", "/validate/triggerchallenge", { body: { user: "alice" } }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result.value, 1);
    assert.equal(res.body.detail.multi_challenge[0].serial, serial);
    assert.equal(res.body.detail.multi_challenge[0].client_mode, "poll");
    const [c] = (await app.poll()).body.result.value;
    assert.equal((await app.answer(c)).body.result.value, true);
    const done = await postForm(served, "/validate/check", {
      user: "alice",
      transaction_id: res.body.detail.transaction_id,
      pass: "",
    });
    assert.equal(done.body.result.value, true);
  } finally {
    await served.close();
    await t.close();
  }
});

// spec 13 §3.1: the test key signs and verifies exactly as privacyIDEA
const VECTOR_KEY = `-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEAyI4HZenWLSAsJSJtcVOJbBAv8McDSq1dUNjTdfdLscUMAMG5
wCdbcRaKVBQ/5g2ugMxLUGu9CU0MU+qmyJCz1xnkl53Z/BGo9J3QKhS5sNZFHnU2
GOU/FLkawDhkg3ZTmw+5oyCFbaZHkkVTxifcAoEeG9q40unWk4QgCprJhShyMS6D
m9AfPxMqAINHwoU3g27fqM6gtcl7vLCixURjsMYWKns+3/Z0BPQmV7Kn7T2FQoA1
lBtjifw32j/Oz2rUGTpJiCtCJocrCV27bRt0ENcWwyu9nci8bXvoXHue/pT4dKGJ
uzF4sR2PIKueJ2JRZISYISbmb/ywoP6gUdxF7wIDAQABAoIBABRTYKiRhGVaZ170
GEduAfVzxogOg2TkIRr6fqPsBj3kDI1fFOZGltvlPuu6iadVJ6RiEBf8c1In/uHa
XEDjeXaJZ0N+egMz/v2bqOc65n7nmGW31126jiQZhn6IuJciPOLwOw4vU5aDTamj
YRQqIgAW+eg0yJqHnHmi4GRyv43BF7MxtPcZofu/nRQNKou2B0bscrln61lyPMLL
4cneuAg/IMYoCzV34RjTggkzHjlo3gjZRSik92lC5gnL1rkD5+P2zrIS8OrqsZuC
ZrpdFs4tJ10OaEDx3wC5+dbH8E8/ppACStH79nretmtim66JLj1SgiJVN0NSFEcP
O+P3eSECgYEA5QoyDXVSugIRhfj692pmQzilnTKkrIu7Xtk1N1NusrxCypba31jX
lZKxHGdArEDykt1vhf7HwRK1WSlJrfzWRYmrxW8f69mYya05XdOen7tzIlv6opzl
MuFk61UA3fHV9AMuAkKSCNePsIDArKRR+gw2jW/7QPON6U4KceVfOAcCgYEA4Cl5
y8LLrBp83j3ePafhyaCXtRfJafmVnuQ6ahESvxoCNxl98MZxVA0aTfpr/h6RbJX2
yPKYUL8vdoW4q9n0zSiyuHtXiUJiroOvuf7I3hMZRuBNMOuvgb0UCZCfZ5XOIiJU
M1xNZn2LqVrjCiKY1EfbXCODTtJUvUJSfz1p+NkCgYEAmgUkKYa27dzMOeJ3qf+D
6zphrHdM47dHdf3s2lqhu1H8PE37u2v79Vpi/a21gOBf/0EnaN0vKPfSubWZFYZL
9REiUK9ssOZv51c0l5LiPZoJT5a40bdeLbwCaHqODbI95UxqGRz5JTcIKnI6nx4U
/mhOGwit1jyyNqzDO1o6kOsCgYA8XA62xkIvmoZLFZ+1PHJ452xSUBBlH9ahDVWJ
YAWLPcag7ZVS8yxq9IhDvQ29RJ/l/E+Sdnh7La/rG0DJzYu0fqP5NwUwKZcG5OC5
lZii68OfqSA/7wa4SaCOnsm9i8IQwOupVM5mraGgvZ9rCDvc1WiE2+8sl0hIGga6
yl+xqQKBgEK4CiqiHrDn2EMbhcHvFvEgmy2uIpukCBsMiBQtduleHmU/JoZicEiJ
t5Pw2xBz9yaFsnoWHZbimm97MJc3O0m/rEGfZc6YkuSS2a/CePfzgrzJ5BXiDZNb
h4vC/XrEWBX7K2XjKXi3+f/Glg/Pvqrgw8saBgnNvYFn2/TEoCh7
-----END RSA PRIVATE KEY-----
`;
const VECTOR_PUBKEY =
  "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAyI4HZenWLSAsJSJtcVOJbBAv8McDSq1dUNjTdfdLscUMAMG5wCdbcRaKVBQ_5g2ugMxLUGu9CU0MU-qmyJCz1xnkl53Z_BGo9J3QKhS5sNZFHnU2GOU_FLkawDhkg3ZTmw-5oyCFbaZHkkVTxifcAoEeG9q40unWk4QgCprJhShyMS6Dm9AfPxMqAINHwoU3g27fqM6gtcl7vLCixURjsMYWKns-3_Z0BPQmV7Kn7T2FQoA1lBtjifw32j_Oz2rUGTpJiCtCJocrCV27bRt0ENcWwyu9nci8bXvoXHue_pT4dKGJuzF4sR2PIKueJ2JRZISYISbmb_ywoP6gUdxF7wIDAQAB";
const NONCE = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
const SERIAL = "PIPU0001A2B3";
const S2 =
  "SK7WRKQVP5OISJDHDVK7MJJ4L2KISVEZIUC7PFT7XSOJOGUL4D63XN3PTTUNT6SUXM3MIN3LSNAQP35NJPWJ76AKMB5A6XE2KL6OCJMC2BAJMWWWVT2YVBZZSIK556H4B7EALQFQX34H7CK4RTAWWG7EHAXY6EMGARTVQSEE722LEBQX3EWE5PMGFQNLSGBZAG7VCGALFL2SJQSXHMJV5F7X7CQ744O7MMBO7HTWKKNJ6AFRSP6QYG2FQ66WM4CIG2RKOCQNV24INOVZZ6KZ3ZESEYTRB4BKITFBJTVOPRVNF5E3QWQ5FW4RNDIH5L3UZORA5I63UGCBXMMQPS6CZAEHGRVX4EAS6R24A2GMXAHSBGSOO2S3RL6TVLKSPQ5374KXRDZKE3YCDKP4VIUBYBK6E4======";
const S3 =
  "YTU4UENBU5A4QOFCIQIMYQSWQVY2QR27SRCVO3UZFQL2TDC45R6OP2YXQC34O2CWMPZOUI54NDZF3ZTDP3TDDAFWXAFXIO7M2QZZAUXH2DJAFTBWKO3UQ2EBODHVSFGRF2EVFWUUSQ3GXRYT22AQ5IDMVRCEAEIW5KQUXRM7JAVE54IESO3XK7H45IKJ35EUEJQCPCG7II3CJHQGY3NSKRFO2UUYIWM5VXLE2Y3XRB3FHY23GEZ32XLD3IWZQDPUZSWY2T43AW6HIJFFOPY3I7K632XADPF5TADG5RLZHRSA77RRLNZETTFCOBTHEH5VV2ZJIZROY7YTEIM3MFH5QGJBVY6M57HVTQGHGK23534X25WU6RIZHIC6CY6QBHJDZ7JFLCFSA2Q3XE726ZJ3IWPZHI======";
const S3D =
  "BDXFON2RWB47ZW36HW3K7KYAMVKI5ZYQPQ7QDDCNFPRAFUJNNYOZET56YZN6MKIQM3DJL2KVSH76IAGNWXFNMKSOREXB7MEPKQPCCGIZJCNLBZZSTL5DH4CA6OXBW2NIGCIFURBCJASBRZ652IKILCXBECVEP547RG6BUMN5FLVOSAOHUOITBARSV3HHDH6ZOPPSIYQ3OCFWBMX3RJMSVO75EDK6BOAFMVIHVGJQQKQ57MJID5HJFR3WUZD756MWVCQ6ZWTYNRRFWENV3427BQ7AIG24FHGGRJKD2XT6CNQQHB5IKRW2OASSZNGB3FU45HDSMLPHYQEVE6F674CCY4FANH2K2PNDXRKUFAPJLJQ57AFMC3PJQBGQVWENBI4TZ2JL6TPLOWBHEY3TJPJULV5GDQ======";
const S4 =
  "KOFFPKHB5HNA3NA2OWMJ5SQ3JPCBMY7Q26446YFJD7SDSUWFE46KWXVG2OWBDZJTY452LIKMLKEDOAV6MWMHKJG7EIAAYSMUKUU2J5ODAENLDATHBLICBLCZTDPKUUCJALHW3GL2UWV3QHCX6QLYGSW42YNK7GKJXB6OF4YI63SQQKBLTHQ3KA2HZQTUWPR73VP344LA33GKP7BBS6INETHBUMK52B7UVWGVPKNVXIUNW3J2TRZUZQXKVHHGCGBC32CCCG2MHWM45RDIZZV4NNLKMYUVFGZNEX2BBQB4LZLXTQSVGBVS647ITZX6O2SWO3IOI3RZXXYSUK4KOF33NAX7UHUOZ5GONNMH2T4EAX7VHQRCBOPFZYWHCKUHN5Q2SUE64KYWWYPZQRWXWAQQ5ZPMK4======";
const S1 =
  "H36LOV2V27LI6LL56XRN54N6REF6B5FFSIXNPD5BWQE3CI7R7KR4I2QPGJCV3DAL3FAZ7PU7L6ED7ZY2XTV2BAWCXE6BRQCTTQAVMBJ7RJ2OVNICDNZSYWACGP36MAYYLDXDOVSYMHFLVBBAOWE2YBAAOET6GOMOP33UTGACPN4XVU6SPIFUMVBD3OL7A32UN7LDT474M5OGCYFXCT6RRUT4EGEMCMGQZCMGPFPE5VIGBH3OJTDIVLCNLSV5Z6KCMGGUYCW5CHPCUJ235H5BIVJ7BLBV2PFDHNTVAJNRI5Z4H4FJCPBTURK7XVDYQFHLAXKWZ7TSGAKBW2YSPCFPLMOQF5QMTN5NLURELVQB2KJPMAO2KMDYZZ6ENI3NXEWECMD7A4KGR5OTT2LK4FMO7EG7NY======";

Deno.test("push: the signatures of spec 13 §3.1 verify and are reproduced exactly", () => {
  const key = phoneKeyOf(VECTOR_PUBKEY);
  assert.ok(verifyText(key, `${SERIAL}|2025-01-01T12:00:00.000000+00:00`, S2));
  assert.ok(verifyText(key, `${NONCE}|${SERIAL}`, S3));
  assert.ok(verifyText(key, `${NONCE}|${SERIAL}|decline`, S3D));
  assert.ok(
    verifyText(key, `newFbToken123|${SERIAL}|2025-01-01T12:00:00.000000+00:00`, S4),
  );
  // an accept signature is no decline (a pre-3.8 app)
  assert.ok(!verifyText(key, `${NONCE}|${SERIAL}|decline`, S3));
  assert.ok(!verifyText(key, `${SERIAL}|2025-01-01T12:00:00.000001+00:00`, S2));
  const s1 = `${NONCE}|https://pi.example.com/ttype/push|${SERIAL}|` +
    "Do you want to confirm the login?|privacyIDEA|1";
  assert.equal(
    signText(
      createPrivateKey(VECTOR_KEY).export({
        format: "pem",
        type: "pkcs1",
      }) as string,
      s1,
    ),
    S1,
  );
});

Deno.test("push: the app's signed Firebase token update; forged or late ones change nothing", async () => {
  const { t, served, app } = await pushSetup();
  try {
    const { serial } = await enrolPush(t, app);
    const update = (token: string, timestamp: string, signature?: string) =>
      postForm(served, "/ttype/push", {
        serial,
        new_fb_token: token,
        timestamp,
        signature: signature ??
          signB32(app.keys.privateKey, `${token}|${serial}|${timestamp}`),
      });
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const ts = app.timestamp();
    const forged = await update(
      "evil",
      ts,
      signB32(other.privateKey, `evil|${serial}|${ts}`),
    );
    assert.equal(forged.status, 400);
    assert.equal(forged.body.result.error.message, "ERR10: Could not verify signature!");
    const late = await update("late", app.timestamp(-6 * 60_000));
    assert.match(late.body.result.error.message, /^ERR10: Timestamp .* not in valid range\.$/);
    assert.equal((await getTokenBySerial(t.deps, serial)).info.firebase_token.value, "");
    // within five minutes (privacyIDEA's window for this request) and signed by the app
    const ok = await update("new-device-token", app.timestamp(-4 * 60_000));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.result.value, true);
    assert.equal(
      (await getTokenBySerial(t.deps, serial)).info.firebase_token.value,
      "new-device-token",
    );
  } finally {
    await served.close();
    await t.close();
  }
});

Deno.test("push: /ttype/push needs no login and a JWT changes nothing (the app's signature counts)", async () => {
  const { t, served, app } = await pushSetup();
  try {
    const { serial } = await enrolPush(t, app);
    await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    const admin = await t.adminToken();
    const alice = (await jsonOf(
      await t.post("/auth", { username: "alice", password: "alicepw" }),
    )).body.result.value.token as string;
    for (const jwt of [undefined, admin, alice]) {
      const headers: Record<string, string> = jwt ? { "PI-Authorization": jwt } : {};
      const ts = app.timestamp();
      const q = new URLSearchParams({
        serial,
        timestamp: ts,
        signature: signB32(app.keys.privateKey, `${serial}|${ts}`),
      });
      const good = await fetch(`${served.url}/ttype/push?${q}`, { headers });
      assert.equal(good.status, 200, String(jwt));
      assert.equal((await good.json()).result.value.length, 1);
      q.set("timestamp", app.timestamp());
      const forged = await fetch(`${served.url}/ttype/push?${q}`, { headers });
      assert.equal(forged.status, 400);
      assert.equal(
        (await forged.json()).result.error.message,
        "ERR10: Could not verify signature!",
      );
    }
  } finally {
    await served.close();
    await t.close();
  }
});

Deno.test("push: an idle poll writes nothing; a poll that found challenges cannot be replayed", async () => {
  const { t, served, app } = await pushSetup();
  try {
    const { serial } = await enrolPush(t, app);
    const before = (await getTokenBySerial(t.deps, serial)).info;
    const idle = await app.poll();
    assert.deepEqual(idle.body.result.value, []);
    // the app's idle polls leave the token (and the check path's token cache) alone
    assert.deepEqual((await getTokenBySerial(t.deps, serial)).info, before);
    await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    const found = await app.poll();
    assert.equal(found.body.result.value.length, 1);
    const replay = await app.poll({ timestamp: found.timestamp, signature: found.signature });
    assert.equal(replay.status, 400);
    // an older recorded poll is refused as well
    const older = await app.poll({ timestamp: idle.timestamp, signature: idle.signature });
    assert.equal(older.status, 400);
  } finally {
    await served.close();
    await t.close();
  }
});
