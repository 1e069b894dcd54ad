/**
 * Which audit rows an admin may read: `GET /audit/` shows a realm-limited
 * admin the rows of the realms their `auditlog` policies grant, plus their own
 * actions (privacyIDEA's `get_admin_audit_params` and the audit module's realm
 * filter); an admin whose policies are not limited sees every row.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { PolicyError } from "../../errors.ts";
import { allowedRealms, type Caller, checkRight } from "../policy/mod.ts";
import { realmNames } from "../realm/mod.ts";
import type { AuditScope } from "./audit_store.ts";

/** The request facts policies match on besides the caller. */
export interface AuditReader {
  client?: string | null;
  userAgent?: string | null;
}

/**
 * The rows `caller` (an admin) may read, or undefined when every row. A realm
 * counts when a matching `auditlog` policy grants it, decided by the same
 * policy match as every other right (so `!realm` entries exclude it).
 */
export async function auditScopeOf(
  deps: Deps,
  caller: Caller,
  reader: AuditReader = {},
): Promise<AuditScope | undefined> {
  const ctx = { client: reader.client ?? null, userAgent: reader.userAgent ?? null };
  // the realms the matching policies name; undefined: one of them names none (or "*")
  const named = await allowedRealms(deps, caller, "auditlog", ctx);
  const known = await realmNames(deps);
  const granted: string[] = [];
  for (const realm of known) {
    try {
      await checkRight(deps, caller, "auditlog", { ...ctx, realm });
      granted.push(realm.toLowerCase());
    } catch (err) {
      if (!(err instanceof PolicyError)) throw err;
    }
  }
  // not limited: no policy names realms, and none takes a realm away ("!r2")
  if (named === undefined && granted.length === known.length) return undefined;
  // a realm that was deleted still has rows: a policy that names it grants them
  const realms = [...new Set([...granted, ...(named ?? [])])];
  return { realms, administrator: caller.username, adminRealm: caller.realm };
}
