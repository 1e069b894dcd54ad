/**
 * The `remote` token over HTTP (spec 14 §5) against a second Tessera served on loopback:
 * the whole pass forwarded (remote PIN) or the OTP part after a local PIN, the exact form
 * fields (quoted once more, empty ones left out), last_matching_remote_serial, refusals at
 * enrolment that create nothing, and an unreachable server failing the check.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import {
  addPolicy,
  appWithAlice,
  challengeOf,
  check,
  enrolOk,
  init,
  listed,
} from "./_challenge_types.ts";
import { closedPort, serveApp } from "./_serve_app.ts";

async function defineServer(t: TestApp, identifier: string, url: string): Promise<number> {
  const res = await jsonOf(
    await t.asAdmin("POST", `/privacyideaserver/${identifier}`, { body: { url, tls: "0" } }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const list = await jsonOf(await t.asAdmin("GET", "/privacyideaserver/"));
  return list.body.result.value[identifier].id;
}

async function setup() {
  const a = await appWithAlice();
  const b = await createTestApp();
  await createUsers(b.deps, { realm: "realm1", users: [{ login: "bob" }] });
  const served = serveApp(b);
  const id = await defineServer(a, "nodeB", served.url);
  return { a, b, served, id };
}

async function tokenCount(t: TestApp): Promise<number> {
  return (await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count;
}

Deno.test("remote: the whole pass goes to the remote server, which checks PIN and OTP", async () => {
  const { a, b, served, id } = await setup();
  try {
    // a PIN that needs quoting on the way
    await enrollHotp(b, { user: "bob", realm: "realm1", pin: "p 1&" });
    const body = await enrolOk(a, {
      type: "remote",
      "remote.server_id": String(id),
      "remote.user": "bob",
      "remote.realm": "realm1",
      user: "alice",
      realm: "realm1",
    });
    const serial = body.detail.serial as string;
    assert.match(serial, /^PIRE/);
    const token = await listed(a, serial);
    assert.equal(token.info["remote.server_id"], String(id));
    assert.equal(token.info["remote.local_checkpin"], "0");
    assert.equal(token.info.tokenkind, "virtual");

    const ok = await check(a, { user: "alice", pass: "p 1&" + hotp(0) });
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    assert.equal(ok.body.detail.serial, serial);
    const sent = served.seen.at(-1)!;
    assert.equal(sent.path, "/validate/check");
    // quoted once more (privacyIDEA's receivers decode twice); empty fields are not sent
    assert.equal(sent.form.get("pass"), "p%201%26" + hotp(0));
    assert.equal(sent.form.get("user"), "bob");
    assert.equal(sent.form.get("realm"), "realm1");
    assert.equal(sent.form.has("serial"), false);
    assert.equal(sent.form.has("resolver"), false);

    const seen = served.seen.length;
    assert.equal(
      (await check(a, { user: "alice", pass: "p 1&" + hotp(0) })).body.result.value,
      false,
    );
    assert.equal(served.seen.length, seen + 1, "the replay was asked and refused remotely");
    assert.equal((await check(a, { user: "alice", pass: "p 1&000000" })).body.result.value, false);
  } finally {
    await served.close();
    await a.close();
    await b.close();
  }
});

Deno.test("remote: with a local PIN only the OTP goes upstream; the remote serial is noted", async () => {
  const { a, b, served, id } = await setup();
  try {
    const remoteSerial = await enrollHotp(b, { pin: "" });
    const body = await enrolOk(a, {
      type: "remote",
      "remote.server_id": String(id),
      "remote.serial": remoteSerial,
      "remote.local_checkpin": "1",
      pin: "local",
    });
    const serial = body.detail.serial as string;
    // a wrong local PIN asks nobody
    const before = served.seen.length;
    assert.equal((await check(a, { serial, pass: "wrong" + hotp(0) })).body.result.value, false);
    assert.equal(served.seen.length, before);
    const ok = await check(a, { serial, pass: "local" + hotp(0) });
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    const sent = served.seen.at(-1)!;
    assert.equal(sent.form.get("pass"), hotp(0));
    assert.equal(sent.form.get("serial"), remoteSerial);
    assert.equal(sent.form.has("user"), false);
    assert.equal((await listed(a, serial)).info.last_matching_remote_serial, remoteSerial);
    assert.equal((await check(a, { serial, pass: "local" + hotp(0) })).body.result.value, false);
    // challenge_response=remote: the local PIN alone starts a challenge, the answer goes upstream
    await addPolicy(a, "cr", { scope: "authentication", action: "challenge_response=remote" });
    const { tid } = challengeOf((await check(a, { serial, pass: "local" })).body);
    const answered = await check(a, { serial, transaction_id: tid, pass: hotp(1) });
    assert.equal(answered.body.result.value, true, JSON.stringify(answered.body));
    assert.equal(served.seen.at(-1)!.form.get("pass"), hotp(1));
  } finally {
    await served.close();
    await a.close();
    await b.close();
  }
});

Deno.test("remote: enrolment refusals create nothing; an unreachable server fails the check", async () => {
  const a = await appWithAlice();
  try {
    const down = await defineServer(a, "down", `http://127.0.0.1:${closedPort()}`);
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ "remote.user": "bob" }, 905, /Missing parameter: remote.server_id/],
      [
        { "remote.server_id": "999", "remote.user": "bob" },
        302,
        /Server configuration does not exist/,
      ],
      [{ "remote.server_id": "x", "remote.user": "bob" }, 302, /does not exist/],
      [{ "remote.server_id": String(down) }, 905, /remote.serial or remote.user/],
      [
        { "remote.server": "https://pi.example.com", "remote.user": "bob" },
        905,
        /remote.server_id/,
      ],
    ];
    for (const [params, code, message] of cases) {
      const res = await init(a, { type: "remote", ...params });
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.equal(res.body.result.error.code, code, JSON.stringify(res.body));
      assert.match(res.body.result.error.message, message);
    }
    assert.equal(await tokenCount(a), 0);
    const body = await enrolOk(a, {
      type: "remote",
      "remote.server_id": String(down),
      "remote.user": "bob",
      pin: "",
    });
    const res = await check(a, { serial: body.detail.serial, pass: "123456" });
    assert.equal(res.status, 200);
    assert.equal(res.body.result.value, false);
  } finally {
    await a.close();
  }
});
