/**
 * Machine-token bindings (`/machine/token`, `/machine/tokenoption`, spec 07 §4):
 * attach, detach, list (token view and filter view) and options.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, ResourceNotFoundError } from "../../errors.ts";
import type { Token } from "../token/mod.ts";
import { findBySerial } from "../token/token_store.ts";
import { machineError } from "./_errors.ts";
import { findMachines, type MachineRef, machineRefOf } from "./machines.ts";
import * as store from "./machine_token_store.ts";

/** Applications a token can be attached for. */
export const APPLICATIONS: readonly string[] = ["luks", "offline", "ssh"];

/** Machine id / resolver / host name shown for a binding without a machine. */
export const ANY_MACHINE = "any machine";
export const NO_RESOLVER = "no resolver";
export const ANY_HOST = "any host";

const MAX_OPTION = 64;

/** Identification of a machine in a request (all optional). */
export interface MachineParams {
  hostname?: string;
  machineid?: string;
  resolver?: string;
}

/** A binding as the token view of `GET /machine/token` shows it. */
export interface TokenViewItem {
  machine_id: string;
  hostname: string;
  application: string;
  resolver: string | null;
  options: Record<string, string>;
  id: number;
  serial: string;
}

/** A binding as the filter view of `GET /machine/token` shows it. */
export interface FilterViewItem {
  serial: string;
  machine_id: string | null;
  resolver: string | null;
  type: string;
  application: string;
  id: number;
  options: Record<string, string>;
}

/** Query of `GET /machine/token`. */
export interface BindingQuery extends MachineParams {
  serial?: string;
  application?: string;
  sortby?: string;
  sortdir?: string;
  /** Option filters: exact value, or a `*` pattern. */
  filters?: Record<string, string>;
}

/** The token with `serial` or 404 (spec 07 §4.2 message). */
export async function tokenOrNotFound(deps: Deps, serial: string): Promise<Token> {
  const token = await findBySerial(deps.db, serial);
  if (!token) throw new ResourceNotFoundError(`Token with serial ${serial} does not exist.`);
  return token;
}

function checkApplication(application: string): void {
  if (!APPLICATIONS.includes(application)) {
    throw new ParameterError(
      `Application ${application} is not supported. Supported applications: ${
        APPLICATIONS.join(", ")
      }`,
    );
  }
}

/** Turns option params into strings (≤ 64 characters each). */
export function optionValues(params: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(params)) {
    if (raw === undefined || raw === null) continue;
    let value: string;
    if (typeof raw === "string") value = raw;
    else if (typeof raw === "number" || typeof raw === "boolean") value = String(raw);
    else throw new ParameterError(`Cannot parse option "${key}": expected a string`);
    if (key.length > MAX_OPTION || value.length > MAX_OPTION) {
      throw new ParameterError(
        `Cannot set option "${
          key.slice(0, MAX_OPTION)
        }": key and value may have at most ${MAX_OPTION} characters`,
      );
    }
    out[key] = value;
  }
  return out;
}

/** `resolver: ""` means "no machine" (spec 07 §4.2). */
function normalizeMachine(m: MachineParams): MachineParams {
  if (m.resolver === "") return { hostname: m.hostname };
  return m;
}

/** Attaches token `serial` for `application` (optionally to a machine); returns the binding id. */
export async function attachToken(
  deps: Deps,
  req: MachineParams & { serial: string; application: string; options?: Record<string, string> },
): Promise<number> {
  checkApplication(req.application);
  const token = await tokenOrNotFound(deps, req.serial);
  const ref = await machineRefOf(deps, normalizeMachine(req));
  return await deps.db.transaction().execute(async (trx) =>
    await store.insertBinding(trx, {
      tokenId: token.id,
      resolverId: ref?.resolverId ?? null,
      machineId: ref?.machineId ?? null,
      application: req.application,
    }, req.options ?? {})
  );
}

