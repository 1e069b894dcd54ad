/**
 * Machine resolver type `ldap`: its config is accepted and stored (secrets
 * encrypted) so configurations can be carried over, but Tessera does not query
 * LDAP for machines yet.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { MachineResolverType, MachineSource } from "./types.ts";

/** The `ldap` resolver type (config only). */
export const LDAP: MachineResolverType = {
  type: "ldap",
  keys: {
    LDAPURI: "string",
    LDAPBASE: "string",
    BINDDN: "string",
    BINDPW: "password",
    TIMEOUT: "int",
    SIZELIMIT: "int",
    HOSTNAMEATTRIBUTE: "string",
    IDATTRIBUTE: "string",
    IPATTRIBUTE: "string",
    SEARCHFILTER: "string",
    NOREFERRALS: "bool",
    AUTHTYPE: "string",
    TLS_VERSION: "int",
    TLS_VERIFY: "bool",
    TLS_CA_FILE: "string",
    START_TLS: "bool",
  },
  open(deps: Deps, name: string): MachineSource {
    return {
      machines() {
        // TODO(#6): query LDAP; until then such resolvers contribute no machines
        deps.log.warn("LDAP machine resolvers are not implemented; skipping", { resolver: name });
        return Promise.resolve([]);
      },
    };
  },
  test() {
    return Promise.resolve({
      ok: false,
      description: "LDAP machine resolvers are not implemented in Tessera",
    });
  },
};
