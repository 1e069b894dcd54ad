/**
 * LDAP group search (`recursive_group_search`, `group_base_dn`,
 * `group_search_filter`, `group_name_attribute`, `group_attribute_mapping_key`)
 * against the private slapd: groups become a user attribute that `GET /user/`
 * shows and that policy conditions on `userinfo` match, for direct groups
 * (`member=` filter) and nested ones (OpenLDAP's `memberOf` through dynlist).
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { getUserAttributes, resolveUser } from "../../src/domain/user/mod.ts";
import { SEED_HEX } from "../fixtures/tokens.ts";
import { BASE, ldapTest, PASSWORDS } from "./_slapd.ts";
import { ldapConfig, listUsers, saveLdapResolver } from "./_fixtures.ts";

const GROUPS = `ou=groups,${BASE}`;

/** Direct groups: the groupOfNames entries naming the user as member, by `cn`. */
const DIRECT = {
  recursive_group_search: "True",
  group_base_dn: GROUPS,
  group_search_filter: "(&(objectClass=groupOfNames)(member=uid={username},{base_dn}))",
  group_name_attribute: "cn",
  group_attribute_mapping_key: "groups",
};

/** Nested groups: the user's own `memberOf` (dynlist follows nesting), below LDAPBASE. */
const NESTED = {
  recursive_group_search: "1",
  group_search_filter: "(&(objectClass=inetOrgPerson)(uid={username}))",
  group_name_attribute: "memberOf",
  group_attribute_mapping_key: "groups",
};

async function withApp(fn: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await createTestApp();
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

async function policy(t: TestApp, name: string, body: Record<string, unknown>): Promise<void> {
  const res = await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function check(t: TestApp, user: string, pass: string) {
  return await jsonOf(await t.post("/validate/check", { user, realm: "ldaprealm", pass }));
}

async function tokenCount(t: TestApp): Promise<number> {
  const row = await t.deps.db.selectFrom("token").select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

ldapTest(
  "LDAP groups: GET /user/ lists each user's groups under the mapping key; a user in no group has []",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(t, "ldapg", ldapConfig(slapd, DIRECT), "ldaprealm");
      const users = await listUsers(t, { realm: "ldaprealm" });
      assert.deepEqual([...users.alice.groups].sort(), ["staff", "vpn-users"]);
      assert.deepEqual(users.bob.groups, ["staff"]);
      assert.deepEqual(users.carol.groups, []);
      assert.deepEqual(users["jürgen"].groups, []);
      // the user of a user-role caller's own list carries them too (the lookup by uid)
      const alice = await resolveUser(t.deps, "alice", "ldaprealm");
      assert.ok(alice);
      const info = await getUserAttributes(t.deps, alice);
      assert.deepEqual([...info.groups].sort(), ["staff", "vpn-users"]);
      // multi-valued fields stay lists here (MULTIVALUEATTRIBUTES' default: mobile)
      assert.deepEqual(info.mobile, ["+49 170 1111", "+49 170 2222"]);

      // without the feature there is no such key
      await saveLdapResolver(t, "ldapg", { type: "ldapresolver", recursive_group_search: "0" });
      const plain = await listUsers(t, { realm: "ldaprealm" });
      assert.equal("groups" in plain.alice, false);
    });
  },
);

ldapTest(
  "LDAP groups: nested groups through the user's memberOf (OpenLDAP dynlist), as DNs",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(t, "ldapn", ldapConfig(slapd, NESTED), "ldaprealm");
      const users = await listUsers(t, { realm: "ldaprealm" });
      // alice is a member of vpn-users only; remote-access contains vpn-users
      assert.deepEqual([...users.alice.groups].sort(), [
        `cn=remote-access,${GROUPS}`,
        `cn=staff,${GROUPS}`,
        `cn=vpn-users,${GROUPS}`,
      ]);
      assert.deepEqual(users.bob.groups, [`cn=staff,${GROUPS}`]);
      assert.deepEqual(users.carol.groups, []);
    });
  },
);

