/**
 * Machine resolver administration (`/machineresolver/`, spec 07 §2).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { missingParameter, ParameterError, ResourceNotFoundError } from "../../errors.ts";
import { CENSORED, decryptSecretText, encryptSecret } from "../../lib/crypto.ts";
import { censorUrlPassword, keepUrlPassword } from "../secret_targets/url.ts";
import { refuseMovedSecrets } from "../secret_targets/mod.ts";
import { machineError } from "./_errors.ts";
import { HOSTS } from "./hosts.ts";
import { LDAP } from "./ldap.ts";
import * as store from "./machine_resolver_store.ts";
import type { MachineResolverType, MachineSource, ResolverTestResult } from "./types.ts";

/** Every registered machine resolver type by name. */
export const MACHINE_RESOLVER_TYPES: Readonly<Record<string, MachineResolverType>> = {
  hosts: HOSTS,
  ldap: LDAP,
};

/** Allowed resolver names. */
export const RESOLVER_NAME_REGEXP = /^[A-Za-z0-9_\-.]+$/;

const MAX_NAME = 255;
const MAX_VALUE = 65535;
const MAX_META = 2000;
/** Request keys that are never config entries. */
const NOT_CONFIG = new Set(["name", "type"]);

/** A machine resolver as `GET /machineresolver/` shows it. */
export interface ResolverView {
  resolvername: string;
  type: string;
  data: Record<string, string>;
}

/** An opened resolver: id, name and its machine source. */
export interface OpenResolver {
  id: number;
  name: string;
  type: string;
  source: MachineSource;
}

function typeOf(type: string): MachineResolverType {
  const t = MACHINE_RESOLVER_TYPES[type];
  if (t === undefined) {
    const valid = Object.keys(MACHINE_RESOLVER_TYPES).map((k) => `'${k}'`).join(", ");
    throw machineError(`machine resolver type : ${type} not in [${valid}]`);
  }
  return t;
}

function textOf(key: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") {
    // Python-style booleans, as privacyIDEA stores them
    return typeof value === "boolean" ? (value ? "True" : "False") : String(value);
  }
  throw new ParameterError(`Cannot parse parameter "${key}": expected a string`);
}

/** Splits request params into config entries (plain values, not yet encrypted). */
function configEntries(
  rtype: MachineResolverType,
  params: Record<string, unknown>,
): store.ConfigEntry[] {
  const values = new Map<string, string>();
  const types = new Map<string, string>();
  const descs = new Map<string, string>();
  for (const [key, raw] of Object.entries(params)) {
    if (NOT_CONFIG.has(key) || raw === undefined || raw === null) continue;
    const value = textOf(key, raw);
    if (key.startsWith("type.")) types.set(key.slice(5), value);
    else if (key.startsWith("desc.")) descs.set(key.slice(5), value);
    else values.set(key, value);
  }
  for (const k of [...types.keys(), ...descs.keys()]) {
    if (!values.has(k)) {
      throw new ParameterError(
        `Cannot save machine resolver: "type.${k}"/"desc.${k}" without "${k}"`,
      );
    }
  }
  const entries: store.ConfigEntry[] = [];
  for (const [key, value] of values) {
    if (key.length > MAX_NAME) {
      throw new ParameterError(`Cannot save machine resolver: key too long`);
    }
    if (value.length > MAX_VALUE) {
      throw new ParameterError(`Cannot save machine resolver: value of "${key}" too long`);
    }
    const type = rtype.keys[key] ?? types.get(key) ?? "";
    const description = descs.get(key) ?? "";
    if (type.length > MAX_META || description.length > MAX_META) {
      throw new ParameterError(
        `Cannot save machine resolver: type or description of "${key}" too long`,
      );
    }
    entries.push({ key, value, type, description });
  }
  return entries;
}

/**
 * Creates or updates machine resolver `name` from request params (`type` plus
 * config keys) and returns its id. Keys not given stay untouched.
 */
