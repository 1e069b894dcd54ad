/**
 * Measures what policies cost on /validate/check: two apps on their own file
 * databases, one without policies and one with 50 (20 authentication and 15
 * authorization policies that match the request without changing its
 * outcome or the work validate does, 15 in other scopes). A third run sends each request to the
 * 50-policy app from a new client address, so no cached policy result can be
 * reused. Requests go round-robin so load spikes from other processes hit all
 * alike; wall and process CPU time per request are reported.
 * Run: deno run -A bench/policy_overhead.ts [requests per app]
 *
 * @module
 */
import { createApp } from "../src/app.ts";
import { benchDeps } from "./lib/deps.ts";
import { compareRoundRobin, type Subject } from "./lib/round_robin.ts";
import { initToken } from "../src/domain/token/mod.ts";
import { savePolicy } from "../src/domain/policy/mod.ts";
import { benchPolicies } from "./lib/policies.ts";

const N = Number(Deno.args[0] ?? 5000);

async function subject(name: string, withPolicies: boolean): Promise<Subject> {
  const { deps, dir } = await benchDeps();
  await initToken(deps, { type: "spass", serial: "BENCH1", pin: "1234" });
  if (withPolicies) {
    for (const [i, p] of benchPolicies().entries()) await savePolicy(deps, `bench${i}`, p);
  }
  return { name, app: createApp(deps), deps, dir, ms: [], cpuUs: [] };
}

let sent = 0;
/** A new client address per request: no cached policy result can be reused. */
const distinctAddress = () => {
  sent++;
  return `10.${(sent >> 16) & 255}.${(sent >> 8) & 255}.${sent & 255}`;
};

const subjects = [
  await subject("none", false),
  await subject("50 policies", true),
  { ...(await subject("50 uncached", true)), clientIp: distinctAddress },
];
await compareRoundRobin("POST /validate/check (spass by serial)", subjects, N);
