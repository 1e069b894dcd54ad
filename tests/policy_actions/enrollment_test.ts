/**
 * Effect tests of enrollment-scope policy actions (spec 15 §5), over HTTP: each
 * compares the request without the policy with the same request under it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { actionTest } from "./_registry.ts";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { SEED_HEX } from "../fixtures/tokens.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { findTokenBySerial } from "../../src/domain/token/mod.ts";

type Res = Awaited<ReturnType<typeof jsonOf>>;

async function admin(
  t: TestApp,
  method: string,
  path: string,
  body?: Record<string, unknown>,
): Promise<Res> {
  return await jsonOf(await t.asAdmin(method, path, body ? { body, json: true } : {}));
}

/** An app with alice (password "alicepw") and bob in realm r1. */
async function appWithUsers(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "r1",
    users: [
      { login: "alice", password: "alicepw", givenname: "Alice", surname: "Liddell" },
      { login: "bob", password: "bobpw" },
    ],
  });
  return t;
}

function ok(res: Res): Res {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res;
}

// ---------------------------------------------------------------------------
// /token/lost

async function lostSetup(): Promise<TestApp> {
  const t = await appWithUsers();
  for (const serial of ["L1", "L2", "L3"]) {
    ok(
      await admin(t, "POST", "/token/init", {
        serial,
        otpkey: SEED_HEX,
        pin: "pin",
        user: "alice",
        realm: "r1",
      }),
    );
  }
  return t;
}

actionTest(
  "enrollment",
  "losttoken_PW_length",
  "sets the length of the lost token's password (default 16)",
  async () => {
    const t = await lostSetup();
    const before = ok(await admin(t, "POST", "/token/lost/L1")).body.result.value;
    assert.equal(before.password.length, 16);
    await savePolicy(t.deps, "lost", { scope: "enrollment", action: "losttoken_PW_length=24" });
    const after = ok(await admin(t, "POST", "/token/lost/L2")).body.result.value;
    assert.equal(after.password.length, 24);
    // a policy for another user does not apply
    await savePolicy(t.deps, "lost", {
      scope: "enrollment",
      action: "losttoken_PW_length=24",
      user: "bob",
    });
    const other = ok(await admin(t, "POST", "/token/lost/L3")).body.result.value;
    assert.equal(other.password.length, 16);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "losttoken_PW_contents",
  "sets the characters of the lost token's password (default Base58)",
  async () => {
    const t = await lostSetup();
    const before = ok(await admin(t, "POST", "/token/lost/L1")).body.result.value;
    assert.match(before.password, /^[1-9A-HJ-NP-Za-km-z]{16}$/);
    await savePolicy(t.deps, "lost", { scope: "enrollment", action: "losttoken_PW_contents=n" });
    const after = ok(await admin(t, "POST", "/token/lost/L2")).body.result.value;
    assert.match(after.password, /^[0-9]{16}$/);
    // the password works with the PIN of the lost token
    const check = await jsonOf(
      await t.post("/validate/check", { user: "alice", realm: "r1", pass: `pin${after.password}` }),
    );
    assert.equal(check.body.result.value, true);
    // a value naming no character set is refused and nothing changes
    await savePolicy(t.deps, "lost", { scope: "enrollment", action: "losttoken_PW_contents=xyz" });
    const bad = await admin(t, "POST", "/token/lost/L3");
    assert.equal(bad.status, 403);
    assert.equal(bad.body.result.error.code, 303);
    assert.equal(
      bad.body.result.error.message,
      'The policy action "losttoken_PW_contents" names no character set (c, C, n, s, 8): "xyz"',
    );
    assert.equal(await findTokenBySerial(t.deps, "lostL3"), undefined);
    assert.equal((await findTokenBySerial(t.deps, "L3"))?.active, true);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "losttoken_valid",
  "sets the days the lost token is valid (default 10)",
  async () => {
    const t = await lostSetup();
    const before = ok(await admin(t, "POST", "/token/lost/L1")).body.result.value;
    assert.equal(before.end_date, "2026-01-11T00:00+0000");
    await savePolicy(t.deps, "lost", {
      scope: "enrollment",
      action: "losttoken_valid=2, losttoken_PW_length=10, losttoken_PW_contents=n",
    });
    const after = ok(await admin(t, "POST", "/token/lost/L2")).body.result.value;
    assert.equal(after.end_date, "2026-01-03T00:00+0000");
    assert.match(after.password, /^[0-9]{10}$/);
    const info = (await findTokenBySerial(t.deps, "lostL2"))!.info;
    assert.equal(info.validity_period_end.value, "2026-01-03T00:00+0000");
    // after two days the replacement no longer authenticates
    t.clock.advance(3 * 86_400_000);
    const check = await jsonOf(
      await t.post("/validate/check", { user: "alice", realm: "r1", pass: `pin${after.password}` }),
    );
    assert.equal(check.body.result.value, false);
    await t.close();
  },
);
