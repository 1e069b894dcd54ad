/**
 * Users: resolution of `login@realm` across a realm's resolvers (spec 03 §4),
 * user attributes, password checks, `/user/` listing and editing, and custom
 * user attributes (§6).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, PolicyError, ResolverError, UserError } from "../../errors.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import {
  getDefaultRealmName,
  normaliseRealmName,
  orderedResolversOfRealm,
  realmExistsByName,
  realmNames,
  realmsOfResolver,
} from "../realm/mod.ts";
import {
  getResolver,
  instanceOf,
  USER_FIELDS,
  type UserListEntry,
  type UserResolver,
} from "../resolver/mod.ts";
import * as attrStore from "./attribute_store.ts";
import { customAttributeRights, mayDelete, maySet } from "./attribute_rights.ts";
import type { AttributeRights } from "./attribute_rights.ts";
import type { UserRef } from "./model.ts";
import {
  cachedLogin,
  cachedUid,
  forgetUser,
  rememberUser,
  userCacheSeconds,
} from "../user_cache/mod.ts";

export type { AttributeRights, AttributeRightsContext } from "./attribute_rights.ts";

export type { UserRef } from "./model.ts";

/** Who is calling a user endpoint (from the JWT). */
export interface Caller {
  role: "admin" | "user";
  username: string;
  realm: string;
  client?: string;
}

/**
 * "login@realm" (split at the LAST @ only if the suffix is an existing realm and
 * system config splitAtSign is true) or "realm\login"; an explicit non-empty
 * `realm` argument wins; no realm → default realm (lower-cased); "" if none.
 */
export async function splitUser(
  deps: Deps,
  user: string,
  realm?: string,
): Promise<{ login: string; realm: string }> {
  let login = user;
  let found = "";
  const bs = user.indexOf("\\");
  if (bs > 0) {
    found = user.slice(0, bs);
    login = user.slice(bs + 1);
  } else {
    const at = user.lastIndexOf("@");
    if (at > 0 && at < user.length - 1) {
      const suffix = user.slice(at + 1);
      if (
        (await loadSystemConfig(deps)).bool("splitAtSign") && await realmExistsByName(deps, suffix)
      ) {
        login = user.slice(0, at);
        found = suffix;
      }
    }
  }
  if (realm !== undefined && realm.trim() !== "") found = realm;
  if (found === "") found = (await getDefaultRealmName(deps)) ?? "";
  return { login, realm: normaliseRealmName(found) };
}

/**
 * Resolves a login in a realm by resolver priority (spec 03 §4); explicit
 * resolver skips the search. With the user cache on (`UserCacheExpiration`),
 * a resolver's cached row answers without asking its store, and a store's
 * answer is cached (a higher-priority resolver is always asked first, as in
 * privacyIDEA).
 */
export async function resolveUser(
  deps: Deps,
  login: string,
  realm: string,
  resolver?: string,
): Promise<UserRef | undefined> {
  if (login === "" || realm === "") return undefined;
  const realmName = normaliseRealmName(realm);
  const members = await orderedResolversOfRealm(deps, realmName);
  const isCaching = (await userCacheSeconds(deps)) > 0;
  for (const m of members) {
    if (resolver && m.record.name !== resolver) continue;
    const name = m.record.name;
    if (isCaching) {
      const hit = await cachedLogin(deps, { login, resolver: name });
      if (hit) return { login: hit.username, realm: realmName, resolver: name, uid: hit.uid };
    }
    const uid = await instanceOf(deps, m.record).getUserId(login);
    if (uid !== undefined) {
      if (isCaching) {
        await rememberUser(deps, { username: login, usedLogin: login, resolver: name, uid });
      }
      return { login, realm: realmName, resolver: name, uid };
    }
  }
  return undefined;
}

/**
 * The user `ref` names as the user store has it now: found again by uid in
 * its resolver, which must still be a resolver of its realm, with the login
 * the store gives that uid today; undefined when the user is gone. For an
 * owner stored with a token: one lookup, served by the resolver's cache.
 */
