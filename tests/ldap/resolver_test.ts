/**
 * The `ldapresolver` over HTTP against a private slapd (tests/ldap/_slapd.ts):
 * resolver tests, user lists and searches, logins, password checks, editing.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { getUserInfo, resolveUser } from "../../src/domain/user/mod.ts";
import { ADMIN_DN, ADMIN_PW, BASE, freePort, ldapTest, PASSWORDS } from "./_slapd.ts";
import { ldapConfig, listUsers, PEOPLE, saveLdapResolver, testConfig } from "./_fixtures.ts";

async function withApp(fn: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await createTestApp();
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

async function login(t: TestApp, username: string, password: string) {
  return await jsonOf(await t.post("/auth", { username, password }));
}

ldapTest(
  "POST /resolver/test for ldapresolver: ok, wrong bind password, unreachable, bad base",
  async (slapd) => {
    await withApp(async (t) => {
      const ok = await testConfig(t, ldapConfig(slapd));
      assert.equal(ok.status, 200);
      assert.equal(ok.value, true, ok.description);
      assert.match(
        ok.description,
        /^Your LDAP config seems to be OK, 5 user objects found in [\d.]+s\.$/,
      );

      const wrongPw = await testConfig(t, ldapConfig(slapd, { BINDPW: "wrong" }));
      assert.equal(wrongPw.status, 200);
      assert.equal(wrongPw.value, false);
      assert.match(wrongPw.description, /wrong BINDDN or BINDPW \(invalidCredentials/);

      const dead = `ldap://127.0.0.1:${await freePort()}`;
      const unreachable = await testConfig(t, ldapConfig(slapd, { LDAPURI: dead }));
      assert.equal(unreachable.status, 200);
      assert.equal(unreachable.value, false);
      assert.match(unreachable.description, /Cannot reach the LDAP server: .*ECONNREFUSED/);

      const badBase = await testConfig(t, ldapConfig(slapd, { LDAPBASE: `ou=nobody,${BASE}` }));
      assert.equal(badBase.status, 200);
      assert.equal(badBase.value, false);
      assert.match(badBase.description, /LDAPBASE "ou=nobody,dc=example,dc=org" does not exist/);

      // entries without the uid attribute are counted apart
      const partial = await testConfig(t, ldapConfig(slapd, { UIDTYPE: "mail" }));
      assert.equal(partial.value, true);
      assert.match(
        partial.description,
        /found 5 user objects in [\d.]+s, but only 4 with the specified uidtype/,
      );

      // a configuration that cannot work is a failed test, not a 500
      const broken = await testConfig(t, ldapConfig(slapd, { LDAPSEARCHFILTER: "(objectClass=" }));
      assert.equal(broken.status, 200);
      assert.equal(broken.value, false);
      assert.match(broken.description, /LDAPSEARCHFILTER is no LDAP filter/);
      const ntlm = await testConfig(t, ldapConfig(slapd, { AUTHTYPE: "NTLM" }));
      assert.equal(ntlm.value, false);
      assert.match(ntlm.description, /Authtype NTLM not supported \(supported: Simple;/);
    });
  },
);

ldapTest(
  "POST /resolver/<name> stores BINDPW encrypted, shows __CENSORED__, and a test with __CENSORED__ uses it",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(t, "ldap1", ldapConfig(slapd, { EDITABLE: "1" }));
      const list = await jsonOf(await t.asAdmin("GET", "/resolver/"));
      const entry = list.body.result.value.ldap1;
      assert.equal(entry.type, "ldapresolver");
      assert.deepEqual(entry.censor_keys, ["BINDPW"]);
      assert.equal(entry.data.BINDPW, "__CENSORED__");
      assert.equal(JSON.stringify(list.body).includes("reader-secret"), false);
      const row = await t.deps.db.selectFrom("resolver").select("config").executeTakeFirstOrThrow();
      assert.equal(row.config.includes("reader-secret"), false);
      const editable = await jsonOf(
        await t.asAdmin("GET", "/resolver/", { query: { editable: "1" } }),
      );
      assert.deepEqual(Object.keys(editable.body.result.value), ["ldap1"]);

      // __CENSORED__ in a test of the stored resolver means the stored password
      const viaStored = await testConfig(t, {
        ...ldapConfig(slapd, { BINDPW: "__CENSORED__" }),
        resolver: "ldap1",
      });
      assert.equal(viaStored.value, true, viaStored.description);
      // an update with __CENSORED__ keeps it
      await saveLdapResolver(t, "ldap1", {
        type: "ldapresolver",
        BINDPW: "__CENSORED__",
        TIMEOUT: "4",
      });
      await saveLdapResolver(t, "ldap1", { type: "ldapresolver" }, "ldaprealm");
      const users = await listUsers(t, { realm: "ldaprealm" });
      assert.ok("alice" in users);

      // defaults of the type
      const defaults = await jsonOf(await t.asAdmin("GET", "/resolver/ldapresolver/default"));
      assert.equal(defaults.body.result.value.UIDTYPE, "DN");
      assert.equal(defaults.body.result.value.CACHE_TIMEOUT, "120");

      // a broken definition is refused on save (400), nothing is stored
      const bad = await jsonOf(
        await t.asAdmin("POST", "/resolver/ldap2", {
          body: ldapConfig(slapd, { LDAPURI: "http://example.org" }),
        }),
      );
      assert.equal(bad.status, 400);
      assert.match(bad.body.result.error.message, /LDAPURI "http:\/\/example.org" must be ldap/);
    });
  },
);

ldapTest(
  "GET /user/ lists LDAP users with the mapped attributes, multi-valued mobile and non-ASCII names",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(t, "ldap1", ldapConfig(slapd), "ldaprealm");
      const users = await listUsers(t, { realm: "ldaprealm" });
      assert.deepEqual(Object.keys(users).sort(), ["alice", "bob", "carol", "jane", "jürgen"]);
      const alice = users.alice;
      assert.equal(alice.givenname, "Alice");
      assert.equal(alice.surname, "Liddell");
      assert.equal(alice.email, "alice@example.org");
      assert.equal(alice.phone, "+49 30 1111");
      assert.deepEqual(alice.mobile, ["+49 170 1111", "+49 170 2222"]);
      assert.equal(alice.description, "Alice Liddell");
      assert.match(alice.userid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.equal(alice.resolver, "ldap1");
      assert.equal(alice.realm, "ldaprealm");
      assert.equal(alice.editable, false);
      assert.equal("password" in alice, false);
      // one value stays a plain string; a missing attribute is empty
      assert.equal(users.bob.mobile, "+49 170 3333");
      assert.equal(users.carol.email, "");
      // UTF-8 round trip
      assert.equal(users["jürgen"].givenname, "Jürgen");
      assert.equal(users["jürgen"].surname, "Groß");
      assert.equal(users.jane.description, "Doe, Jane");

      // single-valued consumers see the first value (token owner info)
      const one = await listUsers(t, { realm: "ldaprealm", username: "jürgen" });
      assert.deepEqual(Object.keys(one), ["jürgen"]);
      const serial = await enrollHotp(t, { user: "alice", realm: "ldaprealm" });
      const tokens = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
      assert.equal(tokens.body.result.value.tokens[0].username, "alice");
      assert.equal(tokens.body.result.value.tokens[0].user_realm, "ldaprealm");
    });
  },
);

ldapTest(
  "GET /user/ searches LDAP with * wildcards; filter syntax in values matches nothing",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(t, "ldap1", ldapConfig(slapd), "ldaprealm");
      const names = async (query: Record<string, string>) =>
        Object.keys(await listUsers(t, { realm: "ldaprealm", ...query })).sort();
      assert.deepEqual(await names({ username: "a*" }), ["alice"]);
      assert.deepEqual(await names({ username: "*o*" }), ["bob", "carol"]);
      assert.deepEqual(await names({ username: "j*n" }), ["jürgen"]);
      assert.deepEqual(await names({ email: "*@example.org" }), ["alice", "bob", "jane", "jürgen"]);
      assert.deepEqual(await names({ surname: "Gro*" }), ["jürgen"]);
      assert.deepEqual(await names({ givenname: "Bob", email: "bob@*" }), ["bob"]);
      assert.deepEqual(await names({ username: "*" }), ["alice", "bob", "carol", "jane", "jürgen"]);
      // a field the resolver does not map lists nobody from it
      assert.deepEqual(await names({ shoesize: "42" }), []);
      // filter injection: every character but * is a literal value
      assert.deepEqual(await names({ username: "*)(uid=*" }), []);
      assert.deepEqual(await names({ username: "alice)(|(uid=*" }), []);
      assert.deepEqual(await names({ email: "*)(objectClass=*" }), []);
      assert.deepEqual(await names({ username: "\\2a" }), []);
      const injected = await jsonOf(
        await t.post("/auth", { username: "*)(uid=*@ldaprealm", password: "alice-pw" }),
      );
      assert.equal(injected.status, 401);
      // the same for a lookup by login: no user, no error
      const check = await jsonOf(
        await t.post("/validate/check", { user: "*)(uid=*", realm: "ldaprealm", pass: "x" }),
      );
      assert.equal(check.body.result.value ?? false, false);
      assert.notEqual(check.status, 500);
    });
  },
);

ldapTest("POST /auth logs an LDAP user in by binding as the user's DN", async (slapd) => {
  await withApp(async (t) => {
    await saveLdapResolver(t, "ldap1", ldapConfig(slapd), "ldaprealm");
    for (const [user, password] of Object.entries(PASSWORDS)) {
      const ok = await login(t, `${user}@ldaprealm`, password);
      assert.equal(ok.status, 200, `${user}: ${JSON.stringify(ok.body)}`);
      assert.equal(ok.body.result.value.role, "user");
      assert.equal(ok.body.result.value.username, user);
    }
    // wrong, empty (an anonymous bind would "succeed") and other users' passwords
    assert.equal((await login(t, "alice@ldaprealm", "wrong")).status, 401);
    assert.equal((await login(t, "alice@ldaprealm", "")).status, 401);
    assert.equal((await login(t, "alice@ldaprealm", "bob-pw")).status, 401);
    assert.equal((await login(t, "nobody@ldaprealm", "x")).status, 401);
  });
});

ldapTest(
  "POST /validate/check with otppin=userstore checks the PIN part against the LDAP password",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(t, "ldap1", ldapConfig(slapd), "ldaprealm");
      await enrollHotp(t, { user: "jürgen", realm: "ldaprealm", pin: "1234" });
      const policy = await jsonOf(
        await t.asAdmin("POST", "/policy/pin", {
          body: { scope: "authentication", action: "otppin=userstore" },
          json: true,
        }),
      );
      assert.equal(policy.status, 200, JSON.stringify(policy.body));
      const check = async (pass: string) =>
        (await jsonOf(
          await t.post("/validate/check", { user: "jürgen", realm: "ldaprealm", pass }),
        ))
          .body;
      const ok = await check(PASSWORDS["jürgen"] + hotp(0));
      assert.equal(ok.result.value, true, JSON.stringify(ok));
      assert.equal((await check("1234" + hotp(1))).result.value, false);
      assert.equal((await check("wrong" + hotp(1))).result.value, false);
      assert.equal((await check(hotp(1))).result.value, false);
      assert.equal((await check(PASSWORDS["jürgen"] + hotp(1))).result.value, true);
    });
  },
);

ldapTest(
  "POST/PUT/DELETE /user on an editable ldapresolver add, change and delete a directory entry",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(
        t,
        "ldapw",
        ldapConfig(slapd, {
          BINDDN: ADMIN_DN,
          BINDPW: ADMIN_PW,
          EDITABLE: "1",
          OBJECT_CLASSES: "top, inetOrgPerson",
          DN_TEMPLATE: "cn=<givenname> <surname>,<basedn>",
        }),
        "ldaprealm",
      );
      const created = await jsonOf(
        await t.asAdmin("POST", "/user/", {
          body: {
            user: "dave",
            resolver: "ldapw",
            password: "dave-pw",
            givenname: "Dave",
            surname: "O'Connor, Jr.",
            email: "dave@example.org",
            mobile: "+49 170 4444",
          },
        }),
      );
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const uid = created.body.result.value;
      assert.match(uid, /^[0-9a-f-]{36}$/);
      const users = await listUsers(t, { realm: "ldaprealm", username: "dave" });
      assert.equal(users.dave.userid, uid);
      assert.equal(users.dave.surname, "O'Connor, Jr.");
      assert.equal(users.dave.description, "Dave O'Connor, Jr.");
      assert.equal(users.dave.editable, true);
      // the password was written hashed and works for a bind
      assert.equal((await login(t, "dave@ldaprealm", "dave-pw")).status, 200);
      const again = await jsonOf(
        await t.asAdmin("POST", "/user/", {
          body: { user: "dave", resolver: "ldapw", surname: "X" },
        }),
      );
      assert.equal(again.status, 400);
      assert.match(again.body.result.error.message, /already exists/);

      const updated = await jsonOf(
        await t.asAdmin("PUT", "/user/", {
          body: { user: "dave", resolver: "ldapw", email: "d@example.org", password: "new-pw" },
        }),
      );
      assert.equal(updated.status, 200, JSON.stringify(updated.body));
      assert.equal(updated.body.result.value, true);
      const after = await listUsers(t, { realm: "ldaprealm", username: "dave" });
      assert.equal(after.dave.email, "d@example.org");
      assert.equal((await login(t, "dave@ldaprealm", "dave-pw")).status, 401);
      assert.equal((await login(t, "dave@ldaprealm", "new-pw")).status, 200);

      const deleted = await jsonOf(await t.asAdmin("DELETE", "/user/ldapw/dave"));
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      assert.equal(deleted.body.result.value, true);
      assert.deepEqual(await listUsers(t, { realm: "ldaprealm", username: "dave" }), {});
      assert.equal((await login(t, "dave@ldaprealm", "new-pw")).status, 401);

      // a read-only resolver refuses changes
      await saveLdapResolver(t, "ldapro", ldapConfig(slapd), "other");
      const refused = await jsonOf(
        await t.asAdmin("POST", "/user/", {
          body: { user: "eve", resolver: "ldapro", surname: "E" },
        }),
      );
      assert.equal(refused.status, 400);
      assert.match(refused.body.result.error.message, /not editable/);
    });
  },
);

ldapTest(
  "Active Directory style: objectGUID uids as privacyIDEA renders them, sAMAccountName or userPrincipalName logins",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(
        t,
        "ad",
        ldapConfig(slapd, {
          LOGINNAMEATTRIBUTE: "sAMAccountName, userPrincipalName",
          LDAPSEARCHFILTER: "(&(sAMAccountName=*)(objectClass=inetOrgPerson))",
          UIDTYPE: "objectGUID",
          NOREFERRALS: "True",
          USERINFO: "{ 'phone': 'telephoneNumber', 'email': 'mail', 'surname': 'sn', " +
            "'givenname': 'givenName', 'upn': 'userPrincipalName' }",
        }),
        "adrealm",
      );
      const users = await listUsers(t, { realm: "adrealm" });
      assert.deepEqual(Object.keys(users).sort(), ["alice", "bob"]);
      // bytes e0 04 25 3f 89 4f d3 11 9a 0c … → the UUID with the first groups little-endian
      assert.equal(users.alice.userid, "3f2504e0-4f89-11d3-9a0c-0305e82c3301");
      assert.equal(users.bob.userid, "00112233-4455-6677-8899-aabbccddeeff");
      assert.equal(users.alice.upn, "alice@example.org");
      // both login attributes find the user; the uid is the same
      assert.equal((await login(t, "alice@adrealm", "alice-pw")).status, 200);
      const upn = await jsonOf(
        await t.post("/auth", {
          username: "alice@example.org",
          realm: "adrealm",
          password: "alice-pw",
        }),
      );
      assert.equal(upn.status, 200, JSON.stringify(upn.body));
      // a lookup by GUID uid (token owner) converts the text back to the 16 bytes
      const serial = await enrollHotp(t, { user: "bob", realm: "adrealm" });
      const tokens = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
      assert.equal(
        tokens.body.result.value.tokens[0].user_id,
        "00112233-4455-6677-8899-aabbccddeeff",
      );
      assert.equal(tokens.body.result.value.tokens[0].username, "bob");
      const check = await jsonOf(
        await t.post("/validate/check", { user: "bob", realm: "adrealm", pass: hotp(0) }),
      );
      assert.equal(check.body.result.value, true, JSON.stringify(check.body));
    });
  },
);

ldapTest(
  "UIDTYPE DN: the uid is the entry's DN, escaped DNs work, and a DN outside LDAPBASE is nobody",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(t, "dn", ldapConfig(slapd, { UIDTYPE: "DN" }), "dnrealm");
      const users = await listUsers(t, { realm: "dnrealm" });
      assert.equal(users.alice.userid, `uid=alice,${PEOPLE}`);
      assert.match(users.jane.userid, /^cn=Doe\\(2C|,) Jane,ou=people,dc=example,dc=org$/);
      assert.equal((await login(t, "jane@dnrealm", "jane-pw")).status, 200);
      // PUT /user selects by uid: a DN outside the base (the service account) is not a user
      const outside = await jsonOf(
        await t.asAdmin("PUT", "/user/", {
          body: { user: "x", resolver: "dn", userid: `cn=reader,ou=services,${BASE}`, email: "x" },
        }),
      );
      assert.equal(outside.status, 400);
      assert.match(outside.body.result.error.message, /does not exist/);
    });
  },
);

ldapTest("Lookups are cached for CACHE_TIMEOUT; password checks never are", async (slapd) => {
  await withApp(async (t) => {
    await saveLdapResolver(
      t,
      "ldapw",
      ldapConfig(slapd, {
        BINDDN: ADMIN_DN,
        BINDPW: ADMIN_PW,
        EDITABLE: "1",
        OBJECT_CLASSES: "inetOrgPerson",
        DN_TEMPLATE: "uid=<username>,<basedn>",
        CACHE_TIMEOUT: "60",
      }),
      "ldaprealm",
    );
    // a second resolver instance on the same directory (another node, or the directory's own admin)
    const other = await createTestApp({ deps: { keys: t.deps.keys } });
    try {
      await saveLdapResolver(
        other,
        "ldapw",
        ldapConfig(slapd, {
          BINDDN: ADMIN_DN,
          BINDPW: ADMIN_PW,
          EDITABLE: "1",
          OBJECT_CLASSES: "inetOrgPerson",
          DN_TEMPLATE: "uid=<username>,<basedn>",
        }),
        "ldaprealm",
      );
      const add = await jsonOf(
        await other.asAdmin("POST", "/user/", {
          body: {
            user: "frank",
            resolver: "ldapw",
            password: "f1",
            surname: "F",
            description: "Frank F",
            email: "f@x",
          },
        }),
      );
      assert.equal(add.status, 200, JSON.stringify(add.body));
      assert.equal((await login(t, "frank@ldaprealm", "f1")).status, 200);
      // the other instance changes password and mail: the password counts at once here
      const put = await jsonOf(
        await other.asAdmin("PUT", "/user/", {
          body: { user: "frank", resolver: "ldapw", password: "f2", email: "new@x" },
        }),
      );
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal((await login(t, "frank@ldaprealm", "f1")).status, 401);
      assert.equal((await login(t, "frank@ldaprealm", "f2")).status, 200);
      // the cached user info here is the old one until CACHE_TIMEOUT has passed
      const infoOf = async () => {
        const res = await jsonOf(
          await t.asAdmin("GET", "/user/", {
            query: { realm: "ldaprealm", username: "frank" },
          }),
        );
        return res.body.result.value[0];
      };
      const serial = await enrollHotp(t, { user: "frank", realm: "ldaprealm" });
      const owner = async () =>
        (await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }))).body.result.value
          .tokens[0];
      assert.equal((await owner()).username, "frank");
      // a list always asks the directory
      assert.equal((await infoOf()).email, "new@x");
      // deleted elsewhere: the cached login still resolves until the entry expires
      const del = await jsonOf(await other.asAdmin("DELETE", "/user/ldapw/frank"));
      assert.equal(del.body.result.value, true);
      assert.equal((await login(t, "frank@ldaprealm", "f2")).status, 401);
      // the cached login and attributes still resolve here …
      const cached = await resolveUser(t.deps, "frank", "ldaprealm");
      assert.ok(cached);
      // (the list above refreshed the cached attributes)
      assert.equal((await getUserInfo(t.deps, cached)).email, "new@x");
      t.clock.advance(61_000);
      // … until CACHE_TIMEOUT has passed
      assert.equal(await resolveUser(t.deps, "frank", "ldaprealm"), undefined);
      const gone = await jsonOf(
        await t.post("/validate/check", { user: "frank", realm: "ldaprealm", pass: hotp(0) }),
      );
      assert.equal(gone.body.result.value ?? false, false);
    } finally {
      await other.close();
    }
  });
});

ldapTest(
  "SERVERPOOL_PERSISTENT keeps a service connection between requests; user binds never use it",
  async (slapd) => {
    await withApp(async (t) => {
      await saveLdapResolver(
        t,
        "kept",
        ldapConfig(slapd, { SERVERPOOL_PERSISTENT: "1", CACHE_TIMEOUT: "0" }),
        "keptrealm",
      );
      for (let i = 0; i < 3; i++) {
        assert.equal(Object.keys(await listUsers(t, { realm: "keptrealm" })).length, 5);
        assert.equal((await login(t, "bob@keptrealm", "bob-pw")).status, 200);
        assert.equal((await login(t, "bob@keptrealm", "alice-pw")).status, 401);
      }
      // after a user bind the kept connection still searches as the service account
      const users = await listUsers(t, { realm: "keptrealm", username: "alice" });
      assert.equal(users.alice.email, "alice@example.org");
    });
  },
);
