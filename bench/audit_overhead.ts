/**
 * Measures what the audit log costs per request: the same app with the real
 * AuditWriter (each row committed before its answer) and with a writer that
 * drops rows, on a file database. Requests go one at a time, so no two share
 * a commit: the most a row can cost.
 * Run: deno run -A bench/audit_overhead.ts [requests]
 *
 * @module
 */
import { createApp } from "../src/app.ts";
import { benchDeps } from "./lib/deps.ts";

const N = Number(Deno.args[0] ?? 20000);

async function measure(dropAudit: boolean): Promise<number> {
  const { deps, dir } = await benchDeps();
  if (dropAudit) deps.audit.write = () => Promise.resolve();
  const app = createApp(deps);
  const run = async (n: number) => {
    for (let i = 0; i < n; i++) await (await app.request("/healthz/?x=1")).arrayBuffer();
  };
  await run(2000);
  const t0 = performance.now();
  await run(N);
  await deps.audit.flush();
  const ms = performance.now() - t0;
  await deps.db.destroy();
  await Deno.remove(dir, { recursive: true });
  return N / (ms / 1000);
}

const without = await measure(true);
const withAudit = await measure(false);
const without2 = await measure(true);
const withAudit2 = await measure(false);
const a = (without + without2) / 2;
const b = (withAudit + withAudit2) / 2;
console.log(`requests: ${N} per run, two runs each`);
console.log(`without audit rows: ${a.toFixed(0)} req/s`);
console.log(
  `with audit rows:    ${b.toFixed(0)} req/s (${((1 - b / a) * 100).toFixed(1)}% slower)`,
);