export async function currentUser(deps: Deps, ref: UserRef): Promise<UserRef | undefined> {
  if (ref.realm === "") return undefined;
  const realm = normaliseRealmName(ref.realm);
  // an owner stored without uid (older imports) is looked up by login
  if (ref.uid === "") return await resolveUser(deps, ref.login, realm, ref.resolver || undefined);
  const members = await orderedResolversOfRealm(deps, realm);
  const member = members.find((m) => m.record.name === ref.resolver);
  if (!member) return undefined;
  // the user cache (when on) knows the login of a uid without asking the store
  const hit = await cachedUid(deps, { uid: ref.uid, resolver: ref.resolver });
  if (hit) return { login: hit.username, realm, resolver: ref.resolver, uid: ref.uid };
  const info = await instanceOf(deps, member.record).getUserInfo(ref.uid);
  if (!info) return undefined;
  const login = info.username || ref.login;
  await rememberUser(deps, {
    username: login,
    usedLogin: login,
    resolver: ref.resolver,
    uid: ref.uid,
  });
  return { login, realm, resolver: ref.resolver, uid: ref.uid };
}

async function instanceFor(deps: Deps, resolver: string): Promise<UserResolver> {
  const inst = await getResolver(deps, resolver);
  if (!inst) throw new ResolverError(`Cannot use resolver "${resolver}": no such resolver`);
  return inst;
}

/** User attributes: username, userid, givenname, surname, email, phone, mobile, description + custom attributes. */
export async function getUserInfo(deps: Deps, ref: UserRef): Promise<Record<string, string>> {
  const inst = await getResolver(deps, ref.resolver);
  const info = (inst ? await inst.getUserInfo(ref.uid) : undefined) ??
    Object.fromEntries(USER_FIELDS.map((f) => [f, ""]));
  const custom = await attrStore.attributesOf(deps.db, ref);
  // the user store's own fields win over custom attributes of the same name
  return { ...custom, ...info };
}

/**
 * The user's attributes as privacyIDEA's user info has them, for policy
 * conditions (`userinfo`) and answers (`detail.user`, `GET /user/`): like
 * {@link getUserInfo}, but multi-valued fields and LDAP groups stay lists.
 */
export async function getUserAttributes(
  deps: Deps,
  ref: UserRef,
): Promise<Record<string, string | string[]>> {
  const inst = await getResolver(deps, ref.resolver);
  const info = inst === undefined
    ? undefined
    : inst.getUserAttributes
    ? await inst.getUserAttributes(ref.uid)
    : await inst.getUserInfo(ref.uid);
  const custom = await attrStore.attributesOf(deps.db, ref);
  // the user store's own fields win over custom attributes of the same name
  return { ...custom, ...(info ?? Object.fromEntries(USER_FIELDS.map((f) => [f, ""]))) };
}

/** Checks the user's password against the user store. */
export async function checkUserPassword(
  deps: Deps,
  ref: UserRef,
  password: string,
): Promise<boolean> {
  const inst = await getResolver(deps, ref.resolver);
  return inst ? await inst.checkPass(ref.uid, password, ref.login) : false;
}

/** Name of the default realm, if any. */
export async function getDefaultRealm(deps: Deps): Promise<string | undefined> {
  return await getDefaultRealmName(deps);
}

/** Whether a realm of that name exists (case-insensitive). */
export async function realmExists(deps: Deps, realm: string): Promise<boolean> {
  return await realmExistsByName(deps, realm);
}

/** Custom attributes of a user (key → value). */
export async function getCustomAttributes(
  deps: Deps,
  ref: UserRef,
): Promise<Record<string, string>> {
  return await attrStore.attributesOf(deps.db, ref);
}

/**
 * The custom attribute `key` of a user, set to `make()` first when the user
 * has none (the passkey user handle `fido2_user_id`); no policy applies:
 * the server, not a caller, sets it.
 */
