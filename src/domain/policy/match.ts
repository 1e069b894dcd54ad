/**
 * Policy matching (spec 04 §4) over precompiled policies. A {@link PolicySet}
 * is built once per policy version and shared by every request until the
 * version row changes.
 *
 * @module
 */
import { ParameterError, PolicyError } from "../../errors.ts";
import { inNetwork, type Network, parseIp, parseNetwork } from "../../lib/ip.ts";
import { type ActionMap, splitActionValue, stripNegation } from "./action.ts";
import { type Condition, type ConditionData, conditionsHold } from "./conditions.ts";
import { parseTimeRanges, timeMatches, type TimeRange } from "./time.ts";

/** A policy as the API shows it (spec 04 §1). */
export interface Policy {
  id: number;
  name: string;
  scope: string;
  action: ActionMap;
  active: boolean;
  priority: number;
  realm: string[];
  resolver: string[];
  user: string[];
  adminrealm: string[];
  adminuser: string[];
  pinode: string[];
  client: string[];
  time: string;
  check_all_resolvers: boolean;
  user_case_insensitive: boolean;
  conditions: Condition[];
  description: string | null;
  user_agents: string[];
}

/**
 * What a request matches against. `null`/`undefined` values do not filter;
 * any other value (including `""`) does.
 */
export interface MatchContext {
  scope: string;
  action?: string | null;
  /** A string, or a list (token realms plus user realm): then only equality and `*` count. */
  realm?: string | readonly string[] | null;
  resolver?: string | null;
  user?: string | null;
  /** Admin scope only: the acting admin's realm (`""` for local admins). */
  adminrealm?: string | null;
  adminuser?: string | null;
  /** Client IP; `""` is an error. */
  client?: string | null;
  /** The request's user-agent name (see {@link userAgentName}); `""` matches only agent-less policies. */
  userAgent?: string | null;
  /** For check_all_resolvers: resolvers of the realm to try, in priority order. */
  realmResolvers?: readonly string[] | null;
  /** Condition data; `false` skips every condition. */
  conditions?: ConditionData | false;
  /** Only check conditions of these sections. */
  conditionSections?: readonly string[];
  /** Match policy names exactly (for /policy/check and tests). */
  name?: string | null;
  /** Default true: only active policies. `null` matches both. */
  active?: boolean | null;
  /** Skip the time check (used by rights lists). */
  ignoreTime?: boolean;
}

/** A policy client network; IPv4 ones as integers for a cheap test. */
interface ClientNet {
  net: Network;
  /** IPv4 only: network address and mask as unsigned 32-bit integers. */
  v4?: { base: number; mask: number };
}

/** A request client address; IPv4 also as an unsigned 32-bit integer. */
interface ClientAddr {
  addr: NonNullable<ReturnType<typeof parseIp>>;
  v4?: number;
}

function v4Number(octets: readonly number[]): number {
  return ((octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]) >>> 0;
}

function clientNet(net: Network): ClientNet {
  if (net[0].kind() !== "ipv4") return { net };
  const bits = net[1];
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { net, v4: { base: (v4Number(net[0].toByteArray()) & mask) >>> 0, mask } };
}

function clientAddr(text: string): ClientAddr | null {
  const addr = parseIp(text);
  if (!addr) return null;
  return addr.kind() === "ipv4" ? { addr, v4: v4Number(addr.toByteArray()) } : { addr };
}

function inAnyNet(ip: ClientAddr, nets: readonly ClientNet[]): boolean {
  for (const n of nets) {
    if (ip.v4 !== undefined && n.v4) {
      if (((ip.v4 & n.v4.mask) >>> 0) === n.v4.base) return true;
    } else if (inNetwork(ip.addr, n.net)) return true;
  }
  return false;
}

// a key that can only match itself (a dot only ever matches a dot in real action names)
const LITERAL_ACTION_REGEXP = /^[A-Za-z0-9_][A-Za-z0-9_.]*$/;

