/**
 * Resolver definitions (`/resolver/`) and resolver instances for user lookups.
 * Secret config values are stored encrypted and shown as `__CENSORED__`.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ConfigAdminError, ParameterError, ResolverError } from "../../errors.ts";
import { CENSORED, decryptSecretText, encryptSecret, isEncrypted } from "../../lib/crypto.ts";
import {
  ENTRA_DEFAULT_VIEW,
  ENTRA_DICT_KEYS,
  ENTRA_SECRET_TARGETS,
  ENTRA_SECRETS,
  entraIdResolver,
} from "./entraid.ts";
import { KEYCLOAK_DEFAULT_VIEW, KEYCLOAK_PASSWORD_TARGETS, keycloakResolver } from "./keycloak.ts";
import {
  checkCaFile,
  LDAP_BINDPW_TARGETS,
  LDAP_DEFAULTS,
  ldapResolver,
  parseLdapConfig,
} from "./ldap.ts";
import {
  HTTP_DEFAULTS,
  HTTP_DICT_KEYS,
  HTTP_PASSWORD_TARGETS,
  httpResolver,
  type HttpUserStore,
} from "./http.ts";
import { checkPasswdFile, passwdResolver } from "./passwd.ts";
import { resolveDataPath } from "./paths.ts";
import {
  checkSqlStore,
  forgetSqlConnection,
  parseSqlConfig,
  SQL_DEFAULTS,
  SQL_PASSWORD_TARGETS,
  sqlConfigTestFailure,
  sqlResolver,
  type SqlResolverConfig,
} from "./sql.ts";
import { SCIM_SECRET_TARGETS, scimResolver } from "./scim.ts";
import * as store from "./resolver_store.ts";
import { forgetResolverUsers, userStoreGeneration } from "../user_cache/mod.ts";
import { refuseMovedSecrets, type SecretTargets } from "../secret_targets/mod.ts";
import { censorUrlPassword, keepUrlPassword } from "../secret_targets/url.ts";
import {
  censorObjectUrls,
  isTrueText,
  keepObjectUrlPasswords,
  mapSubSecrets,
  objectOf,
  subSecrets,
} from "./config_secrets.ts";
import type { ResolverTestResult, UserResolver } from "./types.ts";

export type { ResolverTestResult, UserInfo, UserListEntry, UserResolver } from "./types.ts";
export { USER_FIELDS } from "./types.ts";
export {
  closeSqlConnections,
  SQL_DEFAULT_MAP,
  type SqliteUserStore,
  sqliteUserStores,
} from "./sql.ts";
export type { ResolverRecord } from "./resolver_store.ts";
export { ownPaths, readAllUpTo, refuseOwnPath, resolveDataPath } from "./paths.ts";
export { checkCaFile, LDAP_BINDPW_TARGETS, parseServerSettings, readCaFile } from "./ldap.ts";
export * as ldapValues from "./ldap_values.ts";
export {
  type BindAs,
  ldapErrorText,
  LdapPool,
  ldapResultCode,
  type LdapServerSettings,
  LdapUnreachableError,
  type PoolStrategy,
} from "./ldap_pool.ts";

/** Resolver and realm names (spec 03 §1). */
export const NAME_REGEXP = /^[A-Za-z0-9_\-.]{1,255}$/;

/** What mod.ts knows of a resolver type. */
interface TypeInfo {
  /** Secret keys; `key.sub` is a secret inside the JSON object stored under `key`. */
  secrets: string[];
  defaults: Record<string, unknown>;
  /** Keys holding JSON objects, listed as objects. */
  dicts?: string[];
  /** Per secret: the keys that decide where it is sent (a stored secret is not kept when they change). */
  secretTargets?: SecretTargets;
}

