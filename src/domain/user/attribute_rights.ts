/**
 * The one place that decides which custom user attributes a caller may set or
 * delete (spec 03 §6). Custom attributes are never fail-open: without a
 * granting policy nothing is allowed.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { UserRef } from "./model.ts";
import { loadPolicySet } from "../policy/mod.ts";

/** Who asks, and about which user. */
export interface AttributeRightsContext {
  /** Role of the caller: admin policies for admins, user policies for users. */
  role: "admin" | "user";
  /** Caller's login and realm ("" for local admins). */
  username: string;
  realm: string;
  /** The user whose attributes are concerned. */
  user: UserRef;
  /** Client address of the request, for policy `client` matching. */
  client?: string;
  /** The user's attributes, for policy conditions on `userinfo` (read only when one needs them). */
  userinfo: () => Promise<Record<string, string | string[]> | undefined>;
}

/** Allowed key → values to set (`*` = any) and deletable keys (`*` = any). */
export interface AttributeRights {
  set: Record<string, string[]>;
  delete: string[];
}

const SET_ACTION = "set_custom_user_attributes";
const DELETE_ACTION = "delete_custom_user_attributes";

/**
 * Rights from policies `set_custom_user_attributes` / `delete_custom_user_attributes`
 * of the caller's scope: the union over all matching policies. Nothing is
 * allowed without a granting policy.
 */
export async function customAttributeRights(
  deps: Deps,
  ctx: AttributeRightsContext,
): Promise<AttributeRights> {
  const set = await loadPolicySet(deps);
  const isAdmin = ctx.role === "admin";
  if (!set.hasActivePolicies(isAdmin ? "admin" : "user")) return { set: {}, delete: [] };
  const user = ctx.user;
  const matcher = set.matcher({
    scope: isAdmin ? "admin" : "user",
    adminuser: isAdmin ? ctx.username : null,
    adminrealm: isAdmin ? ctx.realm : null,
    user: user.login,
    realm: user.realm,
    resolver: user.resolver || null,
    client: ctx.client || null,
    conditions: { userinfo: ctx.userinfo },
  });
  const parts: AttributeRights[] = [];
  const setValues = await matcher.values(SET_ACTION, { freeText: true });
  for (const v of setValues.values) parts.push({ set: parseSetCustomAttributes(v), delete: [] });
  const delValues = await matcher.values(DELETE_ACTION, { freeText: true });
  for (const v of delValues.values) parts.push({ set: {}, delete: parseDeleteCustomAttributes(v) });
  return mergeAttributeRights(parts);
}

/** Parses `:key1: v1 v2 :key2: *` into `{key1: [v1, v2], key2: ["*"]}` (merged by key). */
export function parseSetCustomAttributes(value: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const re = /:([^:]+):([^:]*)/g;
  for (const m of value.matchAll(re)) {
    const key = m[1].trim();
    if (key === "") continue;
    const values = m[2].trim().split(/\s+/).filter((v) => v !== "");
    const list = (out[key] ??= []);
    for (const v of values) if (!list.includes(v)) list.push(v);
  }
  return out;
}

/** Parses `key1 key2` / `*` into a key list. */
export function parseDeleteCustomAttributes(value: string): string[] {
  return [...new Set(value.trim().split(/\s+/).filter((v) => v !== ""))];
}

/** Merges rights of several policies (union). */
export function mergeAttributeRights(parts: AttributeRights[]): AttributeRights {
  const out: AttributeRights = { set: {}, delete: [] };
  for (const p of parts) {
    for (const [k, vs] of Object.entries(p.set)) {
      const list = (out.set[k] ??= []);
      for (const v of vs) if (!list.includes(v)) list.push(v);
    }
    for (const k of p.delete) if (!out.delete.includes(k)) out.delete.push(k);
  }
  return out;
}

/** Whether `rights` allow setting `key` to `value`. */
export function maySet(rights: AttributeRights, key: string, value: string): boolean {
  for (const k of [key, "*"]) {
    const values = rights.set[k];
    if (values && (values.includes("*") || values.includes(value))) return true;
  }
  return false;
}

/** Whether `rights` allow deleting `key`. */
export function mayDelete(rights: AttributeRights, key: string): boolean {
  return rights.delete.includes("*") || rights.delete.includes(key);
}