export async function customAttributeOrCreate(
  deps: Deps,
  ref: UserRef,
  key: string,
  make: () => string,
): Promise<string> {
  const existing = (await attrStore.attributesOf(deps.db, ref))[key];
  if (existing !== undefined && existing !== "") return existing;
  return await attrStore.insertAttributeIfAbsent(deps.db, ref, { key, value: make(), type: "" });
}

/** Prefixes of the custom attributes the server keeps for itself (privacyIDEA's internal ones). */
const INTERNAL_ATTRIBUTE_PREFIXES = ["last_used_token"];

/**
 * Sets a custom attribute the server keeps for itself (type `pi_internal`,
 * e.g. `last_used_token_<agent>`); no policy applies, and the row is written
 * only when the value changes.
 */
export async function setInternalAttribute(
  deps: Deps,
  ref: UserRef,
  key: string,
  value: string,
): Promise<void> {
  if ((await attrStore.attributesOf(deps.db, ref))[key] === value) return;
  await attrStore.upsertAttribute(deps.db, ref, { key, value, type: "pi_internal" });
}

/** Resolves a user or throws 904 as token/user endpoints do. */
export async function requireUser(
  deps: Deps,
  user: string,
  options: { realm?: string; resolver?: string } = {},
): Promise<UserRef> {
  const { login, realm } = await splitUser(deps, user, options.realm);
  const ref = await resolveUser(deps, login, realm, options.resolver || undefined);
  if (!ref) throw new UserError(`User <${login}@${realm}> does not exist.`);
  return ref;
}

/** Options of {@link listUsers}. */
export interface ListUsersOptions {
  /** Realms to search (empty and no resolver: all realms). */
  realms?: string[];
  /** A resolver to search in every realm containing it (additive to `realms`). */
  resolver?: string;
  /** attribute → pattern (`*` wildcard); `username` included. */
  search: Record<string, string>;
  /** Only these keys in each item. */
  attributes?: string[];
  includeCustomAttributes?: boolean;
  /** Only this user (user-role callers see only themselves); unknown → []. */
  only?: UserSelector;
  /** Realms the caller may see (realm-restricted admin policies); undefined: all. */
  allowedRealms?: string[];
}

/** `GET /user/`: users of the selected realms/resolvers, deduplicated per (username, realm). */
export async function listUsers(
  deps: Deps,
  options: ListUsersOptions,
): Promise<Record<string, unknown>[]> {
  const includeCustom = options.includeCustomAttributes ?? true;
  const items: Record<string, unknown>[] = [];
  const finish = async (info: UserListEntry, realm: string, resolver: UserResolver) => {
    let item: Record<string, unknown> = {
      ...info,
      realm,
      resolver: resolver.name,
      editable: resolver.editable,
    };
    if (includeCustom) {
      const custom = await attrStore.attributesOf(deps.db, {
        uid: String(info.userid),
        resolver: resolver.name,
        realm,
      });
      item = { ...custom, ...item };
    }
    if (options.attributes && options.attributes.length > 0) {
      item = Object.fromEntries(
        options.attributes.filter((a) => a in item).map((a) => [a, item[a]]),
      );
    }
    items.push(item);
  };

  if (options.only) {
    const { login, realm } = await splitUser(deps, options.only.user, options.only.realm);
    const ref = await resolveUser(deps, login, realm, options.only.resolver || undefined);
    if (!ref) return items;
    const inst = await getResolver(deps, ref.resolver);
    const info = inst === undefined
      ? undefined
      : inst.getUserAttributes
      ? await inst.getUserAttributes(ref.uid)
      : await inst.getUserInfo(ref.uid);
    if (inst && info) await finish(info, ref.realm, inst);
    return items;
  }

  const pairs: { realm: string; resolver?: string }[] = [];
  const realms = (options.realms ?? []).map(normaliseRealmName).filter((r) => r !== "");
  for (const r of realms) pairs.push({ realm: r });
  if (options.resolver) {
    for (const r of await realmsOfResolver(deps, options.resolver)) {
      pairs.push({ realm: r, resolver: options.resolver });
    }
  }
  if (realms.length === 0 && !options.resolver) {
    for (const r of await realmNames(deps)) pairs.push({ realm: r });
  }
  const allowed = options.allowedRealms && new Set(options.allowedRealms);
  const done = new Set<string>();
  for (const pair of pairs) {
    if (allowed && !allowed.has(pair.realm)) continue;
    const members = await orderedResolversOfRealm(deps, pair.realm);
    const seen = new Set<string>();
    for (const m of members) {
      if (pair.resolver && m.record.name !== pair.resolver) continue;
      const key = `${pair.realm}\0${m.record.name}`;
      if (done.has(key)) continue;
      done.add(key);
      let inst: UserResolver;
      let found: UserListEntry[];
      try {
        inst = instanceOf(deps, m.record);
        found = await inst.getUserList(options.search);
      } catch (err) {
        // one broken user store must not hide the users of the others
        deps.log.warn("Cannot list users of resolver", {
          resolver: m.record.name,
          error: (err as Error).message,
        });
        continue;
      }
      for (const info of found) {
        // the same login in a lower-priority resolver is masked (spec 03 §5)
        const username = String(info.username);
        if (seen.has(username)) continue;
        seen.add(username);
        await finish(info, pair.realm, inst);
      }
    }
  }
  return items;
}

