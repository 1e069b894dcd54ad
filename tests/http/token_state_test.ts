/**
 * The token list's `state` filter and `sortby=state`: a token whose fail
 * counter is at its maximum is locked (every check fails until a reset),
 * not active.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";

const KEY = "3132333435363738393031323334353637383930";

async function enrol(t: TestApp, serial: string): Promise<void> {
  const res = await jsonOf(
    await t.asAdmin("POST", "/token/init", { body: { type: "hotp", serial, otpkey: KEY } }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function post(t: TestApp, path: string, body: Record<string, unknown>): Promise<void> {
  const res = await jsonOf(await t.asAdmin("POST", path, { body }));
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
}

/** Wrong OTPs until the fail counter reaches the token's maximum (2). */
async function lock(t: TestApp, serial: string): Promise<void> {
  await post(t, "/token/set", { serial, max_failcount: 2 });
  for (let i = 0; i < 2; i++) {
    const res = await jsonOf(await t.post("/validate/check", { serial, pass: "000000" }));
    assert.equal(res.body.result.value, false);
  }
}

async function list(t: TestApp, query: Record<string, string>) {
  return await jsonOf(await t.asAdmin("GET", "/token/", { query }));
}

function serials(body: Json): string[] {
  return body.result.value.tokens.map((x: { serial: string }) => x.serial);
}

Deno.test("GET /token/ filters by state and sorts by state and fail counter", async () => {
  const t = await createTestApp();
  for (const s of ["T1ACTIVE", "T2LOCKED", "T3DISABLED", "T4REVOKED", "T5DISLOCKED"]) {
    await enrol(t, s);
  }
  await lock(t, "T2LOCKED");
  await post(t, "/token/disable", { serial: "T3DISABLED" });
  await post(t, "/token/revoke", { serial: "T4REVOKED" });
  await lock(t, "T5DISLOCKED");
  await post(t, "/token/disable", { serial: "T5DISLOCKED" });

  const locked = await list(t, { state: "locked" });
  assert.equal(locked.status, 200);
  assert.deepEqual(serials(locked.body), ["T2LOCKED", "T5DISLOCKED"]);
  const t2 = locked.body.result.value.tokens[0];
  assert.equal(t2.active, true, "a locked token is still enabled");
  assert.equal(t2.failcount, 2);
  assert.equal(t2.maxfail, 2);

  const cases: [Record<string, string>, string[]][] = [
    [{ state: "active" }, ["T1ACTIVE"]],
    [{ state: "DISABLED" }, ["T3DISABLED", "T5DISLOCKED"]],
    [{ state: "revoked" }, ["T4REVOKED"]],
    [{ state: "" }, ["T1ACTIVE", "T2LOCKED", "T3DISABLED", "T4REVOKED", "T5DISLOCKED"]],
    [{ state: "locked", active: "0" }, ["T5DISLOCKED"]],
    [{ sortby: "state" }, ["T1ACTIVE", "T2LOCKED", "T3DISABLED", "T5DISLOCKED", "T4REVOKED"]],
    [
      { sortby: "state", sortdir: "desc" },
      ["T4REVOKED", "T3DISABLED", "T5DISLOCKED", "T2LOCKED", "T1ACTIVE"],
    ],
    [{ sortby: "failcount", sortdir: "desc", state: "locked" }, ["T2LOCKED", "T5DISLOCKED"]],
    [{ sortby: "failcount", sortdir: "desc", pagesize: "2" }, ["T2LOCKED", "T5DISLOCKED"]],
  ];
  for (const [query, expected] of cases) {
    const res = await list(t, query);
    assert.equal(res.status, 200, JSON.stringify(query));
    assert.deepEqual(serials(res.body), expected, JSON.stringify(query));
  }

  // a reset unlocks
  await post(t, "/token/reset", { serial: "T2LOCKED" });
  assert.deepEqual(serials((await list(t, { state: "active" })).body), ["T1ACTIVE", "T2LOCKED"]);

  const bad = await list(t, { state: "frozen" });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.result.error.code, 905);
  assert.equal(
    bad.body.result.error.message,
    'ERR905: Cannot parse parameter "state": expected one of active, locked, disabled, revoked, got "frozen"',
  );
  await t.close();
});