/** Resolver types Tessera implements, with their secret keys and defaults. */
const TYPES: Record<string, TypeInfo> = {
  passwdresolver: { secrets: [], defaults: { fileName: "/etc/passwd" } },
  sqlresolver: {
    secrets: ["Password"],
    defaults: SQL_DEFAULTS,
    secretTargets: { Password: SQL_PASSWORD_TARGETS },
  },
  ldapresolver: {
    secrets: ["BINDPW"],
    defaults: LDAP_DEFAULTS,
    secretTargets: { BINDPW: LDAP_BINDPW_TARGETS },
  },
  httpresolver: {
    secrets: ["password"],
    defaults: HTTP_DEFAULTS,
    dicts: HTTP_DICT_KEYS,
    secretTargets: { password: HTTP_PASSWORD_TARGETS },
  },
  entraidresolver: {
    secrets: ENTRA_SECRETS,
    defaults: ENTRA_DEFAULT_VIEW,
    dicts: ENTRA_DICT_KEYS,
    secretTargets: ENTRA_SECRET_TARGETS,
  },
  keycloakresolver: {
    secrets: ["password"],
    defaults: KEYCLOAK_DEFAULT_VIEW,
    dicts: HTTP_DICT_KEYS,
    secretTargets: { password: KEYCLOAK_PASSWORD_TARGETS },
  },
  scimresolver: {
    secrets: ["Secret"],
    defaults: {},
    secretTargets: { Secret: SCIM_SECRET_TARGETS },
  },
};

/** Types whose `Editable` flag makes them editable (privacyIDEA reads `Editable` or `EDITABLE`). */
const EDITABLE_KEY_TYPES = new Set([
  "sqlresolver",
  "httpresolver",
  "entraidresolver",
  "keycloakresolver",
]);

/** Parameters that are never part of a resolver's configuration. */
const NOT_CONFIG = new Set(["type", "resolver", "resolvername", "nonce"]);
const MAX_VALUE = 10_000;

/** A resolver as listed by `GET /resolver/`. */
export interface ResolverListEntry {
  resolvername: string;
  type: string;
  censor_keys: string[];
  data: Record<string, unknown>;
}

function knownType(type: string): TypeInfo {
  const t = TYPES[type];
  if (!t) {
    throw new ResolverError(
      `Cannot use resolver type "${type}": unknown type (known: ${Object.keys(TYPES).join(", ")})`,
    );
  }
  return t;
}

function checkName(name: string): void {
  if (!NAME_REGEXP.test(name)) {
    throw new ParameterError(
      `Cannot use resolver name "${name.slice(0, 64)}": only letters, digits and _ - . are allowed`,
    );
  }
}

function isEditable(rec: { type: string; config: Record<string, string> }): boolean {
  const flag = EDITABLE_KEY_TYPES.has(rec.type)
    ? rec.config.Editable
    : rec.type === "ldapresolver"
    ? rec.config.EDITABLE
    : undefined;
  return ["1", "true", "yes", "on"].includes((flag ?? "").trim().toLowerCase());
}

function censored(rec: store.ResolverRecord): ResolverListEntry {
  const { secrets, dicts } = knownType(rec.type);
  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rec.config)) {
    // a password inside a URL value (base_url=https://user:pw@host/) is censored on its own
    data[k] = secrets.includes(k) && v !== "" ? CENSORED : censorUrlPassword(v);
    // JSON objects are listed as objects (text that is no JSON object stays text)
    const obj = dicts?.includes(k) || (k === "headers" && dicts && isTrueText(rec.config.advanced))
      ? objectOf(v)
      : undefined;
    if (obj) data[k] = censorObjectUrls(obj);
    else if (data[k] === v && v.includes("@")) {
      // JSON object text listed as text: its URLs' passwords are censored inside it
      const text = objectOf(v);
      const shown = text && JSON.stringify(censorObjectUrls(text));
      if (shown && shown !== JSON.stringify(text)) data[k] = shown;
    }
  }
  for (const [key, sub] of subSecrets(secrets)) {
    const obj = objectOf(rec.config[key]);
    if (obj && typeof obj[sub] === "string" && obj[sub] !== "") {
      data[key] = { ...(objectOf(data[key]) ?? obj), [sub]: CENSORED };
    }
  }
  return { resolvername: rec.name, type: rec.type, censor_keys: secrets, data };
}

/** `GET /resolver/`: resolvers keyed by name, optionally filtered by type / editable / name. */
export async function listResolvers(
  deps: Deps,
  filter: { type?: string; editable?: boolean; name?: string } = {},
): Promise<Record<string, ResolverListEntry>> {
  const out: Record<string, ResolverListEntry> = {};
  for (const rec of await store.listResolvers(deps.db)) {
    if (filter.type && rec.type !== filter.type) continue;
    if (filter.name !== undefined && rec.name.toLowerCase() !== filter.name.toLowerCase()) continue;
    if (filter.editable !== undefined && isEditable(rec) !== filter.editable) continue;
    if (!TYPES[rec.type]) continue;
    out[rec.name] = censored(rec);
  }
  return out;
}