ldapTest(
  "LDAP groups: an admin policy with the condition 'groups contains vpn-users' grants for a member and refuses for others",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(t, "ldapg", ldapConfig(slapd, DIRECT), "ldaprealm");
      await policy(t, "vpn-admin", {
        scope: "admin",
        action: "enrollHOTP",
        realm: "ldaprealm",
        conditions: [["userinfo", "groups", "contains", "vpn-users", true, "raise_error"]],
      });
      const enrol = async (user: string) =>
        await jsonOf(
          await t.asAdmin("POST", "/token/init", {
            body: { type: "hotp", otpkey: SEED_HEX, user, realm: "ldaprealm" },
            json: true,
          }),
        );
      const granted = await enrol("alice");
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      assert.equal(await tokenCount(t), 1);
      for (const user of ["bob", "carol"]) {
        const refused = await enrol(user);
        assert.equal(refused.status, 403, user);
        assert.equal(refused.body.result.error.code, 303);
        assert.match(refused.body.result.error.message, /not allowed to enroll this token type/);
      }
      assert.equal(await tokenCount(t), 1, "nothing was enrolled for bob or carol");
    });
  },
);

ldapTest(
  "LDAP groups: an authentication policy (passthru) with a group condition, direct and nested",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(t, "ldapg", ldapConfig(slapd, DIRECT), "ldaprealm");
      await policy(t, "vpn-pass", {
        scope: "authentication",
        action: "passthru",
        realm: "ldaprealm",
        conditions: [["userinfo", "groups", "contains", "vpn-users", true]],
      });
      assert.equal((await check(t, "alice", PASSWORDS.alice)).body.result.value, true);
      const carol = await check(t, "carol", PASSWORDS.carol);
      assert.equal(carol.status, 200);
      assert.equal(carol.body.result.value, false, "carol is in no group: no passthru");
      assert.equal((await check(t, "bob", PASSWORDS.bob)).body.result.value, false);

      // nested: remote-access holds vpn-users, not alice herself
      await saveLdapResolver(t, "ldapg", {
        type: "ldapresolver",
        group_base_dn: "",
        ...NESTED,
      });
      await policy(t, "vpn-pass", {
        scope: "authentication",
        action: "passthru",
        realm: "ldaprealm",
        conditions: [[
          "userinfo",
          "groups",
          "contains",
          `cn=remote-access,${GROUPS}`,
          true,
          "raise_error",
        ]],
      });
      assert.equal((await check(t, "alice", PASSWORDS.alice)).body.result.value, true);
      assert.equal((await check(t, "bob", PASSWORDS.bob)).body.result.value, false);
    });
  },
);

ldapTest(
  "LDAP groups: a failed group search is an error, never 'no groups'; an incomplete setup is off",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(
        t,
        "ldapg",
        ldapConfig(slapd, { ...DIRECT, group_base_dn: `ou=nowhere,${BASE}` }),
        "ldaprealm",
      );
      const alice = await resolveUser(t.deps, "alice", "ldaprealm");
      assert.ok(alice);
      await assert.rejects(
        () => getUserAttributes(t.deps, alice),
        /Cannot read the groups of "alice" in LDAP resolver "ldapg": noSuchObject/,
      );

      // recursive_group_search without a mapping key: off (as privacyIDEA), and logged
      await saveLdapResolver(t, "ldapg", {
        type: "ldapresolver",
        group_base_dn: GROUPS,
        group_attribute_mapping_key: "",
      });
      const users = await listUsers(t, { realm: "ldaprealm" });
      assert.equal("groups" in users.alice, false);
      assert.ok(
        t.log.lines.some((l) =>
          l.includes("LDAP group search is off") &&
          l.includes("group_attribute_mapping_key is empty")
        ),
        t.log.lines.join("\n"),
      );
    });
  },
);

ldapTest(
  "LDAP groups: unusable group settings are refused on save (400) and nothing is stored",
  async (slapd) => {
    await withApp(async (t) => {
      const bad: [Record<string, string>, RegExp][] = [
        [{ group_name_attribute: "cn)(x" }, /group_name_attribute "cn\)\(x" is not an attribute/],
        [{ group_search_filter: "(&(member={username})" }, /group_search_filter is no LDAP filter/],
        [{ group_attribute_mapping_key: "username" }, /group_attribute_mapping_key "username"/],
      ];
      for (const [overrides, message] of bad) {
        const res = await jsonOf(
          await t.asAdmin("POST", "/resolver/bad", {
            body: ldapConfig(slapd, { ...DIRECT, ...overrides }),
          }),
        );
        assert.equal(res.status, 400, JSON.stringify(overrides));
        assert.equal(res.body.result.error.code, 905);
        assert.match(res.body.result.error.message, message);
      }
      const list = await jsonOf(await t.asAdmin("GET", "/resolver/"));
      assert.deepEqual(list.body.result.value, {});
    });
  },
);
