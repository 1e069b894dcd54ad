/**
 * Value rules of the LDAP resolvers that need no server: GUID text, DN
 * escaping, filters built from user input, and configuration parsing.
 */
import assert from "node:assert/strict";
import {
  escapeDnValue,
  filterFromTemplate,
  firstRdn,
  guidToBytes,
  guidToString,
  isWithinBase,
  patternFilter,
} from "../../src/domain/resolver/ldap_values.ts";
import { parseLdapConfig } from "../../src/domain/resolver/ldap.ts";
import { ParameterError } from "../../src/errors.ts";

Deno.test("objectGUID bytes render as privacyIDEA does (first three groups little-endian) and back", () => {
  const bytes = new Uint8Array(
    "e004253f894fd3119a0c0305e82c3301".match(/../g)!.map((h) => parseInt(h, 16)),
  );
  assert.equal(guidToString(bytes), "3f2504e0-4f89-11d3-9a0c-0305e82c3301");
  assert.deepEqual(guidToBytes("3f2504e0-4f89-11d3-9a0c-0305e82c3301"), bytes);
  assert.deepEqual(guidToBytes("{3F2504E0-4F89-11D3-9A0C-0305E82C3301}"), bytes);
  assert.equal(guidToBytes("not-a-guid"), undefined);
  assert.equal(guidToBytes("*"), undefined);
});

Deno.test("user input becomes filter values: *, (, ), \\ and NUL are escaped, * alone is the wildcard", () => {
  assert.equal(patternFilter("uid", "*)(uid=*")!.toString(), "(uid=*\\29\\28uid=*)");
  assert.equal(patternFilter("uid", "a(b)c\\d\0")!.toString(), "(uid=a\\28b\\29c\\5cd\\00)");
  assert.equal(patternFilter("uid", "al*")!.toString(), "(uid=al*)");
  assert.equal(patternFilter("uid", "*"), undefined);
  assert.equal(patternFilter("uid", ""), undefined);
  assert.equal(patternFilter("cn", "Jürgen")!.toString(), "(cn=Jürgen)");
});

Deno.test("DN values are escaped per RFC 4514; the first RDN and the base check read them back", () => {
  assert.equal(escapeDnValue("Doe, Jane"), "Doe\\, Jane");
  assert.equal(escapeDnValue('#1 a+b=c;<d>"e\\'), '\\#1 a\\+b\\=c\\;\\<d\\>\\"e\\\\');
  assert.equal(escapeDnValue(" lead and trail "), "\\ lead and trail\\ ");
  assert.deepEqual(firstRdn("cn=Doe\\, Jane,ou=people,dc=example,dc=org"), {
    attribute: "cn",
    value: "Doe, Jane",
  });
  assert.deepEqual(firstRdn("cn=Doe\\2C Jane,ou=people"), { attribute: "cn", value: "Doe, Jane" });
  assert.ok(isWithinBase("uid=a,OU=People, dc=example,dc=org", "ou=people,dc=example,dc=org"));
  assert.ok(
    isWithinBase("cn=Doe\\2C Jane,ou=people,dc=example,dc=org", "ou=people,dc=example,dc=org"),
  );
  assert.ok(
    !isWithinBase("cn=reader,ou=services,dc=example,dc=org", "ou=people,dc=example,dc=org"),
  );
  assert.ok(!isWithinBase("cn=x\\,ou=people,dc=example,dc=org", "ou=people,dc=example,dc=org"));
});

