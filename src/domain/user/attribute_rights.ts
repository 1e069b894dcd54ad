/**
 * The one place that decides which custom user attributes a caller may set or
 * delete (spec 03 §6). Custom attributes are never fail-open: without a
 * granting policy nothing is allowed.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { UserRef } from "./mod.ts";

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
}

/** Allowed key → values to set (`*` = any) and deletable keys (`*` = any). */
export interface AttributeRights {
  set: Record<string, string[]>;
  delete: string[];
}

/**
 * Rights from policies `set_custom_user_attributes` / `delete_custom_user_attributes`.
 * TODO(#5): wire to the policy engine (union over matching policies, parse with
 * {@link parseSetCustomAttributes}); until then nothing is allowed.
 */
export function customAttributeRights(
  _deps: Deps,
  _ctx: AttributeRightsContext,
): Promise<AttributeRights> {
  return Promise.resolve({ set: {}, delete: [] });
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
