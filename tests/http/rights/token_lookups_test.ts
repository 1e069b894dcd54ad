/**
 * An admin token request looks its token(s) up once: the rights step loads what the request
 * names, and the handler and the token functions act on exactly those objects (STYLE.md,
 * "resolve once, decide once"). Counted by the statements that read token rows
 * (tests/statement_counter.ts), for every admin token endpoint, in bulk and by user.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../../test_app.ts";
import { createUsers } from "../../fixtures/users.ts";
import { enrollHotp, hotp } from "../../fixtures/tokens.ts";
import { savePolicy } from "../../../src/domain/policy/mod.ts";
import { findTokenBySerial } from "../../../src/domain/token/mod.ts";
import { statementsDuring, TOKEN_LOOKUP } from "../../statement_counter.ts";

interface World {
  t: TestApp;
  /** Tokens of alice (one each for the actions that end a token's use). */
  owned: string[];
  free: string;
}

async function world(): Promise<World> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "staff", users: [{ login: "alice", password: "a" }] });
  await t.adminToken();
  // with an admin policy the rights step decides per token (the realm-bound path)
  await savePolicy(t.deps, "admins", {
    scope: "admin",
    action: "*, otp_pin_set_random=8",
    adminuser: "admin",
  });
  const owned = [];
  for (let i = 0; i < 4; i++) owned.push(await enrollHotp(t, { user: "alice", realm: "staff" }));
  return { t, owned, free: await enrollHotp(t, { realm: "staff" }) };
}

type Req = [string, string, Record<string, unknown>?];

/** Each admin token endpoint: the request on serial `s` (free token `f`), and its check. */
const REQUESTS: [string, (s: string, f: string, all: string[]) => Req][] = [
  ["disable", (s) => ["POST", "/token/disable", { serial: s }]],
  ["disable/<serial>", (s) => ["POST", `/token/disable/${s}`]],
  ["enable", (s) => ["POST", "/token/enable", { serial: s }]],
  ["delete", (s) => ["DELETE", `/token/${s}`]],
  ["setpin", (s) => ["POST", "/token/setpin", { serial: s, otppin: "1234" }]],
  ["setrandompin", (s) => ["POST", "/token/setrandompin", { serial: s }]],
  ["assign", (_s, f) => ["POST", "/token/assign", { serial: f, user: "alice@staff" }]],
  ["unassign", (s) => ["POST", "/token/unassign", { serial: s }]],
  ["revoke", (s) => ["POST", "/token/revoke", { serial: s }]],
  ["reset", (s) => ["POST", "/token/reset", { serial: s }]],
  ["resync", (s) => ["POST", "/token/resync", { serial: s, otp1: hotp(5), otp2: hotp(6) }]],
  ["set", (s) => ["POST", "/token/set", { serial: s, max_failcount: 7 }]],
  ["description", (s) => ["POST", "/token/description", { serial: s, description: "d" }]],
  ["info", (s) => ["POST", `/token/info/${s}/color`, { value: "red" }]],
  ["delete info", (s) => ["DELETE", `/token/info/${s}/color`]],
  ["realm", (s) => ["POST", `/token/realm/${s}`, { realms: "staff" }]],
  ["lost", (s) => ["POST", `/token/lost/${s}`]],
  ["getchallenges", (s) => ["GET", `/token/challenges/${s}`]],
  ["bulk delete", (_s, _f, all) => ["DELETE", `/token/?serials=${all.join(",")}`]],
  ["bulk unassign", (_s, _f, all) => ["POST", "/token/unassign", { serial: all.join(",") }]],
  ["by user", () => ["POST", "/token/disable", { user: "alice@staff" }]],
];

for (const [name, make] of REQUESTS) {
  Deno.test(`admin ${name}: the token is looked up once`, async () => {
    const w = await world();
    try {
      const s = w.owned[0];
      const [method, path, body] = make(s, w.free, w.owned);
      const token = await w.t.adminToken();
      const { result: res, statements } = await statementsDuring(
        w.t.deps.db,
        TOKEN_LOOKUP,
        async () => await jsonOf(await w.t.request(method, path, { token, body })),
      );
      assert.equal(res.status, 200, `${name}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.result.status, true);
      assert.deepEqual(statements.length, 1, `${name}: ${statements.join("\n")}`);
      if (name === "disable" || name === "disable/<serial>") {
        assert.equal((await findTokenBySerial(w.t.deps, s))?.active, false);
      }
      if (name.startsWith("bulk")) {
        assert.equal(res.body.result.value.count_success, w.owned.length);
      }
    } finally {
      await w.t.close();
    }
  });
}

/** Adds an event definition through the API. */
async function addEvent(t: TestApp, body: Record<string, unknown>): Promise<void> {
  const res = await jsonOf(await t.asAdmin("POST", "/event", { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

Deno.test("a pre event handler reads the checked token and user: still one lookup", async () => {
  const w = await world();
  try {
    await addEvent(w.t, {
      name: "note",
      event: "token_disable",
      handlermodule: "Logging",
      action: "logging",
      position: "pre",
      "option.message": "disabling {serial} of {username}@{userrealm} ({tokentype})",
      conditions: { tokentype: "hotp", token_has_owner: "True" },
    });
    const s = w.owned[0];
    const token = await w.t.adminToken();
    const { result: res, statements } = await statementsDuring(
      w.t.deps.db,
      TOKEN_LOOKUP,
      async () => await jsonOf(await w.t.post("/token/disable", { serial: s }, { token })),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result.value, 1);
    assert.equal(statements.length, 1, statements.join("\n"));
    assert.ok(
      w.t.log.lines.some((l) => l.includes(`disabling ${s} of alice@staff (hotp)`)),
      "the handler saw the checked token and its owner",
    );
  } finally {
    await w.t.close();
  }
});

Deno.test("a token a pre handler deleted is gone for the endpoint too (404, as before)", async () => {
  const w = await world();
  try {
    await addEvent(w.t, {
      name: "drop first",
      event: "token_disable",
      handlermodule: "Token",
      action: "delete",
      position: "pre",
    });
    const s = w.owned[0];
    const res = await jsonOf(await w.t.asAdmin("POST", "/token/disable", { body: { serial: s } }));
    assert.equal(res.status, 404, JSON.stringify(res.body));
    assert.equal(res.body.result.error.code, 601);
    assert.equal(await findTokenBySerial(w.t.deps, s), undefined);
  } finally {
    await w.t.close();
  }
});