const LOGIN_REGEXP = /^[^\0\s]{1,255}$/;
const MAX_ATTRIBUTE_LENGTH = 2000;

function checkAttributes(attributes: Record<string, string> | undefined): void {
  for (const [key, value] of Object.entries(attributes ?? {})) {
    if (value.length > MAX_ATTRIBUTE_LENGTH) {
      throw new ParameterError(
        `Cannot use attribute "${
          key.slice(0, 64)
        }": longer than ${MAX_ATTRIBUTE_LENGTH} characters`,
      );
    }
  }
}

function checkLogin(login: string): void {
  if (!LOGIN_REGEXP.test(login)) {
    throw new ParameterError(
      `Cannot use user name "${login.slice(0, 64)}": invalid characters or length`,
    );
  }
}

/** `POST /user/`: creates a user in an editable resolver; returns the new uid. */
export async function createUser(
  deps: Deps,
  input: {
    login: string;
    resolver: string;
    password?: string;
    attributes?: Record<string, string>;
  },
): Promise<string> {
  checkLogin(input.login);
  checkAttributes(input.attributes);
  const inst = await instanceFor(deps, input.resolver);
  if (!inst.editable) {
    throw new ResolverError(
      `Cannot create user "${input.login}": resolver "${input.resolver}" is not editable`,
    );
  }
  return await inst.addUser({ ...input.attributes, username: input.login }, input.password);
}

/** `PUT /user/`: updates a user selected by login or `userid`; returns whether it changed. */
export async function updateUser(
  deps: Deps,
  input: {
    login: string;
    resolver: string;
    userid?: string;
    password?: string;
    attributes?: Record<string, string>;
  },
): Promise<boolean> {
  checkAttributes(input.attributes);
  const inst = await instanceFor(deps, input.resolver);
  const uid = input.userid ?? await inst.getUserId(input.login);
  const before = uid === undefined ? undefined : await inst.getUserInfo(uid);
  if (uid === undefined || before === undefined) {
    throw new UserError(`User ${input.login} does not exist in resolver ${input.resolver}.`);
  }
  if (!inst.editable) {
    throw new ResolverError(
      `Cannot update user "${input.login}": resolver "${input.resolver}" is not editable`,
    );
  }
  const attributes = { ...input.attributes };
  if (input.userid !== undefined && input.login !== "") {
    checkLogin(input.login);
    attributes.username = input.login; // select by uid allows a rename
  }
  try {
    return await inst.updateUser(uid, attributes, input.password);
  } finally {
    // even a failed change may have written part: no node keeps the user as it was
    await forgetUser(deps, input.resolver, before.username || input.login);
  }
}

