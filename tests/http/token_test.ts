import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enroll, enrollHotp, hotp, SEED_HEX } from "../fixtures/tokens.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";

async function admin(t: TestApp, method: string, path: string, body?: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin(method, path, body ? { body, json: true } : {}));
}

async function userToken(t: TestApp, username: string, password: string): Promise<string> {
  const res = await jsonOf(await t.post("/auth", { username, password }));
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return res.body.result.value.token;
}

Deno.test("POST /token/init generates an HOTP key and returns the enrolment detail", async () => {
  const t = await createTestApp();
  const { status, body } = await admin(t, "POST", "/token/init", { type: "hotp" });
  assert.equal(status, 200);
  assert.equal(body.result.value, true);
  const d = body.detail;
  assert.match(d.serial, /^OATH0000[0-9A-F]{4}$/);
  assert.equal(d.rollout_state, "enrolled");
  assert.match(
    d.googleurl.value,
    /^otpauth:\/\/hotp\/OATH\w+\?secret=[A-Z2-7]{32}&counter=1&digits=6&creator=privacyidea&issuer=privacyIDEA&serial=OATH\w+$/,
  );
  assert.match(d.otpkey.value, /^seed:\/\/[0-9a-f]{40}$/);
  assert.equal(typeof d.oathurl.value, "string");
  assert.match(
    d.googleurl.img,
    /^<img width=250 src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"\/>$/,
  );
  // the key is stored encrypted, never as the hex seed
  const row = await t.deps.db.selectFrom("token").select("key_enc").executeTakeFirstOrThrow();
  assert.equal(row.key_enc.includes(d.otpkey.value.slice(7)), false);
  assert.match(row.key_enc, /^g1:/);
  await t.close();
});

