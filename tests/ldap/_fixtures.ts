/**
 * LDAP resolver definitions over HTTP for the tests against the private slapd.
 *
 * @module
 */
import assert from "node:assert/strict";
import { jsonOf, type TestApp } from "../test_app.ts";
import { BASE, READER_DN, READER_PW, type Slapd } from "./_slapd.ts";

/** The users' branch of the test directory. */
export const PEOPLE = `ou=people,${BASE}`;

/** USERINFO of the OpenLDAP resolvers. */
export const USERINFO = {
  phone: "telephoneNumber",
  mobile: "mobile",
  email: "mail",
  surname: "sn",
  givenname: "givenName",
  description: "cn",
};

/** An OpenLDAP resolver definition (read-only service account, entryUUID uids). */
export function ldapConfig(
  slapd: Slapd,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    type: "ldapresolver",
    LDAPURI: slapd.url,
    LDAPBASE: PEOPLE,
    BINDDN: READER_DN,
    BINDPW: READER_PW,
    LOGINNAMEATTRIBUTE: "uid",
    LDAPSEARCHFILTER: "(objectClass=inetOrgPerson)",
    USERINFO: JSON.stringify(USERINFO),
    UIDTYPE: "entryUUID",
    TIMEOUT: "3",
    ...overrides,
  };
}

/** Saves resolver `name` (asserting 200) and puts it into `realm` (when given). */
export async function saveLdapResolver(
  t: TestApp,
  name: string,
  config: Record<string, string>,
  realm?: string,
): Promise<void> {
  const saved = await jsonOf(await t.asAdmin("POST", `/resolver/${name}`, { body: config }));
  assert.equal(saved.status, 200, JSON.stringify(saved.body));
  if (realm !== undefined) {
    const r = await jsonOf(
      await t.asAdmin("POST", `/realm/${realm}`, { body: { resolvers: name } }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.result.value.failed, []);
  }
}

/** `POST /resolver/test` with `config`; returns status and result. */
export async function testConfig(
  t: TestApp,
  config: Record<string, string>,
): Promise<{ status: number; value: unknown; description: string; ms: number }> {
  // the admin login (a slow password hash on first use) is not part of the timing
  const token = await t.adminToken();
  const started = performance.now();
  const res = await jsonOf(await t.request("POST", "/resolver/test", { body: config, token }));
  return {
    status: res.status,
    value: res.body.result?.value,
    description: String(res.body.detail?.description ?? JSON.stringify(res.body)),
    ms: performance.now() - started,
  };
}

/** Users of `GET /user/` for the query, keyed by username. */
export async function listUsers(
  t: TestApp,
  query: Record<string, string>,
  // deno-lint-ignore no-explicit-any
): Promise<Record<string, any>> {
  const res = await jsonOf(await t.asAdmin("GET", "/user/", { query }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  // deno-lint-ignore no-explicit-any
  return Object.fromEntries(res.body.result.value.map((u: any) => [u.username, u]));
}
