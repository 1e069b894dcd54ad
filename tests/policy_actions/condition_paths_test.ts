/**
 * Extended policy conditions on the paths that used to skip them (spec 04 §4.8): enrolment
 * values (enrollment, admin and user scope), token limits, a user's rights list, `login_mode`,
 * `mangle` and the authentication policies of `/validate/check` (user info and request headers),
 * `GET /policy/check` (no user object, as privacyIDEA) and the resolver probe's
 * `require_auth_for_resolver_details`. Each policy carries a condition that holds for alice
 * (`givenname equals Alice`) and not for bob: it applies to alice and not to bob.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";

const ALICE_ONLY = [["userinfo", "givenname", "equals", "Alice", true]];

async function app(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "realm1",
    users: [
      { login: "alice", password: "alicepw", givenname: "Alice" },
      { login: "bob", password: "bobpw", givenname: "Bob" },
    ],
  });
  return t;
}

async function policy(t: TestApp, name: string, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function init(t: TestApp, body: Record<string, unknown>, token?: string) {
  const options = { body: { realm: "realm1", ...body }, json: true };
  return await jsonOf(
    token
      ? await t.request("POST", "/token/init", { ...options, token })
      : await t.asAdmin("POST", "/token/init", options),
  );
}

async function login(t: TestApp, username: string, password: string) {
  return await jsonOf(await t.post("/auth", { username, password, realm: "realm1" }));
}

/** The label of an enrolment URL. */
function labelOf(body: Json): string {
  return decodeURIComponent(new URL(body.detail.googleurl.value).pathname.slice(1));
}

Deno.test("conditions: enrollment-scope enrolment values (tokenlabel) apply to the user the condition holds for", async () => {
  const t = await app();
  try {
    await policy(t, "label", {
      scope: "enrollment",
      action: { tokenlabel: "{user}-sales" },
      conditions: ALICE_ONLY,
    });
    const alice = await init(t, { type: "hotp", genkey: "1", user: "alice" });
    assert.equal(alice.status, 200, JSON.stringify(alice.body));
    assert.equal(labelOf(alice.body), "alice-sales");
    const bob = await init(t, { type: "hotp", genkey: "1", user: "bob" });
    assert.equal(bob.status, 200, JSON.stringify(bob.body));
    assert.equal(labelOf(bob.body), bob.body.detail.serial);
  } finally {
    await t.close();
  }
});

Deno.test("conditions: admin- and user-scope enrolment values (hotp_otplen) follow the owner's info", async () => {
  const t = await app();
  try {
    // every right for the test admin (policywrite, tokenlist, …)
    await policy(t, "adm-all", { scope: "admin", action: "*", priority: 2 });
    await policy(t, "adm", {
      scope: "admin",
      action: { hotp_otplen: "8", enrollHOTP: true },
      conditions: ALICE_ONLY,
    });
    const alice = await init(t, { type: "hotp", genkey: "1", user: "alice" });
    assert.equal(alice.body.detail.googleurl.value.includes("digits=8"), true);
    const bob = await init(t, { type: "hotp", genkey: "1", user: "bob" });
    assert.equal(bob.status, 200, JSON.stringify(bob.body));
    assert.equal(bob.body.detail.googleurl.value.includes("digits=6"), true);

    await policy(t, "own", {
      scope: "user",
      action: { hotp_otplen: "8", enrollHOTP: true },
      conditions: ALICE_ONLY,
    });
    await policy(t, "own-all", { scope: "user", action: { enrollHOTP: true }, priority: 2 });
    const aliceJwt = (await login(t, "alice", "alicepw")).body.result.value.token;
    const bobJwt = (await login(t, "bob", "bobpw")).body.result.value.token;
    const mine = await init(t, { type: "hotp", genkey: "1" }, aliceJwt);
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.equal(mine.body.detail.googleurl.value.includes("digits=8"), true);
    const his = await init(t, { type: "hotp", genkey: "1" }, bobJwt);
    assert.equal(his.status, 200, JSON.stringify(his.body));
    assert.equal(his.body.detail.googleurl.value.includes("digits=6"), true);
  } finally {
    await t.close();
  }
});