/** Turns request parameters into config values and `type.`/`desc.` metadata. */
export function configFromParams(params: Record<string, unknown>): {
  config: Record<string, string>;
  meta: Record<string, { type?: string; description?: string }>;
} {
  const config: Record<string, string> = {};
  const meta: Record<string, { type?: string; description?: string }> = {};
  for (const [key, raw] of Object.entries(params)) {
    if (NOT_CONFIG.has(key)) continue;
    let value: string;
    if (typeof raw === "string") value = raw;
    else if (typeof raw === "number" || typeof raw === "boolean") value = String(raw);
    else if (raw === null) value = "";
    else if (typeof raw === "object") value = JSON.stringify(raw);
    else continue;
    if (value.length > MAX_VALUE || key.length > 255 || value.includes("\0")) {
      throw new ParameterError(
        `Cannot use resolver config key "${key.slice(0, 64)}": value too long or invalid`,
      );
    }
    if (key.startsWith("type.")) (meta[key.slice(5)] ??= {}).type = value;
    else if (key.startsWith("desc.")) (meta[key.slice(5)] ??= {}).description = value;
    else config[key] = value;
  }
  return { config, meta };
}

/** A URL's or a JSON object's URLs' `__CENSORED__` passwords given their stored ones. */
function keepUrlPasswords(key: string, sent: string, stored: string | undefined): string {
  return keepObjectUrlPasswords(key, keepUrlPassword(key, sent, stored), stored);
}

/** Merges `incoming` over `stored`: "" deletes a key, `__CENSORED__` keeps the stored secret. */
function mergeConfig(
  stored: Record<string, string>,
  incoming: Record<string, string>,
  secrets: string[],
): Record<string, string> {
  const out = { ...stored };
  for (const [k, v] of Object.entries(incoming)) {
    if (v === "") delete out[k];
    else if (v === CENSORED && secrets.includes(k)) {
      if (!(k in stored)) delete out[k];
    } else out[k] = secrets.includes(k) ? v : keepUrlPasswords(k, v, stored[k]);
  }
  // "__CENSORED__" inside a JSON object value keeps the stored sub-value too
  return mapSubSecrets(out, secrets, (value, key, sub) => {
    if (value !== CENSORED) return value;
    const old = objectOf(stored[key])?.[sub];
    return typeof old === "string" ? old : undefined;
  });
}

function decryptConfig(deps: Deps, rec: { type: string; config: Record<string, string> }) {
  const secrets = TYPES[rec.type]?.secrets ?? [];
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(rec.config)) {
    out[k] = secrets.includes(k) && isEncrypted(v) ? decryptSecretText(deps.keys.config, v) : v;
  }
  return mapSubSecrets(
    out,
    secrets,
    (v) => isEncrypted(v) ? decryptSecretText(deps.keys.config, v) : v,
  );
}

function encryptConfig(deps: Deps, type: string, config: Record<string, string>) {
  const secrets = knownType(type).secrets;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) {
    out[k] = secrets.includes(k) && !isEncrypted(v)
      ? encryptSecret(deps.keys.config, v, deps.random)
      : v;
  }
  return mapSubSecrets(
    out,
    secrets,
    (v) => isEncrypted(v) || v === "" ? v : encryptSecret(deps.keys.config, v, deps.random),
  );
}

/**
 * Validates a (plain) configuration by building an instance from it and
 * checking the file it reads (never Tessera's own, and of the right kind).
 */
async function validateConfig(
  deps: Deps,
  name: string,
  type: string,
  config: Record<string, string>,
  options: { isCreating: boolean },
): Promise<void> {
  const built = buildInstance(deps, { name, type, config, updatedAt: 0 });
  if (built.problem) throw built.problem;
  await checkStoreFile(deps, name, type, built, { isSaving: true, ...options });
}