export async function saveMachineResolver(
  deps: Deps,
  name: string,
  params: Record<string, unknown>,
): Promise<number> {
  if (name.length > MAX_NAME) {
    throw new ParameterError("Cannot save machine resolver: name too long");
  }
  if (!RESOLVER_NAME_REGEXP.test(name)) {
    throw machineError(
      `non conformant characters in the name: ${name} (not in ^[A-Za-z0-9_\\-.]+$)`,
    );
  }
  const typeRaw = params.type;
  if (typeRaw === undefined || typeRaw === null || typeRaw === "") throw missingParameter("type");
  const typeName = textOf("type", typeRaw);
  const rtype = typeOf(typeName);
  const entries = configEntries(rtype, params);
  rtype.validate?.(deps, Object.fromEntries(entries.map((e) => [e.key, e.value])));
  let stored = entries
    // a censored secret coming back from a GET is not a new value: keep the stored one
    .filter((e) => !(e.type === "password" && e.value === CENSORED))
    .map((e) =>
      e.type === "password"
        ? { ...e, value: encryptSecret(deps.keys.config, e.value, deps.random) }
        : e
    );
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const existing = await store.findByNameKey(trx, name);
      let id: number;
      if (existing) {
        if (existing.type !== typeName) {
          throw machineError(
            `machine resolver with similar name and other type already exists: ${name}`,
          );
        }
        id = existing.id;
        // keys not given stay: compare what is stored with what the resolver would hold
        const before = Object.fromEntries(
          ((await store.configOf(trx, [id])).get(id) ?? []).map((e) => [e.key, e.value]),
        );
        stored = keepUrlPasswords(stored, before);
        const given = new Map(entries.map((e) => [e.key, e]));
        const after = { ...before, ...Object.fromEntries(stored.map((e) => [e.key, e.value])) };
        refuseMovedSecrets(rtype.secretTargets, before, after, (secret) => {
          const e = given.get(secret);
          return e === undefined || e.value === CENSORED;
        });
      } else {
        stored = keepUrlPasswords(stored, {});
        id = await store.insertResolver(trx, name, typeName);
      }
      await store.upsertConfig(trx, id, stored);
      return id;
    });
  } catch (err) {
    if (store.isUniqueViolation(err)) {
      throw new ParameterError(`Cannot create machine resolver "${name}": it already exists`);
    }
    throw err;
  }
}

/** A URL value sent back with its password as `__CENSORED__` keeps the stored one (same target). */
function keepUrlPasswords(
  entries: store.ConfigEntry[],
  before: Record<string, string>,
): store.ConfigEntry[] {
  return entries.map((e) =>
    e.type === "password" ? e : { ...e, value: keepUrlPassword(e.key, e.value, before[e.key]) }
  );
}

function viewOf(row: store.ResolverRow, config: store.ConfigEntry[]): ResolverView {
  const data: Record<string, string> = {};
  // a password inside a URL value (LDAPURI=ldap://user:pw@host) is censored on its own
  for (const e of config) {
    data[e.key] = e.type === "password" ? CENSORED : censorUrlPassword(e.value);
  }
  return { resolvername: row.name, type: row.type, data };
}

/**
 * Machine resolvers keyed by name (secrets censored). With `name` only that
 * resolver (case-insensitive; `{}` when unknown); with `type` only that type.
 */
export async function listMachineResolvers(
  deps: Deps,
  filter: { name?: string; type?: string } = {},
): Promise<Record<string, ResolverView>> {
  let rows: store.ResolverRow[];
  if (filter.name !== undefined) {
    const row = await store.findByNameKey(deps.db, filter.name);
    rows = row && (filter.type === undefined || row.type === filter.type) ? [row] : [];
  } else {
    rows = await store.listResolvers(deps.db, filter.type);
  }
  const config = await store.configOf(deps.db, rows.map((r) => r.id));
  const out: Record<string, ResolverView> = {};
  for (const r of rows) out[r.name] = viewOf(r, config.get(r.id) ?? []);
  return out;
}

/** Deletes machine resolver `name` (exact name) and returns its id; bindings stay. */
export async function deleteMachineResolver(deps: Deps, name: string): Promise<number> {
  return await deps.db.transaction().execute(async (trx) => {
    const row = await store.findByExactName(trx, name);
    if (!row) throw new ResourceNotFoundError("The requested MachineResolver could not be found.");
    await store.deleteResolver(trx, row.id);
    return row.id;
  });
}

/** Tests a resolver config without storing it (`POST /machineresolver/test`). */
export async function testMachineResolver(
  deps: Deps,
  params: Record<string, unknown>,
): Promise<ResolverTestResult> {
  const typeRaw = params.type;
  if (typeRaw === undefined || typeRaw === null || typeRaw === "") throw missingParameter("type");
  const rtype = typeOf(textOf("type", typeRaw));
  const entries = configEntries(rtype, params);
  return await rtype.test(deps, Object.fromEntries(entries.map((e) => [e.key, e.value])));
}

/** Decrypted config of stored entries (for opening a source, never for output). */
function plainConfig(deps: Deps, entries: store.ConfigEntry[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of entries) {
    out[e.key] = e.type === "password" ? decryptSecretText(deps.keys.config, e.value) : e.value;
  }
  return out;
}

/**
 * Opens every stored resolver (id order); with `nameContains`, only those whose
 * name contains it (case-sensitive substring, spec 07 §3).
 */
export async function openResolvers(
  deps: Deps,
  options: { nameContains?: string } = {},
): Promise<OpenResolver[]> {
  let rows = await store.listResolvers(deps.db);
  if (options.nameContains !== undefined) {
    rows = rows.filter((r) => r.name.includes(options.nameContains!));
  }
  const config = await store.configOf(deps.db, rows.map((r) => r.id));
  return rows.map((r) => {
    const type = MACHINE_RESOLVER_TYPES[r.type];
    if (!type) throw machineError(`Machine resolver "${r.name}" has unknown type "${r.type}"`);
    return {
      id: r.id,
      name: r.name,
      type: r.type,
      source: type.open(deps, r.name, plainConfig(deps, config.get(r.id) ?? [])),
    };
  });
}