Deno.test("conditions: max_token_per_user limits the user the condition holds for; max_token_per_realm finds no user object (privacyIDEA's Match.realm)", async () => {
  const t = await app();
  try {
    await policy(t, "limit", {
      scope: "enrollment",
      action: { max_token_per_user: "1" },
      conditions: ALICE_ONLY,
    });
    for (const user of ["alice", "bob"]) {
      assert.equal((await init(t, { type: "hotp", genkey: "1", user })).status, 200);
    }
    const refused = await init(t, { type: "hotp", genkey: "1", user: "alice" });
    assert.equal(refused.status, 403);
    assert.equal(
      refused.body.result.error.message,
      "The number of tokens for this user is limited!",
    );
    const allowed = await init(t, { type: "hotp", genkey: "1", user: "bob" });
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));

    await policy(t, "limit", {
      scope: "enrollment",
      action: { max_token_per_realm: "100" },
      conditions: ALICE_ONLY,
    });
    const noUser = await init(t, { type: "hotp", genkey: "1", user: "bob" });
    assert.equal(noUser.status, 403);
    assert.equal(
      noUser.body.result.error.message,
      "Policy 'limit' has a condition on the section 'userinfo' with key 'givenname', but a user is unavailable!",
    );
    await policy(t, "limit", {
      scope: "enrollment",
      action: { max_token_per_realm: "3" },
      conditions: [["userinfo", "givenname", "equals", "Alice", true, "condition_is_true"]],
    });
    const full = await init(t, { type: "hotp", genkey: "1", user: "bob" });
    assert.equal(full.body.result.error.message, "The number of tokens in this realm is limited!");
  } finally {
    await t.close();
  }
});

Deno.test("conditions: a user's rights list (/auth and /auth/rights) holds the actions of the policies whose userinfo condition holds", async () => {
  const t = await app();
  try {
    await policy(t, "enrol", {
      scope: "user",
      action: { enrollHOTP: true },
      conditions: ALICE_ONLY,
    });
    await policy(t, "all", { scope: "user", action: { disable: true } });
    const alice = await login(t, "alice", "alicepw");
    assert.equal(alice.status, 200, JSON.stringify(alice.body));
    assert.deepEqual(alice.body.result.value.rights.sort(), ["disable", "enrollHOTP"]);
    const bob = await login(t, "bob", "bobpw");
    assert.deepEqual(bob.body.result.value.rights, ["disable"]);
    const types = async (token: string) =>
      Object.keys((await jsonOf(await t.get("/auth/rights", { token }))).body.result.value);
    assert.deepEqual(await types(alice.body.result.value.token), ["hotp"]);
    assert.deepEqual(await types(bob.body.result.value.token), []);
  } finally {
    await t.close();
  }
});

Deno.test("conditions: webui login_mode applies to the user the condition holds for", async () => {
  const t = await app();
  try {
    await policy(t, "off", {
      scope: "webui",
      action: { login_mode: "disable" },
      conditions: ALICE_ONLY,
    });
    const alice = await login(t, "alice", "alicepw");
    assert.equal(alice.status, 403);
    assert.equal(alice.body.result.error.message, "The login for this user is disabled.");
    assert.equal((await login(t, "bob", "bobpw")).status, 200);
  } finally {
    await t.close();
  }
});

Deno.test("conditions: mangle applies to the user the request names when the condition holds; a header condition reads the request's headers", async () => {
  const t = await app();
  try {
    for (const user of ["alice", "bob"]) {
      const res = await init(t, { type: "spass", pin: "pin", user });
      assert.equal(res.status, 200);
    }
    await policy(t, "vpn", {
      scope: "authentication",
      action: { mangle: "pass/^vpn-//" },
      conditions: ALICE_ONLY,
    });
    const check = async (user: string, headers: Record<string, string> = {}) =>
      (await jsonOf(await t.post("/validate/check", { user, pass: "vpn-pin" }, { headers })))
        .body.result.value;
    assert.equal(await check("alice"), true);
    assert.equal(await check("bob"), false);

    await policy(t, "vpn", {
      scope: "authentication",
      action: { mangle: "pass/^vpn-//" },
      conditions: [["HTTP Request header", "X-Site", "equals", "vpn", true]],
    });
    assert.equal(await check("bob", { "X-Site": "vpn" }), true);
    assert.equal(await check("bob", { "X-Site": "office" }), false);
  } finally {
    await t.close();
  }
});

