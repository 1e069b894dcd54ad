/**
 * The policy engine (spec 04): policy administration behind `/policy/*` and
 * the matching API every other feature uses.
 *
 * Public API for other features (keep it small):
 * - {@link loadPolicySet}`(deps)` → {@link PolicySet}: the compiled policies of the
 *   current version, reused while the policy store says they are current (its
 *   cache rule), so a change on any node is seen by every node on its next request.
 *   - `set.match(ctx)` → matching policies by priority (spec 04 §4);
 *   - `set.actionBool(ctx)` → names of the policies granting `ctx.action` (empty = off);
 *   - `set.actionValues(ctx, {unique, freeText})` → `{values, policies}`; `unique`
 *     throws the conflict PolicyError;
 *   - `set.actionValue(ctx)` → the one value of a unique action, or undefined;
 *   - `set.hasActivePolicies(scope)`.
 * - {@link checkRight}`(deps, caller, action, ctx)` (and {@link checkAdminRight} /
 *   {@link checkUserRight}): the admin/user rule "no active policy in the scope →
 *   allowed; otherwise a matching policy must grant the action", else PolicyError 303.
 * - {@link rightsOf}`(deps, caller)`: the `rights` list of `/auth`.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  ConfigAdminError,
  missingParameter,
  ParameterError,
  PolicyError,
  ResourceNotFoundError,
} from "../../errors.ts";
import { parseNetwork } from "../../lib/ip.ts";
import { actionInputToString, type ActionMap, parseActionString, stripNegation } from "./action.ts";
import { type Condition, type ConditionData, normaliseConditions } from "./conditions.ts";
import { type ActionDef, CONDITION_DEFS, policyDefinitions, SCOPES } from "./defs.ts";
import {
  type CompiledPolicy,
  type MatchContext,
  type Policy,
  PolicySet,
  userAgentName,
} from "./match.ts";
import { parsePyLiteral, pyRepr, type PyValue } from "./py_literal.ts";
import { parseTimeRanges } from "./time.ts";
import * as store from "./policy_store.ts";
import { knownNodes, knownRealms, knownResolvers, knownTokenTypes } from "./_known.ts";

export type { ActionMap } from "./action.ts";
export { splitActionValue, unescapeText } from "./action.ts";
export type { Condition, ConditionData } from "./conditions.ts";
export type { ActionDef, Scope } from "./defs.ts";
export { SCOPES } from "./defs.ts";
export type { ActionValues, CompiledPolicy, MatchContext, Policy } from "./match.ts";
export { PolicyMatcher, PolicySet, userAgentName } from "./match.ts";

const NAME_REGEXP = /^[a-zA-Z0-9_.\- ]*$/;
const MAX_NAME = 64;
const LIST_FIELDS = [
  "realm",
  "resolver",
  "user",
  "adminrealm",
  "adminuser",
  "pinode",
  "client",
  "user_agents",
] as const;

const MAX_PRIORITY = 1_000_000;
/** Longest stored text of one policy field. */
const MAX_FIELD = 2000;

function checkLength(field: string, value: string, max = MAX_FIELD): void {
  if (value.length > max) {
    throw new ParameterError(
      `Cannot parse parameter "${field}": longer than ${max} characters`,
    );
  }
}

function pyList(items: readonly string[]): string {
  return `[${items.map((i) => `'${i}'`).join(", ")}]`;
}

/** privacyIDEA's boolean rule: only true, "true"/"True"/"TRUE", 1 and "1" are true. */
export function isTrueValue(v: unknown): boolean {
  return v === true || v === 1 || v === "1" || v === "true" || v === "True" || v === "TRUE";
}

/** Splits a stored list field: `,`-separated and trimmed; `""` is `[]`. */
export function splitList(text: string): string[] {
  return text.trim() === "" ? [] : text.split(",").map((s) => s.trim());
}

function listInput(field: string, v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.join(", ");
  throw new ParameterError(
    `Cannot parse parameter "${field}": expected a comma-separated string or a list of strings`,
  );
}

