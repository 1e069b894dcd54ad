/**
 * `DELETE /token/challenges/expired` (spec 14 §18): deletes the challenges whose time is over,
 * keeps the open ones; `{status: true, deleted: <n>}`; admins only (no policy action, as
 * privacyIDEA).
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";
import { issueJwt } from "../../src/http/jwt.ts";

const KEY = "3132333435363738393031323334353637383930";

Deno.test("DELETE /token/challenges/expired deletes expired challenges only", async () => {
  const t = await createTestApp();
  for (const serial of ["H1", "H2"]) {
    const init = await t.asAdmin("POST", "/token/init", {
      body: { type: "hotp", serial, otpkey: KEY },
    });
    await init.body?.cancel();
  }
  const trigger = async (serial: string) => {
    const res = await jsonOf(
      await t.asAdmin("POST", "/validate/triggerchallenge", { body: { serial } }),
    );
    assert.equal(res.body.detail.multi_challenge.length, 1, JSON.stringify(res.body));
  };
  await trigger("H1");
  t.clock.advance(121_000);
  await trigger("H2");
  const count = async () =>
    (await jsonOf(await t.asAdmin("GET", "/token/challenges/"))).body.result.value.count;
  assert.equal(await count(), 2);
  // a user JWT and no JWT: refused, nothing deleted
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "realm1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  assert.equal((await t.request("DELETE", "/token/challenges/expired", { token })).status, 401);
  assert.equal((await t.request("DELETE", "/token/challenges/expired")).status, 401);
  assert.equal(await count(), 2);
  const res = await jsonOf(await t.asAdmin("DELETE", "/token/challenges/expired"));
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.result.value, { status: true, deleted: 1 });
  const left = await jsonOf(await t.asAdmin("GET", "/token/challenges/"));
  assert.deepEqual(left.body.result.value.challenges.map((c: { serial: string }) => c.serial), [
    "H2",
  ]);
  await t.close();
});
