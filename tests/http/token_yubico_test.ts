/**
 * The `yubico` token (Yubico cloud mode) over HTTP (spec 11 §7): enrolment
 * and its errors, and `/validate/check` against a local stub of a Yubico
 * validation server (verify protocol 2.0 with real HMAC-SHA1 signatures)
 * that answers OK, REPLAYED_OTP, a bad signature, a wrong nonce, too late,
 * or is not there at all.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import {
  acceptedOfParallel,
  appWithAlice,
  check,
  enrolOk,
  failcount,
  init,
  listed,
  setConfig,
} from "./_challenge_types.ts";
import type { TestApp } from "../test_app.ts";

const TOKENID = "cccccbhkevej";
const OTP_A = TOKENID + "ijrclnnrngtvuivdgbnvhjcbcltvgjdl";
const OTP_B = TOKENID + "bdhvhteckurtuhdglrbvhkjfvvuhrhlv";
// the API key the stub and Tessera share (20 bytes, base64)
const SECRET_B64 = Buffer.from("tessera-stub-api-key").toString("base64");

function sign(params: Record<string, string>): string {
  const text = Object.keys(params).filter((k) => k !== "h").sort()
    .map((k) => `${k}=${params[k]}`).join("&");
  return createHmac("sha1", Buffer.from(SECRET_B64, "base64")).update(text).digest("base64");
}

type Mode = "ok" | "bad-signature" | "wrong-nonce" | "other-otp" | "slow";

/**
 * A Yubico validation server on 127.0.0.1: checks the request signature,
 * remembers OTPs (a second use is REPLAYED_OTP), signs its answer.
 */