function toPolicy(r: store.PolicyRow): Policy {
  let conditions: Condition[] = [];
  try {
    const parsed = JSON.parse(r.conditions);
    if (Array.isArray(parsed)) conditions = parsed as Condition[];
  } catch {
    conditions = [];
  }
  return {
    id: r.id,
    name: r.name,
    scope: r.scope,
    action: parseActionString(r.action),
    active: r.active,
    priority: r.priority,
    realm: splitList(r.realm),
    resolver: splitList(r.resolver),
    user: splitList(r.user),
    adminrealm: splitList(r.adminrealm),
    adminuser: splitList(r.adminuser),
    pinode: splitList(r.pinode),
    client: splitList(r.client),
    time: r.time,
    check_all_resolvers: r.checkAllResolvers,
    user_case_insensitive: r.userCaseInsensitive,
    conditions,
    description: r.description,
    user_agents: splitList(r.userAgents),
  };
}

function checkName(name: string): void {
  if (!NAME_REGEXP.test(name)) {
    throw new ParameterError(
      "The name of the policy may only contain the characters a-zA-Z0-9_. -",
    );
  }
  if (name === "") throw missingParameter("name");
  if (name.length > MAX_NAME) {
    throw new ParameterError(`Policy name must not be longer than ${MAX_NAME} characters`);
  }
}

async function defsContext(deps: Deps) {
  return {
    realms: await knownRealms(deps),
    resolvers: await knownResolvers(deps),
    tokenTypes: knownTokenTypes(),
  };
}

/** The catalogue's action names per scope (they do not depend on realms or resolvers). */
function listedDefinitions(): Record<string, Record<string, ActionDef>> {
  return policyDefinitions({ realms: [], resolvers: [], tokenTypes: knownTokenTypes() });
}

/**
 * The actions of a policy that `/policy/defs` does not list for its scope (names without
 * negation): a policy stored before its actions left the list (or by an older version).
 */
function unlistedActions(
  defs: Record<string, Record<string, ActionDef>>,
  scope: string,
  actions: ActionMap,
): string[] {
  const listed = defs[scope] ?? {};
  const out = new Set<string>();
  for (const key of Object.keys(actions)) {
    if (key === "*" || key === "") continue;
    const { name } = stripNegation(key);
    if (!Object.hasOwn(listed, name)) out.add(name);
  }
  return [...out];
}

/**
 * The actions of a policy's action text that `/policy/defs` does not list for `scope` (names
 * without negation); `[]` when every action is listed. Saving such a policy is refused.
 */
export function unlistedPolicyActions(scope: string, action: unknown): string[] {
  return unlistedActions(
    listedDefinitions(),
    scope,
    parseActionString(actionInputToString(action)),
  );
}

/** Checks the action keys against the catalogue of `scope` (`!`/`-` stripped, `*` ignored). */
async function checkActions(deps: Deps, scope: string, actions: ActionMap): Promise<void> {
  const ctx = await defsContext(deps);
  const defs = policyDefinitions(ctx)[scope] ?? {};
  const invalid: string[] = [];
  for (const [key, value] of Object.entries(actions)) {
    if (key === "*" || key === "") continue;
    // privacyIDEA names the actions without their negation
    const { name } = stripNegation(key);
    if (!Object.hasOwn(defs, name)) invalid.push(name);
    else if (name === "realm_dropdown" && typeof value === "string") {
      for (const r of value.split(/\s+/).filter((x) => x !== "")) {
        if (r !== "-" && !ctx.realms.includes(r.toLowerCase())) invalid.push(name);
      }
    }
  }
  if (invalid.length > 0) {
    throw new ParameterError(`Invalid actions ${pyList([...new Set(invalid)])}!`);
  }
}

function undefinedEntries(entries: string[], known: string[], lower = false): string[] {
  const set = new Set(known.map((k) => lower ? k.toLowerCase() : k));
  return entries
    .map((e) => stripNegation(e).name)
    .filter((e) => e !== "" && e !== "*")
    .filter((e) => !set.has(lower ? e.toLowerCase() : e));
}

/**
 * `POST /policy/<name>`: creates or updates a policy (spec 04 §2.1) and
 * returns its id. On update, unsent fields keep their values except `active`,
 * `check_all_resolvers`, `user_case_insensitive` and `description`, which are
 * always reset to the sent value or the default (privacyIDEA quirk).
 */
export async function savePolicy(
  deps: Deps,
  name: string,
  params: Record<string, unknown>,
): Promise<number> {
  const build = await preparePolicy(deps, name, params);
  try {
    return await store.upsert(deps.db, name, build);
  } catch (err) {
    // a parallel create of the same name won the insert: the retry becomes an update
    if (!isUniqueViolation(err)) throw err;
    return await store.upsert(deps.db, name, build);
  }
}

