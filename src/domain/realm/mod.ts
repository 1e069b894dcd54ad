/**
 * Realms (`/realm/`, `/defaultrealm`): named, ordered sets of resolvers.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { AppError, ParameterError, ResourceNotFoundError, UserError } from "../../errors.ts";
import * as resolverStore from "../resolver/resolver_store.ts";
import * as store from "./realm_store.ts";
import * as tokenStore from "../token/token_store.ts";
import * as attributeStore from "../user/attribute_store.ts";

export type { RealmMember, RealmRecord } from "./realm_store.ts";

const REALM_NAME_REGEXP = /^[a-z0-9_\-.]{1,255}$/;
const REALM_NOT_FOUND = "The requested Realm could not be found.";

/** A realm as shown by `GET /realm/`. */
export interface RealmView {
  id: number;
  default: boolean;
  resolver: { name: string; type: string; priority: number | null; node: string }[];
}

/** Lower-cases and trims a realm name; spaces become "-" (spec 03 §1). */
export function normaliseRealmName(name: string): string {
  return name.trim().toLowerCase().replace(/\s+/g, "-");
}

function checkRealmName(name: string): void {
  if (!REALM_NAME_REGEXP.test(name)) {
    throw new ParameterError(
      `Cannot use realm name "${name.slice(0, 64)}": only letters, digits and _ - . are allowed`,
    );
  }
}

function viewOf(r: store.RealmRecord): RealmView {
  return {
    id: r.id,
    default: r.isDefault,
    resolver: r.resolvers.map((m) => ({
      name: m.name,
      type: m.type,
      priority: m.priority,
      node: m.node,
    })),
  };
}

/** `GET /realm/`: every realm keyed by name. */
export async function listRealms(deps: Deps): Promise<Record<string, RealmView>> {
  const out: Record<string, RealmView> = {};
  for (const r of await store.listRealms(deps.db)) out[r.name] = viewOf(r);
  return out;
}

/** Input of {@link setRealm}. */
export interface SetRealmInput {
  /** Resolver names (already split). */
  resolvers: string[];
  /** Priorities by resolver name (JSON integers only). */
  priorities?: Record<string, number>;
}

/**
 * `POST /realm/<realm>`: creates the realm or replaces its resolver list.
 * Unknown resolvers end in `failed`; the first realm becomes the default.
 */
export async function setRealm(
  deps: Deps,
  realmName: string,
  input: SetRealmInput,
): Promise<{ added: string[]; failed: string[] }> {
  const name = normaliseRealmName(realmName);
  checkRealmName(name);
  const wanted = [...new Set(input.resolvers.map((r) => r.trim()).filter((r) => r !== ""))];
  return await store.inTransaction(deps.db, async (trx) => {
    const found = await resolverStore.findResolvers(trx, wanted);
    const byName = new Map(found.map((r) => [r.name, r]));
    const added: string[] = [];
    const failed: string[] = [];
    const entries: { resolverId: number; priority: number | null }[] = [];
    for (const r of wanted) {
      const rec = byName.get(r);
      if (!rec) {
        failed.push(r);
        continue;
      }
      added.push(r);
      entries.push({ resolverId: rec.id, priority: input.priorities?.[r] ?? null });
    }
    const { id, created } = await store.ensureRealm(trx, name);
    await store.replaceResolvers(trx, id, entries);
    if (created && (await store.countRealms(trx)) === 1) await store.setDefaultRealm(trx, id);
    return { added, failed };
  });
}

/** One entry of `POST /realm/<realm>/node/<node>`. */
export interface NodeResolverEntry {
  name: string;
  priority?: number | null;
}

/** Names of the nodes Tessera knows (this node; nodes have no registry yet). */
export function knownRealmNodes(deps: Deps): string[] {
  return [deps.nodeName];
}

/**
 * `POST /realm/<realm>/node/<node>`: replaces the resolvers pinned to `node`
 * (created realm if missing). Unknown resolvers end in `failed`.
 */
export async function setRealmNodeResolvers(
  deps: Deps,
  realmName: string,
  node: string,
  entries: NodeResolverEntry[],
): Promise<{ added: string[]; failed: string[] }> {
  const name = normaliseRealmName(realmName);
  checkRealmName(name);
  if (!knownRealmNodes(deps).includes(node)) {
    throw new ParameterError("The given node does not exist!");
  }
  return await store.inTransaction(deps.db, async (trx) => {
    const wanted = [...new Set(entries.map((e) => e.name.trim()).filter((n) => n !== ""))];
    const byName = new Map(
      (await resolverStore.findResolvers(trx, wanted)).map((r) => [r.name, r]),
    );
    const added: string[] = [];
    const failed: string[] = [];
    const rows: { resolverId: number; priority: number | null }[] = [];
    for (const n of wanted) {
      const rec = byName.get(n);
      if (!rec) {
        failed.push(n);
        continue;
      }
      added.push(n);
      rows.push({
        resolverId: rec.id,
        priority: entries.find((e) => e.name.trim() === n)?.priority ?? null,
      });
    }
    const { id, created } = await store.ensureRealm(trx, name);
    await store.replaceNodeResolvers(trx, id, node, rows);
    if (created && (await store.countRealms(trx)) === 1) await store.setDefaultRealm(trx, id);
    return { added, failed };
  });
}

/** Whether a token is still assigned to a user of `realm` (hook for the token feature). */
export async function realmHasTokens(deps: Deps, realm: string): Promise<boolean> {
  return (await tokenStore.countOfRealmUsers(deps.db, realm)) > 0;
}