Deno.test("POST /token/init variants: totp googleurl, sha256, 8 digits, serial counter", async () => {
  const t = await createTestApp();
  const totp = await enroll(t, { type: "totp", hashlib: "sha256", otplen: "8", timeStep: "60" });
  const url = (totp.detail.googleurl as { value: string }).value;
  assert.match(url, /^otpauth:\/\/totp\//);
  assert.match(url, /period=60/);
  assert.match(url, /algorithm=SHA256/);
  assert.match(url, /digits=8/);
  assert.equal(url.includes("counter="), false);
  const second = await enroll(t, { type: "totp" });
  assert.match(second.serial, /^TOTP0001/);
  const tok = await getTokenBySerial(t.deps, totp.serial);
  assert.equal(tok.otplen, 8);
  assert.equal(tok.info.hashlib.value, "sha256");
  assert.equal(tok.info.timeStep.value, "60");
  await t.close();
});

Deno.test("POST /token/init errors", async () => {
  const t = await createTestApp();
  await enrollHotp(t, { serial: "EXIST1" });
  const cases: [Record<string, unknown>, number, number, string][] = [
    [{ type: "nope" }, 400, 1610, "ERR1610: init token failed. Unknown token type: nope"],
    [
      { type: "totp", serial: "EXIST1" },
      400,
      301,
      "ERR301: init token failed: Token EXIST1 already exists with type hotp. Can not initialize token with new type totp",
    ],
    [
      { serial: "bad serial!" },
      400,
      905,
      "ERR905: Invalid serial number. Must comply to ^[0-9a-zA-Z\\-_]+$",
    ],
    [
      { otplen: "7" },
      400,
      905,
      'ERR905: Cannot parse parameter "otplen": expected 6 or 8, got "7"',
    ],
    [{ otpkey: "zz" }, 400, 905, 'ERR905: Cannot parse parameter "otpkey": expected a hex string'],
    [
      { otpkey: SEED_HEX, genkey: "1" },
      400,
      344,
      "ERR344: Only one of the parameters otpkey or genkey is allowed.",
    ],
    [
      { type: "sshkey", sshkey: "ssh-dss AAAA" },
      400,
      301,
      "ERR301: The keytype you specified is not supported.",
    ],
    [{ type: "sshkey" }, 400, 905, "ERR905: Missing parameter: sshkey"],
  ];
  for (const [body, status, code, message] of cases) {
    const res = await admin(t, "POST", "/token/init", body);
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(res.body.result.error.code, code, JSON.stringify(body));
    assert.equal(res.body.result.error.message, message);
  }
  const count = await t.deps.db.selectFrom("token").select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  assert.equal(Number(count.n), 1);
  assert.equal((await t.post("/token/init", { type: "hotp" })).status, 401);
  await t.close();
});

Deno.test("POST /token/init re-initialises an existing serial of the same type", async () => {
  const t = await createTestApp();
  await enrollHotp(t, { serial: "RE1", pin: "1" });
  await t.post("/validate/check", { serial: "RE1", pass: "1" + hotp(3) });
  assert.equal((await getTokenBySerial(t.deps, "RE1")).count, 4);
  await enrollHotp(t, { serial: "RE1", pin: "2" });
  const tok = await getTokenBySerial(t.deps, "RE1");
  assert.equal(tok.count, 0);
  const res = await jsonOf(await t.post("/validate/check", { serial: "RE1", pass: "2" + hotp(0) }));
  assert.equal(res.body.result.value, true);
  await t.close();
});

Deno.test("GET /token/ lists tokens in the spec's shape with paging and sorting", async () => {
  const t = await createTestApp();
  for (let i = 0; i < 4; i++) await enrollHotp(t, { serial: `LST${i}`, description: `d${i}` });
  const page1 = await admin(t, "GET", "/token/?pagesize=3&sortdir=desc");
  assert.equal(page1.status, 200);
  const v = page1.body.result.value;
  assert.equal(v.count, 4);
  assert.equal(v.prev, null);
  assert.equal(v.next, 2);
  assert.deepEqual(v.tokens.map((x: { serial: string }) => x.serial), ["LST3", "LST2", "LST1"]);
  const tok = v.tokens[0];
  assert.deepEqual(Object.keys(tok).sort(), [
    "active",
    "container_serial",
    "count",
    "count_window",
    "description",
    "failcount",
    "id",
    "info",
    "locked",
    "maxfail",
    "otplen",
    "realms",
    "resolver",
    "revoked",
    "rollout_state",
    "serial",
    "sync_window",
    "tokengroup",
    "tokentype",
    "user_id",
    "user_realm",
    "username",
  ]);
  assert.equal(tok.info.hashlib, "sha1");
  assert.equal(tok.info.tokenkind, "software");
  assert.equal(tok.info.creation_date, "2026-01-01T00:00:00+00:00");
  assert.equal(tok.maxfail, 10);
  const page2 = await admin(t, "GET", "/token/?pagesize=3&page=2&sortdir=desc");
  assert.equal(page2.body.result.value.prev, 1);
  assert.equal(page2.body.result.value.next, null);
  assert.equal(page2.body.result.value.tokens.length, 1);
  await t.close();
});

Deno.test("GET /token/ filters: wildcard serial, CSV, type, description, active; % is literal", async () => {
  const t = await createTestApp();
  await enrollHotp(t, { serial: "ABC_1", description: "100%" });
  await enrollHotp(t, { serial: "ABCX1" });
  await enroll(t, { type: "spass", serial: "SP1" });
  await t.asAdmin("POST", "/token/disable", { body: { serial: "ABCX1" } });
  const serials = async (q: string) =>
    (await admin(t, "GET", `/token/?${q}`)).body.result.value.tokens.map((x: { serial: string }) =>
      x.serial
    );
  assert.deepEqual(await serials("serial=ABC*"), ["ABCX1", "ABC_1"]);
  assert.deepEqual(await serials("serial=ABC_*"), ["ABC_1"]);
  assert.deepEqual(await serials("serial=ABC%25"), []);
  assert.deepEqual(await serials("serial=SP1,ABCX1"), ["ABCX1", "SP1"]);
  assert.deepEqual(await serials("type=spass"), ["SP1"]);
  assert.deepEqual(await serials("description=*%25"), ["ABC_1"]);
  assert.deepEqual(await serials("active=false"), ["ABCX1"]);
  assert.deepEqual(await serials("assigned=true"), []);
  await t.close();
});

Deno.test("enable/disable return the number of tokens whose state changed", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t);
  assert.equal((await admin(t, "POST", "/token/enable", { serial })).body.result.value, 0);
  assert.equal((await admin(t, "POST", `/token/disable/${serial}`)).body.result.value, 1);
  assert.equal((await admin(t, "POST", `/token/disable/${serial}`)).body.result.value, 0);
  assert.equal((await admin(t, "POST", "/token/enable", { serial })).body.result.value, 1);
  const missing = await admin(t, "POST", "/token/enable", { serial: "NOPE" });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.result.error.message, "The requested token could not be found.");
  const noParam = await admin(t, "POST", "/token/enable", {});
  assert.equal(noParam.status, 400);
  assert.equal(noParam.body.result.error.message, "ERR905: Missing parameter: serial");
  await t.close();
});