/** A compiled entry list (§4.2). */
class ValueList {
  readonly isEmpty: boolean;
  readonly #exact = new Set<string>();
  readonly #excluded = new Set<string>();
  readonly #regexps: RegExp[] = [];
  readonly #hasStar: boolean;
  readonly #lower: boolean;

  constructor(entries: readonly string[], options: { lower?: boolean; exclusions?: boolean } = {}) {
    this.#lower = options.lower === true;
    const list = entries.filter((e) => e !== "");
    this.isEmpty = list.length === 0;
    let star = false;
    for (const raw of list) {
      const e = this.#lower ? raw.toLowerCase() : raw;
      if (e === "*") {
        star = true;
        continue;
      }
      const neg = stripNegation(e);
      if (neg.isNegated) {
        if (options.exclusions !== false) this.#excluded.add(neg.name);
        continue;
      }
      this.#exact.add(e);
      try {
        this.#regexps.push(new RegExp(`^(?:${e})$`));
      } catch {
        // not a valid regex: only exact matches count
      }
    }
    this.#hasStar = star;
  }

  /** Found and not excluded. */
  matches(value: string): boolean {
    const v = this.#lower ? value.toLowerCase() : value;
    if (this.#excluded.has(v)) return false;
    return this.#hasStar || this.#exact.has(v) || this.#regexps.some((r) => r.test(v));
  }

  /** The list-context rule: an entry equals one of `values`, or is `*`. */
  matchesAny(values: readonly string[]): boolean {
    return this.#hasStar || values.some((v) => this.#exact.has(this.#lower ? v.toLowerCase() : v));
  }
}

/** A policy with its matchers built once. */
export class CompiledPolicy {
  readonly policy: Policy;
  readonly actions: ValueList;
  readonly realm: ValueList;
  readonly resolver: ValueList;
  readonly user: ValueList;
  readonly adminrealm: ValueList;
  readonly adminuser: ValueList;
  readonly userAgents: Set<string>;
  readonly positiveNets: ClientNet[] = [];
  readonly negativeNets: ClientNet[] = [];
  readonly isClientBroken: boolean = false;
  readonly timeRanges: TimeRange[] | undefined;
  readonly hasActiveConditions: boolean;
  /** The action keys when all are plain names (no `*`, negation or regex), else undefined. */
  readonly literalActions: string[] | undefined;

  constructor(policy: Policy) {
    this.policy = policy;
    this.actions = new ValueList(Object.keys(policy.action));
    this.realm = new ValueList(policy.realm);
    // exclusions are ignored for resolvers (spec 04 §4.4 quirk)
    this.resolver = new ValueList(policy.resolver, { exclusions: false });
    const lower = policy.user_case_insensitive;
    this.user = new ValueList(policy.user, { lower });
    this.adminrealm = new ValueList(policy.adminrealm);
    this.adminuser = new ValueList(policy.adminuser, { lower });
    this.userAgents = new Set(
      policy.user_agents.filter((a) => a !== "").map((a) => a.toLowerCase()),
    );
    for (const entry of policy.client) {
      if (entry.trim() === "") continue;
      const neg = stripNegation(entry.trim());
      const net = parseNetwork(neg.name);
      if (!net) {
        this.isClientBroken = true;
        continue;
      }
      (neg.isNegated ? this.negativeNets : this.positiveNets).push(clientNet(net));
    }
    this.timeRanges = parseTimeRanges(policy.time);
    this.hasActiveConditions = policy.conditions.some((c) => c[4] === true);
    const keys = Object.keys(policy.action);
    this.literalActions = keys.length > 0 && keys.every((k) => LITERAL_ACTION_REGEXP.test(k))
      ? keys
      : undefined;
  }

  get name(): string {
    return this.policy.name;
  }
  get priority(): number {
    return this.policy.priority;
  }

