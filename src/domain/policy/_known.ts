/**
 * Names the policy engine checks against (realms, resolvers, nodes, token
 * types), read through the owning features' public functions.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { realmNames } from "../realm/mod.ts";
import { listResolvers } from "../resolver/mod.ts";
// the catalogue, not the type modules: those use the policy engine
import { ADMIN_ENROLLED_TYPES, TOKEN_TYPES } from "../token/types/catalogue.ts";
import type { DefsContext } from "./defs.ts";

/** Every realm name (lower case). */
export async function knownRealms(deps: Deps): Promise<string[]> {
  return await realmNames(deps);
}

/** Every resolver name. */
export async function knownResolvers(deps: Deps): Promise<string[]> {
  return Object.keys(await listResolvers(deps));
}

/** Node names a policy may name in `pinode`. */
export function knownNodes(deps: Deps): string[] {
  return [deps.nodeName];
}

/** Token types for `enroll<TYPE>` and type value lists. */
export function knownTokenTypes(): DefsContext["tokenTypes"] {
  return Object.entries(TOKEN_TYPES).map(([type, description]) => ({
    type,
    description,
    userEnroll: !ADMIN_ENROLLED_TYPES.has(type),
  }));
}
