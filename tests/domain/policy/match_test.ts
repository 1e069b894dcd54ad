import assert from "node:assert/strict";
import { type MatchContext, type Policy, PolicySet } from "../../../src/domain/policy/match.ts";
import { parseActionString } from "../../../src/domain/policy/action.ts";
import type { Condition } from "../../../src/domain/policy/conditions.ts";

// Wednesday 2026-01-07 12:00 local time
const NOW = new Date(2026, 0, 7, 12, 0).getTime();

function pol(
  name: string,
  fields: Partial<Omit<Policy, "action">> & { action?: string } = {},
): Policy {
  return {
    id: 0,
    name,
    scope: "admin",
    active: true,
    priority: 1,
    realm: [],
    resolver: [],
    user: [],
    adminrealm: [],
    adminuser: [],
    pinode: [],
    client: [],
    time: "",
    check_all_resolvers: false,
    user_case_insensitive: false,
    conditions: [],
    description: null,
    user_agents: [],
    ...fields,
    action: parseActionString(fields.action ?? "enable"),
  };
}

function set(policies: Policy[], now = NOW): PolicySet {
  return new PolicySet(policies.map((p, i) => ({ ...p, id: i + 1 })), {
    version: 1,
    nodeName: "node1",
    now: () => now,
  });
}

async function names(s: PolicySet, ctx: MatchContext): Promise<string[]> {
  return (await s.match(ctx)).map((p) => p.name);
}

interface Case {
  name: string;
  policy: Parameters<typeof pol>[1];
  ctx: Omit<MatchContext, "scope"> & { scope?: string };
  matches: boolean;
}