Deno.test("parseLdapConfig: privacyIDEA's keys, defaults and clear errors", () => {
  const base = {
    LDAPURI: "ldap://a.example.org, ldaps://b.example.org:1636",
    LDAPBASE: "dc=example,dc=org",
    LOGINNAMEATTRIBUTE: "sAMAccountName, userPrincipalName",
    LDAPSEARCHFILTER: "(&(sAMAccountName=*)(objectCategory=person))",
    USERINFO: "{ 'email': 'mail', \"surname\": 'sn' }",
    UIDTYPE: "objectGUID",
  };
  const cfg = parseLdapConfig("ad", base, "/data");
  assert.deepEqual(cfg.server.uris, ["ldap://a.example.org", "ldaps://b.example.org:1636"]);
  assert.equal(cfg.server.timeoutMs, 5000);
  assert.equal(cfg.sizeLimit, 500);
  assert.equal(cfg.cacheTtlMs, 120_000);
  assert.equal(cfg.server.rounds, 2);
  assert.equal(cfg.server.skipMs, 30_000);
  assert.equal(cfg.server.strategy, "ROUND_ROBIN");
  assert.deepEqual(cfg.loginAttributes, ["sAMAccountName", "userPrincipalName"]);
  assert.deepEqual(cfg.userInfo, { email: "mail", surname: "sn" });
  assert.deepEqual(cfg.uidType, { kind: "guid", attribute: "objectGUID" });
  assert.deepEqual([...cfg.multiValue], ["mobile"]);
  assert.equal(cfg.scope, "sub");
  const relative = parseLdapConfig("x", { ...base, TLS_CA_FILE: "ca/ad.pem" }, "/data");
  assert.equal(relative.server.tlsCaFile, "/data/ca/ad.pem");
  assert.deepEqual(
    [
      ...parseLdapConfig("x", { ...base, MULTIVALUEATTRIBUTES: "['mobile', 'email']" }, "/d")
        .multiValue,
    ],
    ["mobile", "email"],
  );
  const bad: [Record<string, string>, RegExp][] = [
    [{ LDAPURI: "" }, /LDAPURI is required/],
    [{ LDAPURI: "ldapx://h" }, /must be ldap:\/\/host/],
    [{ LOGINNAMEATTRIBUTE: "" }, /LOGINNAMEATTRIBUTE is required/],
    [{ LOGINNAMEATTRIBUTE: "uid)(x" }, /is not an attribute name/],
    [{ LDAPSEARCHFILTER: "(&(a=b)" }, /LDAPSEARCHFILTER is no LDAP filter/],
    [{ USERINFO: "[1, 2]" }, /USERINFO must be a mapping/],
    [{ USERINFO: '{"email": "mail)("}' }, /must name an LDAP attribute/],
    [{ AUTHTYPE: "SASL Kerberos" }, /not supported/],
    [{ TIMEOUT: "0" }, /TIMEOUT must be a number/],
    [{ SCOPE: "DEEP" }, /SCOPE must be/],
    [{ SERVERPOOL_STRATEGY: "LEAST" }, /SERVERPOOL_STRATEGY/],
    [{ TLS_CA_FILE: "../x.pem" }, /"\.\." segments/],
  ];
  for (const [overrides, message] of bad) {
    assert.throws(
      () => parseLdapConfig("r", { ...base, ...overrides }, "/data"),
      (err: unknown) => err instanceof ParameterError && message.test(err.message),
      JSON.stringify(overrides),
    );
  }
});

Deno.test("group search filter: privacyIDEA's tags, Active Directory's in-chain rule, values escaped", () => {
  // privacyIDEA's example (tests/test_lib_resolver.py): user info and LDAPBASE=o=test
  const ad = "(&(sAMAccountName=*)(objectCategory=group)" +
    "(member:1.2.840.113556.1.4.1941:=cn={username},{base_dn}))";
  assert.equal(
    filterFromTemplate(ad, {
      username: "alice",
      surname: "Alice",
      givenname: "Cooper",
      base_dn: "o=test",
    }).toString(),
    "(&(sAMAccountName=*)(objectCategory=group)" +
      "(member:1.2.840.113556.1.4.1941:=cn=alice,o=test))",
  );
  // a value is one value: it cannot close the filter or add a wildcard
  assert.equal(
    filterFromTemplate("(member=uid={username},{base_dn})", {
      username: "x*)(cn=*",
      base_dn: "ou=a\\,b",
    }).toString(),
    "(member=uid=x\\2a\\29\\28cn=\\2a,ou=a\\5c,b)",
  );
  // an unknown tag stays (the server then finds nothing)
  assert.equal(
    filterFromTemplate("(member={nosuchfield})", {}).toString(),
    "(member={nosuchfield})",
  );
});

Deno.test("parseLdapConfig: the group search is on only with all its keys", () => {
  const base = {
    LDAPURI: "ldap://a.example.org",
    LDAPBASE: "dc=example,dc=org",
    LOGINNAMEATTRIBUTE: "uid",
    LDAPSEARCHFILTER: "(objectClass=person)",
  };
  const groups = {
    recursive_group_search: "True",
    group_search_filter: "(member={userid})",
    group_name_attribute: "cn",
    group_attribute_mapping_key: "groups",
  };
  const on = parseLdapConfig("r", { ...base, ...groups }, "/d");
  assert.deepEqual(on.groups, {
    base: "dc=example,dc=org",
    filter: "(member={userid})",
    attribute: "cn",
    key: "groups",
  });
  assert.equal(
    parseLdapConfig("r", { ...base, ...groups, group_base_dn: "ou=g,dc=example,dc=org" }, "/d")
      .groups?.base,
    "ou=g,dc=example,dc=org",
  );
  assert.equal(
    parseLdapConfig("r", { ...base, ...groups, recursive_group_search: "0" }, "/d")
      .groups,
    undefined,
  );
  const off = parseLdapConfig("r", { ...base, ...groups, group_name_attribute: "" }, "/d");
  assert.equal(off.groups, undefined);
  assert.match(off.groupsOff ?? "", /group_name_attribute is empty/);
});
