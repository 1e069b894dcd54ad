/**
 * The LDAP scenario's directory: a private slapd (the LDAP tests' helper)
 * seeded with one entry per benchmark user, and the `ldapresolver`
 * definition that reads it as an operator would configure it (a read-only
 * service account, entryUUID uids, a user cache).
 *
 * @module
 */
import { BASE, READER_DN, READER_PW } from "../../tests/ldap/_slapd.ts";
import type { OtpUser } from "./enrol.ts";

/** Realm and resolver of the LDAP users. */
export const LDAP_REALM = "benchldap";
export const LDAP_RESOLVER = "benchldapusers";
/** Seconds a resolved user is cached (privacyIDEA's CACHE_TIMEOUT). */
export const LDAP_CACHE_TIMEOUT = 300;

const PEOPLE = `ou=people,${BASE}`;
// cn=reader's password "reader-secret" as slappasswd hashes it (the LDAP tests' fixture)
const READER_HASH = "{SSHA}u0iA6CWVGLuFV2pVUPK/2iY8dT+zn0Uv";

/** LDIF of the base entries, the service account and one inetOrgPerson per user; pure. */
export function benchLdif(users: readonly OtpUser[]): string {
  const entries = [
    `dn: ${BASE}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Bench`,
    `dn: ${PEOPLE}\nobjectClass: organizationalUnit\nou: people`,
    `dn: ou=services,${BASE}\nobjectClass: organizationalUnit\nou: services`,
    `dn: ${READER_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\n` +
    `cn: reader\nuserPassword: ${READER_HASH}`,
    ...users.map((u) =>
      `dn: uid=${u.login},${PEOPLE}\nobjectClass: inetOrgPerson\nuid: ${u.login}\n` +
      `cn: Bench ${u.login}\nsn: Bench\ngivenName: ${u.login}\nmail: ${u.login}@bench.example`
    ),
  ];
  return entries.join("\n\n") + "\n";
}

/** The `/resolver/` definition of the bench directory at `url`; pure. */
export function ldapResolverDefinition(url: string): Record<string, string> {
  return {
    type: "ldapresolver",
    LDAPURI: url,
    LDAPBASE: PEOPLE,
    BINDDN: READER_DN,
    BINDPW: READER_PW,
    LOGINNAMEATTRIBUTE: "uid",
    LDAPSEARCHFILTER: "(objectClass=inetOrgPerson)",
    USERINFO: JSON.stringify({ email: "mail", surname: "sn", givenname: "givenName" }),
    UIDTYPE: "entryUUID",
    TIMEOUT: "5",
    CACHE_TIMEOUT: String(LDAP_CACHE_TIMEOUT),
  };
}
