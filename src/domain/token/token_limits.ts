/**
 * The enrolment policies that limit how many tokens a user or a realm may
 * have (spec 04, privacyIDEA's `check_max_token_user` and
 * `check_max_token_realm`): `max_token_per_user`, `<type>_max_token_per_user`,
 * `max_active_token_per_user`, `<type>_max_active_token_per_user` and
 * `max_token_per_realm`, checked before `/token/init` and `/token/assign` give
 * a user (or a realm) one more token. Of several matching policies the
 * largest value counts, as in privacyIDEA. A re-enrolment of one of the
 * user's own tokens does not count as one more.
 *
 * The count and the write are not one transaction: two enrolments at the
 * same moment can both pass a limit by one (privacyIDEA behaves alike).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { PolicyError } from "../../errors.ts";
import { type ConditionData, loadPolicySet, type PolicyMatcher } from "../policy/mod.ts";
import type { UserRef } from "./model.ts";
import * as store from "./token_store.ts";
import { userConditions } from "./enroll_policy.ts";

/** What gets one more token: the owner (if any), the realm, the type, the serial if known. */
export interface TokenLimitContext {
  user?: UserRef;
  /** The realm a token without an owner goes to (`/token/init` with `realm` only). */
  realm?: string;
  type: string;
  serial?: string;
  /** The request's condition data (headers, environment, parameters, the token it names). */
  conditions?: ConditionData;
}

async function limitOf(m: PolicyMatcher, action: string): Promise<number | undefined> {
  const { values } = await m.values(action);
  const numbers = values.map((v) => Number.parseInt(v, 10)).filter((n) => Number.isInteger(n));
  return numbers.length > 0 ? Math.max(...numbers) : undefined;
}

// a token already counted in the realm (re-enrolled, or assigned within it) adds none
async function isInRealm(deps: Deps, serial: string | undefined, realm: string): Promise<boolean> {
  if (!serial) return false;
  const token = await store.findBySerial(deps.db, serial);
  if (!token) return false;
  return (await store.realmsOf(deps.db, [token.id])).get(token.id)?.includes(realm) ?? false;
}

/** Throws the PolicyError of the first limit the new token would pass. */
export async function checkTokenLimits(deps: Deps, ctx: TokenLimitContext): Promise<void> {
  const set = await loadPolicySet(deps);
  if (!set.hasActivePolicies("enrollment")) return;
  const type = ctx.type.toLowerCase();
  const user = ctx.user;
  if (user) {
    const m = set.matcher({
      scope: "enrollment",
      user: user.login,
      realm: user.realm,
      resolver: user.resolver ?? null,
      // privacyIDEA's Match.user: the conditions read the user who gets the token
      conditions: userConditions(deps, ctx.conditions, user),
    });
    const limits = {
      typed: await limitOf(m, `${type}_max_token_per_user`),
      all: await limitOf(m, "max_token_per_user"),
      typedActive: await limitOf(m, `${type}_max_active_token_per_user`),
      active: await limitOf(m, "max_active_token_per_user"),
    };
    if (Object.values(limits).some((n) => n !== undefined)) {
      const owned = await store.findByOwner(deps.db, user);
      // re-enrolling one of the counted tokens gives the user none more
      const over = (tokens: { serial: string }[], limit: number | undefined) =>
        limit !== undefined && !tokens.some((t) => t.serial === ctx.serial) &&
        tokens.length >= limit;
      const ofType = owned.filter((t) => t.type === type);
      if (over(ofType, limits.typed)) {
        throw new PolicyError(`The number of tokens of type ${type} for this user is limited!`);
      }
      if (over(owned, limits.all)) {
        throw new PolicyError("The number of tokens for this user is limited!");
      }
      if (over(ofType.filter((t) => t.active), limits.typedActive)) {
        throw new PolicyError(
          `The number of active tokens of type ${type} for this user is limited!`,
        );
      }
      if (over(owned.filter((t) => t.active), limits.active)) {
        throw new PolicyError("The number of active tokens for this user is limited!");
      }
    }
  }
  const realm = user?.realm ?? ctx.realm;
  if (realm) {
    const m = set.matcher({
      scope: "enrollment",
      user: null,
      realm,
      resolver: null,
      // privacyIDEA's Match.realm has no user object: a userinfo condition finds none
      conditions: userConditions(deps, ctx.conditions, undefined),
    });
    const limit = await limitOf(m, "max_token_per_realm");
    if (
      limit !== undefined && !(await isInRealm(deps, ctx.serial, realm)) &&
      (await store.countInRealm(deps.db, realm)) >= limit
    ) {
      throw new PolicyError("The number of tokens in this realm is limited!");
    }
  }
}