const CASES: Case[] = [
  // scope and active
  { name: "scope differs", policy: {}, ctx: { scope: "user", action: "enable" }, matches: false },
  {
    name: "inactive never matches",
    policy: { active: false },
    ctx: { action: "enable" },
    matches: false,
  },
  // actions
  {
    name: "action found",
    policy: { action: "enable, disable" },
    ctx: { action: "disable" },
    matches: true,
  },
  {
    name: "action missing",
    policy: { action: "enable" },
    ctx: { action: "disable" },
    matches: false,
  },
  { name: "action *", policy: { action: "*" }, ctx: { action: "delete" }, matches: true },
  {
    name: "action * with -disable",
    policy: { action: "*, -disable" },
    ctx: { action: "disable" },
    matches: false,
  },
  {
    name: "action * with !disable keeps others",
    policy: { action: "*, !disable" },
    ctx: { action: "enable" },
    matches: true,
  },
  {
    name: "action regex",
    policy: { action: "enroll.*" },
    ctx: { action: "enrollHOTP" },
    matches: true,
  },
  {
    name: "action value",
    policy: { action: "otppin=userstore" },
    ctx: { action: "otppin" },
    matches: true,
  },
  {
    name: "null action does not filter",
    policy: { action: "enable" },
    ctx: { action: null },
    matches: true,
  },
  {
    name: "empty user action matches all",
    policy: { scope: "user", action: "" },
    ctx: { scope: "user", action: "x" },
    matches: true,
  },
  // realms
  { name: "realm found", policy: { realm: ["r1", "r2"] }, ctx: { realm: "r2" }, matches: true },
  { name: "realm not found", policy: { realm: ["r1"] }, ctx: { realm: "r3" }, matches: false },
  {
    name: "realm empty ctx string filters",
    policy: { realm: ["r1"] },
    ctx: { realm: "" },
    matches: false,
  },
  { name: "empty policy realm passes", policy: { realm: [] }, ctx: { realm: "r9" }, matches: true },
  {
    name: "realm null does not filter",
    policy: { realm: ["r1"] },
    ctx: { realm: null },
    matches: true,
  },
  { name: "realm star", policy: { realm: ["*"] }, ctx: { realm: "" }, matches: true },
  {
    name: "realm regex anchored",
    policy: { realm: ["customer_.*"] },
    ctx: { realm: "customer_a" },
    matches: true,
  },
  {
    name: "realm star minus one",
    policy: { realm: ["*", "-bad"] },
    ctx: { realm: "bad" },
    matches: false,
  },
  {
    name: "only exclusions match nobody",
    policy: { realm: ["!bad"] },
    ctx: { realm: "good" },
    matches: false,
  },
  {
    name: "realm list ctx equal",
    policy: { realm: ["r2"] },
    ctx: { realm: ["r1", "r2"] },
    matches: true,
  },
  {
    name: "realm list ctx no regex",
    policy: { realm: ["r.*"] },
    ctx: { realm: ["r1"] },
    matches: false,
  },
  { name: "realm list ctx star", policy: { realm: ["*"] }, ctx: { realm: ["x"] }, matches: true },
  // users
  { name: "user exact", policy: { user: ["user1"] }, ctx: { user: "user1" }, matches: true },
  { name: "user anchored", policy: { user: ["user1"] }, ctx: { user: "user1234" }, matches: false },
  {
    name: "user case sensitive",
    policy: { user: ["Alice"] },
    ctx: { user: "alice" },
    matches: false,
  },
  {
    name: "user case insensitive",
    policy: { user: ["Alice"], user_case_insensitive: true },
    ctx: { user: "ALICE" },
    matches: true,
  },
  {
    name: "everyone but root",
    policy: { user: ["*", "-root"] },
    ctx: { user: "root" },
    matches: false,
  },
  {
    name: "everyone but root (other)",
    policy: { user: ["*", "-root"] },
    ctx: { user: "bob" },
    matches: true,
  },
  // admin realm / user
  {
    name: "adminuser",
    policy: { adminuser: ["admin"] },
    ctx: { adminuser: "admin" },
    matches: true,
  },
  {
    name: "adminuser other",
    policy: { adminuser: ["admin"] },
    ctx: { adminuser: "helpdesk" },
    matches: false,
  },
  {
    name: "local admin realm empty",
    policy: { adminrealm: ["super"] },
    ctx: { adminrealm: "" },
    matches: false,
  },
  {
    name: "local admin realm star",
    policy: { adminrealm: ["*"] },
    ctx: { adminrealm: "" },
    matches: true,
  },
  {
    name: "adminrealm ignored outside admin",
    policy: { scope: "user", adminrealm: ["x"] },
    ctx: { scope: "user", adminrealm: "y" },
    matches: true,
  },
  // resolvers
  {
    name: "resolver found",
    policy: { resolver: ["res1"] },
    ctx: { resolver: "res1" },
    matches: true,
  },
  {
    name: "resolver exclusion ignored",
    policy: { resolver: ["*", "-res1"] },
    ctx: { resolver: "res1" },
    matches: true,
  },
  {
    name: "resolver missing",
    policy: { resolver: ["res1"] },
    ctx: { resolver: "res2" },
    matches: false,
  },
  {
    name: "check_all_resolvers finds other resolver",
    policy: { resolver: ["res2"], check_all_resolvers: true },
    ctx: { resolver: "res1", realm: "r", user: "u", realmResolvers: ["res1", "res2"] },
    matches: true,
  },
  {
    name: "check_all_resolvers needs a user",
    policy: { resolver: ["res1"], check_all_resolvers: true },
    ctx: { resolver: "res1", realm: "r" },
    matches: false,
  },
  // pinode and user agents
  { name: "pinode matches local node", policy: { pinode: ["node1"] }, ctx: {}, matches: true },
  { name: "pinode other node", policy: { pinode: ["node2"] }, ctx: {}, matches: false },
  {
    name: "user agent equal ci",
    policy: { user_agents: ["privacyidea-cp"] },
    ctx: { userAgent: "PrivacyIDEA-CP" },
    matches: true,
  },
  {
    name: "user agent empty request",
    policy: { user_agents: ["privacyidea-cp"] },
    ctx: { userAgent: "" },
    matches: false,
  },
  { name: "no agent list passes", policy: {}, ctx: { userAgent: "" }, matches: true },
  // clients
  {
    name: "client in cidr",
    policy: { client: ["172.16.0.0/16", "-172.16.1.1"] },
    ctx: { client: "172.16.1.2" },
    matches: true,
  },
  {
    name: "client excluded",
    policy: { client: ["172.16.0.0/16", "-172.16.1.1"] },
    ctx: { client: "172.16.1.1" },
    matches: false,
  },
  {
    name: "client excluded by cidr",
    policy: { client: ["10.0.0.0/8", "!10.1.0.0/16"] },
    ctx: { client: "10.1.2.3" },
    matches: false,
  },
  {
    name: "client outside",
    policy: { client: ["10.0.0.0/8"] },
    ctx: { client: "192.168.0.1" },
    matches: false,
  },
  {
    name: "client ipv6",
    policy: { client: ["2001:db8::/32"] },
    ctx: { client: "2001:db8::1" },
    matches: true,
  },
  {
    name: "client /0 matches every IPv4",
    policy: { client: ["0.0.0.0/0"] },
    ctx: { client: "203.0.113.9" },
    matches: true,
  },
  {
    name: "client /32 exact",
    policy: { client: ["192.168.7.7/32"] },
    ctx: { client: "192.168.7.8" },
    matches: false,
  },
  {
    name: "client v4-mapped IPv6 against an IPv4 net",
    policy: { client: ["10.0.0.0/8"] },
    ctx: { client: "::ffff:10.1.2.3" },
    matches: true,
  },
  {
    name: "client IPv4 against an IPv6 net",
    policy: { client: ["2001:db8::/32"] },
    ctx: { client: "10.1.2.3" },
    matches: false,
  },
  {
    name: "client invalid address never matches a list",
    policy: { client: ["10.0.0.0/8"] },
    ctx: { client: "not-an-ip" },
    matches: false,
  },
  {
    name: "client null does not filter",
    policy: { client: ["10.0.0.0/8"] },
    ctx: { client: null },
    matches: true,
  },
  // time (NOW is Wednesday 12:00 local time)
  { name: "time inside", policy: { time: "Mon-Fri: 08:00-16:30" }, ctx: {}, matches: true },
  { name: "time other day", policy: { time: "Sat-Sun: 20-23:59" }, ctx: {}, matches: false },
  { name: "time inclusive end", policy: { time: "Wed: 9-12" }, ctx: {}, matches: true },
  { name: "time no wrap-around", policy: { time: "Fri-Mon: 0-23:59" }, ctx: {}, matches: false },
  { name: "time any range", policy: { time: "Mon: 1-2, Wed: 11-13" }, ctx: {}, matches: true },
  {
    name: "broken stored time never matches",
    policy: { time: "Montag: 8-12" },
    ctx: {},
    matches: false,
  },
];

