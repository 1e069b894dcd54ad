/**
 * The enrolment policies that limit tokens per user and per realm
 * (`max_token_per_user`, `<type>_max_token_per_user`,
 * `max_active_token_per_user`, `<type>_max_active_token_per_user`,
 * `max_token_per_realm`) on `/token/init` and `/token/assign`, for admins
 * and for a user enrolling their own token. A refusal creates nothing.
 */
import assert from "node:assert/strict";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { addPolicy, ALICE, appWithAlice } from "./_challenge_types.ts";
import { actionTest } from "../policy_actions/_registry.ts";

async function initAs(t: TestApp, body: Record<string, unknown>, token?: string) {
  return await jsonOf(
    token === undefined
      ? await t.asAdmin("POST", "/token/init", { body })
      : await t.request("POST", "/token/init", { body, token }),
  );
}

async function serials(t: TestApp, query: Record<string, string> = {}): Promise<string[]> {
  const res = await jsonOf(await t.asAdmin("GET", "/token/", { query }));
  return res.body.result.value.tokens.map((tok: { serial: string }) => tok.serial).sort();
}

function assertRefused(res: { status: number; body: Json }, message: string) {
  assert.equal(res.status, 403, JSON.stringify(res.body));
  assert.equal(res.body.result.status, false);
  assert.equal(res.body.result.error.code, 303);
  assert.equal(res.body.result.error.message, message);
}

actionTest(
  "enrollment",
  "max_token_per_user",
  "the user's next token is refused (init and assign), a re-enrolment is not",
  async () => {
    const t = await appWithAlice();
    await addPolicy(t, "lim", { scope: "enrollment", action: { max_token_per_user: 2 } });
    for (const serial of ["A1", "A2"]) {
      const ok = await initAs(t, {
        type: "hotp",
        serial,
        genkey: 1,
        user: "alice",
        realm: "realm1",
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    }
    const third = await initAs(t, { type: "totp", serial: "A3", genkey: 1, user: "alice" });
    assertRefused(third, "The number of tokens for this user is limited!");
    assert.deepEqual(await serials(t), ["A1", "A2"], "nothing created");
    // re-enrolling one of alice's own tokens gives her none more
    const again = await initAs(t, { type: "hotp", serial: "A2", genkey: 1, user: "alice" });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    // an unassigned token may be made, but not assigned to her
    assert.equal((await initAs(t, { type: "hotp", serial: "FREE", genkey: 1 })).status, 200);
    const assign = await jsonOf(
      await t.asAdmin("POST", "/token/assign", { body: { serial: "FREE", user: "alice" } }),
    );
    assertRefused(assign, "The number of tokens for this user is limited!");
    const free = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial: "FREE" } }));
    assert.equal(free.body.result.value.tokens[0].username, "", "still unassigned");
    // of two matching policies the larger value counts (privacyIDEA's rule)
    await addPolicy(t, "more", { scope: "enrollment", action: { max_token_per_user: 3 } });
    const now = await initAs(t, { type: "totp", serial: "A3", genkey: 1, user: "alice" });
    assert.equal(now.status, 200, JSON.stringify(now.body));
    await t.close();
  },
);

Deno.test("<type>_max_token_per_user limits one type only; a user's own enrolment is limited too", async () => {
  const t = await appWithAlice();
  await addPolicy(t, "self", { scope: "user", action: { enrollHOTP: true, enrollTOTP: true } });
  await addPolicy(t, "lim", { scope: "enrollment", action: { hotp_max_token_per_user: 1 } });
  const login = await jsonOf(
    await t.post("/auth", { username: ALICE.login, password: ALICE.password }),
  );
  const jwt = login.body.result.value.token;
  const first = await initAs(t, { type: "hotp", genkey: 1 }, jwt);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const second = await initAs(t, { type: "hotp", genkey: 1 }, jwt);
  assertRefused(second, "The number of tokens of type hotp for this user is limited!");
  const totp = await initAs(t, { type: "totp", genkey: 1 }, jwt);
  assert.equal(totp.status, 200, JSON.stringify(totp.body));
  assert.equal((await serials(t)).length, 2);
  await t.close();
});

actionTest(
  "enrollment",
  "max_active_token_per_user",
  "counts active tokens: disabling one makes room",
  async () => {
    const t = await appWithAlice();
    await addPolicy(t, "lim", { scope: "enrollment", action: { max_active_token_per_user: 1 } });
    assert.equal(
      (await initAs(t, { type: "hotp", serial: "B1", genkey: 1, user: "alice" })).status,
      200,
    );
    assertRefused(
      await initAs(t, { type: "hotp", serial: "B2", genkey: 1, user: "alice" }),
      "The number of active tokens for this user is limited!",
    );
    await t.asAdmin("POST", "/token/disable", { body: { serial: "B1" } });
    const ok = await initAs(t, { type: "hotp", serial: "B2", genkey: 1, user: "alice" });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    await addPolicy(t, "typed", {
      scope: "enrollment",
      action: { totp_max_active_token_per_user: 0 },
    });
    assertRefused(
      await initAs(t, { type: "totp", serial: "B3", genkey: 1, user: "alice" }),
      "The number of active tokens of type totp for this user is limited!",
    );
    assert.deepEqual(await serials(t), ["B1", "B2"]);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "max_token_per_realm",
  "the realm's next token is refused, whether for a user or by realm only",
  async () => {
    const t = await appWithAlice();
    await addPolicy(t, "lim", {
      scope: "enrollment",
      realm: "realm1",
      action: { max_token_per_realm: 1 },
    });
    assert.equal(
      (await initAs(t, { type: "hotp", serial: "R1", genkey: 1, realm: "realm1" })).status,
      200,
    );
    assertRefused(
      await initAs(t, { type: "hotp", serial: "R2", genkey: 1, user: "alice", realm: "realm1" }),
      "The number of tokens in this realm is limited!",
    );
    assertRefused(
      await initAs(t, { type: "hotp", serial: "R3", genkey: 1, realm: "realm1" }),
      "The number of tokens in this realm is limited!",
    );
    // the token already in the realm may be enrolled again, and assigned within it
    assert.equal(
      (await initAs(t, { type: "hotp", serial: "R1", genkey: 1, realm: "realm1" })).status,
      200,
    );
    const assign = await jsonOf(
      await t.asAdmin("POST", "/token/assign", { body: { serial: "R1", user: "alice" } }),
    );
    assert.equal(assign.status, 200, JSON.stringify(assign.body));
    // a token without a realm is not limited by it
    assert.equal((await initAs(t, { type: "hotp", serial: "NOREALM", genkey: 1 })).status, 200);
    assert.deepEqual(await serials(t), ["NOREALM", "R1"]);
    await t.close();
  },
);
