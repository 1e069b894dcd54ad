/**
 * Authentication-scope `mangle` policies (spec 04, applied to `/machine/authitem` by
 * spec 07 §5): `<param>/<regex>/<replacement>/` rewrites a request parameter,
 * e.g. `user/.*\\(.*)/\1/` turns `DOMAIN\alice` into `alice`.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { type ConditionData, loadPolicySet } from "../policy/mod.ts";

/** Who the request is about, for matching the auth policies. */
export interface MangleContext {
  client: string;
  userAgent: string;
  /**
   * The request's condition data, with the user the request names (as it names them, before
   * the rewrite: privacyIDEA matches `mangle` on the request's user object).
   */
  conditions?: ConditionData;
}

const MAX_MANGLE_INPUT = 1024;

/** Python `re.sub` replacement syntax (`\1`, `\g<1>`) → JavaScript (`$1`). */
function jsReplacement(python: string): string {
  return python
    .replace(/\$/g, "$$$$")
    .replace(/\\g<(\d+)>/g, (_, n) => `$${n}`)
    .replace(/\\(\d)/g, (_, n) => `$${n}`);
}

/**
 * Applies every matching `mangle` policy of scope `auth` to `params` (string
 * values only) and returns the rewritten copy plus the policy names used.
 * A policy whose regex does not compile is skipped and logged.
 */
export async function mangleParams(
  deps: Deps,
  params: Record<string, string>,
  ctx: MangleContext,
): Promise<{ params: Record<string, string>; policies: string[] }> {
  const set = await loadPolicySet(deps);
  if (!set.hasActivePolicies("authentication")) return { params, policies: [] };
  const { values, policies } = await set.actionValues({
    scope: "authentication",
    action: "mangle",
    user: params.user ?? null,
    realm: params.realm ? params.realm.toLowerCase() : null,
    client: ctx.client,
    userAgent: ctx.userAgent,
    conditions: ctx.conditions ?? {},
  }, { freeText: true });
  const out = { ...params };
  for (const rule of values) {
    const parts = rule.split("/");
    if (parts.length < 4) {
      deps.log.warn("Ignoring a malformed mangle policy value", { value: rule });
      continue;
    }
    const [key, search, replace] = parts;
    const current = out[key];
    if (!current || current.length > MAX_MANGLE_INPUT) continue;
    let re: RegExp;
    try {
      re = new RegExp(search, "g");
    } catch {
      deps.log.warn("Ignoring a mangle policy with an invalid regex", { value: rule });
      continue;
    }
    out[key] = current.replace(re, jsReplacement(replace));
  }
  return { params: out, policies };
}
