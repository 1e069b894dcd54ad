/**
 * Machine queries over every resolver (`GET /machine/`, spec 07 §3) and the
 * exact host lookup used by bindings and authentication items (§3.1).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ResourceNotFoundError } from "../../errors.ts";
import { machineError } from "./_errors.ts";
import { normalizeIp } from "./hosts.ts";
import * as resolverStore from "./machine_resolver_store.ts";
import { openResolvers } from "./resolvers.ts";
import type { Machine, MachineFilter } from "./types.ts";

/** Query of `GET /machine/`; every given filter must match. */
export interface MachineQuery {
  hostname?: string;
  ip?: string;
  id?: string;
  /** Substring of the resolver name. */
  resolver?: string;
  any?: string;
}

/** A machine as `GET /machine/` lists it. */
export interface MachineView {
  id: string;
  hostname: string[];
  ip: string | string[] | null;
  resolver_name: string;
}

/** A machine identified for a binding: resolver id and name plus machine id. */
export interface MachineRef {
  machineId: string;
  resolverId: number;
  resolverName: string;
}

/** Lists machines of every resolver (resolver id order, then resolver order). */
export async function listMachines(deps: Deps, query: MachineQuery = {}): Promise<MachineView[]> {
  const filter: MachineFilter = {};
  if (query.hostname) filter.hostname = query.hostname;
  if (query.id) filter.id = query.id;
  if (query.any) filter.any = query.any;
  if (query.ip) {
    // a value that is not an address is ignored, as privacyIDEA does
    const ip = normalizeIp(query.ip);
    if (ip !== undefined) filter.ip = ip;
  }
  const resolvers = await openResolvers(deps, { nameContains: query.resolver || undefined });
  const out: MachineView[] = [];
  for (const r of resolvers) {
    for (const m of await r.source.machines(filter)) out.push(viewOf(m));
  }
  return out;
}

function viewOf(m: Machine): MachineView {
  return { id: m.id, hostname: m.hostname, ip: m.ip, resolver_name: m.resolverName };
}

/**
 * Resolves host name `hostname` exactly (case-sensitive membership); exactly
 * one machine of all resolvers must carry it.
 */
export async function resolveHostname(deps: Deps, hostname: string): Promise<MachineRef> {
  const found: MachineRef[] = [];
  for (const r of await openResolvers(deps)) {
    for (const m of await r.source.machines({ exactHostname: hostname })) {
      found.push({ machineId: m.id, resolverId: r.id, resolverName: r.name });
    }
  }
  if (found.length > 1) {
    throw machineError(
      `Can not get unique ID for hostname=${hostname}. More than one machine found.`,
    );
  }
  if (found.length === 0) {
    throw machineError(`There is no machine with name='${hostname}' and IP=None`);
  }
  return found[0];
}

/**
 * The machine named by `hostname` or by the pair `machineid`/`resolver`;
 * undefined when none is given (binding without a machine). The pair is used as
 * is (the machine is not looked up), but the resolver must exist.
 */
export async function machineRefOf(
  deps: Deps,
  given: { hostname?: string; machineid?: string; resolver?: string },
): Promise<MachineRef | undefined> {
  const { hostname, machineid, resolver } = given;
  if (hostname) return await resolveHostname(deps, hostname);
  if (!machineid && !resolver) return undefined;
  if (!machineid || !resolver) {
    throw machineError("Incomplete tuple of machine_id and resolver_name");
  }
  const row = await resolverStore.findByExactName(deps.db, resolver);
  if (!row) throw new ResourceNotFoundError("The requested MachineResolver could not be found.");
  return { machineId: machineid, resolverId: row.id, resolverName: row.name };
}

/** Machines whose id contains `machineId` in resolvers whose name contains `resolverName`. */
export async function findMachines(
  deps: Deps,
  machineId: string,
  resolverName: string,
): Promise<Machine[]> {
  const out: Machine[] = [];
  for (const r of await openResolvers(deps, { nameContains: resolverName })) {
    out.push(...await r.source.machines({ id: machineId }));
  }
  return out;
}