Deno.test("revoke locks the token; a locked token refuses modifications with 1007", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t);
  assert.equal((await admin(t, "POST", `/token/revoke/${serial}`)).body.result.value, 1);
  const tok = await getTokenBySerial(t.deps, serial);
  assert.deepEqual([tok.revoked, tok.locked, tok.active], [true, true, false]);
  for (
    const [path, body] of [
      ["/token/enable", { serial }],
      ["/token/setpin", { serial, otppin: "1" }],
      ["/token/description", { serial, description: "x" }],
      ["/token/reset", { serial }],
    ] as const
  ) {
    const res = await admin(t, "POST", path, body);
    assert.equal(res.status, 400, path);
    assert.equal(res.body.result.error.code, 1007);
    assert.equal(
      res.body.result.error.message,
      "ERR1007: This action is not possible, since the token is locked",
    );
  }
  await t.close();
});

Deno.test("setpin, description, set, tokeninfo and realm endpoints", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice" }] });
  const serial = await enrollHotp(t);
  assert.equal(
    (await admin(t, "POST", "/token/setpin", { serial, otppin: "9876" })).body.result.value,
    1,
  );
  const res = await jsonOf(await t.post("/validate/check", { serial, pass: "9876" + hotp(0) }));
  assert.equal(res.body.result.value, true);
  assert.equal(
    (await admin(t, "POST", `/token/description/${serial}`, { description: "x".repeat(100) }))
      .body.result.value,
    true,
  );
  const set = await admin(t, "POST", "/token/set", {
    serial,
    count_window: 20,
    max_failcount: "5",
    hashlib: "sha256",
    validity_period_end: "2030-01-01T00:00+0000",
  });
  assert.equal(set.body.result.value, 4);
  const bad = await admin(t, "POST", "/token/set", { serial, validity_period_start: "tomorrow" });
  assert.equal(
    bad.body.result.error.message,
    "ERR301: Could not parse validity period start date!",
  );
  assert.equal(
    (await admin(t, "POST", `/token/info/${serial}/mykey`, { value: "v1" })).body.result.value,
    true,
  );
  assert.equal(
    (await admin(t, "POST", `/token/realm/${serial}`, { realms: "realm1,nosuch" })).body.result
      .value,
    true,
  );
  const tok = await getTokenBySerial(t.deps, serial);
  assert.equal(tok.description.length, 80);
  assert.equal(tok.countWindow, 20);
  assert.equal(tok.maxfail, 5);
  assert.equal(tok.info.hashlib.value, "sha256");
  assert.equal(tok.info.mykey.value, "v1");
  assert.deepEqual(tok.realms, ["realm1"]);
  assert.equal((await admin(t, "DELETE", `/token/info/${serial}/mykey`)).body.result.value, true);
  assert.equal((await admin(t, "DELETE", `/token/info/${serial}/mykey`)).body.result.value, false);
  await t.close();
});

Deno.test("a PIN is stored as a keyed hash, never in clear", async () => {
  const t = await createTestApp();
  await enrollHotp(t, { serial: "PINH", pin: "my-secret-pin" });
  const row = await t.deps.db.selectFrom("token").select("pin_hash").executeTakeFirstOrThrow();
  assert.match(row.pin_hash, /^hmac256\$/);
  assert.equal(row.pin_hash.includes("my-secret-pin"), false);
  await t.close();
});

Deno.test("resync moves the counter after two consecutive OTPs", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1" });
  const bad = await admin(t, "POST", "/token/resync", { serial, otp1: hotp(50), otp2: hotp(52) });
  assert.equal(bad.body.result.value, false);
  const ok = await admin(t, "POST", `/token/resync/${serial}`, { otp1: hotp(50), otp2: hotp(51) });
  assert.equal(ok.body.result.value, true);
  assert.equal((await getTokenBySerial(t.deps, serial)).count, 52);
  const res = await jsonOf(await t.post("/validate/check", { serial, pass: "1" + hotp(52) }));
  assert.equal(res.body.result.value, true);
  await t.close();
});

