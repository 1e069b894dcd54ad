/**
 * Measures what the event engine costs on /validate/check. Three apps on their
 * own file databases: no event definitions, 10 definitions on validate_check
 * whose conditions do not hold, and 10 definitions on other events. Requests go
 * round-robin to the three apps and each request is timed, so load spikes from
 * other processes hit all three alike. Wall time and process CPU time (user +
 * system) per request are reported; CPU time is the steadier figure on a busy machine.
 * Run: deno run -A bench/event_overhead.ts [requests per app]
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
import { saveEventDefinition } from "../src/domain/event/mod.ts";

const N = Number(Deno.args[0] ?? 5000);

// conditions that never hold for a successful check of BENCH1 from 127.0.0.1
const NON_MATCHING: Record<string, string>[] = [
  { result_value: "False" },
  { serial: "OTHER" },
  { client_ip: "10.0.0.0/8" },
  { result_authentication: "REJECT" },
  { detail_message: "^no such message$" },
  { logged_in_user: "admin" },
  { result_status: "False" },
  { serial: "X", result_value: "False" },
  { client_ip: "192.0.2.1" },
  { result_value: "False", detail_error_message: "x" },
];

interface Subject {
  name: string;
  app: Hono<AppEnv>;
  deps: Deps;
  dir: string;
  ms: number[];
  cpuUs: number[];
}

async function subject(name: string, event?: string): Promise<Subject> {
  const { deps, dir } = await benchDeps();
  await initToken(deps, { type: "spass", serial: "BENCH1", pin: "1234" });
  if (event) {
    for (const [i, conditions] of NON_MATCHING.entries()) {
      await saveEventDefinition(deps, {
        name: `bench${i}`,
        event,
        handlermodule: i % 2 ? "Counter" : "Logging",
        action: i % 2 ? "increase_counter" : "logging",
        "option.counter_name": "bench",
        conditions,
      });
    }
  }
  return { name, app: createApp(deps), deps, dir, ms: [], cpuUs: [] };
}

async function once(s: Subject): Promise<[number, number]> {
  const c0 = cpuUsage();
  const t0 = performance.now();
  const res = await s.app.request("/validate/check", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "serial=BENCH1&pass=1234",
  });
  const json = await res.json();
  if (json.result?.value !== true) throw new Error(`unexpected answer: ${JSON.stringify(json)}`);
  const ms = performance.now() - t0;
  const c1 = cpuUsage(c0);
  return [ms, c1.user + c1.system];
}

const subjects = [
  await subject("none"),
  await subject("nonMatching", "validate_check"),
  await subject("otherEvents", "token_init,token_delete"),
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
console.log(`POST /validate/check (spass), ${N} requests per app, round-robin`);
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
