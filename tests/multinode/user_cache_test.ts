/**
 * User caches across real processes (DEVELOPERS.md, "Caches"): the LDAP
 * resolver's lookups kept by node 2 are dropped at its next request when a
 * user is changed through node 1 or node 1 empties the user cache, and the
 * user cache's rows (`UserCacheExpiration`) written by node 2 are emptied by
 * node 1. Two processes on one SQLite file, or two nodes on one PostgreSQL
 * database (the run's engine), against the private slapd.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Attribute, Change, Client } from "ldapts";
import { TEST_ENGINE } from "../test_db.ts";
import { api, type ApiResult, type TesseraNode } from "./_node.ts";
import { type Pair, startPair } from "./_scenarios.ts";
import { ADMIN_DN, ADMIN_PW, type Slapd, startSlapd } from "../ldap/_slapd.ts";
import { ldapConfig, PEOPLE } from "../ldap/_fixtures.ts";

const ALICE_PHONE = "+49 30 1111";

// deno-lint-ignore no-explicit-any
function valueOf(res: ApiResult): any {
  assert.equal(res.status, 200, `HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.result.value;
}

function admin(pair: Pair, node: TesseraNode, method: string, path: string, params = {}) {
  return api(node, method, path, { jwt: pair.adminJwt, params });
}

/** Sets alice's telephoneNumber in the directory itself (not through Tessera). */
async function setPhone(slapd: Slapd, phone: string): Promise<void> {
  const client = new Client({ url: slapd.url });
  try {
    await client.bind(ADMIN_DN, ADMIN_PW);
    await client.modify(`uid=alice,${PEOPLE}`, [
      new Change({
        operation: "replace",
        modification: new Attribute({ type: "telephoneNumber", values: [phone] }),
      }),
    ]);
  } finally {
    await client.unbind();
  }
}

/** alice's phone as node answers it in `detail.user` of a passthru login (add_user_in_response). */
async function phoneOn(node: TesseraNode): Promise<string> {
  const res = await api(node, "POST", "/validate/check", {
    params: { user: "alice", realm: "ldaprealm", pass: "alice-pw" },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.value, true, JSON.stringify(res.body));
  return res.body.detail.user.phone;
}

Deno.test({
  name: `user caches: a change through node 1 is seen by node 2's next request (${TEST_ENGINE})`,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const slapd = await startSlapd();
    let pair: Pair | undefined;
    try {
      pair = await startPair(TEST_ENGINE);
      const [a, b] = pair.nodes;
      valueOf(
        await admin(
          pair,
          a,
          "POST",
          "/resolver/people",
          ldapConfig(slapd, { BINDDN: ADMIN_DN, BINDPW: ADMIN_PW, EDITABLE: "1" }),
        ),
      );
      valueOf(await admin(pair, a, "POST", "/realm/ldaprealm", { resolvers: "people" }));
      valueOf(
        await admin(pair, a, "POST", "/policy/pt", { scope: "authentication", action: "passthru" }),
      );
      valueOf(
        await admin(pair, a, "POST", "/policy/au", {
          scope: "authorization",
          action: "add_user_in_response",
        }),
      );
      assert.equal(await phoneOn(b), ALICE_PHONE, "node 2 has alice in its LDAP cache");

      // a change through node 1
      valueOf(
        await admin(pair, a, "PUT", "/user/", {
          user: "alice",
          resolver: "people",
          phone: "+49 30 5555",
        }),
      );
      assert.equal(await phoneOn(b), "+49 30 5555", "node 2's next request sees it");

      // a change in the directory itself: kept for CACHE_TIMEOUT, until node 1 empties the cache
      await setPhone(slapd, "+49 30 9999");
      assert.equal(await phoneOn(b), "+49 30 5555");
      valueOf(await admin(pair, a, "DELETE", "/system/user-cache"));
      assert.equal(await phoneOn(b), "+49 30 9999");

      // the user cache's rows live in the shared database
      valueOf(await admin(pair, a, "POST", "/system/setConfig", { UserCacheExpiration: "300" }));
      assert.equal(await phoneOn(b), "+49 30 9999");
      assert.deepEqual(
        valueOf(await admin(pair, a, "DELETE", "/system/user-cache")),
        { status: true, deleted: 1 },
        "the row node 2 wrote",
      );
    } finally {
      await pair?.close();
      await slapd.stop();
    }
  },
});
