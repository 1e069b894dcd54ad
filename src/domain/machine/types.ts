/**
 * The machine model and the interface every machine resolver type implements.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { SecretTargets } from "../secret_targets/mod.ts";

/** One machine as a resolver reports it (spec 07 §3). */
export interface Machine {
  /** Machine id within its resolver (hosts: the address as written). */
  id: string;
  /** Every host name of the machine (possibly empty). */
  hostname: string[];
  /** Normalised address, null when unknown, a list when the resolver returns several. */
  ip: string | string[] | null;
  /** Name of the resolver that reported the machine. */
  resolverName: string;
}

/** Filters of a machine query; all given filters must match. */
export interface MachineFilter {
  /** Substring of any host name (case-sensitive). */
  hostname?: string;
  /** Exact membership in the host name list (used to resolve one host). */
  exactHostname?: string;
  /** Exact address equality (already validated and normalised). */
  ip?: string;
  /** Substring of the machine id. */
  id?: string;
  /** Substring of the id, of any host name or of the textual address. */
  any?: string;
}

/** A configured machine resolver that can list machines. */
export interface MachineSource {
  /** Returns the machines that match `filter`, in resolver order. */
  machines(filter: MachineFilter): Promise<Machine[]>;
}

/** Result of `POST /machineresolver/test`. */
export interface ResolverTestResult {
  ok: boolean;
  description: string;
}

/** A registered machine resolver type (`hosts`, `ldap`). */
export interface MachineResolverType {
  /** Type name as used in `type`. */
  readonly type: string;
  /** Declared config keys and their entry Type (`string`, `int`, `bool`, `password`). */
  readonly keys: Readonly<Record<string, string>>;
  /** Per secret key: the keys that decide where it is sent (see domain/secret_targets). */
  readonly secretTargets?: SecretTargets;
  /** Checks config values at save time; throws a ParameterError for bad values. */
  validate?(deps: Deps, config: Record<string, string>): void;
  /** Builds a source from a stored (decrypted) config. */
  open(deps: Deps, name: string, config: Record<string, string>): MachineSource;
  /** Tests a config without storing it. */
  test(deps: Deps, config: Record<string, string>): Promise<ResolverTestResult>;
}

/** True when `machine` passes every filter of `filter` (spec 07 §3 matching rules). */
export function matchesFilter(machine: Machine, filter: MachineFilter): boolean {
  const ips = machine.ip === null ? [] : Array.isArray(machine.ip) ? machine.ip : [machine.ip];
  if (
    filter.hostname !== undefined && !machine.hostname.some((h) => h.includes(filter.hostname!))
  ) {
    return false;
  }
  if (filter.exactHostname !== undefined && !machine.hostname.includes(filter.exactHostname)) {
    return false;
  }
  if (filter.ip !== undefined && !ips.includes(filter.ip)) return false;
  if (filter.id !== undefined && !machine.id.includes(filter.id)) return false;
  if (filter.any !== undefined) {
    const a = filter.any;
    if (
      !machine.id.includes(a) && !machine.hostname.some((h) => h.includes(a)) &&
      !ips.some((ip) => ip.includes(a))
    ) {
      return false;
    }
  }
  return true;
}