  readonly #grants = new Map<string, boolean>();
  readonly #values = new Map<string, string[]>();

  /** The split values of `action` (none when absent or boolean); memoised per policy. */
  valuesOf(action: string, freeText: boolean): string[] {
    const key = freeText ? `t:${action}` : action;
    let out = this.#values.get(key);
    if (out === undefined) {
      const raw = this.policy.action[action];
      out = typeof raw === "string" ? splitActionValue(raw, freeText) : [];
      if (this.#values.size < 1000) this.#values.set(key, out);
    }
    return out;
  }

  /** True if the policy grants `action` (found, not negated; an empty action map grants all). */
  grants(action: string): boolean {
    let granted = this.#grants.get(action);
    if (granted === undefined) {
      granted = this.actions.isEmpty || this.actions.matches(action);
      // action names come from code, not requests: the memo stays small
      if (this.#grants.size < 1000) this.#grants.set(action, granted);
    }
    return granted;
  }
}

/** The user-agent name privacyIDEA matches on: the product before `/` (e.g. `privacyidea-cp`). */
export function userAgentName(header: string | null | undefined): string {
  if (!header) return "";
  return header.trim().split(/[\s/]/)[0] ?? "";
}

/** Result of a value lookup. */
export interface ActionValues {
  /** Distinct values in first-seen order. */
  values: string[];
  /** Names of the policies that gave a value. */
  policies: string[];
}

/** An immutable, compiled set of all policies of one version. */
export class PolicySet {
  readonly version: number;
  readonly policies: readonly CompiledPolicy[];
  readonly #activeScopes: Set<string>;
  readonly #byScope = new Map<string, CompiledPolicy[]>();
  readonly #node: string;
  readonly #now: () => number;
  readonly #log?: (msg: string, fields: Record<string, unknown>) => void;

  constructor(
    policies: readonly Policy[],
    options: {
      version: number;
      nodeName: string;
      now: () => number;
      warn?: (msg: string, fields: Record<string, unknown>) => void;
    },
  ) {
    this.version = options.version;
    this.policies = policies.map((p) => new CompiledPolicy(p));
    this.#activeScopes = new Set(
      this.policies.filter((p) => p.policy.active).map((p) => p.policy.scope),
    );
    for (const p of this.policies) {
      const list = this.#byScope.get(p.policy.scope) ?? [];
      list.push(p);
      this.#byScope.set(p.policy.scope, list);
    }
    this.#node = options.nodeName;
    this.#now = options.now;
    this.#log = options.warn;
  }

  readonly #facts = new Map<string, unknown>();
  #lastClient: [string, ClientAddr | null] | undefined;

  #memo<T>(key: string, compute: () => T): T {
    if (!this.#facts.has(key)) this.#facts.set(key, compute());
    return this.#facts.get(key) as T;
  }

  #parseClient(client: string): ClientAddr | null {
    // one request matches several scopes with the same client
    if (this.#lastClient?.[0] !== client) this.#lastClient = [client, clientAddr(client)];
    return this.#lastClient[1];
  }

  /** True if the scope has at least one active policy (whatever its other fields). */
  hasActivePolicies(scope: string): boolean {
    return this.#activeScopes.has(scope);
  }

  /** All policies matching `ctx`, sorted by priority (stable). */
  async match(ctx: MatchContext): Promise<CompiledPolicy[]> {
    const candidates = this.#candidates(ctx);
    if (ctx.conditions === false || !candidates.some((p) => p.hasActiveConditions)) {
      return candidates;
    }
    const data = ctx.conditions ?? {};
    const result: CompiledPolicy[] = [];
    for (const p of candidates) {
      if (
        !p.hasActiveConditions ||
        await conditionsHold(p.name, p.policy.conditions, data, {
          nowMs: this.#now(),
          sections: ctx.conditionSections,
        })
      ) {
        result.push(p);
      }
    }
    return result;
  }

  /**
   * Matches `ctx` once for many actions of one scope: every filter but the
   * action runs now; conditions run per policy only when an action needs it.
   */
  matcher(ctx: Omit<MatchContext, "action">): PolicyMatcher {
    const candidates = this.#candidates({ ...ctx, action: null });
    return new PolicyMatcher(candidates, ctx.conditions ?? {}, {
      nowMs: this.#now(),
      sections: ctx.conditionSections,
    });
  }

  /**
   * True if an active policy of one of `scopes` restricts one of `fields`
   * beyond "everyone" (so the caller must know that value of the request).
   */
  restricts(
    scopes: readonly string[],
    fields: readonly ("realm" | "user" | "resolver")[] = ["realm", "user", "resolver"],
  ): boolean {
    return this.#memo(
      `restricts:${scopes}:${fields}`,
      () =>
        scopes.some((scope) =>
          (this.#byScope.get(scope) ?? []).some((p) =>
            p.policy.active &&
            fields.some((f) => p.policy[f].some((e) => e !== "" && e !== "*"))
          )
        ),
    );
  }