/** Validates a policy's parameters; returns how to build its row (from the existing one). */
async function preparePolicy(
  deps: Deps,
  name: string,
  params: Record<string, unknown>,
): Promise<store.PolicyBuild> {
  checkName(name);
  if (name.toLowerCase() === "check" || name.toLowerCase().startsWith("pi-update-policy-")) {
    throw new ParameterError(`Invalid policy name: ${name}`);
  }
  if (name.includes(" ")) throw new ParameterError("Policy name must not contain white spaces!");
  const scopeRaw = params.scope;
  if (scopeRaw === undefined || scopeRaw === null || scopeRaw === "") {
    throw missingParameter("scope");
  }
  const scope = String(scopeRaw);
  if (!(SCOPES as readonly string[]).includes(scope)) {
    throw new ParameterError(`Invalid scope '${scope}' in policy '${name}'!`);
  }
  const actionText = actionInputToString(params.action);
  checkLength("action", actionText);
  const actions = parseActionString(actionText);
  if (Object.keys(actions).length === 0 && scope !== "user") throw missingParameter("action");

  const sent: Partial<Record<(typeof LIST_FIELDS)[number], string>> = {};
  for (const f of LIST_FIELDS) {
    if (f in params) sent[f] = listInput(f, params[f]);
  }
  for (const [f, v] of Object.entries(sent)) checkLength(f, v);
  if (sent.realm !== undefined) sent.realm = sent.realm.toLowerCase();
  if (sent.adminrealm !== undefined) sent.adminrealm = sent.adminrealm.toLowerCase();

  let priority: number | undefined;
  if ("priority" in params) {
    const p = params.priority;
    if (p === "" || p === null) priority = 1;
    else {
      const n = typeof p === "number"
        ? p
        : typeof p === "string" && /^\s*-?\d+\s*$/.test(p)
        ? Number(p)
        : NaN;
      if (!Number.isInteger(n)) {
        throw new ParameterError(
          `Cannot parse parameter "priority": expected an integer, got "${String(p)}"`,
        );
      }
      if (n < 1) throw new ParameterError("Priority must be at least 1");
      if (n > MAX_PRIORITY) {
        throw new ParameterError(`Priority must be at most ${MAX_PRIORITY}`);
      }
      priority = n;
    }
  }

  if (sent.realm !== undefined) {
    const bad = undefinedEntries(splitList(sent.realm), await knownRealms(deps), true);
    if (bad.length > 0) throw new ParameterError(`Undefined User-realms: ${pyList(bad)}!`);
  }
  if (sent.resolver !== undefined) {
    const bad = undefinedEntries(splitList(sent.resolver), await knownResolvers(deps));
    if (bad.length > 0) throw new ParameterError(`Undefined Resolvers: ${pyList(bad)}!`);
  }
  if (sent.pinode !== undefined) {
    const bad = undefinedEntries(splitList(sent.pinode), knownNodes(deps));
    if (bad.length > 0) throw new ParameterError(`Undefined Privacyidea nodes: ${pyList(bad)}!`);
  }
  if (sent.adminrealm !== undefined) {
    const bad = undefinedEntries(
      splitList(sent.adminrealm),
      deps.config.auth.superuserRealms,
      true,
    );
    if (bad.length > 0) throw new ParameterError(`Undefined Admin realms: ${pyList(bad)}!`);
  }

  let time: string | undefined;
  if ("time" in params) {
    time = params.time === null || params.time === undefined ? "" : String(params.time);
    checkLength("time", time);
    if (parseTimeRanges(time) === undefined) {
      throw new ParameterError(`Invalid time format '${time}'!`);
    }
  }
  if (sent.client !== undefined) {
    for (const entry of splitList(sent.client)) {
      if (entry === "") continue;
      if (!parseNetwork(stripNegation(entry).name)) {
        throw new ConfigAdminError("Invalid client definition!");
      }
    }
  }
  await checkActions(deps, scope, actions);
  const conditions = "conditions" in params
    ? JSON.stringify(normaliseConditions(name, params.conditions))
    : undefined;
  if (conditions !== undefined) checkLength("conditions", conditions, MAX_FIELD * 5);
  const description = params.description === undefined || params.description === null
    ? null
    : String(params.description);
  if (description !== null) checkLength("description", description);

  const build = (existing: store.PolicyRow | undefined): store.PolicyFields => ({
    name,
    scope,
    action: actionText,
    active: "active" in params ? isTrueValue(params.active) : true,
    priority: priority ?? existing?.priority ?? 1,
    realm: sent.realm ?? existing?.realm ?? "",
    resolver: sent.resolver ?? existing?.resolver ?? "",
    user: sent.user ?? existing?.user ?? "",
    adminrealm: sent.adminrealm ?? existing?.adminrealm ?? "",
    adminuser: sent.adminuser ?? existing?.adminuser ?? "",
    pinode: sent.pinode ?? existing?.pinode ?? "",
    client: sent.client ?? existing?.client ?? "",
    time: time ?? existing?.time ?? "",
    checkAllResolvers: isTrueValue(params.check_all_resolvers),
    userCaseInsensitive: isTrueValue(params.user_case_insensitive),
    conditions: conditions ?? existing?.conditions ?? "[]",
    description,
    userAgents: sent.user_agents ?? existing?.userAgents ?? "",
  });
  return build;
}

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Error && /unique|duplicate/i.test(err.message);
}

