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
import { createApp } from "../src/app.ts";
import { benchDeps } from "./lib/deps.ts";
import { compareRoundRobin, type Subject } from "./lib/round_robin.ts";
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

const subjects = [
  await subject("none"),
  await subject("nonMatching", "validate_check"),
  await subject("otherEvents", "token_init,token_delete"),
];
await compareRoundRobin("POST /validate/check (spass)", subjects, N);