/** Checks the file of a resolver being saved or tested; ParameterError (400) when refused. */
async function checkStoreFile(
  deps: Deps,
  name: string,
  type: string,
  built: Built,
  options: { isSaving?: boolean; isCreating?: boolean } = {},
): Promise<void> {
  if (built.check) await built.check();
  if (built.sql) {
    checkSqlStore(name, built.sql, deps.config, {
      isCreating: options.isCreating,
      log: options.isSaving ? deps.log : undefined,
    });
  }
  const file = built.file;
  if (file === undefined) return;
  if (type === "passwdresolver") await checkPasswdFile(file, deps.config);
  else if (type === "ldapresolver") await checkCaFile(file, deps.config);
}

/** `POST /resolver/<name>`: creates or updates a resolver; returns its id. */
export async function saveResolver(
  deps: Deps,
  name: string,
  input: { type: string; params: Record<string, unknown> },
): Promise<number> {
  const id = await saveResolverOnce(deps, name, input, true);
  // as privacyIDEA: every save empties the resolver's rows of the user cache
  await forgetResolverUsers(deps, name);
  return id;
}

async function saveResolverOnce(
  deps: Deps,
  name: string,
  input: { type: string; params: Record<string, unknown> },
  mayRetry: boolean,
): Promise<number> {
  checkName(name);
  const { secrets } = knownType(input.type);
  const { config, meta } = configFromParams(input.params);
  const now = deps.clock.now();
  const existing = await store.findResolver(deps.db, name);
  if (existing) {
    if (existing.type !== input.type) {
      throw new ResolverError(
        `Cannot save resolver "${name}": resolver with similar name and other type already exists`,
      );
    }
    const stored = decryptConfig(deps, existing);
    const merged = mergeConfig(stored, config, secrets);
    refuseMovedSecrets(
      TYPES[input.type]?.secretTargets,
      stored,
      merged,
      (k) => config[k] === undefined || config[k] === CENSORED,
    );
    await validateConfig(deps, name, input.type, merged, { isCreating: false });
    await store.updateResolver(deps.db, existing.id, {
      config: encryptConfig(deps, input.type, merged),
      meta: { ...existing.meta, ...meta },
      updatedAt: Math.max(now, existing.updatedAt + 1),
    });
    return existing.id;
  }
  const fresh = mergeConfig({}, config, secrets);
  await validateConfig(deps, name, input.type, fresh, { isCreating: true });
  const id = await store.insertResolver(deps.db, {
    name,
    type: input.type,
    config: encryptConfig(deps, input.type, fresh),
    meta,
    updatedAt: now,
  });
  if (id === undefined) {
    // a parallel request created it first: this request becomes an update
    if (mayRetry) return await saveResolverOnce(deps, name, input, false);
    throw new ResolverError(`Cannot create resolver "${name}": the resolver already exists`);
  }
  return id;
}

/** `DELETE /resolver/<name>`: the deleted id, -1 when unknown; refused while in a realm. */
export async function deleteResolver(deps: Deps, name: string): Promise<number> {
  const id = await store.inTransaction(deps.db, async (trx) => {
    const rec = await store.findResolver(trx, name);
    if (!rec) return -1;
    const realms = await store.realmsOfResolver(trx, rec.id);
    if (realms.length > 0) {
      throw new ConfigAdminError(
        `The resolver '${name}' is still contained in realm '${realms[0]}'.`,
      );
    }
    await store.deleteResolver(trx, rec.id);
    return rec.id;
  });
  if (id !== -1) await forgetSqlConnection(deps.db, name);
  if (id !== -1) await forgetResolverUsers(deps, name);
  return id;
}

/** `POST /resolver/test`: checks a configuration without storing it. */
export async function testResolver(
  deps: Deps,
  input: { type: string; params: Record<string, unknown>; resolver?: string },
): Promise<ResolverTestResult> {
  const { secrets } = knownType(input.type);
  const { config } = configFromParams(input.params);
  let base: Record<string, string> = {};
  if (input.resolver) {
    const rec = await store.findResolver(deps.db, input.resolver);
    if (rec && rec.type === input.type) base = decryptConfig(deps, rec);
  }
  // "__CENSORED__" means: use the stored secret of the named resolver
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) {
    if (v === CENSORED && secrets.includes(k)) {
      if (k in base) merged[k] = base[k];
    } else if (v !== "") merged[k] = secrets.includes(k) ? v : keepUrlPasswords(k, v, base[k]);
  }
  refuseMovedSecrets(TYPES[input.type]?.secretTargets, base, merged, (k) => config[k] === CENSORED);
  const tested = mapSubSecrets(merged, secrets, (value, key, sub) => {
    if (value !== CENSORED) return value;
    const old = objectOf(base[key])?.[sub];
    return typeof old === "string" ? old : undefined;
  });
  let built: Built;
  try {
    built = buildInstance(deps, {
      name: input.resolver ?? "test",
      type: input.type,
      config: tested,
      updatedAt: -1,
    });
  } catch (err) {
    if (input.type === "sqlresolver") return sqlConfigTestFailure(err);
    return { success: false, description: (err as Error).message };
  }
  // a refused file is a bad parameter (400), as on save, not a failed test
  await checkStoreFile(deps, input.resolver ?? "test", input.type, built);
  return await built.instance.test();
}

