/**
 * SMS gateway definitions and periodic tasks of a privacyIDEA database, as
 * import items. Both go through the same saves as `POST /smsgateway` and
 * `POST /periodictask/`, so an imported definition is checked exactly as one
 * an administrator enters: a gateway whose provider or options Tessera cannot
 * use (a Firebase JSON file that is not on this machine, a provider module
 * Tessera lacks) or a task of a module Tessera lacks is reported as failed,
 * with the reason, and nothing of it is written.
 *
 * privacyIDEA keeps gateway options in clear (`smsgatewayoption`); Tessera
 * encrypts the secret ones on save. A task's last runs are not carried: the
 * schedule starts afresh on Tessera's nodes.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  FIREBASE_LEGACY_OPTIONS,
  FIREBASE_PROVIDER,
  HTTP_PROVIDER,
  listSmsGateways,
  saveSmsGateway,
  SCRIPT_PROVIDER,
  SIPGATE_PROVIDER,
  SMPP_PROVIDER,
  SMTP_PROVIDER,
} from "../smsgateway/mod.ts";
import {
  listPeriodicTasks,
  periodicTaskNodes,
  savePeriodicTask,
  taskModuleNames,
} from "../periodic_task/mod.ts";
import type { PiRow } from "./privacyidea_store.ts";
import { bool, groupBy, int, type PiItem, str } from "./_pi_items.ts";

const PROVIDERS = [
  HTTP_PROVIDER,
  SIPGATE_PROVIDER,
  SMTP_PROVIDER,
  SMPP_PROVIDER,
  SCRIPT_PROVIDER,
  FIREBASE_PROVIDER,
];

/** privacyIDEA's `smsgateway` rows with their `smsgatewayoption` rows (options and headers). */
export function smsGatewayItems(gateways: PiRow[], options: PiRow[]): PiItem[] {
  const byGateway = groupBy(options, "gateway_id");
  return gateways.map((g) => {
    const name = str(g.identifier);
    const params: Record<string, string> = {
      name,
      module: str(g.providermodule),
      description: g.description === null || g.description === undefined
        ? ""
        : String(g.description),
    };
    const dropped: string[] = [];
    for (const o of byGateway.get(int(g.id)) ?? []) {
      const type = str(o.Type) === "header" ? "header" : "option";
      if (
        params.module === FIREBASE_PROVIDER && type === "option" &&
        FIREBASE_LEGACY_OPTIONS.includes(str(o.Key))
      ) {
        // privacyIDEA's provider ignores them; kept, they would make the save refuse the definition
        dropped.push(`"${str(o.Key)}"`);
        continue;
      }
      params[`${type}.${str(o.Key)}`] = o.Value === null || o.Value === undefined
        ? ""
        : String(o.Value);
    }
    return {
      kind: "SMS gateways",
      name,
      note: dropped.length > 0
        ? `SMS gateways ${name}: the legacy Firebase option${dropped.length > 1 ? "s" : ""} ` +
          `${dropped.join(", ")} left out (privacyIDEA ignores them)`
        : undefined,
      exists: async (deps) => (await listSmsGateways(deps)).some((x) => x.name === name),
      refusal: () =>
        PROVIDERS.includes(params.module)
          ? undefined
          : `provider module "${params.module}", which Tessera does not have`,
      write: async (deps) => void await saveSmsGateway(deps, params),
    };
  });
}

/** privacyIDEA's `periodictask` rows with their `periodictaskoption` rows. */
export function periodicTaskItems(tasks: PiRow[], options: PiRow[]): PiItem[] {
  const byTask = groupBy(options, "periodictask_id");
  return tasks.map((t) => {
    const name = str(t.name);
    const nodes = str(t.nodes);
    return {
      kind: "periodic tasks",
      name,
      exists: async (deps) => (await listPeriodicTasks(deps)).some((x) => x.name === name),
      refusal: () =>
        taskModuleNames().includes(str(t.taskmodule))
          ? undefined
          : `task module "${str(t.taskmodule)}", which Tessera does not have`,
      write: async (deps) => {
        await savePeriodicTask(deps, {
          name,
          isActive: bool(t.active),
          isRetriedIfFailed: bool(t.retry_if_failed),
          interval: str(t.interval),
          nodes,
          taskmodule: str(t.taskmodule),
          ordering: int(t.ordering),
          options: Object.fromEntries(
            (byTask.get(int(t.id)) ?? []).map((o) => [
              str(o.key),
              o.value === null || o.value === undefined ? "" : String(o.value),
            ]),
          ),
        });
        return foreignNodesNote(deps, name, nodes);
      },
    };
  });
}

/** A task naming none of this server's node names never runs here: the note says so. */
function foreignNodesNote(deps: Deps, name: string, nodes: string): string | undefined {
  const own = periodicTaskNodes(deps);
  if (nodes.split(",").some((n) => own.includes(n.trim()))) return undefined;
  return `periodic tasks ${name}: runs on nodes ${nodes}, none of them this server ` +
    `(${own.join(", ")}): it runs once a node of that name serves, or after its nodes are edited`;
}
