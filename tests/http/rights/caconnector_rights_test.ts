/**
 * Rights of the CA connector routes: `/caconnector/*` is for admins (a user
 * JWT gets privacyIDEA's 401 with code 4306, no JWT 401), each method needs
 * its admin action (tests/http/caconnector_test.ts registers those effect
 * tests); the CRL of `/ca/<name>/crl` is public, as a CRL distribution point.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../../test_app.ts";
import { issueJwt } from "../../../src/http/jwt.ts";

async function userToken(t: TestApp): Promise<string> {
  return (await issueJwt(t.deps, {
    username: "alice",
    realm: "realm1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  })).token;
}

Deno.test("/caconnector is for admins: a user JWT gets 401 (4306), no JWT 401", async () => {
  const t = await createTestApp();
  const token = await userToken(t);
  for (
    const [method, path] of [
      ["GET", "/caconnector/"],
      ["GET", "/caconnector/x"],
      ["GET", "/caconnector/specific/local"],
      ["POST", "/caconnector/x"],
      ["DELETE", "/caconnector/x"],
    ]
  ) {
    const body = method === "GET" ? undefined : { type: "local" };
    const res = await jsonOf(await t.request(method, path, { token, body }));
    assert.equal(res.status, 401, `${method} ${path}`);
    assert.equal(res.body.result.error.code, 4306, `${method} ${path}`);
    const anon = await jsonOf(await t.request(method, path, { body }));
    assert.equal(anon.status, 401, `${method} ${path} without JWT`);
  }
  await t.close();
});