  /** True if an active policy of one of `scopes` has active conditions or a time range. */
  dependsOnRequestData(scopes: readonly string[]): { conditions: boolean; time: boolean } {
    return this.#memo(`depends:${scopes}`, () => {
      const active = scopes.flatMap((sc) => this.#byScope.get(sc) ?? []).filter((p) =>
        p.policy.active
      );
      return {
        conditions: active.some((p) => p.hasActiveConditions),
        time: active.some((p) => p.policy.time.trim() !== ""),
      };
    });
  }

  /** True if an active policy of `scope` uses check_all_resolvers. */
  usesCheckAllResolvers(scope: string): boolean {
    return this.#memo(
      `checkall:${scope}`,
      () =>
        (this.#byScope.get(scope) ?? []).some((p) =>
          p.policy.active && p.policy.check_all_resolvers
        ),
    );
  }

  #candidates(ctx: MatchContext): CompiledPolicy[] {
    if (ctx.client === "") throw new ParameterError("client argument must be a non-empty string");
    const candidates = this.#byScope.get(ctx.scope) ?? [];
    if (candidates.length === 0) return [];
    const active = ctx.active === undefined ? true : ctx.active;
    const clientIp = ctx.client == null ? undefined : this.#parseClient(ctx.client);
    const agent = ctx.userAgent == null ? undefined : ctx.userAgent.toLowerCase();
    const out: CompiledPolicy[] = [];
    for (const p of candidates) {
      const pol = p.policy;
      if (ctx.name != null && pol.name !== ctx.name) continue;
      if (active !== null && pol.active !== active) continue;
      if (ctx.action != null && !p.grants(ctx.action)) continue;
      if (ctx.realm != null && !p.realm.isEmpty) {
        const ok = typeof ctx.realm === "string"
          ? p.realm.matches(ctx.realm)
          : p.realm.matchesAny(ctx.realm as readonly string[]);
        if (!ok) continue;
      }
      if (ctx.user != null && !p.user.isEmpty && !p.user.matches(ctx.user)) continue;
      if (pol.scope === "admin") {
        if (
          ctx.adminrealm != null && !p.adminrealm.isEmpty && !p.adminrealm.matches(ctx.adminrealm)
        ) {
          continue;
        }
        if (
          ctx.adminuser != null && !p.adminuser.isEmpty && !p.adminuser.matches(ctx.adminuser)
        ) {
          continue;
        }
      }
      if (!this.#resolverMatches(p, ctx)) continue;
      if (pol.pinode.length > 0 && !pol.pinode.includes(this.#node)) continue;
      if (
        agent !== undefined && p.userAgents.size > 0 && (agent === "" || !p.userAgents.has(agent))
      ) {
        continue;
      }
      if (clientIp !== undefined && !this.#clientMatches(p, clientIp)) continue;
      out.push(p);
    }
    out.sort((a, b) => a.priority - b.priority);
    if (ctx.ignoreTime) return out;
    const nowMs = this.#now();
    return out.filter((p) => {
      if (p.timeRanges === undefined) {
        this.#log?.("Policy has a broken time value and does not match", {
          policy: p.name,
          time: p.policy.time,
        });
        return false;
      }
      return timeMatches(p.timeRanges, nowMs);
    });
  }

  #resolverMatches(p: CompiledPolicy, ctx: MatchContext): boolean {
    if (ctx.resolver == null) return true;
    if (p.policy.check_all_resolvers) {
      if (p.resolver.isEmpty) return true;
      if (ctx.realm == null || ctx.realm === "" || ctx.user == null || ctx.user === "") {
        return false;
      }
      const candidates = ctx.realmResolvers ?? [ctx.resolver];
      return candidates.some((r) => p.resolver.matches(r));
    }
    return p.resolver.isEmpty || p.resolver.matches(ctx.resolver);
  }

  #clientMatches(p: CompiledPolicy, ip: ClientAddr | null): boolean {
    if (p.positiveNets.length === 0 && p.negativeNets.length === 0 && !p.isClientBroken) {
      return true;
    }
    if (!ip) return false;
    return inAnyNet(ip, p.positiveNets) && !inAnyNet(ip, p.negativeNets);
  }

  /**
   * Boolean use (§4.9): true if any matching policy grants `ctx.action`.
   * Returns the granting policy names (for the audit column).
   */
  async actionBool(ctx: MatchContext & { action: string }): Promise<string[]> {
    return (await this.match(ctx)).map((p) => p.name);
  }

  /**
   * Value use (§4.9): the values of `ctx.action` of the matching policies.
   * With `unique`, only the lowest priority number counts and more than one
   * distinct value is a conflict (403/303).
   */
  async actionValues(
    ctx: MatchContext & { action: string },
    options: { unique?: boolean; freeText?: boolean } = {},
  ): Promise<ActionValues> {
    return collectValues(await this.match(ctx), ctx.action, options);
  }

  /** The one value of a unique action (free text), or undefined when no policy sets it. */
  async actionValue(ctx: MatchContext & { action: string }): Promise<string | undefined> {
    const { values } = await this.actionValues(ctx, { unique: true, freeText: true });
    return values[0];
  }
}

