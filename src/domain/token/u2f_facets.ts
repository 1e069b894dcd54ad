/**
 * `GET /ttype/u2f` (spec 14 §8.2 point 4): the trusted facets of the U2F
 * appId, for browsers that check which origins may use the registrations.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError } from "../../errors.ts";
import { loadPolicySet, userAgentName } from "../policy/mod.ts";
import { loadSystemConfig } from "../system_config/mod.ts";

/** The FIDO trusted facet list (`application/fido.trusted-apps+json`). */
export interface TrustedFacets {
  trustedFacets: { version: { major: number; minor: number }; ids: string[] }[];
}

/**
 * The facets: `https://<host>` for each host name of the authentication
 * policies `u2f_facets` (matched on the client only, as privacyIDEA's
 * `Match.action_only`), then the config's `u2f.appId` without trailing `/`.
 * ERR905 when `u2f.appId` is not set.
 */
export async function u2fFacets(
  deps: Deps,
  client: { clientIp: string; userAgent: string },
): Promise<TrustedFacets> {
  const system = await loadSystemConfig(deps);
  const configured = system.get("u2f.appId");
  if (configured === "") throw new ParameterError("u2f is not configured");
  const appId = configured.replace(/^\/+|\/+$/g, "");
  const set = await loadPolicySet(deps);
  const m = set.matcher({
    scope: "authentication",
    user: null,
    realm: null,
    resolver: null,
    client: client.clientIp,
    userAgent: userAgentName(client.userAgent),
  });
  const hosts = (await m.values("u2f_facets")).values;
  return {
    trustedFacets: [{
      version: { major: 1, minor: 0 },
      ids: [...hosts.map((h) => `https://${h}`), appId],
    }],
  };
}