/** `DELETE /realm/<realm>`: deletes a realm; returns its id. */
export async function deleteRealm(
  deps: Deps,
  realmName: string,
  options: { deleteCustomAttributes?: boolean } = {},
): Promise<number> {
  const name = normaliseRealmName(realmName);
  return await store.inTransaction(deps.db, async (trx) => {
    const realm = await store.findRealm(trx, name);
    if (!realm) throw new ResourceNotFoundError(REALM_NOT_FOUND);
    if ((await tokenStore.countOfRealmUsers(trx, name)) > 0) {
      throw new UserError(
        "Realm can not be deleted, because a user of this realm is still assigned to a token.",
      );
    }
    const keys = await attributeStore.attributeKeysInRealm(trx, name);
    if (keys.length > 0 && !options.deleteCustomAttributes) {
      throw new AppError(
        `Realm '${name}' contains custom user attributes (${
          keys.join(", ")
        }). Deleting the realm will also delete these custom user attributes.`,
        908,
      );
    }
    await attributeStore.deleteAttributesInRealm(trx, name);
    await store.deleteRealm(trx, realm.id);
    if ((await store.defaultRealmName(trx)) === undefined) {
      const rest = await store.listRealms(trx);
      if (rest.length === 1) await store.setDefaultRealm(trx, rest[0].id);
    }
    return realm.id;
  });
}

/** `GET /defaultrealm`: `{name: realm}` or `{}`. */
export async function readDefaultRealm(deps: Deps): Promise<Record<string, RealmView>> {
  const r = (await store.listRealms(deps.db)).find((x) => x.isDefault);
  return r ? { [r.name]: viewOf(r) } : {};
}

/** `POST /defaultrealm/<realm>`: makes the realm the default; returns its id. */
export async function setDefaultRealm(deps: Deps, realmName: string): Promise<number> {
  const name = normaliseRealmName(realmName);
  return await store.inTransaction(deps.db, async (trx) => {
    const realm = await store.findRealm(trx, name);
    if (!realm) throw new ResourceNotFoundError(REALM_NOT_FOUND);
    await store.setDefaultRealm(trx, realm.id);
    return realm.id;
  });
}

/** `DELETE /defaultrealm`: clears the default; returns the previous default's id or 0. */
export async function clearDefaultRealm(deps: Deps): Promise<number> {
  return await store.inTransaction(deps.db, async (trx) => {
    const name = await store.defaultRealmName(trx);
    if (name === undefined) return 0;
    const realm = await store.findRealm(trx, name);
    await store.setDefaultRealm(trx, undefined);
    return realm?.id ?? 0;
  });
}

/** Name of the default realm, if any. */
export async function getDefaultRealmName(deps: Deps): Promise<string | undefined> {
  return await store.defaultRealmName(deps.db);
}

/** Whether a realm exists (case-insensitive). */
export async function realmExistsByName(deps: Deps, realm: string): Promise<boolean> {
  const name = normaliseRealmName(realm);
  if (name === "") return false;
  return (await store.findRealm(deps.db, name)) !== undefined;
}

/** Names of every realm containing resolver `resolver`. */
export async function realmsOfResolver(deps: Deps, resolver: string): Promise<string[]> {
  const rec = await resolverStore.findResolver(deps.db, resolver);
  return rec ? await resolverStore.realmsOfResolver(deps.db, rec.id) : [];
}

/** Every realm name. */
export async function realmNames(deps: Deps): Promise<string[]> {
  return (await store.listRealms(deps.db)).map((r) => r.name);
}

/** Resolvers of a realm in lookup order (spec 03 §4), for nodes other than pinned ones. */
export async function orderedResolversOfRealm(
  deps: Deps,
  realm: string,
): Promise<readonly RealmResolver[]> {
  const entries = await store.currentResolversOfRealm(deps.db, normaliseRealmName(realm));
  const known = orderedLists.get(entries);
  if (known !== undefined && known.node === deps.nodeName) return known.list;
  const list = Object.freeze(inLookupOrder(entries, deps.nodeName));
  orderedLists.set(entries, { node: deps.nodeName, list });
  return list;
}

type RealmResolver = { record: resolverStore.ResolverRecord; priority: number | null };
// a pure memo: the lookup order of one frozen list of the realm store (by identity) for one
// node; read by every /validate/check, shared between requests, never mutated
const orderedLists = new WeakMap<
  readonly store.RealmResolverEntry[],
  { node: string; list: readonly RealmResolver[] }
>();

function inLookupOrder(
  rows: readonly store.RealmResolverEntry[],
  nodeName: string,
): RealmResolver[] {
  const mine = rows.filter((r) => r.node === "" || r.node === nodeName);
  // a node-pinned entry for this node replaces the general entry of the same resolver
  const byResolver = new Map<string, (typeof mine)[number]>();
  for (const r of mine) {
    const prev = byResolver.get(r.record.name);
    if (!prev || (prev.node === "" && r.node !== "")) byResolver.set(r.record.name, r);
  }
  return [...byResolver.values()].sort((a, b) => {
    const pa = a.priority ?? 1000;
    const pb = b.priority ?? 1000;
    return pa !== pb
      ? pa - pb
      : a.record.name < b.record.name
      ? -1
      : a.record.name > b.record.name
      ? 1
      : 0;
  }).map((r) => ({ record: r.record, priority: r.priority }));
}