/** `GET /resolver/<type>/default`: the default configuration of a type. */
export function resolverDefaults(type: string): Record<string, unknown> {
  return { ...knownType(type).defaults };
}

/** A resolver instance and the file it reads (absolute), if any. */
interface Built {
  instance: UserResolver;
  file?: string;
  /** A sqlresolver's parsed configuration. */
  sql?: SqlResolverConfig;
  /** Why the configuration cannot work (saving it is refused). */
  problem?: Error;
  /** Checks the files the configuration names (on save and test). */
  check?: () => Promise<void>;
}

function buildInstance(
  deps: Deps,
  rec: { name: string; type: string; config: Record<string, string>; updatedAt: number },
): Built {
  switch (rec.type) {
    case "passwdresolver": {
      const fileName = (rec.config.fileName ?? rec.config.filename ?? "").trim() || "/etc/passwd";
      const file = resolveDataPath(deps.config.storage.dataDir, fileName, "fileName");
      // the instance checks every version of the file it reads against Tessera's own files
      return { instance: passwdResolver(rec.name, file, { config: deps.config }), file };
    }
    case "sqlresolver": {
      const cfg = parseSqlConfig(rec.name, rec.config, deps.config.storage.dataDir);
      const instance = sqlResolver({
        name: rec.name,
        config: cfg,
        cacheKey: `${rec.updatedAt}:${JSON.stringify(rec.config)}`,
        owner: deps.db,
        random: deps.random,
        appConfig: deps.config,
        log: deps.log,
      });
      // a database server has no file of this node's to check
      return { instance, file: cfg.server ? undefined : cfg.database, sql: cfg };
    }
    case "ldapresolver": {
      const cfg = parseLdapConfig(rec.name, rec.config, deps.config.storage.dataDir);
      const instance = ldapResolver({
        name: rec.name,
        config: cfg,
        now: () => deps.clock.now(),
        random: deps.random,
        log: deps.log,
        appConfig: deps.config,
        generation: () => userStoreGeneration(deps),
      });
      // the CA file is the one file an LDAP resolver reads
      return { instance, file: cfg.server.tlsCaFile };
    }
    case "httpresolver":
      return httpBuilt(httpResolver(httpOptions(deps, rec)));
    case "entraidresolver":
      return httpBuilt(entraIdResolver(httpOptions(deps, rec)));
    case "keycloakresolver":
      return httpBuilt(keycloakResolver(httpOptions(deps, rec)));
    case "scimresolver": {
      const instance = scimResolver(httpOptions(deps, rec));
      return { instance, problem: instance.problem, check: () => instance.checkFiles() };
    }
    default:
      throw knownType(rec.type) && new ResolverError(`Cannot use resolver type "${rec.type}"`);
  }
}

function httpOptions(deps: Deps, rec: { name: string; config: Record<string, string> }) {
  return {
    name: rec.name,
    config: rec.config,
    now: () => deps.clock.now(),
    log: deps.log,
    appConfig: deps.config,
    random: deps.random,
  };
}

function httpBuilt(instance: HttpUserStore): Built {
  return { instance, problem: instance.problem, check: () => instance.checkFiles() };
}

/** The instance of a stored resolver, or undefined when no such resolver exists. */
export async function getResolver(deps: Deps, name: string): Promise<UserResolver | undefined> {
  const rec = await store.findResolver(deps.db, name);
  return rec ? instanceOf(deps, rec) : undefined;
}

// Instances built from a record read in this request, reused while the record is
// the same: a pure function of the stored row (id, type, config, updated_at) and
// the process config, so every request still reads the row from the database.
const INSTANCES = new WeakMap<
  Deps,
  Map<string, { key: string; db: object; instance: UserResolver }>