function startStub(mode: () => Mode) {
  const seen = new Set<string>();
  const requests: { method: string; params: Record<string, string> }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const params: Record<string, string> = req.method === "POST"
      ? Object.fromEntries(new URLSearchParams(await req.text()))
      : Object.fromEntries(url.searchParams);
    requests.push({ method: req.method, params });
    const m = mode();
    if (m === "slow") await new Promise((r) => setTimeout(r, 2000));
    let status: string;
    if (params.id !== "42") status = "NO_SUCH_CLIENT";
    else if (params.h !== sign(params)) status = "BAD_SIGNATURE";
    else if (seen.has(params.otp)) status = "REPLAYED_OTP";
    else {
      seen.add(params.otp);
      status = "OK";
    }
    const answer: Record<string, string> = {
      otp: m === "other-otp" ? OTP_B : params.otp,
      nonce: m === "wrong-nonce" ? "0".repeat(40) : params.nonce,
      t: "2026-01-01T00:00:00Z0123",
      status,
      sl: "100",
    };
    answer.h = m === "bad-signature" ? sign({ ...answer, status: "X" }) : sign(answer);
    const text = Object.entries(answer).map(([k, v]) => `${k}=${v}\r\n`).join("") + "\r\n";
    return new Response(text, { headers: { "content-type": "text/plain" } });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/wsapi/2.0/verify`,
    requests,
    close: () => server.shutdown(),
  };
}

async function setup(mode: () => Mode = () => "ok", config: Record<string, string> = {}) {
  const t = await appWithAlice();
  const stub = startStub(mode);
  await setConfig(t, {
    "yubico.url": stub.url,
    "yubico.id": "42",
    "yubico.secret": SECRET_B64,
    ...config,
  });
  const body = await enrolOk(t, {
    type: "yubico",
    "yubico.tokenid": TOKENID,
    user: "alice",
    realm: "realm1",
    pin: "pin",
  });
  const serial = body.detail.serial as string;
  const close = async () => {
    await t.close();
    await stub.close();
  };
  return { t, stub, serial, close };
}

async function tokenCount(t: TestApp): Promise<number> {
  const res = await t.asAdmin("GET", "/token/");
  return (await res.json()).result.value.count;
}

Deno.test("yubico: enrolment stores yubico.tokenid, otplen 44, tokenkind hardware; errors create nothing", async () => {
  const t = await appWithAlice();
  const body = await enrolOk(t, {
    type: "yubico",
    "yubico.tokenid": TOKENID.toUpperCase() + "xyz",
    otplen: "6",
  });
  assert.match(body.detail.serial, /^UBCM/);
  const token = await listed(t, body.detail.serial);
  assert.equal(token.tokentype, "yubico");
  assert.equal(token.otplen, 44, "forced");
  assert.equal(token.info["yubico.tokenid"], TOKENID, "truncated to 12, lower case");
  assert.equal(token.info.tokenkind, "hardware");
  assert.equal(token.rollout_state, "enrolled");

  const before = await tokenCount(t);
  const cases: [Record<string, unknown>, string][] = [
    [{}, "ERR905: Missing parameter: yubico.tokenid"],
    [
      { "yubico.tokenid": "cccccbhk" },
      "ERR905: The Yubikey token ID needs to be 12 characters long!",
    ],
    [{ "yubico.tokenid": "cccccbhkeve1" }, ""],
  ];
  for (const [extra, message] of cases) {
    const res = await init(t, { type: "yubico", ...extra });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.result.error.code, 905);
    if (message) assert.equal(res.body.result.error.message, message);
  }
  assert.equal(await tokenCount(t), before);
  await t.close();
});

Deno.test("yubico: a good OTP is OK at the server (signed GET, fresh nonce); a replay fails and counts", async () => {
  const { t, stub, serial, close } = await setup();
  const ok = await check(t, { user: "alice", pass: "pin" + OTP_A });
  assert.equal(ok.status, 200);
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.detail.type, "yubico");
  assert.equal(stub.requests.length, 1);
  const sent = stub.requests[0];
  assert.equal(sent.method, "GET");
  assert.equal(sent.params.id, "42");
  assert.equal(sent.params.otp, OTP_A);
  assert.match(sent.params.nonce, /^[0-9a-f]{40}$/);
  assert.equal(sent.params.h, sign(sent.params), "the request is signed with yubico.secret");

  const replay = await check(t, { user: "alice", pass: "pin" + OTP_A });
  assert.equal(replay.body.result.value, false);
  assert.equal(replay.body.detail.message, "wrong otp value");
  assert.equal(await failcount(t, serial), 1);
  assert.notEqual(stub.requests[1].params.nonce, sent.params.nonce, "a new nonce per request");
  assert.ok(t.log.lines.some((l) => /REPLAYED_OTP/.test(l)), "the reason is logged");

  // yubico.do_post: the same protocol as a form POST
  await setConfig(t, { "yubico.do_post": "1" });
  assert.equal((await check(t, { user: "alice", pass: "pin" + OTP_B })).body.result.value, true);
  assert.equal(stub.requests[2].method, "POST");
  assert.equal(stub.requests[2].params.h, sign(stub.requests[2].params));
  assert.equal(await failcount(t, serial), 0);
  await close();
});

Deno.test("yubico: a wrong PIN or another key's OTP never reaches the server", async () => {
  const { t, stub, close } = await setup();
  const wrongPin = await check(t, { user: "alice", pass: "nip" + OTP_A });
  assert.equal(wrongPin.body.result.value, false);
  assert.equal(wrongPin.body.detail.message, "wrong otp pin");
  const foreign = "vvvvvvvvvvvv" + OTP_A.slice(12);
  assert.equal((await check(t, { user: "alice", pass: "pin" + foreign })).body.result.value, false);
  const notModhex = OTP_A.slice(0, -1) + "a";
  assert.equal(
    (await check(t, { user: "alice", pass: "pin" + notModhex })).body.result.value,
    false,
  );
  assert.equal(stub.requests.length, 0);
  // the OTP was not spent
  assert.equal((await check(t, { user: "alice", pass: "pin" + OTP_A })).body.result.value, true);
  await close();
});

Deno.test("yubico: an answer with a bad signature, another nonce or another OTP is refused", async () => {
  let mode: Mode = "bad-signature";
  const { t, stub, serial, close } = await setup(() => mode);
  for (const m of ["bad-signature", "wrong-nonce", "other-otp"] as Mode[]) {
    mode = m;
    const res = await check(t, { user: "alice", pass: "pin" + OTP_A });
    assert.equal(res.status, 200, m);
    assert.equal(res.body.result.value, false, m);
    assert.equal(res.body.detail.message, "wrong otp value", m);
  }
  assert.equal(stub.requests.length, 3);
  assert.equal(await failcount(t, serial), 3);
  const reasons = t.log.lines.filter((l) => /Yubico validation refused/.test(l)).join("\n");
  assert.match(reasons, /signature is wrong/);
  assert.match(reasons, /another nonce/);
  assert.match(reasons, /another OTP/);
  await close();
});

Deno.test("yubico: a wrong shared secret is BAD_SIGNATURE at the server: refused", async () => {
  const { t, close } = await setup(() => "ok", {
    "yubico.secret": Buffer.from("another-key").toString("base64"),
  });
  const res = await check(t, { user: "alice", pass: "pin" + OTP_A });
  assert.equal(res.body.result.value, false);
  await close();
});

Deno.test("yubico: an unreachable or silent server fails the check (no 500), within yubico.timeout", async () => {
  const { t, serial, stub, close } = await setup(() => "slow", { "yubico.timeout": "1" });
  for (const timeout of ["0", "61", "x"]) {
    const res = await t.asAdmin("POST", "/system/setConfig", {
      body: { "yubico.timeout": timeout },
    });
    assert.equal(res.status, 400, timeout);
  }
  const started = performance.now();
  const slow = await check(t, { user: "alice", pass: "pin" + OTP_A });
  const took = performance.now() - started;
  assert.equal(slow.status, 200);
  assert.equal(slow.body.result.value, false);
  assert.ok(took >= 900 && took < 1900, `gave up after ${took} ms`);
  assert.equal(stub.requests.length, 1);

  // a port nobody listens on: the stub's own, once it is gone
  const gone = startStub(() => "ok");
  await gone.close();
  await setConfig(t, { "yubico.url": gone.url });
  const refused = await check(t, { user: "alice", pass: "pin" + OTP_A });
  assert.equal(refused.status, 200);
  assert.equal(refused.body.result.value, false);
  // and no configuration at all
  await t.asAdmin("DELETE", "/system/yubico.id");
  const unconfigured = await check(t, { user: "alice", pass: "pin" + OTP_A });
  assert.equal(unconfigured.status, 200);
  assert.equal(unconfigured.body.result.value, false);
  assert.equal(await failcount(t, serial), 3);
  assert.ok(t.log.lines.some((l) => /yubico\.id/.test(l)));
  await close();
});

Deno.test("yubico: the same OTP sent in parallel is accepted once (the server's replay check)", async () => {
  const { t, serial, close } = await setup();
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "100" } });
  assert.equal(await acceptedOfParallel(t, { user: "alice", pass: "pin" + OTP_A }, 8), 1);
  await close();
});
