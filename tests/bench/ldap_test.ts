import assert from "node:assert/strict";
import { benchLdif, ldapResolverDefinition } from "../../bench/lib/ldap.ts";
import { planUsers } from "../../bench/lib/enrol.ts";

Deno.test("bench LDAP directory: base entries, the service account and one entry per user", () => {
  const users = planUsers("l", 3);
  const ldif = benchLdif(users);
  const dns = ldif.split("\n").filter((l) => l.startsWith("dn: "));
  assert.deepEqual(dns, [
    "dn: dc=example,dc=org",
    "dn: ou=people,dc=example,dc=org",
    "dn: ou=services,dc=example,dc=org",
    "dn: cn=reader,ou=services,dc=example,dc=org",
    "dn: uid=l00001,ou=people,dc=example,dc=org",
    "dn: uid=l00002,ou=people,dc=example,dc=org",
    "dn: uid=l00003,ou=people,dc=example,dc=org",
  ]);
  // entries are separated by one empty line, as slapadd wants
  assert.equal(ldif.split("\n\n").length, 7);
  const def = ldapResolverDefinition("ldap://127.0.0.1:3890");
  assert.equal(def.type, "ldapresolver");
  assert.equal(def.LDAPURI, "ldap://127.0.0.1:3890");
  assert.equal(def.LDAPBASE, "ou=people,dc=example,dc=org");
  assert.equal(def.CACHE_TIMEOUT, "300");
});