const NO_VALUES: ActionValues = Object.freeze({
  values: Object.freeze([]) as unknown as string[],
  policies: Object.freeze([]) as unknown as string[],
});

/** Values of `action` in `matched` (already filtered to policies granting it). */
function collectValues(
  matched: CompiledPolicy[],
  action: string,
  options: { unique?: boolean; freeText?: boolean },
): ActionValues {
  if (matched.length === 0) return NO_VALUES;
  const top = matched[0].priority;
  const values: string[] = [];
  const policies: string[] = [];
  for (const p of matched) {
    // with `unique`, only the lowest priority number counts (the list is sorted)
    if (options.unique && p.priority !== top) break;
    const split = p.valuesOf(action, options.freeText === true);
    if (split.length === 0) continue;
    for (const v of split) if (!values.includes(v)) values.push(v);
    if (!policies.includes(p.name)) policies.push(p.name);
  }
  if (options.unique && values.length > 1) {
    throw new PolicyError(
      `There are policies with conflicting actions: [${policies.map((n) => `'${n}'`).join(", ")}]`,
    );
  }
  return { values, policies };
}

/** The policies of one scope matched for one request, queried per action. */
export class PolicyMatcher {
  readonly #candidates: CompiledPolicy[];
  readonly #data: ConditionData;
  readonly #options: { nowMs: number; sections?: readonly string[] };
  readonly #conditionResults = new Map<CompiledPolicy, Promise<boolean>>();