for (const c of CASES) {
  Deno.test(`PolicySet.match: ${c.name}`, async () => {
    const s = set([pol("p", c.policy)]);
    const got = await names(s, { scope: "admin", ...c.ctx });
    assert.deepEqual(got, c.matches ? ["p"] : []);
  });
}

Deno.test("PolicySet.match rejects an empty client", async () => {
  const s = set([pol("p")]);
  await assert.rejects(
    () => s.match({ scope: "admin", client: "" }),
    /client argument must be a non-empty string/,
  );
});

Deno.test("PolicySet.match sorts by priority, stable", async () => {
  const s = set([pol("c", { priority: 3 }), pol("a", { priority: 1 }), pol("b", { priority: 3 })]);
  assert.deepEqual(await names(s, { scope: "admin", action: "enable" }), ["a", "c", "b"]);
});

Deno.test("hasActivePolicies ignores inactive policies but not restricted ones", () => {
  const s = set([pol("p", { active: false }), pol("q", { scope: "user", client: ["10.0.0.1"] })]);
  assert.equal(s.hasActivePolicies("admin"), false);
  assert.equal(s.hasActivePolicies("user"), true);
  assert.equal(s.hasActivePolicies("webui"), false);
});

Deno.test("actionValues: unique takes the lowest priority and detects conflicts", async () => {
  const s = set([
    pol("a", { scope: "authentication", action: "otppin=userstore", priority: 2 }),
    pol("b", { scope: "authentication", action: "otppin=none", priority: 1 }),
  ]);
  assert.equal(await s.actionValue({ scope: "authentication", action: "otppin" }), "none");
  const conflict = set([
    pol("a", { scope: "authentication", action: "otppin=userstore" }),
    pol("b", { scope: "authentication", action: "otppin=none" }),
  ]);
  await assert.rejects(
    () => conflict.actionValue({ scope: "authentication", action: "otppin" }),
    (e: Error) => e.message === "There are policies with conflicting actions: ['a', 'b']",
  );
  const same = set([
    pol("a", { scope: "authentication", action: "otppin=none" }),
    pol("b", { scope: "authentication", action: "otppin=none" }),
  ]);
  assert.equal(await same.actionValue({ scope: "authentication", action: "otppin" }), "none");
});