/** `DELETE /user/<resolver>/<login>`: deletes a user and its custom attributes. */
export async function deleteUser(deps: Deps, resolver: string, login: string): Promise<boolean> {
  const inst = await instanceFor(deps, resolver);
  const uid = await inst.getUserId(login);
  if (uid === undefined) {
    throw new UserError(`User ${login} does not exist in resolver ${resolver}.`);
  }
  if (!inst.editable) {
    throw new ResolverError(
      `Cannot delete user "${login}": resolver "${resolver}" is not editable`,
    );
  }
  let deleted: boolean;
  try {
    deleted = await inst.deleteUser(uid);
  } finally {
    await forgetUser(deps, resolver, login);
  }
  if (deleted) await attrStore.deleteAttributesOfUid(deps.db, resolver, uid);
  return deleted;
}

const ATTR_KEY_REGEXP = /^[^\0]{1,255}$/;

async function rightsFor(deps: Deps, caller: Caller, ref: UserRef): Promise<AttributeRights> {
  return await customAttributeRights(deps, {
    role: caller.role,
    username: caller.username,
    realm: caller.realm,
    user: ref,
    client: caller.client,
    userinfo: () => getUserAttributes(deps, ref),
  });
}

/** How a request names a user: `user` (may be `login@realm`), optional realm and resolver. */
export interface UserSelector {
  user: string;
  realm?: string;
  resolver?: string;
}

/** `POST /user/attribute`: sets a custom attribute if a policy allows it; returns the row id. */
export async function setCustomAttribute(
  deps: Deps,
  who: UserSelector,
  input: { key: string; value: string; type?: string; caller: Caller },
): Promise<number> {
  if (!ATTR_KEY_REGEXP.test(input.key) || input.value.length > 2000) {
    throw new ParameterError("Cannot set custom attribute: invalid key or value too long");
  }
  const internal = INTERNAL_ATTRIBUTE_PREFIXES.find((prefix) => input.key.startsWith(prefix));
  if (internal !== undefined) {
    throw new ParameterError(
      `Invalid attribute name! The name shall not start with ${internal}. ` +
        "This is an internally used prefix.",
    );
  }
  const ref = await requireUser(deps, who.user, who);
  const rights = await rightsFor(deps, input.caller, ref);
  if (!maySet(rights, input.key, input.value)) {
    throw new PolicyError(`You are not allowed to set the custom user attribute ${input.key}!`);
  }
  return await attrStore.upsertAttribute(deps.db, ref, {
    key: input.key,
    value: input.value,
    type: input.type ?? "",
  });
}

/** `GET /user/attribute`: all custom attributes, or one value (null if unset) when `key` is given. */
export async function readCustomAttributes(
  deps: Deps,
  who: UserSelector,
  key?: string,
): Promise<Record<string, string> | string | null> {
  const ref = await requireUser(deps, who.user, who);
  const attrs = await attrStore.attributesOf(deps.db, ref);
  if (key === undefined || key === "") return attrs;
  return attrs[key] ?? null;
}

/** `DELETE /user/attribute/<key>/<user>/<realm>`: deletes one attribute; returns the count. */
export async function deleteCustomAttribute(
  deps: Deps,
  who: UserSelector,
  input: { key: string; caller: Caller },
): Promise<number> {
  if (input.caller.role === "user") {
    const target = await splitUser(deps, who.user, who.realm);
    if (
      target.login !== input.caller.username ||
      target.realm !== normaliseRealmName(input.caller.realm)
    ) {
      throw new PolicyError("User is not allowed to delete attributes of other users.");
    }
  }
  const ref = await requireUser(deps, who.user, who);
  const rights = await rightsFor(deps, input.caller, ref);
  if (!mayDelete(rights, input.key)) {
    throw new PolicyError(`You are not allowed to delete the custom user attribute ${input.key}!`);
  }
  return await attrStore.deleteAttribute(deps.db, ref, input.key);
}

/** `GET /user/editable_attributes/`: what the caller may set and delete for the user. */
export async function editableAttributes(
  deps: Deps,
  who: UserSelector,
  caller: Caller,
): Promise<AttributeRights> {
  const ref = await requireUser(deps, who.user, who);
  return await rightsFor(deps, caller, ref);
}