>();

const BY_RECORD = new WeakMap<
  store.ResolverRecord,
  { deps: Deps; db: object; instance: UserResolver }
>();

/** The instance of a loaded resolver record. */
export function instanceOf(deps: Deps, rec: store.ResolverRecord): UserResolver {
  // the realm store hands out the same frozen record while the row is unchanged
  const same = BY_RECORD.get(rec);
  if (same !== undefined && same.deps === deps && same.db === deps.db) return same.instance;
  let byName = INSTANCES.get(deps);
  if (byName === undefined) INSTANCES.set(deps, byName = new Map());
  const key = `${rec.id}\0${rec.type}\0${rec.updatedAt}\0${JSON.stringify(rec.config)}`;
  const cached = byName.get(rec.name);
  let instance: UserResolver;
  if (cached !== undefined && cached.key === key && cached.db === deps.db) {
    instance = cached.instance;
  } else {
    instance = buildInstance(deps, { ...rec, config: decryptConfig(deps, rec) }).instance;
    byName.set(rec.name, { key, db: deps.db, instance });
  }
  if (Object.isFrozen(rec)) BY_RECORD.set(rec, { deps, db: deps.db, instance });
  return instance;
}

/** The resolver types `GET /healthz/resolversz` probes: privacyIDEA's LDAP and SQL, and the HTTP family. */
export const PROBED_TYPES = [
  "ldapresolver",
  "sqlresolver",
  "httpresolver",
  "entraidresolver",
  "keycloakresolver",
  "scimresolver",
] as const;

/** A type `GET /healthz/resolversz` probes. */
export type ProbedType = typeof PROBED_TYPES[number];

/** What `GET /healthz/resolversz` reports: every resolver of a probed type, reachable or not. */
export interface ResolverProbe {
  /** `OK` when every probed resolver answered, else `fail`. */
  status: "OK" | "fail";
  /** Per probed type (each present, also when empty), resolver name → `OK` or `fail`. */
  details: Record<ProbedType, Record<string, "OK" | "fail">>;
}

/** Seconds a probe result is reused. */
export const RESOLVER_PROBE_SECONDS = 10;

// Probing opens a connection to every backend, and the endpoint answers anonymous callers: one
// result per database is reused for RESOLVER_PROBE_SECONDS, so callers cannot make this node
// reconnect at will (privacyIDEA does the same). It reports what this node sees; nothing needs to
// agree across nodes, and a result is never older than that.
const PROBES = new WeakMap<object, { at: number; result: Promise<ResolverProbe> }>();

/** Tests the connection of every resolver of a probed type (a result is reused for 10 s). */
export function probeResolvers(deps: Deps): Promise<ResolverProbe> {
  const now = deps.clock.now();
  const last = PROBES.get(deps.db);
  if (last && now >= last.at && now - last.at < RESOLVER_PROBE_SECONDS * 1000) return last.result;
  const entry = { at: now, result: runProbe(deps) };
  PROBES.set(deps.db, entry);
  // a probe that failed as a whole (the database) is not reused
  entry.result.catch(() => {
    if (PROBES.get(deps.db) === entry) PROBES.delete(deps.db);
  });
  return entry.result;
}

async function runProbe(deps: Deps): Promise<ResolverProbe> {
  const isProbed = (type: string): type is ProbedType =>
    (PROBED_TYPES as readonly string[]).includes(type);
  const records = (await store.listResolvers(deps.db)).filter((r) => isProbed(r.type));
  const results = await Promise.all(records.map(async (rec) => {
    try {
      return (await instanceOf(deps, rec).test()).success;
    } catch {
      return false;
    }
  }));
  const details = Object.fromEntries(PROBED_TYPES.map((t) => [t, {}])) as ResolverProbe["details"];
  const out: ResolverProbe = { status: "OK", details };
  records.forEach((rec, i) => {
    if (!results[i]) out.status = "fail";
    details[rec.type as ProbedType][rec.name] = results[i] ? "OK" : "fail";
  });
  return out;
}

/** Whether the stored resolver `name` exists. */
export async function resolverExists(deps: Deps, name: string): Promise<boolean> {
  return (await store.findResolver(deps.db, name)) !== undefined;
}
