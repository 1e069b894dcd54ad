/**
 * An administrator's token request reads the token table once: the rights
 * step looks the token of `serial` (or the user's tokens) up, decides on it,
 * and the handler and the token functions act on exactly that object. Counted
 * at the database as for `/validate/check` (tests/http/_statements.ts):
 * SELECTs naming the `token` table.
 */
import assert from "node:assert/strict";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { hotp, SEED_HEX } from "../fixtures/tokens.ts";
import { appWithAlice, check, enrolOk, listed } from "./_challenge_types.ts";
import { statementsOf, TOKEN_READ_REGEXP } from "./_statements.ts";
import { findTokenBySerial } from "../../src/domain/token/mod.ts";

/** The token-table reads of one admin request, and its answer (which must be 200). */
async function countedAdmin(
  t: TestApp,
  method: string,
  path: string,
  options: { body?: Record<string, unknown>; query?: Record<string, string> } = {},
): Promise<{ reads: string[]; body: Json }> {
  // the JWT first: its login is no part of the request counted
  await t.adminToken();
  let res: { status: number; body: Json } | undefined;
  const statements = await statementsOf(t, async () => {
    res = await jsonOf(await t.asAdmin(method, path, options));
  });
  assert.equal(res!.status, 200, JSON.stringify(res!.body));
  if (Deno.env.get("SHOW_STATEMENTS")) console.log(statements.join("\n---\n"));
  return { reads: statements.filter((s) => TOKEN_READ_REGEXP.test(s)), body: res!.body };
}

/** A test app with alice and `n` HOTP tokens of hers (PIN `pin<i>`). */
async function appWithTokens(n: number): Promise<{ t: TestApp; serials: string[] }> {
  const t = await appWithAlice();
  const serials: string[] = [];
  for (let i = 1; i <= n; i++) {
    const body = await enrolOk(t, {
      type: "hotp",
      otpkey: SEED_HEX,
      pin: `pin${i}`,
      user: "alice",
      realm: "realm1",
    });
    serials.push(body.detail.serial);
  }
  return { t, serials };
}

function assertOneRead(reads: string[]): void {
  assert.equal(reads.length, 1, reads.join("\n---\n"));
}

Deno.test("POST /token/disable and /token/enable with a serial read the token table once", async () => {
  const { t, serials } = await appWithTokens(2);
  const off = await countedAdmin(t, "POST", "/token/disable", { body: { serial: serials[0] } });
  assert.equal(off.body.result.value, 1);
  assertOneRead(off.reads);
  assert.equal((await listed(t, serials[0])).active, false);
  assert.equal((await listed(t, serials[1])).active, true);
  const on = await countedAdmin(t, "POST", `/token/enable/${serials[0]}`);
  assert.equal(on.body.result.value, 1);
  assertOneRead(on.reads);
  assert.equal((await listed(t, serials[0])).active, true);
  await t.close();
});

Deno.test("POST /token/disable of a user's tokens reads the token table once", async () => {
  const { t, serials } = await appWithTokens(3);
  const off = await countedAdmin(t, "POST", "/token/disable", {
    body: { user: "alice", realm: "realm1" },
  });
  assert.equal(off.body.result.value, 3);
  assertOneRead(off.reads);
  for (const s of serials) assert.equal((await listed(t, s)).active, false);
  await t.close();
});

Deno.test("POST /token/setpin reads the token table once", async () => {
  const { t, serials } = await appWithTokens(1);
  const res = await countedAdmin(t, "POST", "/token/setpin", {
    body: { serial: serials[0], otppin: "newpin" },
  });
  assert.equal(res.body.result.value, 1);
  assertOneRead(res.reads);
  // the new PIN authenticates, the old one no longer does
  assert.equal(
    (await check(t, { serial: serials[0], pass: "pin1" + hotp(0) })).body.result.value,
    false,
  );
  assert.equal(
    (await check(t, { serial: serials[0], pass: "newpin" + hotp(1) })).body.result.value,
    true,
  );
  await t.close();
});

Deno.test("POST /token/reset reads the token table once", async () => {
  const { t, serials } = await appWithTokens(1);
  for (let i = 0; i < 2; i++) await check(t, { serial: serials[0], pass: "pin1000000" });
  assert.equal((await listed(t, serials[0])).failcount, 2);
  const res = await countedAdmin(t, "POST", "/token/reset", { body: { serial: serials[0] } });
  assert.equal(res.body.result.value, 1);
  assertOneRead(res.reads);
  assert.equal((await listed(t, serials[0])).failcount, 0);
  await t.close();
});

Deno.test("DELETE /token/<serial> reads the token table once", async () => {
  const { t, serials } = await appWithTokens(2);
  const res = await countedAdmin(t, "DELETE", `/token/${serials[0]}`);
  assert.equal(res.body.result.value, 1);
  assertOneRead(res.reads);
  assert.equal(await findTokenBySerial(t.deps, serials[0]), undefined);
  assert.notEqual(await findTokenBySerial(t.deps, serials[1]), undefined);
  await t.close();
});

Deno.test("GET /token/?serial= reads the token table once", async () => {
  const { t, serials } = await appWithTokens(2);
  const res = await countedAdmin(t, "GET", "/token/", { query: { serial: serials[1] } });
  assert.equal(res.body.result.value.count, 1);
  assert.equal(res.body.result.value.tokens[0].serial, serials[1]);
  assertOneRead(res.reads);
  await t.close();
});

Deno.test("GET /token/ pages count every matching token, whether the page is full or not", async () => {
  const { t, serials } = await appWithTokens(3);
  const page = async (n: number) => {
    const res = await countedAdmin(t, "GET", "/token/", {
      query: { user: "alice", realm: "realm1", pagesize: "2", page: String(n) },
    });
    return { ...res.body.result.value, reads: res.reads.length };
  };
  // a full page cannot tell the total: the tokens are counted as well
  const first = await page(1);
  assert.equal(first.count, 3);
  assert.equal(first.tokens.length, 2);
  assert.equal(first.next, 2);
  assert.equal(first.reads, 2);
  // the last, partly filled page tells it: 2 before it plus 1
  const second = await page(2);
  assert.equal(second.count, 3);
  assert.equal(second.tokens.length, 1);
  const shown = [...first.tokens, ...second.tokens].map((x: Json) => x.serial);
  assert.deepEqual(shown.sort(), [...serials].sort());
  assert.equal(second.next, null);
  assert.equal(second.prev, 1);
  assert.equal(second.reads, 1);
  // past the end: nothing on the page, the total counted
  const third = await page(3);
  assert.equal(third.count, 3);
  assert.equal(third.tokens.length, 0);
  assert.equal(third.reads, 2);
  await t.close();
});