/**
 * Detaches token `serial` from machine `machineid` of resolver `resolver` for
 * `application`; "any machine"/"no resolver" detaches every binding of the
 * token for that application. Returns the number of bindings deleted.
 */
export async function detachToken(
  deps: Deps,
  req: { serial: string; machineid: string; resolver: string; application: string },
): Promise<number> {
  const token = await tokenOrNotFound(deps, req.serial);
  const anyMachine = req.machineid === ANY_MACHINE && req.resolver === NO_RESOLVER;
  return await deps.db.transaction().execute(async (trx) => {
    const bindings = await store.findBindings(trx, {
      tokenId: token.id,
      application: req.application,
    });
    const ids = bindings
      .filter((b) =>
        anyMachine || (b.machineId === req.machineid && b.resolverName === req.resolver)
      )
      .map((b) => b.id);
    return await store.deleteBindings(trx, ids);
  });
}

/** Deletes binding `mtid` (serial and application are not checked [quirk]); returns 1. */
export async function detachBinding(deps: Deps, mtid: number): Promise<number> {
  return await deps.db.transaction().execute(async (trx) => {
    const n = await store.deleteBindings(trx, [mtid]);
    if (n === 0) throw machineError(`There is no machine token with id ${mtid}`);
    return n;
  });
}