Deno.test("actionValues: multi values split on whitespace and add up; quotes keep one value", async () => {
  const s = set([
    pol("a", { scope: "authorization", action: "tokentype=hotp totp", priority: 1 }),
    pol("b", { scope: "authorization", action: "tokentype=spass", priority: 5 }),
    pol("c", { scope: "authentication", action: "challenge_text='please enter otp'" }),
  ]);
  const r = await s.actionValues({ scope: "authorization", action: "tokentype" });
  assert.deepEqual(r.values, ["hotp", "totp", "spass"]);
  assert.deepEqual(r.policies, ["a", "b"]);
  const t = await s.actionValues({ scope: "authentication", action: "challenge_text" });
  assert.deepEqual(t.values, ["please enter otp"]);
});

Deno.test("actionBool: any matching policy turns the action on, whatever its priority", async () => {
  const s = set([
    pol("low", { scope: "authentication", action: "passOnNoToken", priority: 9 }),
    pol("high", { scope: "authentication", action: "otppin=none", priority: 1 }),
  ]);
  assert.deepEqual(await s.actionBool({ scope: "authentication", action: "passOnNoToken" }), [
    "low",
  ]);
  assert.deepEqual(await s.actionBool({ scope: "authentication", action: "passOnNoUser" }), []);
});

const COND: Condition = ["HTTP Request header", "X-Group", "equals", "staff", true, "raise_error"];

Deno.test("conditions: all active ones must hold", async () => {
  const s = set([
    pol("p", { conditions: [COND, ["Request Data", "x", "equals", "1", false, "raise_error"]] }),
  ]);
  assert.deepEqual(
    await names(s, {
      scope: "admin",
      conditions: { "HTTP Request header": { "x-group": "staff" } },
    }),
    ["p"],
  );
  assert.deepEqual(
    await names(s, {
      scope: "admin",
      conditions: { "HTTP Request header": { "x-group": "other" } },
    }),
    [],
  );
  assert.deepEqual(await names(s, { scope: "admin", conditions: false }), ["p"]);
});

Deno.test("conditions: missing data raises, or counts as true/false", async () => {
  const raise = set([
    pol("policy", {
      conditions: [["HTTP Request header", "User-Agent", "equals", "x", true, "raise_error"]],
    }),
  ]);
  await assert.rejects(
    () => raise.match({ scope: "admin", conditions: { "HTTP Request header": {} } }),
    (e: Error) =>
      e.message ===
        "Unknown HTTP Request header key 'User-Agent' referenced in condition of policy 'policy'!",
  );
  await assert.rejects(
    () => raise.match({ scope: "admin", conditions: {} }),
    /has a condition on the section 'HTTP Request header' with key 'User-Agent', but a request is unavailable!/,
  );
  const t = set([
    pol("p", { conditions: [["userinfo", "email", "equals", "x", true, "condition_is_true"]] }),
  ]);
  assert.deepEqual(await names(t, { scope: "admin", conditions: {} }), ["p"]);
  const f = set([
    pol("p", { conditions: [["userinfo", "email", "equals", "x", true, "condition_is_false"]] }),
  ]);
  assert.deepEqual(await names(f, { scope: "admin", conditions: {} }), []);
});

Deno.test("conditions: a comparison error aborts with a PolicyError", async () => {
  const s = set([
    pol("p", { conditions: [["userinfo", "groups", "contains", "g1", true, "raise_error"]] }),
  ]);
  await assert.rejects(
    () => s.match({ scope: "admin", conditions: { userinfo: { groups: "g1" } } }),
    (e: Error & { code?: number }) =>
      e.message === "Invalid comparison in the userinfo conditions of policy 'p'" && e.code === 303,
  );
  assert.deepEqual(
    await names(s, { scope: "admin", conditions: { userinfo: { groups: ["g1", "g2"] } } }),
    ["p"],
  );
});

Deno.test("conditions: lazy section loaders run only when needed", async () => {
  let calls = 0;
  const loader = () => {
    calls++;
    return Promise.resolve({ email: "a@b" } as Record<string, unknown>);
  };
  const s = set([
    pol("p", { conditions: [["userinfo", "email", "equals", "a@b", true, "raise_error"]] }),
    pol("q", { scope: "user" }),
  ]);
  assert.deepEqual(await names(s, { scope: "user", conditions: { userinfo: loader } }), ["q"]);
  assert.equal(calls, 0);
  assert.deepEqual(await names(s, { scope: "admin", conditions: { userinfo: loader } }), ["p"]);
  assert.equal(calls, 1);
});