Deno.test("conditions: the authentication policies of /validate/check read the request's headers", async () => {
  const t = await app();
  try {
    assert.equal((await init(t, { type: "spass", pin: "pin", user: "alice" })).status, 200);
    await policy(t, "pw", {
      scope: "authentication",
      action: { otppin: "userstore" },
      conditions: [["HTTP Request header", "X-Login", "equals", "password", true]],
    });
    const check = async (pass: string, headers: Record<string, string> = {}) =>
      (await jsonOf(await t.post("/validate/check", { user: "alice", pass }, { headers })))
        .body.result.value;
    assert.equal(await check("alicepw", { "X-Login": "password" }), true);
    assert.equal(await check("pin", { "X-Login": "password" }), false);
    // without the header the policy is missing data: raise_error refuses the request
    const res = await jsonOf(await t.post("/validate/check", { user: "alice", pass: "pin" }));
    assert.equal(res.status, 403);
    assert.equal(
      res.body.result.error.message,
      "Unknown HTTP Request header key 'X-Login' referenced in condition of policy 'pw'!",
    );
    await policy(t, "pw", {
      scope: "authentication",
      action: { otppin: "userstore" },
      conditions: [[
        "HTTP Request header",
        "X-Login",
        "equals",
        "password",
        true,
        "condition_is_false",
      ]],
    });
    assert.equal(await check("pin"), true);
  } finally {
    await t.close();
  }
});

Deno.test("conditions: GET /policy/check matches without a user object (privacyIDEA's Match.generic) but with the request's headers", async () => {
  const t = await app();
  try {
    await policy(t, "label", {
      scope: "enrollment",
      action: { tokenlabel: "x" },
      conditions: ALICE_ONLY,
    });
    const query = { user: "alice", realm: "realm1", scope: "enrollment", action: "tokenlabel" };
    const raised = await jsonOf(await t.asAdmin("GET", "/policy/check", { query }));
    assert.equal(raised.status, 403);
    assert.equal(
      raised.body.result.error.message,
      "Policy 'label' has a condition on the section 'userinfo' with key 'givenname', but a user is unavailable!",
    );
    await policy(t, "label", {
      scope: "enrollment",
      action: { tokenlabel: "x" },
      conditions: [["HTTP Request header", "X-Check", "equals", "yes", true]],
    });
    const withHeader = await jsonOf(
      await t.asAdmin("GET", "/policy/check", { query, headers: { "X-Check": "yes" } }),
    );
    assert.equal(withHeader.body.result.value.allowed, true, JSON.stringify(withHeader.body));
    const other = await jsonOf(
      await t.asAdmin("GET", "/policy/check", { query, headers: { "X-Check": "no" } }),
    );
    assert.equal(other.body.result.value.allowed, false);
  } finally {
    await t.close();
  }
});

Deno.test("conditions: require_auth_for_resolver_details is matched without user or request data, as privacyIDEA's probe", async () => {
  const t = await app();
  try {
    const probe = async () =>
      await jsonOf(await t.get("/healthz/resolversz", { headers: { Authorization: "bad.jwt" } }));
    const strict = (missing: string) =>
      policy(t, "strict", {
        scope: "authorization",
        action: { require_auth_for_resolver_details: true },
        conditions: [["userinfo", "givenname", "equals", "Alice", true, missing]],
      });
    await strict("condition_is_false");
    assert.equal((await probe()).status, 200);
    await strict("condition_is_true");
    assert.equal((await probe()).status, 401);
    await strict("raise_error");
    const failed = await probe();
    assert.equal(failed.status, 503);
    assert.deepEqual(failed.body.result.value, { status: "error" });
  } finally {
    await t.close();
  }
});