Deno.test("assign, unassign and the token list of a user", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice" }, { login: "bob" }] });
  const serial = await enrollHotp(t, { pin: "1" });
  const ok = await admin(t, "POST", "/token/assign", {
    serial,
    user: "alice",
    realm: "realm1",
    pin: "p",
  });
  assert.equal(ok.body.result.value, true);
  const again = await admin(t, "POST", "/token/assign", { serial, user: "bob", realm: "realm1" });
  assert.equal(again.status, 400);
  assert.equal(again.body.result.error.code, 1103);
  assert.match(
    again.body.result.error.message,
    /^ERR1103: Token already assigned to user User\(login='alice', realm='realm1', resolver='[^']+'\)$/,
  );
  const list = await admin(t, "GET", "/token/?user=alice&realm=realm1");
  const tok = list.body.result.value.tokens[0];
  assert.equal(tok.username, "alice");
  assert.equal(tok.user_realm, "realm1");
  assert.deepEqual(tok.realms, ["realm1"]);
  assert.equal(list.body.result.value.count, 1);
  const unknown = await admin(t, "GET", "/token/?user=nobody&realm=realm1");
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.result.error.code, 904);
  assert.equal((await admin(t, "POST", "/token/unassign", { serial })).body.result.value, 1);
  const after = await getTokenBySerial(t.deps, serial);
  assert.equal(after.owner, undefined);
  assert.equal(after.pinHash, "");
  await t.close();
});

Deno.test("user callers see and change only their own tokens", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "realm1",
    users: [{ login: "alice", password: "apw" }, { login: "bob", password: "bpw" }],
  });
  const mine = await enrollHotp(t, { user: "alice", realm: "realm1" });
  const theirs = await enrollHotp(t, { user: "bob", realm: "realm1" });
  const token = await userToken(t, "alice@realm1", "apw");
  const list = await jsonOf(await t.request("GET", "/token/", { token }));
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.result.value.tokens.map((x: { serial: string }) => x.serial), [mine]);
  const foreign = await jsonOf(
    await t.request("POST", "/token/disable", { token, body: { serial: theirs } }),
  );
  assert.equal(foreign.status, 404);
  const own = await jsonOf(
    await t.request("POST", "/token/disable", { token, body: { serial: mine } }),
  );
  assert.equal(own.body.result.value, 1);
  const created = await jsonOf(
    await t.request("POST", "/token/init", { token, body: { type: "spass" } }),
  );
  assert.equal(created.status, 200);
  const tok = await getTokenBySerial(t.deps, created.body.detail.serial);
  assert.equal(tok.owner?.login, "alice");
  assert.equal(
    (await t.request("POST", "/token/set", { token, body: { serial: mine } })).status,
    401,
  );
  await t.close();
});

Deno.test("DELETE /token/<serial> and bulk delete", async () => {
  const t = await createTestApp();
  const a = await enrollHotp(t);
  const b = await enrollHotp(t);
  const c = await enrollHotp(t);
  const one = await admin(t, "DELETE", `/token/${a}`);
  assert.equal(one.body.result.value, 1);
  assert.equal((await admin(t, "DELETE", `/token/${a}`)).status, 404);
  const bulk = await jsonOf(
    await t.asAdmin("DELETE", "/token/", { query: { serial: `${b},${c},NOPE` } }),
  );
  assert.deepEqual(bulk.body.result.value, {
    count_success: 2,
    failed: ["NOPE"],
    unauthorized: [],
  });
  assert.equal((await admin(t, "GET", "/token/")).body.result.value.count, 0);
  await t.close();
});