/** Filter of {@link listPolicies}. */
export interface PolicyFilter {
  name?: string;
  scope?: string;
  realm?: string;
  active?: boolean;
}

function starRegexp(pattern: string): RegExp {
  const body = pattern.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${body}$`, "is");
}

/**
 * A stored policy as `GET /policy/` shows it: with `unsupported_actions` when it names
 * actions `/policy/defs` does not list (they take no effect; see {@link loadPolicySet}).
 */
export type ListedPolicy = Policy & { unsupported_actions?: string[] };

/**
 * `GET /policy/`: policies in storage order. `scope` is exact; `realm` compares
 * the whole stored realm string (`*` makes it a case-insensitive pattern).
 */
export async function listPolicies(
  deps: Deps,
  filter: PolicyFilter = {},
): Promise<ListedPolicy[]> {
  const { rows } = await store.loadAll(deps.db);
  const realmRe = filter.realm?.includes("*") ? starRegexp(filter.realm) : undefined;
  const defs = listedDefinitions();
  return rows.filter((r) => {
    if (filter.name !== undefined && r.name !== filter.name) return false;
    if (filter.scope !== undefined && r.scope !== filter.scope) return false;
    if (filter.active !== undefined && r.active !== filter.active) return false;
    if (filter.realm !== undefined) {
      if (realmRe ? !realmRe.test(r.realm) : r.realm !== filter.realm) return false;
    }
    return true;
  }).map((r) => {
    const p: ListedPolicy = toPolicy(r);
    const unlisted = unlistedActions(defs, p.scope, p.action);
    if (unlisted.length > 0) p.unsupported_actions = unlisted;
    return p;
  });
}

/**
 * `POST /policy/enable|disable/<name>`: returns the id. A policy naming actions Tessera
 * does not list cannot be enabled (`Invalid actions [..]!`); it can be disabled.
 */
export async function setPolicyActive(deps: Deps, name: string, active: boolean): Promise<number> {
  if (active) {
    const row = await store.findByName(deps.db, name);
    const unlisted = row
      ? unlistedActions(listedDefinitions(), row.scope, parseActionString(row.action))
      : [];
    if (unlisted.length > 0) throw new ParameterError(`Invalid actions ${pyList(unlisted)}!`);
  }
  const id = await store.setActive(deps.db, name, active);
  if (id === undefined) {
    throw new ResourceNotFoundError(`The policy with name '${name}' does not exist`);
  }
  return id;
}

/** `DELETE /policy/<name>`: returns the id of the deleted policy. */
export async function deletePolicy(deps: Deps, name: string): Promise<number> {
  const id = await store.remove(deps.db, name);
  if (id === undefined) throw new ResourceNotFoundError("The requested Policy could not be found.");
  return id;
}

/** `PATCH /policy/<old>`: renames; only the name pattern is checked (spec 04 §2.5). */
export async function renamePolicy(deps: Deps, oldName: string, newName: string): Promise<number> {
  if (newName === "") throw missingParameter("name");
  checkName(newName);
  let res: Awaited<ReturnType<typeof store.rename>>;
  try {
    res = await store.rename(deps.db, oldName, newName);
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    res = "taken";
  }
  if (res === "missing") throw new ParameterError(`Policy does not exist: ${oldName}`);
  if (res === "taken") throw new ParameterError(`Policy already exists: ${newName}`);
  return res;
}

const EXPORT_FIELDS = [
  "name",
  "scope",
  "action",
  "active",
  "priority",
  "realm",
  "resolver",
  "user",
  "adminrealm",
  "adminuser",
  "pinode",
  "client",
  "time",
  "check_all_resolvers",
  "user_case_insensitive",
  "conditions",
  "description",
  "user_agents",
] as const;

/**
 * `GET /policy/export/<fn>`: every policy as INI, each value as Python's
 * `str()` writes it (privacyIDEA's format): strings plain (`scope =
 * authentication`), lists, dicts, booleans and None as Python literals.
 */
export async function exportPolicies(deps: Deps): Promise<string> {
  const policies = await listPolicies(deps);
  let out = "";
  for (const p of policies) {
    out += `[${p.name}]\n`;
    for (const f of EXPORT_FIELDS) {
      const v = p[f] as PyValue;
      out += `${f} = ${typeof v === "string" ? v : pyRepr(v)}\n`;
    }
    out += "\n";
  }
  return out;
}

const IMPORT_LITERAL_FIELDS = [
  "action",
  "realm",
  "user",
  "resolver",
  "client",
  "pinode",
  "user_agents",
];

function literalOrRaw(raw: string): PyValue {
  try {
    return parsePyLiteral(raw);
  } catch {
    return raw;
  }
}

function importValue(field: string, raw: string): unknown {
  const v = literalOrRaw(raw);
  if (field === "action") {
    if (v === null) return "";
    return v;
  }
  if (v === null) return "";
  if (Array.isArray(v)) return v.map((x) => typeof x === "string" ? x : pyRepr(x));
  return typeof v === "string" ? v : pyRepr(v);
}

/**
 * `POST /policy/import/<fn>`: creates or updates one policy per INI section.
 * Every section is checked first: the first error (e.g. an action Tessera does
 * not list: `Invalid actions [..]!`) refuses the whole file and nothing is
 * saved (privacyIDEA keeps the sections before the error); then all are written
 * in one transaction. Returns the count.
 */
export async function importPolicies(deps: Deps, content: Uint8Array | string): Promise<number> {
  let text: string;
  if (typeof content === "string") text = content;
  else {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(content);
    } catch {
      text = "\0";
    }
  }
  if (text.includes("\0")) {
    throw new ParameterError("Unable to convert file contents. Binary data is not supported");
  }
  if (text.trim() === "") throw new ParameterError("Error loading policy. File empty!");
  const sections: { name: string; values: Record<string, string> }[] = [];
  let current: { name: string; values: Record<string, string> } | undefined;
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (t === "" || t.startsWith("#") || t.startsWith(";")) continue;
    const sec = t.match(/^\[(.*)\]$/);
    if (sec) {
      current = { name: sec[1].trim(), values: {} };
      sections.push(current);
      continue;
    }
    const eq = t.indexOf("=");
    if (!current || eq < 0) throw new ParameterError("Error loading policy. Invalid file format");
    current.values[t.slice(0, eq).trim()] = t.slice(eq + 1).trim();
  }
  const prepared: { name: string; build: store.PolicyBuild }[] = [];
  for (const { name, values } of sections) {
    const params: Record<string, unknown> = {};
    for (const f of IMPORT_LITERAL_FIELDS) {
      if (f in values) params[f] = importValue(f, values[f]);
    }
    for (const f of ["scope", "time", "priority"]) {
      if (!(f in values)) continue;
      const v = literalOrRaw(values[f]);
      params[f] = v === null ? "" : typeof v === "string" ? v : pyRepr(v);
    }
    prepared.push({ name, build: await preparePolicy(deps, name, params) });
  }
  await store.upsertAll(deps.db, prepared);
  return prepared.length;
}

/** Request of {@link checkPolicy}. */
export interface PolicyCheckRequest {
  user: string;
  realm: string;
  scope: string;
  action: string;
  client: string;
  resolver?: string;
  /**
   * The request's condition data. privacyIDEA matches here with the user's name only (no user
   * object), so a `userinfo` condition finds no user.
   */
  conditions?: ConditionData;
}

/** `GET /policy/check`: a plain match over active policies (no fail-open rule). */
export async function checkPolicy(
  deps: Deps,
  req: PolicyCheckRequest,
): Promise<{ allowed: true; policy: Policy[] } | { allowed: false; info: string }> {
  const set = await loadPolicySet(deps);
  const matched = await set.match({
    scope: req.scope,
    action: req.action,
    user: req.user,
    realm: req.realm,
    resolver: req.resolver ?? null,
    client: req.client,
    conditions: req.conditions ?? {},
  });
  if (matched.length === 0) return { allowed: false, info: "No policies found" };
  return { allowed: true, policy: matched.map((p) => p.policy) };
}

/**
 * `GET /policy/defs[/<scope>]`: all definitions, or one scope's (`{}` for a scope without
 * actions Tessera does, null for an unknown scope).
 */
export async function policyDefs(
  deps: Deps,
  scope?: string,
): Promise<Record<string, Record<string, ActionDef>> | Record<string, ActionDef> | null> {
  const defs = policyDefinitions(await defsContext(deps));
  if (scope === undefined) return defs;
  if (Object.hasOwn(defs, scope)) return defs[scope];
  return (SCOPES as readonly string[]).includes(scope) ? {} : null;
}

/** `GET /policy/defs/conditions`. */
export function conditionDefs(): typeof CONDITION_DEFS {
  return CONDITION_DEFS;
}

/** `GET /policy/defs/pinodes`. */
export function policyNodes(deps: Deps): string[] {
  return knownNodes(deps);
}

// a pure memo: the policy set compiled from one frozen load of the store (by identity), for
// one deps (its node name, clock and log); the store hands out a new object after a change
const compiledSets = new WeakMap<store.LoadedPolicies, { deps: Deps; set: PolicySet }>();

/**
 * The compiled policy set of the current version (the store decides when its
 * policies are current: a change on any node is seen by the next request).
 */
export async function loadPolicySet(deps: Deps): Promise<PolicySet> {
  const loaded = await store.currentPolicies(deps.db);
  const compiled = compiledSets.get(loaded);
  if (compiled !== undefined && compiled.deps === deps) return compiled.set;
  const policies = loaded.rows.map(toPolicy);
  warnUnlisted(deps, policies);
  const set = new PolicySet(policies, {
    version: loaded.version,
    nodeName: deps.nodeName,
    now: () => deps.clock.now(),
    warn: (msg, fields) => deps.log.warn(msg, fields),
  });
  compiledSets.set(loaded, { deps, set });
  return set;
}

/**
 * Logs each active policy that names actions `/policy/defs` does not list: they take no
 * effect (a database from before they left the list). Runs when a node loads a new policy
 * version, so at its first policy decision and after every change.
 */
function warnUnlisted(deps: Deps, policies: readonly Policy[]): void {
  const defs = listedDefinitions();
  for (const p of policies) {
    if (!p.active) continue;
    const unlisted = unlistedActions(defs, p.scope, p.action);
    if (unlisted.length === 0) continue;
    deps.log.warn(
      "A policy names actions Tessera does not have: they take no effect; edit the policy",
      { policy: p.name, scope: p.scope, actions: unlisted.join(" ") },
    );
  }
}

/** The caller of an admin or user request (structurally the JWT identity). */
export interface Caller {
  role: "admin" | "user";
  username: string;
  realm: string;
  resolver?: string;
}

/**
 * Request context of a rights check. Admin: the object acted on — its realm
 * (a token: its realms plus its owner's realm, as a list; `[]`: no realm, so
 * only policies without realms match; null: no object) and user; user role:
 * ignored (the caller).
 */
export interface RightContext {
  user?: string | null;
  /** A realm, or the token realms plus the user realm as a list. */
  realm?: string | readonly string[] | null;
  resolver?: string | null;
  client?: string | null;
  /** Raw User-Agent header. */
  userAgent?: string | null;
  conditions?: ConditionData | false;
  /** Replaces the default denial message. */
  message?: string;
  /**
   * The policy set the request decides with (the rights step's, so one request reads one
   * set); loaded when absent.
   */
  policies?: PolicySet;
}

function rightMatchContext(caller: Caller, action: string | null, ctx: RightContext): MatchContext {
  const base = {
    action,
    client: ctx.client ?? null,
    userAgent: ctx.userAgent == null ? null : userAgentName(ctx.userAgent),
    conditions: ctx.conditions ?? {},
  };
  if (caller.role === "admin") {
    return {
      ...base,
      scope: "admin",
      adminuser: caller.username,
      adminrealm: caller.realm,
      user: ctx.user ?? null,
      realm: ctx.realm ?? null,
      resolver: ctx.resolver ?? null,
    };
  }
  return {
    ...base,
    scope: "user",
    user: caller.username,
    realm: caller.realm,
    resolver: caller.resolver ?? null,
  };
}

/**
 * Admin/user rights (spec 04 §4.10): allowed when the caller's scope has no
 * active policy, or a matching policy grants `action`. Returns the names of
 * the granting policies; throws PolicyError 303 when denied.
 */
export async function checkRight(
  deps: Deps,
  caller: Caller,
  action: string,
  ctx: RightContext = {},
): Promise<string[]> {
  const set = ctx.policies ?? await loadPolicySet(deps);
  const scope = caller.role === "admin" ? "admin" : "user";
  if (!set.hasActivePolicies(scope)) return [];
  const matched = await set.match(rightMatchContext(caller, action, ctx));
  if (matched.length > 0) return matched.map((p) => p.name);
  const who = caller.role === "admin" ? "Admin" : "User";
  throw new PolicyError(
    ctx.message ?? `${who} actions are defined, but the action ${action} is not allowed!`,
  );
}

/**
 * Realms an admin's `action` is limited to (spec 04 §4.9: the union of the
 * realms of the matching policies), or undefined when not limited (no admin
 * policies, a user caller, or a matching policy without realms or with `*`).
 */
export async function allowedRealms(
  deps: Deps,
  caller: Caller,
  action: string,
  ctx: RightContext = {},
): Promise<string[] | undefined> {
  return await realmsOfMatching(deps, caller, action, { ...ctx, user: null, resolver: null });
}

/**
 * Realms an admin's policies reach for any action (the union of the realms
 * of the matching admin policies), or undefined when not limited (no admin
 * policies, or a matching policy without realms or with `*`).
 */
export async function adminRealmScope(
  deps: Deps,
  caller: Caller,
  ctx: RightContext = {},
): Promise<string[] | undefined> {
  // privacyIDEA's realm list (GET /realm/) does not check conditions
  return await realmsOfMatching(deps, caller, null, { ...ctx, conditions: false });
}

/** The realm union of the admin policies matching `action` (null: any) and `ctx` without a realm. */
async function realmsOfMatching(
  deps: Deps,
  caller: Caller,
  action: string | null,
  ctx: RightContext,
): Promise<string[] | undefined> {
  if (caller.role !== "admin") return undefined;
  const set = ctx.policies ?? await loadPolicySet(deps);
  if (!set.hasActivePolicies("admin")) return undefined;
  return realmUnion(await set.match(rightMatchContext(caller, action, { ...ctx, realm: null })));
}

function realmUnion(matched: readonly CompiledPolicy[]): string[] | undefined {
  const realms = new Set<string>();
  for (const p of matched) {
    const entries = p.policy.realm.filter((e) => e !== "" && !stripNegation(e).isNegated);
    if (entries.length === 0 || entries.includes("*")) return undefined;
    for (const e of entries) realms.add(e.toLowerCase());
  }
  return [...realms];
}

/**
 * The value of a unique action in the caller's scope (admin or user), e.g.
 * `otp_pin_set_random`; undefined when no matching policy sets it.
 */
export async function rightValue(
  deps: Deps,
  caller: Caller,
  action: string,
  ctx: RightContext = {},
): Promise<string | undefined> {
  const set = ctx.policies ?? await loadPolicySet(deps);
  if (!set.hasActivePolicies(caller.role === "admin" ? "admin" : "user")) return undefined;
  return await set.actionValue(
    rightMatchContext(caller, action, ctx) as MatchContext & {
      action: string;
    },
  );
}

/**
 * All values of a multi-valued action in the caller's scope (the union over
 * matching policies, e.g. `hide_tokeninfo`); `[]` when none.
 */
export async function rightValues(
  deps: Deps,
  caller: Caller,
  action: string,
  ctx: RightContext = {},
): Promise<string[]> {
  const set = ctx.policies ?? await loadPolicySet(deps);
  if (!set.hasActivePolicies(caller.role === "admin" ? "admin" : "user")) return [];
  const mctx = rightMatchContext(caller, action, ctx) as MatchContext & { action: string };
  return (await set.actionValues(mctx)).values;
}

/**
 * The webui policies of a login itself (spec 01 §6); the settings a web interface gets are
 * `src/domain/webui`'s.
 */
export interface WebuiSettings {
  /** `login_mode`: how realm users log in. */
  loginMode: "userstore" | "privacyIDEA" | "disable";
  /** `jwt_validity` in seconds, when a policy sets it. */
  jwtValidity?: number;
}

/**
 * `login_mode` and `jwt_validity` for `who` (matched on user, realm and resolver, and the
 * conditions on `ctx.conditions`: privacyIDEA's `Match.user` with the user object, so the
 * caller gives `who`'s `userinfo` there). Without webui policies: login mode `userstore` and
 * the configured JWT lifetime.
 */
export async function webuiSettings(
  deps: Deps,
  who: { username: string; realm: string; resolver?: string },
  ctx: { client?: string | null; userAgent?: string | null; conditions?: ConditionData } = {},
): Promise<WebuiSettings> {
  const out: WebuiSettings = { loginMode: "userstore" };
  const set = await loadPolicySet(deps);
  if (!set.hasActivePolicies("webui")) return out;
  const m = set.matcher({
    scope: "webui",
    user: who.username,
    realm: who.realm,
    resolver: who.resolver || null,
    client: ctx.client || null,
    userAgent: ctx.userAgent == null ? null : userAgentName(ctx.userAgent),
    conditions: ctx.conditions ?? {},
  });
  const mode = await m.value("login_mode");
  if (mode === "privacyIDEA" || mode === "disable") out.loginMode = mode;
  const validity = Number.parseInt((await m.value("jwt_validity")) ?? "", 10);
  if (Number.isInteger(validity) && validity > 0) out.jwtValidity = validity;
  return out;
}

/** {@link checkRight} for an admin caller. */
export async function checkAdminRight(
  deps: Deps,
  caller: Caller,
  action: string,
  ctx: RightContext = {},
): Promise<string[]> {
  return await checkRight(deps, { ...caller, role: "admin" }, action, ctx);
}

/** {@link checkRight} for a user caller. */
export async function checkUserRight(
  deps: Deps,
  caller: Caller,
  action: string,
  ctx: RightContext = {},
): Promise<string[]> {
  return await checkRight(deps, { ...caller, role: "user" }, action, ctx);
}

/**
 * The `rights` list of `/auth` (spec 01 §6.3): every action of the caller's
 * scope when it has no active policy, else the actions granted by matching
 * policies; non-boolean actions also appear as `action=value`. A user's
 * `userinfo` conditions read `ctx.conditions` (the caller gives the user's info).
 */
export async function rightsOf(
  deps: Deps,
  caller: Caller,
  ctx: { client?: string | null; userAgent?: string | null; conditions?: ConditionData } = {},
): Promise<string[]> {
  const scope = caller.role === "admin" ? "admin" : "user";
  // only the action names matter here: no realm or resolver lookups on every login
  const defs =
    policyDefinitions({ realms: [], resolvers: [], tokenTypes: knownTokenTypes() })[scope] ??
      {};
  const set = await loadPolicySet(deps);
  if (!set.hasActivePolicies(scope)) return Object.keys(defs);
  // WebUI rights check no conditions for admins and only userinfo for users (spec 04 §4.8)
  const mctx = rightMatchContext(caller, null, {
    client: ctx.client,
    userAgent: ctx.userAgent,
    conditions: caller.role === "admin" ? false : ctx.conditions ?? {},
  });
  if (caller.role === "admin") {
    // rights of an admin do not depend on the user acted on
    mctx.user = null;
    mctx.realm = null;
    mctx.resolver = null;
  } else {
    mctx.conditionSections = ["userinfo"];
  }
  let matched: CompiledPolicy[];
  try {
    matched = await set.match(mctx);
  } catch {
    matched = [];
  }
  const out: string[] = [];
  for (const name of Object.keys(defs)) {
    const granting = matched.filter((p) => p.grants(name));
    if (granting.length === 0) continue;
    const values = granting.map((p) => p.policy.action[name]).filter((v): v is string =>
      typeof v === "string"
    );
    if (values.length === 0) out.push(name);
    for (const v of new Set(values)) out.push(`${name}=${v}`);
  }
  return out;
}
