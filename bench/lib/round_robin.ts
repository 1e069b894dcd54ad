/**
 * Round-robin comparison of in-process apps (bench/event_overhead.ts,
 * bench/policy_overhead.ts): the same spass check against each app in turn,
 * so load spikes from other processes hit all alike; wall and process CPU
 * time per request are reported against the first app.
 *
 * @module
 */
import { cpuUsage } from "node:process";
import type { Hono } from "hono";
import type { Deps } from "../../src/deps.ts";
import type { AppEnv } from "../../src/http/context.ts";

/** One app under comparison. */
export interface Subject {
  name: string;
  app: Hono<AppEnv>;
  deps: Deps;
  dir: string;
  ms: number[];
  cpuUs: number[];
  /** Client address of each request (default 127.0.0.1). */
  clientIp?: () => string;
}

/** One `serial=BENCH1&pass=1234` check; wall ms and CPU µs. Throws unless accepted. */
async function once(s: Subject): Promise<[number, number]> {
  const hostname = s.clientIp?.() ?? "127.0.0.1";
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

/** Warms up, sends `n` checks to each subject in turn, prints the table, cleans up. */
export async function compareRoundRobin(title: string, subjects: Subject[], n: number) {
  for (let i = 0; i < 500; i++) for (const s of subjects) await once(s); // warm-up
  for (let i = 0; i < n; i++) {
    for (const s of subjects) {
      const [ms, cpu] = await once(s);
      s.ms.push(ms);
      s.cpuUs.push(cpu);
    }
  }
  const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = total(subjects[0].ms);
  console.log(`${title}, ${n} requests per app, round-robin`);
  for (const s of subjects) {
    const rate = n / (total(s.ms) / 1000);
    const pct = ((base / total(s.ms) - 1) * 100).toFixed(1);
    console.log(
      `${s.name.padEnd(12)} ${rate.toFixed(0).padStart(6)} req/s  ${pct.padStart(6)}% vs none` +
        `  median ${(median(s.ms) * 1000).toFixed(0)} µs wall` +
        `  CPU ${(total(s.cpuUs) / n).toFixed(0)} µs/req (${
          ((total(s.cpuUs) / total(subjects[0].cpuUs) - 1) * 100).toFixed(1)
        }%)`,
    );
  }
  for (const s of subjects) {
    await s.deps.audit.flush();
    await s.deps.db.destroy();
    await Deno.remove(s.dir, { recursive: true });
  }
}