/** `*` pattern → case-insensitive regexp anchored at the start (spec 07 §4.4). */
function starRegexp(pattern: string): RegExp {
  const body = pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${body}`, "i");
}

function optionMatches(options: Record<string, string>, key: string, wanted: string): boolean {
  if (wanted.includes("*")) return starRegexp(wanted).test(options[key] ?? "");
  return options[key] === wanted;
}

function sortItems<T extends { serial: string; options: Record<string, string> }>(
  items: T[],
  sortby: string | undefined,
  sortdir: string | undefined,
): T[] {
  const by = sortby || "serial";
  const keyOf = (i: T) => by === "serial" ? i.serial : i.options[by] ?? "";
  const sorted = items
    .map((item, index) => ({ item, index, key: keyOf(item) }))
    .sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : a.index - b.index)
    .map((x) => x.item);
  return sortdir === "desc" ? sorted.reverse() : sorted;
}

/** True when the token view applies: a plain serial and no machine or option filters. */
function isTokenView(q: BindingQuery): boolean {
  return q.serial !== undefined && q.serial !== "" && !q.serial.includes("*") &&
    !q.hostname && !q.machineid && !q.resolver &&
    Object.keys(q.filters ?? {}).length === 0;
}

/** Selected bindings plus the machine the query named (filter view, spec 07 §4.4 mode B). */
export async function selectBindings(
  deps: Deps,
  q: BindingQuery,
): Promise<{ bindings: store.BindingRow[]; machine: MachineRef | undefined }> {
  let m: MachineParams = { hostname: q.hostname, machineid: q.machineid, resolver: q.resolver };
  if (q.machineid === ANY_MACHINE) m = {};
  const filters = q.filters ?? {};
  let machine: MachineRef | undefined;
  // a service_id filter identifies the binding; the machine is then ignored
  if (filters.service_id === undefined) machine = await machineRefOf(deps, m);
  let bindings = await store.findBindings(deps.db, {
    application: q.application || undefined,
    machine: machine && { resolverId: machine.resolverId, machineId: machine.machineId },
  });
  if (q.serial) {
    const s = q.serial;
    if (s.includes("*")) {
      const re = starRegexp(s);
      bindings = bindings.filter((b) => re.test(b.serial));
    } else {
      bindings = bindings.filter((b) => b.serial === s);
    }
  }
  for (const [key, wanted] of Object.entries(filters)) {
    bindings = bindings.filter((b) => optionMatches(b.options, key, wanted));
  }
  return { bindings, machine };
}

/**
 * Lists bindings (`GET /machine/token`): the token view for a plain serial
 * without other filters, else the filter view. No paging.
 */
export async function listBindings(
  deps: Deps,
  q: BindingQuery,
): Promise<TokenViewItem[] | FilterViewItem[]> {
  if (isTokenView(q)) {
    const token = await tokenOrNotFound(deps, q.serial!);
    // [quirk] application is ignored in the token view
    const bindings = await store.findBindings(deps.db, { tokenId: token.id });
    const items: TokenViewItem[] = [];
    for (const b of bindings) {
      if (b.machineId === null && b.resolverId === null) {
        items.push({
          machine_id: ANY_MACHINE,
          hostname: ANY_HOST,
          application: b.application,
          resolver: NO_RESOLVER,
          options: b.options,
          id: b.id,
          serial: b.serial,
        });
        continue;
      }
      let hostname = "unknown";
      if (b.resolverName !== null && b.machineId !== null) {
        const found = await findMachines(deps, b.machineId, b.resolverName);
        if (found.length === 1 && found[0].hostname.length > 0) hostname = found[0].hostname[0];
      }
      items.push({
        machine_id: b.machineId ?? ANY_MACHINE,
        hostname,
        application: b.application,
        resolver: b.resolverName,
        options: b.options,
        id: b.id,
        serial: b.serial,
      });
    }
    return sortItems(items, q.sortby, q.sortdir);
  }
  const { bindings, machine } = await selectBindings(deps, q);
  const items: FilterViewItem[] = bindings.map((b) => ({
    serial: b.serial,
    // [quirk] the queried machine is echoed, not the binding's own
    machine_id: machine?.machineId ?? null,
    resolver: machine?.resolverName ?? null,
    type: b.tokenType,
    application: b.application,
    id: b.id,
    options: b.options,
  }));
  return sortItems(items, q.sortby, q.sortdir);
}

/** Request of `POST /machine/tokenoption`. */
export interface OptionRequest extends MachineParams {
  mtid?: number;
  serial?: string;
  application?: string;
  /** Non-empty value: add/overwrite; empty value: delete. */
  options: Record<string, string>;
}

/**
 * Sets (non-empty value) or deletes (empty value) options of one binding,
 * named by `mtid` or by serial, application and machine. Returns the counts
 * of requested keys.
 */
export async function setBindingOptions(
  deps: Deps,
  req: OptionRequest,
): Promise<{ added: number; deleted: number }> {
  let mtid = req.mtid;
  if (mtid === undefined) {
    if (!req.serial) throw new ParameterError("Missing parameter: serial");
    if (!req.application) throw new ParameterError("Missing parameter: application");
    const token = await tokenOrNotFound(deps, req.serial);
    const ref = await machineRefOf(deps, req);
    if (!ref) throw machineError("Incomplete tuple of machine_id and resolver_name");
    const found = await store.findBindings(deps.db, {
      tokenId: token.id,
      application: req.application,
      machine: { resolverId: ref.resolverId, machineId: ref.machineId },
    });
    if (found.length === 0) {
      throw machineError(
        `There is no machine token for serial ${req.serial}, application ${req.application} and this machine`,
      );
    }
    mtid = found[0].id;
  }
  const id = mtid;
  const add: Record<string, string> = {};
  const del: string[] = [];
  for (const [k, v] of Object.entries(req.options)) {
    if (v === "") del.push(k);
    else add[k] = v;
  }
  return await deps.db.transaction().execute(async (trx) => {
    const exists = await store.findBindings(trx, { ids: [id] });
    if (exists.length === 0) throw machineError(`There is no machine token with id ${id}`);
    await store.upsertOptions(trx, id, add);
    for (const key of del) {
      if (await store.deleteOption(trx, id, key) === 0) {
        throw machineError(`The option "${key}" does not exist for machine token ${id}`);
      }
    }
    return { added: Object.keys(add).length, deleted: del.length };
  });
}