Deno.test("GET /token/challenges/ lists open challenges", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1" });
  await t.asAdmin("POST", "/validate/triggerchallenge", { body: { serial } });
  const res = await admin(t, "GET", `/token/challenges/${serial}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.result.value.count, 1);
  assert.equal(res.body.result.value.challenges[0].serial, serial);
  assert.match(res.body.result.value.challenges[0].transaction_id, /^\d{20}$/);
  await t.close();
});

Deno.test("POST /token/setrandompin needs its policy", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t);
  const res = await admin(t, "POST", "/token/setrandompin", { serial });
  assert.equal(res.status, 400);
  assert.equal(
    res.body.result.error.message,
    "ERR301: You need to specify a policy 'otp_pin_set_random' in scope admin.",
  );
  await t.close();
});

Deno.test("GET /auth/rights lists the registered token types", async () => {
  const t = await createTestApp();
  const res = await admin(t, "GET", "/auth/rights");
  for (const type of ["hotp", "totp", "spass", "pw", "registration", "sshkey", "paper"]) {
    assert.equal(typeof res.body.result.value[type], "string", type);
  }
  await t.close();
});

Deno.test("paper token prints its OTP list", async () => {
  const t = await createTestApp();
  const { detail } = await enroll(t, { type: "paper", otpkey: SEED_HEX, papertoken_count: "5" });
  assert.deepEqual(detail.otps, { 0: hotp(0), 1: hotp(1), 2: hotp(2), 3: hotp(3), 4: hotp(4) });
  await t.close();
});

Deno.test("POST /token/lost/<serial> creates a temporary pw token and disables the original", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice" }] });
  const serial = await enrollHotp(t, {
    serial: "LOSTME",
    pin: "pin",
    user: "alice",
    realm: "realm1",
  });
  const unassigned = await enrollHotp(t, { serial: "FREE1" });
  const res = await admin(t, "POST", `/token/lost/${serial}`);
  assert.equal(res.status, 200);
  const v = res.body.result.value;
  assert.equal(v.serial, "lostLOSTME");
  assert.match(v.password, /^[1-9A-HJ-NP-Za-km-z]{16}$/);
  assert.equal(v.end_date, "2026-01-11T00:00+0000");
  assert.equal(v.disable, 1);
  assert.equal((await getTokenBySerial(t.deps, serial)).active, false);
  const check = await jsonOf(
    await t.post("/validate/check", { user: "alice", pass: "pin" + v.password }),
  );
  assert.equal(check.body.result.value, true);
  const bad = await admin(t, "POST", `/token/lost/${unassigned}`);
  assert.equal(bad.body.result.error.code, 2012);
  t.clock.advance(11 * 86_400_000);
  const expired = await jsonOf(
    await t.post("/validate/check", { user: "alice", pass: "pin" + v.password }),
  );
  assert.equal(expired.body.result.value, false);
  await t.close();
});

Deno.test("GET /token/getserial/<otp> finds the token that produced an OTP", async () => {
  const t = await createTestApp();
  await enrollHotp(t, { serial: "GS1", otpkey: "00".repeat(20) });
  await enrollHotp(t, { serial: "GS2" });
  const found = await admin(t, "GET", `/token/getserial/${hotp(3)}`);
  assert.deepEqual(found.body.result.value, { serial: "GS2", count: 2 });
  const none = await admin(t, "GET", `/token/getserial/${hotp(30)}`);
  assert.equal(none.body.result.value.serial, "");
  const wide = await admin(t, "GET", `/token/getserial/${hotp(30)}?window=40&serial=S2`);
  assert.deepEqual(wide.body.result.value, { serial: "GS2", count: 1 });
  await t.close();
});

Deno.test("GET /token/?outform=csv downloads the list as CSV", async () => {
  const t = await createTestApp();
  await enrollHotp(t, { serial: "CSV1", description: "=cmd()" });
  const res = await t.asAdmin("GET", "/token/", { query: { outform: "csv" } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/csv/);
  const lines = (await res.text()).trim().split("\n");
  assert.equal(lines[0].split(",")[0], "serial");
  assert.equal(lines.length, 2);
  assert.match(lines[1], /^"CSV1","hotp","'=cmd\(\)",/);
  await t.close();
});

Deno.test("two parallel inits of the same new serial: one wins, the other gets a clean error", async () => {
  const t = await createTestApp();
  await t.adminToken();
  const results = await Promise.all(
    Array.from(
      { length: 4 },
      () => admin(t, "POST", "/token/init", { serial: "RACE1", type: "hotp" }),
    ),
  );
  for (const r of results) assert.ok(r.status === 200 || r.status === 400, JSON.stringify(r.body));
  assert.ok(results.some((r) => r.status === 200));
  const n = await t.deps.db.selectFrom("token").select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  assert.equal(Number(n.n), 1);
  await t.close();
});

Deno.test("hostile token parameters are refused with 905 and change nothing", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1" });
  const cases: [string, string, Record<string, unknown>][] = [
    ["POST", "/token/init", { type: "hotp", pin: { x: 1 } }],
    ["POST", "/token/init", { type: ["hotp"] }],
    ["POST", "/token/setpin", { serial, otppin: ["a"] }],
    ["GET", "/token/?page=-1", {}],
    ["GET", "/token/?pagesize=abc", {}],
    ["POST", "/token/set", { serial, count_window: "ten" }],
    ["POST", `/token/info/${serial}/k`, { value: "x".repeat(3000) }],
  ];
  for (const [method, path, body] of cases) {
    const res = method === "GET"
      ? await admin(t, method, path)
      : await admin(t, method, path, body);
    assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
    assert.equal(res.body.result.error.code, 905, path);
  }
  const list = await admin(t, "GET", "/token/");
  assert.equal(list.body.result.value.count, 1);
  assert.deepEqual(list.body.result.value.tokens[0].info.k, undefined);
  await t.close();
});

Deno.test("verify_enrollment: the token stays unusable until its first OTP is verified", async () => {
  const { savePolicy } = await import("../../src/domain/policy/mod.ts");
  const t = await createTestApp();
  await savePolicy(t.deps, "ve", { scope: "enrollment", action: "verify_enrollment=hotp" });
  const first = await admin(t, "POST", "/token/init", {
    serial: "VE1",
    otpkey: SEED_HEX,
    pin: "1",
  });
  assert.equal(first.body.detail.rollout_state, "verify");
  assert.deepEqual(first.body.detail.verify, {
    message: "Please enter a valid OTP value of the new token.",
  });
  const early = await jsonOf(
    await t.post("/validate/check", { serial: "VE1", pass: "1" + hotp(0) }),
  );
  assert.equal(early.body.detail.message, "Token is not yet enrolled");
  const bad = await admin(t, "POST", "/token/init", { serial: "VE1", verify: "000000" });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.result.error.message, "ERR905: Verification of the new token failed.");
  const good = await admin(t, "POST", "/token/init", { serial: "VE1", verify: hotp(1) });
  assert.equal(good.body.detail.rollout_state, "enrolled");
  const ok = await jsonOf(await t.post("/validate/check", { serial: "VE1", pass: "1" + hotp(2) }));
  assert.equal(ok.body.result.value, true);
  await t.close();
});

Deno.test("two-step enrolment derives the key from server and client parts (PBKDF2)", async () => {
  const { savePolicy } = await import("../../src/domain/policy/mod.ts");
  const { pbkdf2Sync } = await import("node:crypto");
  const { fromHex, toHex } = await import("../../src/lib/random.ts");
  const t = await createTestApp();
  // without the policy 2stepinit is silently dropped
  const plain = await admin(t, "POST", "/token/init", { serial: "TS0", "2stepinit": "1" });
  assert.equal(plain.body.detail.rollout_state, "enrolled");
  // the admin scope: the right to enrol HOTP tokens, two-step allowed
  await savePolicy(t.deps, "ts", { scope: "admin", action: "enrollHOTP, hotp_2step=allow" });
  const first = await admin(t, "POST", "/token/init", { serial: "TS1", "2stepinit": "1" });
  const d = first.body.detail;
  assert.equal(d.rollout_state, "clientwait");
  assert.deepEqual([d["2step_salt"], d["2step_difficulty"], d["2step_output"]], [8, 10000, 20]);
  assert.equal((await getTokenBySerial(t.deps, "TS1")).active, false);
  const server = d.otpkey.value.slice("seed://".length);
  const client = "0102030405060708";
  const second = await admin(t, "POST", "/token/init", { serial: "TS1", otpkey: client });
  assert.equal(second.body.detail.rollout_state, "enrolled");
  const key = toHex(new Uint8Array(pbkdf2Sync(server, fromHex(client), 10000, 20, "sha1")));
  const res = await jsonOf(await t.post("/validate/check", { serial: "TS1", pass: hotp(0, key) }));
  assert.equal(res.body.result.value, true);
  await t.close();
});
