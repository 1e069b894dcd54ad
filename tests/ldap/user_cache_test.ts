/**
 * The LDAP resolver's own lookup cache (`CACHE_TIMEOUT`) under the user
 * cache's rule: `DELETE /system/user-cache` and a user changed through
 * Tessera drop it on every instance (a second `Deps` on the same database
 * stands for a second node's process), while a change made in the directory
 * itself is seen when the entries expire, as in privacyIDEA.
 */
import assert from "node:assert/strict";
import { Attribute, Change, Client } from "ldapts";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import type { Deps } from "../../src/deps.ts";
import { getUserInfo, resolveUser, type UserRef } from "../../src/domain/user/mod.ts";
import { ADMIN_DN, ADMIN_PW, ldapTest, type Slapd } from "./_slapd.ts";
import { ldapConfig, PEOPLE, saveLdapResolver } from "./_fixtures.ts";

const ALICE_DN = `uid=alice,${PEOPLE}`;
const ALICE_PHONE = "+49 30 1111";

/** Sets alice's telephoneNumber directly in the directory (not through Tessera). */
async function setPhone(slapd: Slapd, phone: string): Promise<void> {
  const client = new Client({ url: slapd.url });
  try {
    await client.bind(ADMIN_DN, ADMIN_PW);
    await client.modify(ALICE_DN, [
      new Change({
        operation: "replace",
        modification: new Attribute({ type: "telephoneNumber", values: [phone] }),
      }),
    ]);
  } finally {
    await client.unbind();
  }
}

async function phoneOf(deps: Deps, user: UserRef): Promise<string> {
  return (await getUserInfo(deps, user)).phone;
}

async function withApp(slapd: Slapd, fn: (t: TestApp, alice: UserRef) => Promise<void>) {
  const t = await createTestApp();
  try {
    await saveLdapResolver(
      t,
      "people",
      ldapConfig(slapd, { BINDDN: ADMIN_DN, BINDPW: ADMIN_PW, EDITABLE: "1" }),
      "ldaprealm",
    );
    const alice = await resolveUser(t.deps, "alice", "ldaprealm");
    assert.ok(alice);
    await fn(t, alice);
  } finally {
    await setPhone(slapd, ALICE_PHONE);
    await t.close();
  }
}

ldapTest(
  "DELETE /system/user-cache drops the LDAP resolver's cached lookups; a directory change alone waits for CACHE_TIMEOUT",
  async (slapd) => {
    await withApp(slapd, async (t, alice) => {
      assert.equal(await phoneOf(t.deps, alice), ALICE_PHONE);
      await setPhone(slapd, "+49 30 9999");
      assert.equal(await phoneOf(t.deps, alice), ALICE_PHONE, "kept for CACHE_TIMEOUT");
      const res = await jsonOf(await t.asAdmin("DELETE", "/system/user-cache"));
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.result.value, { status: true, deleted: 0 });
      assert.equal(await phoneOf(t.deps, alice), "+49 30 9999");

      await setPhone(slapd, "+49 30 7777");
      t.clock.advance(121_000);
      assert.equal(await phoneOf(t.deps, alice), "+49 30 7777", "expired after CACHE_TIMEOUT");
    });
  },
);

ldapTest(
  "a user changed through Tessera is current on every instance's next lookup, not after CACHE_TIMEOUT",
  async (slapd) => {
    await withApp(slapd, async (t, alice) => {
      // another process on the same database (a second node): its own resolver instances
      const other: Deps = { ...t.deps };
      assert.equal(await phoneOf(other, alice), ALICE_PHONE);
      assert.equal(await phoneOf(t.deps, alice), ALICE_PHONE);
      const put = await jsonOf(
        await t.asAdmin("PUT", "/user/", {
          body: { user: "alice", resolver: "people", phone: "+49 30 5555" },
        }),
      );
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal(await phoneOf(other, alice), "+49 30 5555");
      assert.equal(await phoneOf(t.deps, alice), "+49 30 5555");
    });
  },
);