  constructor(
    candidates: CompiledPolicy[],
    data: ConditionData | false,
    options: { nowMs: number; sections?: readonly string[] },
  ) {
    this.#candidates = candidates;
    this.#data = data === false ? {} : data;
    this.#options = data === false ? { ...options, sections: [] } : options;
  }

  /** True when no policy of the scope matched the request at all. */
  get isEmpty(): boolean {
    return this.#candidates.length === 0;
  }

  readonly #prefetched = new Map<string, CompiledPolicy[]>();

  async #holds(p: CompiledPolicy): Promise<boolean> {
    let holds = this.#conditionResults.get(p);
    if (!holds) {
      holds = conditionsHold(p.name, p.policy.conditions, this.#data, this.#options);
      this.#conditionResults.set(p, holds);
    }
    return await holds;
  }

  /**
   * Resolves many actions in one pass over the matching policies; afterwards
   * {@link policiesFor}, {@link values}, {@link bool} and the `*Now` variants
   * answer those actions from memory.
   */
  async prefetch(actions: readonly string[]): Promise<void> {
    const wanted = new Set(actions);
    const lists = new Map<string, CompiledPolicy[]>(actions.map((a) => [a, []]));
    for (const p of this.#candidates) {
      const keys = p.literalActions ?? actions;
      let holds: boolean | undefined;
      for (const a of keys) {
        if (p.literalActions ? !wanted.has(a) : !p.grants(a)) continue;
        if (holds === undefined) holds = !p.hasActiveConditions || await this.#holds(p);
        if (!holds) break;
        lists.get(a)!.push(p);
      }
    }
    for (const [a, list] of lists) this.#prefetched.set(a, list);
  }

  #prefetchedFor(action: string): CompiledPolicy[] {
    const list = this.#prefetched.get(action);
    if (!list) throw new Error(`Policy action "${action}" was not prefetched`);
    return list;
  }

  /** {@link values} for a prefetched action, synchronously. */
  valuesNow(action: string, options: { unique?: boolean; freeText?: boolean } = {}): ActionValues {
    return collectValues(this.#prefetchedFor(action), action, options);
  }

  /** {@link bool} for a prefetched action, synchronously. */
  boolNow(action: string): string[] {
    return this.#prefetchedFor(action).map((p) => p.name);
  }

  /** {@link policiesFor} for a prefetched action, synchronously. */
  policiesNow(action: string): CompiledPolicy[] {
    return this.#prefetchedFor(action);
  }

  /** Matching policies that grant `action`, by priority (conditions checked). */
  async policiesFor(action: string): Promise<CompiledPolicy[]> {
    const pre = this.#prefetched.get(action);
    if (pre) return pre;
    const out: CompiledPolicy[] = [];
    for (const p of this.#candidates) {
      if (!p.grants(action)) continue;
      if (p.hasActiveConditions && !await this.#holds(p)) continue;
      out.push(p);
    }
    return out;
  }

  /** Boolean use: names of the policies granting `action` (empty = off). */
  async bool(action: string): Promise<string[]> {
    return (await this.policiesFor(action)).map((p) => p.name);
  }

  /**
   * Boolean use for a switch that restricts the caller: names of the matching
   * policies that name `action` itself. A `*` or an empty action list grants
   * every right but turns on no restriction.
   */
  async namedBool(action: string): Promise<string[]> {
    return (await this.policiesFor(action)).filter((p) => p.policy.action[action] !== undefined)
      .map((p) => p.name);
  }

  /** Value use; see {@link PolicySet.actionValues}. */
  async values(
    action: string,
    options: { unique?: boolean; freeText?: boolean } = {},
  ): Promise<ActionValues> {
    return collectValues(await this.policiesFor(action), action, options);
  }

  /** The one value of a unique free-text action, or undefined. */
  async value(action: string): Promise<string | undefined> {
    return (await this.values(action, { unique: true, freeText: true })).values[0];
  }
}
