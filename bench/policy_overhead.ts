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
import { cpuUsage } from "node:process";
import type { Hono } from "hono";
import { createApp } from "../src/app.ts";
import type { Deps } from "../src/deps.ts";
import { benchDeps } from "./lib/deps.ts";
import type { AppEnv } from "../src/http/context.ts";
import { initToken } from "../src/domain/token/mod.ts";
import { savePolicy } from "../src/domain/policy/mod.ts";
import { benchPolicies } from "./lib/policies.ts";

const N = Number(Deno.args[0] ?? 5000);

interface Subject {
  name: string;
  /** Send every request from a different client address. */
  isDistinct?: boolean;
  app: Hono<AppEnv>;
  deps: Deps;
  dir: string;
  ms: number[];
  cpuUs: number[];
}

async function subject(name: string, withPolicies: boolean): Promise<Subject> {
  const { deps, dir } = await benchDeps();
  await initToken(deps, { type: "spass", serial: "BENCH1", pin: "1234" });
  if (withPolicies) {
    for (const [i, p] of benchPolicies().entries()) await savePolicy(deps, `bench${i}`, p);
  }
  return { name, app: createApp(deps), deps, dir, ms: [], cpuUs: [] };
}

let sent = 0;

async function once(s: Subject): Promise<[number, number]> {
  sent++;
  const hostname = s.isDistinct
    ? `10.${(sent >> 16) & 255}.${(sent >> 8) & 255}.${sent & 255}`
    : "127.0.0.1";
  const c0 = cpuUsage();
  const t0 = performance.now();
  const res = await s.app.request("/validate/check", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "serial=BENCH1&pass=1234",
  }, { remoteAddr: { hostname } });
  const json = await res.json();
  if (json.result?.value !== true) throw new Error(`unexpected answer: ${JSON.stringify(json)}`);
  const ms = performance.now() - t0;
  const c1 = cpuUsage(c0);
  return [ms, c1.user + c1.system];
}

const subjects = [
  await subject("none", false),
  await subject("50 policies", true),
  { ...(await subject("50 uncached", true)), isDistinct: true },
];
for (let i = 0; i < 500; i++) for (const s of subjects) await once(s); // warm-up
for (let i = 0; i < N; i++) {
  for (const s of subjects) {
    const [ms, cpu] = await once(s);
    s.ms.push(ms);
    s.cpuUs.push(cpu);
  }
}
const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = total(subjects[0].ms);
console.log(`POST /validate/check (spass by serial), ${N} requests per app, round-robin`);
for (const s of subjects) {
  const rate = N / (total(s.ms) / 1000);
  const pct = ((base / total(s.ms) - 1) * 100).toFixed(1);
  console.log(
    `${s.name.padEnd(12)} ${rate.toFixed(0).padStart(6)} req/s  ${pct.padStart(6)}% vs none` +
      `  median ${(median(s.ms) * 1000).toFixed(0)} µs wall` +
      `  CPU ${(total(s.cpuUs) / N).toFixed(0)} µs/req (${
        ((total(s.cpuUs) / total(subjects[0].cpuUs) - 1) * 100).toFixed(1)
      }%)`,
  );
}
for (const s of subjects) {
  await s.deps.audit.flush();
  await s.deps.db.destroy();
  await Deno.remove(s.dir, { recursive: true });
}
