/**
 * `ldapresolver`: users in an LDAP directory or Active Directory, with
 * privacyIDEA's configuration keys and meanings (spec 10).
 *
 * Searches run as the service account (`BINDDN`/`BINDPW`, anonymous when
 * empty) through a server pool (ldap_pool.ts); password checks bind as the
 * user's DN on a connection of their own. User input reaches the server only
 * as filter values (ldap_values.ts), never as filter text.
 *
 * Cache rule: login → uid, uid → DN and uid → attributes (with the groups)
 * found by a search are kept per process and per resolver instance for
 * `CACHE_TIMEOUT` seconds (0: not at all), at most {@link CACHE_MAX} entries
 * (oldest dropped first), and only while the user store generation they were
 * found under is current (`generation`, domain/user_cache: it moves when a
 * user is changed or deleted through Tessera on any node, and with
 * `DELETE /system/user-cache`; read at every lookup). The instance — and with
 * it the cache — is replaced whenever the stored resolver definition changes,
 * on every node (instances are keyed by the stored row). A change made in the
 * directory itself is seen once the entries expire, as in privacyIDEA.
 * Password results are never cached.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { SecureVersion } from "node:tls";
import { parse as parseYaml } from "yaml";
import { Attribute, Change, type Client, type Entry, type Filter } from "ldapts";
import type { Config } from "../../config.ts";
import { ParameterError, ResolverError, UserError } from "../../errors.ts";
import { hashCryptPassword } from "../../lib/unix_crypt.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Random } from "../../lib/random.ts";
import {
  type BindAs,
  ldapErrorText,
  LdapPool,
  ldapResultCode,
  type LdapServerSettings,
  LdapUnreachableError,
  type PoolStrategy,
} from "./ldap_pool.ts";
import {
  andFilter,
  ATTRIBUTE_REGEXP,
  equalityFilter,
  escapeDnValue,
  filterFromTemplate,
  firstRdn,
  guidToBytes,
  guidToString,
  isWithinBase,
  orFilter,
  parseFilter,
  patternFilter,
  rangeFilter,
  rawValues,
  textValues,
} from "./ldap_values.ts";
import { refuseOwnPath, resolveDataPath } from "./paths.ts";
import {
  emptyUserInfo,
  type ResolverTestResult,
  type UserInfo,
  type UserListEntry,
  type UserResolver,
} from "./types.ts";

/** Most cached lookups per resolver instance. */
export const CACHE_MAX = 10_000;

/**
 * The keys that decide where BINDPW is sent: the servers of LDAPURI. BINDDN is
 * not one: another DN on the same servers sends the password nowhere new.
 */
export const LDAP_BINDPW_TARGETS = ["LDAPURI"] as const;

/** Default configuration shown by `GET /resolver/ldapresolver/default`. */
export const LDAP_DEFAULTS: Record<string, string> = {
  LDAPURI: "ldap://localhost",
  LDAPBASE: "dc=example,dc=org",
  SCOPE: "SUBTREE",
  BINDDN: "",
  BINDPW: "",
  AUTHTYPE: "Simple",
  TIMEOUT: "5",
  SIZELIMIT: "500",
  LOGINNAMEATTRIBUTE: "uid",
  LDAPSEARCHFILTER: "(objectClass=inetOrgPerson)",
  USERINFO: JSON.stringify({
    phone: "telephoneNumber",
    mobile: "mobile",
    email: "mail",
    surname: "sn",
    givenname: "givenName",
  }),
  UIDTYPE: "DN",
  NOREFERRALS: "0",
  NOSCHEMAS: "0",
  EDITABLE: "0",
  OBJECT_CLASSES: "",
  DN_TEMPLATE: "",
  MULTIVALUEATTRIBUTES: '["mobile"]',
  START_TLS: "0",
  TLS_VERIFY: "0",
  TLS_CA_FILE: "",
  TLS_VERSION: "2",
  CACHE_TIMEOUT: "120",
  SERVERPOOL_ROUNDS: "2",
  SERVERPOOL_SKIP: "30",
  SERVERPOOL_STRATEGY: "ROUND_ROBIN",
  SERVERPOOL_PERSISTENT: "0",
};

/** How an entry's uid is taken. */
export type UidType =
  | { kind: "dn" }
  | { kind: "guid"; attribute: string }
  | { kind: "attribute"; attribute: string };

/**
 * The group search (`recursive_group_search` and the `group_*` keys): the
 * values of `attribute` of every entry `filter` finds below `base` go into
 * the user's attributes under `key`, as a list.
 */
export interface LdapGroupSearch {
  /** `group_base_dn`, else `LDAPBASE`. */
  base: string;
  /** `group_search_filter` with `{base_dn}` and `{<user field>}` tags. */
  filter: string;
  /** `group_name_attribute`. */
  attribute: string;
  /** `group_attribute_mapping_key`. */
  key: string;
}

/** The parsed, validated configuration of an ldapresolver. */
export interface LdapResolverConfig {
  server: LdapServerSettings;
  base: string;
  scope: "sub" | "one" | "base";
  sizeLimit: number;
  loginAttributes: string[];
  searchFilter: Filter;
  /** Tessera user field → LDAP attribute (`username` is the first login attribute). */
  userInfo: Record<string, string>;
  uidType: UidType;
  multiValue: Set<string>;
  editable: boolean;
  objectClasses: string[];
  dnTemplate: string;
  cacheTtlMs: number;
  /** The group search, when switched on and complete. */
  groups?: LdapGroupSearch;
  /** Why `recursive_group_search` is on but the search is not (a key is missing). */
  groupsOff?: string;
}

const TRUE_VALUES = new Set(["1", "true", "yes", "on"]);
const SCOPES: Record<string, LdapResolverConfig["scope"]> = {
  SUBTREE: "sub",
  LEVEL: "one",
  ONELEVEL: "one",
  BASE: "base",
};
const TLS_VERSIONS: Record<string, SecureVersion | undefined> = {
  "": undefined,
  "2": undefined,
  "3": "TLSv1",
  "4": "TLSv1.1",
  "5": "TLSv1.2",
  "TLSV1": "TLSv1",
  "TLSV1.1": "TLSv1.1",
  "TLSV1.2": "TLSv1.2",
  "TLSV1.3": "TLSv1.3",
};
const MAX_TIMEOUT_S = 120;
/** The `AUTHTYPE` values Tessera binds with. */
const SUPPORTED_AUTHTYPES = ["Simple"];
const AD_EPOCH_OFFSET_MS = 11_644_473_600_000;

function isTrue(value: string | undefined): boolean {
  return TRUE_VALUES.has((value ?? "").trim().toLowerCase());
}

function numberOf(
  fail: (why: string) => ParameterError,
  key: string,
  value: string | undefined,
  fallback: number,
  range: { min: number; max: number; integer?: boolean },
): number {
  const text = (value ?? "").trim();
  if (text === "") return fallback;
  const n = Number(text);
  if (
    !Number.isFinite(n) || n < range.min || n > range.max || (range.integer && !Number.isInteger(n))
  ) {
    throw fail(
      `${key} must be a number from ${range.min} to ${range.max}, got "${text.slice(0, 32)}"`,
    );
  }
  return n;
}

function attributeList(
  fail: (why: string) => ParameterError,
  key: string,
  text: string,
): string[] {
  const list = text.split(",").map((a) => a.trim()).filter((a) => a !== "");
  for (const a of list) {
    if (!ATTRIBUTE_REGEXP.test(a)) {
      throw fail(`${key}: "${a.slice(0, 64)}" is not an attribute name`);
    }
  }
  return list;
}

/** Parses `USERINFO` (JSON, YAML or a Python dict text) into field → attribute. */
function parseUserInfo(
  fail: (why: string) => ParameterError,
  text: string,
): Record<string, string> {
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch {
    throw fail('USERINFO must be a mapping like { "email": "mail", "surname": "sn" }');
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw fail('USERINFO must be a mapping like { "email": "mail", "surname": "sn" }');
  }
  const out: Record<string, string> = {};
  for (const [field, attr] of Object.entries(value as Record<string, unknown>)) {
    if (typeof attr !== "string" || !ATTRIBUTE_REGEXP.test(attr.trim())) {
      throw fail(`USERINFO entry "${field.slice(0, 64)}" must name an LDAP attribute`);
    }
    if (field.length > 255 || field.includes("\0")) {
      throw fail("USERINFO has an invalid field name");
    }
    out[field] = attr.trim();
  }
  return out;
}

/** Parses `MULTIVALUEATTRIBUTES` (a list text like `["mobile", "email"]` or `mobile, email`). */
function parseMultiValue(text: string | undefined): Set<string> {
  if (text === undefined) return new Set(["mobile"]);
  const t = text.trim();
  if (t === "") return new Set();
  let value: unknown;
  try {
    value = parseYaml(t);
  } catch {
    value = undefined;
  }
  if (Array.isArray(value)) return new Set(value.map(String).map((v) => v.trim()));
  return new Set(
    t.replace(/^\[|\]$/g, "").split(",").map((v) => v.trim().replace(/^['"]|['"]$/g, "")).filter((
      v,
    ) => v !== ""),
  );
}

function parseUris(fail: (why: string) => ParameterError, text: string): string[] {
  const uris = text.split(",").map((u) => u.trim()).filter((u) => u !== "");
  if (uris.length === 0) throw fail("LDAPURI is required (e.g. ldap://ldap.example.org)");
  if (uris.length > 16) throw fail("LDAPURI may name at most 16 servers");
  for (const u of uris) {
    let url: URL;
    try {
      url = new URL(u);
    } catch {
      throw fail(`LDAPURI "${u.slice(0, 100)}" is not a URI`);
    }
    if (!["ldap:", "ldaps:"].includes(url.protocol.toLowerCase()) || url.hostname === "") {
      throw fail(`LDAPURI "${u.slice(0, 100)}" must be ldap://host[:port] or ldaps://host[:port]`);
    }
  }
  return uris;
}

/**
 * The connection settings shared by the LDAP user and machine resolvers:
 * `LDAPURI`, `BINDDN`/`BINDPW`, `AUTHTYPE`, `TIMEOUT`, `START_TLS`,
 * `TLS_VERIFY`, `TLS_CA_FILE` (resolved like every resolver file path),
 * `TLS_VERSION` and the `SERVERPOOL_*` keys. `fail` builds the error.
 */
export function parseServerSettings(
  fail: (why: string) => ParameterError,
  config: Record<string, string>,
  dataDir: string,
): LdapServerSettings {
  const uris = parseUris(fail, config.LDAPURI ?? "");
  const authType = (config.AUTHTYPE ?? "").trim() || "Simple";
  if (authType.toLowerCase() !== "simple") {
    // privacyIDEA's other types need NTLM, Kerberos (GSSAPI) or a multi-step SASL exchange,
    // none of which ldapts (or any maintained JavaScript LDAP client) performs
    throw fail(
      `Authtype ${authType.slice(0, 32)} not supported (supported: ${
        SUPPORTED_AUTHTYPES.join(", ")
      }; privacyIDEA's SASL Digest-MD5, NTLM and SASL Kerberos are not available)`,
    );
  }
  const strategyText = (config.SERVERPOOL_STRATEGY ?? "").trim().toUpperCase() || "ROUND_ROBIN";
  if (!["ROUND_ROBIN", "FIRST", "RANDOM"].includes(strategyText)) {
    throw fail("SERVERPOOL_STRATEGY must be ROUND_ROBIN, FIRST or RANDOM");
  }
  const tlsVersionText = (config.TLS_VERSION ?? "").trim().toUpperCase();
  if (!(tlsVersionText in TLS_VERSIONS)) throw fail("TLS_VERSION must be 2, 3, 4 or 5");
  const caText = (config.TLS_CA_FILE ?? config.CACERTIFICATE ?? "").trim();
  return {
    uris,
    bindDn: (config.BINDDN ?? "").trim(),
    bindPw: config.BINDPW ?? "",
    timeoutMs: numberOf(fail, "TIMEOUT", config.TIMEOUT, 5, { min: 0.1, max: MAX_TIMEOUT_S }) *
      1000,
    startTls: isTrue(config.START_TLS),
    tlsVerify: isTrue(config.TLS_VERIFY),
    tlsCaFile: caText === "" ? undefined : resolveDataPath(dataDir, caText, "TLS_CA_FILE"),
    tlsMinVersion: TLS_VERSIONS[tlsVersionText],
    strategy: strategyText as PoolStrategy,
    rounds: numberOf(fail, "SERVERPOOL_ROUNDS", config.SERVERPOOL_ROUNDS, 2, {
      min: 1,
      max: 10,
      integer: true,
    }),
    skipMs: numberOf(fail, "SERVERPOOL_SKIP", config.SERVERPOOL_SKIP, 30, {
      min: 0,
      max: 86_400,
    }) * 1000,
    persistent: isTrue(config.SERVERPOOL_PERSISTENT),
  };
}

/**
 * Parses and validates an ldapresolver configuration (ParameterError on
 * problems). `TLS_CA_FILE` resolves like every resolver file path.
 */
export function parseLdapConfig(
  name: string,
  config: Record<string, string>,
  dataDir: string,
): LdapResolverConfig {
  const fail = (why: string) => new ParameterError(`Cannot use ldapresolver "${name}": ${why}`);
  const server = parseServerSettings(fail, config, dataDir);
  const base = (config.LDAPBASE ?? "").trim();
  const scopeText = (config.SCOPE ?? "").trim().toUpperCase() || "SUBTREE";
  const scope = SCOPES[scopeText];
  if (!scope) throw fail(`SCOPE must be SUBTREE, LEVEL or BASE, got "${scopeText.slice(0, 32)}"`);
  const loginAttributes = attributeList(
    fail,
    "LOGINNAMEATTRIBUTE",
    config.LOGINNAMEATTRIBUTE ?? "",
  );
  if (loginAttributes.length === 0) throw fail("LOGINNAMEATTRIBUTE is required (e.g. uid)");
  const filterText = (config.LDAPSEARCHFILTER ?? "").trim();
  if (filterText === "") throw fail("LDAPSEARCHFILTER is required (e.g. (objectClass=person))");
  let searchFilter: Filter;
  try {
    searchFilter = parseFilter(filterText);
  } catch (err) {
    throw fail(`LDAPSEARCHFILTER is no LDAP filter: ${(err as Error).message.slice(0, 200)}`);
  }
  const userInfo = parseUserInfo(fail, config.USERINFO ?? "");
  delete userInfo.password;
  const uidText = (config.UIDTYPE ?? "").trim() || "DN";
  let uidType: UidType;
  if (uidText.toLowerCase() === "dn") uidType = { kind: "dn" };
  else if (!ATTRIBUTE_REGEXP.test(uidText)) {
    throw fail(`UIDTYPE "${uidText.slice(0, 64)}" is not an attribute`);
  } else if (uidText.toLowerCase() === "objectguid") uidType = { kind: "guid", attribute: uidText };
  else uidType = { kind: "attribute", attribute: uidText };
  const groupSearch = parseGroupSearch(fail, config, base);
  const editable = isTrue(config.EDITABLE);
  const objectClasses = attributeList(fail, "OBJECT_CLASSES", config.OBJECT_CLASSES ?? "");
  const dnTemplate = (config.DN_TEMPLATE ?? "").trim();
  return {
    server,
    base,
    scope,
    sizeLimit: numberOf(fail, "SIZELIMIT", config.SIZELIMIT, 500, {
      min: 1,
      max: 100_000,
      integer: true,
    }),
    loginAttributes,
    searchFilter,
    userInfo,
    uidType,
    multiValue: parseMultiValue(config.MULTIVALUEATTRIBUTES),
    editable,
    objectClasses,
    dnTemplate,
    cacheTtlMs: numberOf(fail, "CACHE_TIMEOUT", config.CACHE_TIMEOUT, 120, {
      min: 0,
      max: 86_400,
    }) * 1000,
    ...groupSearch,
  };
}

/** User fields the group list may not replace: they identify the user. */
const RESERVED_GROUP_KEYS = new Set(["username", "userid"]);

/**
 * The group search of `config`: on with `recursive_group_search` when
 * `group_name_attribute`, `group_search_filter` and
 * `group_attribute_mapping_key` are all set (privacyIDEA switches it off when
 * one is missing, and so does Tessera, saying why).
 */
function parseGroupSearch(
  fail: (why: string) => ParameterError,
  config: Record<string, string>,
  base: string,
): { groups?: LdapGroupSearch; groupsOff?: string } {
  if (!isTrue(config.recursive_group_search)) return {};
  const attribute = (config.group_name_attribute ?? "").trim();
  const filter = (config.group_search_filter ?? "").trim();
  const key = (config.group_attribute_mapping_key ?? "").trim();
  const missing = [
    ["group_name_attribute", attribute],
    ["group_search_filter", filter],
    ["group_attribute_mapping_key", key],
  ].filter(([, v]) => v === "").map(([k]) => k);
  if (missing.length > 0) {
    return { groupsOff: `recursive_group_search is on, but ${missing.join(", ")} is empty` };
  }
  if (!ATTRIBUTE_REGEXP.test(attribute)) {
    throw fail(`group_name_attribute "${attribute.slice(0, 64)}" is not an attribute name`);
  }
  if (key.length > 255 || key.includes("\0") || RESERVED_GROUP_KEYS.has(key)) {
    throw fail(
      `group_attribute_mapping_key "${key.slice(0, 64)}" cannot be used (e.g. groups; ` +
        "not username or userid)",
    );
  }
  try {
    // every tag filled with a value: what remains must be a filter
    filterFromTemplate(filter.replace(/\{[^{}]+\}/g, "x"), {});
  } catch (err) {
    throw fail(`group_search_filter is no LDAP filter: ${(err as Error).message.slice(0, 200)}`);
  }
  const groupBase = (config.group_base_dn ?? "").trim();
  return { groups: { base: groupBase === "" ? base : groupBase, filter, attribute, key } };
}

const MAX_CA_BYTES = 1024 * 1024;
const CERT_REGEXP = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Reads a PEM CA file: never one of Tessera's own files, and only
 * certificates are taken from it (a file without one is refused, a private
 * key in it is never used). ParameterError (400) when refused.
 */
export async function readCaFile(path: string, config?: Config): Promise<string> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path);
  } catch (err) {
    if (config !== undefined) refuseOwnPath(config, path, "TLS_CA_FILE");
    throw new ResolverError(`Cannot read TLS_CA_FILE "${path}": ${(err as Error).name}`);
  }
  try {
    const info = await file.stat();
    if (config !== undefined) refuseOwnPath(config, path, "TLS_CA_FILE", info);
    if (!info.isFile || info.size > MAX_CA_BYTES) {
      throw new ParameterError(`Cannot use TLS_CA_FILE "${path}": not a PEM certificate file`);
    }
    const bytes = new Uint8Array(info.size);
    let got = 0;
    while (got < bytes.length) {
      const n = await file.read(bytes.subarray(got));
      if (n === null) break;
      got += n;
    }
    const text = new TextDecoder().decode(bytes.subarray(0, got));
    const certs = text.match(CERT_REGEXP);
    if (!certs) {
      // the content is never echoed: the file may be any file the server can read
      throw new ParameterError(`Cannot use TLS_CA_FILE "${path}": it holds no PEM certificate`);
    }
    return certs.join("\n") + "\n";
  } finally {
    file.close();
  }
}

/**
 * Checks the CA file of a resolver being saved or tested: refused when it is
 * one of Tessera's own files or holds no certificate. A missing file passes
 * (it is checked whenever it is read).
 */
export async function checkCaFile(path: string | undefined, config: Config): Promise<void> {
  if (path === undefined) return;
  refuseOwnPath(config, path, "TLS_CA_FILE");
  try {
    await Deno.stat(path);
  } catch {
    return;
  }
  await readCaFile(path, config);
}

/** A bounded map whose entries expire (insertion order = age). */
class LookupCache<V> {
  readonly #entries = new Map<string, { value: V; expires: number }>();
  constructor(readonly ttlMs: number, readonly max: number) {}

  get(key: string, now: number): V | undefined {
    const hit = this.#entries.get(key);
    if (hit === undefined) return undefined;
    if (hit.expires <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: V, now: number): void {
    if (this.ttlMs <= 0) return;
    this.#entries.delete(key);
    if (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { value, expires: now + this.ttlMs });
  }

  /** Drops every entry. */
  clear(): void {
    this.#entries.clear();
  }

  /** Drops every entry whose key or value satisfies `match`. */
  dropWhere(match: (key: string, value: V) => boolean): void {
    for (const [k, e] of this.#entries) if (match(k, e.value)) this.#entries.delete(k);
  }
}

/** A user entry as the resolver keeps it. */
interface FoundUser {
  uid: string;
  dn: string;
  /** Attributes; multi-valued fields (MULTIVALUEATTRIBUTES) as lists. */
  info: UserListEntry;
  /** The group search's result, once read (kept with the entry, as privacyIDEA caches it). */
  groups?: string[];
}

/** Most group entries one group search reads. */
const GROUPS_MAX = 10_000;
/** Group searches of a user list that run at once on its connection. */
const GROUP_SEARCHES_AT_ONCE = 16;

/** Options of {@link ldapResolver}. */
export interface LdapResolverOptions {
  name: string;
  config: LdapResolverConfig;
  now(): number;
  random: Random;
  log: Logger;
  /** Tessera's configuration: the CA file is checked against Tessera's own files. */
  appConfig?: Config;
  /** The user store generation: cached lookups count only while it stays (see the module doc). */
  generation?: () => Promise<number>;
}

/** Creates an ldapresolver instance. */
export function ldapResolver(opts: LdapResolverOptions): UserResolver {
  const { name, config: cfg } = opts;
  let caCache: { path: string; mtime: number; size: number; pem: string } | undefined;
  const pool = new LdapPool(cfg.server, {
    now: opts.now,
    random: opts.random,
    async readCa(path) {
      const info = await Deno.stat(path).catch(() => undefined);
      const mtime = info?.mtime?.getTime() ?? -1;
      if (
        caCache && caCache.path === path && caCache.mtime === mtime && caCache.size === info?.size
      ) {
        return caCache.pem;
      }
      const pem = await readCaFile(path, opts.appConfig);
      caCache = { path, mtime, size: info?.size ?? -1, pem };
      return pem;
    },
  });
  if (cfg.groupsOff) {
    opts.log.info("LDAP group search is off", { resolver: name, reason: cfg.groupsOff });
  }
  const cache = new LookupCache<FoundUser>(cfg.cacheTtlMs, CACHE_MAX);
  const logins = new LookupCache<string>(cfg.cacheTtlMs, CACHE_MAX);
  let cachedGeneration: number | undefined;

  /** Drops the cached lookups when the user store generation moved since they were found. */
  async function checkGeneration(): Promise<void> {
    if (cfg.cacheTtlMs <= 0 || opts.generation === undefined) return;
    const current = await opts.generation();
    if (current === cachedGeneration) return;
    cache.clear();
    logins.clear();
    cachedGeneration = current;
  }
  const service: BindAs = { kind: "service" };
  const uidAttribute = cfg.uidType.kind === "dn" ? undefined : cfg.uidType.attribute;
  // AD's GUIDs are bytes: never decoded as text, even when they happen to be valid UTF-8
  const binaryAttributes = [
    "objectGUID",
    ...(cfg.uidType.kind === "guid" ? [cfg.uidType.attribute] : []),
  ];
  const fieldAttributes: Record<string, string> = {
    ...cfg.userInfo,
    username: cfg.loginAttributes[0],
  };
  const searchAttributes = [
    ...new Set([
      ...cfg.loginAttributes,
      ...Object.values(cfg.userInfo),
      ...(uidAttribute ? [uidAttribute] : []),
    ]),
  ];

  function unreachable(err: unknown, action: string): ResolverError {
    // the answer names no server (it may go to unauthenticated clients); the log does
    const why = err instanceof LdapUnreachableError
      ? `no LDAP server could be used (${err.failure})`
      : ldapErrorText(err);
    return new ResolverError(`Cannot ${action} in LDAP resolver "${name}": ${why}`);
  }

  async function searchEntries(
    client: Client,
    filter: Filter,
    options: { base?: string; scope?: "sub" | "one" | "base"; sizeLimit?: number; paged?: boolean },
  ): Promise<Entry[]> {
    const result = await client.search(options.base ?? cfg.base, {
      scope: options.scope ?? cfg.scope,
      filter,
      attributes: searchAttributes,
      explicitBufferAttributes: binaryAttributes,
      sizeLimit: options.sizeLimit ?? 0,
      // a server with a lower size limit still answers page by page
      paged: options.paged ? { pageSize: Math.min(options.sizeLimit ?? 500, 500) } : undefined,
      derefAliases: "never",
    });
    return result.searchEntries;
  }

  /** Runs a service-bound operation; unreachable servers become a ResolverError. */
  async function withService<T>(action: string, work: (c: Client) => Promise<T>): Promise<T> {
    try {
      return await pool.run(service, work);
    } catch (err) {
      if (
        err instanceof ResolverError || err instanceof UserError || err instanceof ParameterError
      ) {
        throw err;
      }
      opts.log.warn("LDAP operation failed", {
        resolver: name,
        action,
        error: ldapErrorText(err),
      });
      throw unreachable(err, action);
    }
  }

  function uidOf(entry: Entry): string | undefined {
    if (cfg.uidType.kind === "dn") return entry.dn;
    const raw = rawValues(entry, cfg.uidType.attribute)[0];
    if (raw === undefined) return undefined;
    if (cfg.uidType.kind === "guid") {
      const bytes = typeof raw === "string" ? new TextEncoder().encode(raw) : raw;
      return bytes.length === 16 ? guidToString(bytes) : undefined;
    }
    return typeof raw === "string" ? raw : Buffer.from(raw).toString("base64");
  }

  function foundOf(entry: Entry): FoundUser | undefined {
    const uid = uidOf(entry);
    const username = textValues(entry, cfg.loginAttributes[0])[0];
    if (uid === undefined || username === undefined) return undefined;
    const info: UserListEntry = emptyUserInfo();
    for (const [field, attribute] of Object.entries(fieldAttributes)) {
      const values = attribute.toLowerCase() === "objectguid"
        ? rawValues(entry, attribute).map((v) =>
          guidToString(typeof v === "string" ? new TextEncoder().encode(v) : v)
        )
        : textValues(entry, attribute);
      if (values.length === 0) continue;
      info[field] = cfg.multiValue.has(field) && values.length > 1 ? values : values[0];
    }
    info.username = username;
    info.userid = uid;
    return { uid, dn: entry.dn, info };
  }

  /** Text of a group entry's name attribute (its DN for `dn`/`distinguishedName` without one). */
  function groupNames(entry: Entry, attribute: string): string[] {
    if (attribute.toLowerCase() === "objectguid") {
      return rawValues(entry, attribute).map((v) => typeof v === "string" ? v : guidToString(v));
    }
    const values = textValues(entry, attribute);
    if (values.length > 0) return values;
    const lower = attribute.toLowerCase();
    return lower === "dn" || lower === "distinguishedname" ? [entry.dn] : [];
  }

  /**
   * The groups of a user: the group search with the user's text fields as
   * tags. A failed search is an error, never "no groups": a policy that a
   * group turns on must not silently lose its user.
   */
  async function readGroups(c: Client, found: FoundUser): Promise<string[]> {
    const search = cfg.groups!;
    const tags: Record<string, string> = {};
    for (const [field, value] of Object.entries(found.info)) {
      if (typeof value === "string") tags[field] = value;
    }
    tags.base_dn = cfg.base;
    const filter = filterFromTemplate(search.filter, tags);
    try {
      const result = await c.search(search.base, {
        scope: cfg.scope,
        filter,
        attributes: [search.attribute],
        explicitBufferAttributes: search.attribute.toLowerCase() === "objectguid"
          ? [search.attribute]
          : [],
        sizeLimit: GROUPS_MAX,
        paged: { pageSize: 500 },
        derefAliases: "never",
      });
      return result.searchEntries.flatMap((e) => groupNames(e, search.attribute));
    } catch (err) {
      // a connection that failed is the pool's business (the server is marked down)
      if (ldapResultCode(err) === undefined) throw err;
      throw new ResolverError(
        `Cannot read the groups of "${found.info.username}" in LDAP resolver "${name}": ${
          ldapErrorText(err)
        }`,
      );
    }
  }

  /** Reads the groups of the users that lack them (the group search is on). */
  async function withGroups(c: Client, users: FoundUser[]): Promise<void> {
    const todo = users.filter((u) => u.groups === undefined);
    for (let i = 0; i < todo.length; i += GROUP_SEARCHES_AT_ONCE) {
      const batch = todo.slice(i, i + GROUP_SEARCHES_AT_ONCE);
      const lists = await Promise.all(batch.map((u) => readGroups(c, u)));
      batch.forEach((u, j) => u.groups = lists[j]);
    }
  }

  /** The attributes of a found user as privacyIDEA's user info: lists kept, groups added. */
  function userAttributesOf(found: FoundUser): UserListEntry {
    const out: UserListEntry = {};
    for (const [k, v] of Object.entries(found.info)) out[k] = Array.isArray(v) ? [...v] : v;
    if (cfg.groups) out[cfg.groups.key] = [...(found.groups ?? [])];
    return out;
  }

  /**
   * Keeps a user found by a lookup that began under `generation`; a lookup
   * that a generation move overtook is not kept (it may have read the old user).
   */
  function remember(found: FoundUser, generation: number | undefined, login?: string): void {
    if (generation !== cachedGeneration) return;
    const now = opts.now();
    cache.set(found.uid, found, now);
    if (login !== undefined) logins.set(login, found.uid, now);
  }

  function forget(uid: string): void {
    cache.dropWhere((key) => key === uid);
    logins.dropWhere((_, value) => value === uid);
  }

  function single(entries: Entry[], what: string): FoundUser | undefined {
    const found = entries.map(foundOf).filter((f): f is FoundUser => f !== undefined);
    if (found.length > 1) {
      throw new ResolverError(
        `Cannot resolve ${what} in LDAP resolver "${name}": found more than one object`,
      );
    }
    return found[0];
  }

  async function findByLogin(login: string, client?: Client): Promise<FoundUser | undefined> {
    if (login === "") return undefined;
    const filter = andFilter([
      cfg.searchFilter,
      orFilter(cfg.loginAttributes.map((a) => equalityFilter(a, login))),
    ]);
    const run = (c: Client) => searchEntries(c, filter, { sizeLimit: 2 });
    const entries = client ? await run(client) : await withService("find a user", run);
    return single(entries, "a login name");
  }

  async function findByUid(uid: string): Promise<FoundUser | undefined> {
    await checkGeneration();
    const generation = cachedGeneration;
    const cached = cache.get(uid, opts.now());
    if (cached) return cached;
    let found: FoundUser | undefined;
    if (cfg.uidType.kind === "dn") {
      // a DN uid names an entry below LDAPBASE that passes the filter, nothing else
      if (uid === "" || !isWithinBase(uid, cfg.base)) return undefined;
      found = await withService("read a user", async (c) => {
        try {
          return single(
            await searchEntries(c, cfg.searchFilter, { base: uid, scope: "base" }),
            "a uid",
          );
        } catch (err) {
          // no such entry, or a uid that is no DN at all
          if (ldapResultCode(err) === 32 || ldapResultCode(err) === 34) return undefined;
          throw err;
        }
      });
    } else {
      let value: string | Uint8Array = uid;
      if (cfg.uidType.kind === "guid") {
        const bytes = guidToBytes(uid);
        if (!bytes) return undefined;
        value = bytes;
      }
      const filter = andFilter([cfg.searchFilter, equalityFilter(cfg.uidType.attribute, value)]);
      found = await withService(
        "read a user",
        async (c) => single(await searchEntries(c, filter, { sizeLimit: 2 }), "a uid"),
      );
    }
    if (found) remember(found, generation);
    return found;
  }

  function flat(info: UserListEntry): UserInfo {
    const out: UserInfo = {};
    for (const [k, v] of Object.entries(info)) out[k] = Array.isArray(v) ? v[0] ?? "" : v;
    return out;
  }

  function searchFilterOf(search: Record<string, string>): Filter | undefined {
    const parts: Filter[] = [cfg.searchFilter];
    for (const [field, pattern] of Object.entries(search)) {
      const attribute = fieldAttributes[field];
      if (attribute === undefined) return undefined;
      if (attribute.toLowerCase() === "accountexpires" && pattern.trim() === "1") {
        // Active Directory: accounts that have expired by now (FILETIME, 100 ns since 1601)
        const now = (BigInt(opts.now()) + BigInt(AD_EPOCH_OFFSET_MS)) * 10_000n;
        parts.push(rangeFilter(attribute, "1", now.toString()));
        continue;
      }
      const f = patternFilter(attribute, pattern);
      if (f) parts.push(f);
    }
    return andFilter(parts);
  }

  function requireEditable(action: string): void {
    if (!cfg.editable) {
      throw new ResolverError(`Cannot ${action} in resolver "${name}": it is not editable`);
    }
  }

  function hashPassword(password: string): string {
    // OpenLDAP verifies {SSHA} natively; the clear text never reaches the directory
    return hashCryptPassword("SSHA", password, opts.random.bytes(16));
  }

  /** LDAP attribute values for the given user fields (unmapped fields are ignored). */
  function attributesOf(fields: Record<string, string>): Map<string, string> {
    const out = new Map<string, string>();
    for (const [field, value] of Object.entries(fields)) {
      if (field === "password" || field === "userid") continue;
      const attribute = fieldAttributes[field];
      if (attribute !== undefined) out.set(attribute, value);
    }
    return out;
  }

  function dnFromTemplate(fields: Record<string, string>): string {
    return cfg.dnTemplate.replace(/<(username|givenname|surname|basedn)>/gi, (_, tag: string) => {
      const t = tag.toLowerCase();
      if (t === "basedn") return cfg.base;
      return escapeDnValue(fields[t] ?? "");
    });
  }

  function changeError(err: unknown, action: string, login: string): Error {
    if (err instanceof ResolverError || err instanceof UserError) return err;
    if (ldapResultCode(err) === 68) {
      return new UserError(`Cannot create user "${login}": the user already exists`);
    }
    return unreachable(err, action);
  }

  return {
    name,
    type: "ldapresolver",
    editable: cfg.editable,
    async getUserId(login) {
      await checkGeneration();
      const generation = cachedGeneration;
      const now = opts.now();
      const uid = logins.get(login, now);
      if (uid !== undefined) return uid;
      const found = await findByLogin(login);
      if (!found) return undefined;
      remember(found, generation, login);
      return found.uid;
    },
    async getUserInfo(uid) {
      const found = await findByUid(uid);
      return found ? flat(found.info) : undefined;
    },
    async getUserAttributes(uid) {
      const found = await findByUid(uid);
      if (!found) return undefined;
      if (cfg.groups && found.groups === undefined) {
        await withService("read the groups of a user", (c) => withGroups(c, [found]));
      }
      return userAttributesOf(found);
    },
    async getUserList(search) {
      const filter = searchFilterOf(search);
      if (filter === undefined) return [];
      await checkGeneration();
      const generation = cachedGeneration;
      const users = await withService("list users", async (c) => {
        const entries = await searchEntries(c, filter, { sizeLimit: cfg.sizeLimit, paged: true });
        const found = entries.map(foundOf).filter((f): f is FoundUser => f !== undefined)
          .slice(0, cfg.sizeLimit);
        // each user of a list gets their groups, as in privacyIDEA (one search each)
        if (cfg.groups) await withGroups(c, found);
        return found;
      });
      for (const found of users) remember(found, generation);
      return users.map(userAttributesOf);
    },
    async checkPass(uid, password) {
      // an empty password would be an anonymous bind, which "succeeds"
      if (password === "" || uid === "") return false;
      let dn: string | undefined;
      try {
        dn = (await findByUid(uid))?.dn;
      } catch (err) {
        opts.log.warn("Cannot check an LDAP password: user lookup failed", {
          resolver: name,
          error: (err as Error).message,
        });
        return false;
      }
      if (!dn) return false;
      try {
        await pool.run({ kind: "user", dn, password }, () => Promise.resolve());
        return true;
      } catch (err) {
        if (ldapResultCode(err) !== 49) {
          opts.log.warn("Cannot check an LDAP password", {
            resolver: name,
            error: ldapErrorText(err),
          });
        }
        return false;
      }
    },
    async addUser(attributes, password) {
      requireEditable("create users");
      const login = attributes.username ?? "";
      if (cfg.dnTemplate === "" || cfg.objectClasses.length === 0) {
        throw new ResolverError(
          `Cannot create user "${login}" in resolver "${name}": DN_TEMPLATE and OBJECT_CLASSES are needed`,
        );
      }
      const dn = dnFromTemplate(attributes);
      const values = attributesOf(attributes);
      const entry: Record<string, string[]> = { objectClass: cfg.objectClasses };
      for (const [attribute, value] of values) if (value !== "") entry[attribute] = [value];
      // the naming attribute's value must be in the entry
      const rdn = firstRdn(dn);
      if (rdn && !Object.keys(entry).some((k) => k.toLowerCase() === rdn.attribute.toLowerCase())) {
        entry[rdn.attribute] = [rdn.value];
      }
      if (password !== undefined && password !== "") entry.userPassword = [hashPassword(password)];
      await withService("create a user", async (c) => {
        if (await findByLogin(login, c)) {
          throw new UserError(`Cannot create user "${login}": the user already exists`);
        }
        try {
          await c.add(dn, entry);
        } catch (err) {
          throw changeError(err, `create user "${login}"`, login);
        }
      });
      logins.dropWhere((key) => key === login);
      const found = await findByLogin(login);
      if (!found) {
        throw new ResolverError(
          `Cannot create user "${login}" in resolver "${name}": the new entry is outside LDAPBASE or the filter`,
        );
      }
      remember(found, cachedGeneration, login);
      return found.uid;
    },
    async updateUser(uid, attributes, password) {
      requireEditable("change users");
      const found = await findByUid(uid);
      if (!found) return false;
      const values = attributesOf(attributes);
      const rdn = firstRdn(found.dn);
      await withService("change a user", async (c) => {
        let dn = found.dn;
        const newRdn = rdn &&
          [...values].find(([a]) => a.toLowerCase() === rdn.attribute.toLowerCase());
        if (rdn && newRdn && newRdn[1] !== "" && newRdn[1] !== rdn.value) {
          // the naming attribute changes: rename the entry (same parent)
          const rdnText = `${rdn.attribute}=${escapeDnValue(newRdn[1])}`;
          const parent = found.dn.slice(dnParentIndex(found.dn));
          try {
            await c.modifyDN(dn, parent === "" ? rdnText : `${rdnText},${parent}`);
          } catch (err) {
            throw changeError(err, `rename user "${found.info.username}"`, "");
          }
          dn = parent === "" ? rdnText : `${rdnText},${parent}`;
          values.delete(newRdn[0]);
        }
        const changes: Change[] = [];
        for (const [attribute, value] of values) {
          changes.push(
            new Change({
              operation: "replace",
              modification: new Attribute({ type: attribute, values: value === "" ? [] : [value] }),
            }),
          );
        }
        if (password !== undefined && password !== "") {
          changes.push(
            new Change({
              operation: "replace",
              modification: new Attribute({
                type: "userPassword",
                values: [hashPassword(password)],
              }),
            }),
          );
        }
        if (changes.length === 0) return;
        try {
          await c.modify(dn, changes);
        } catch (err) {
          throw changeError(err, `change user "${found.info.username}"`, "");
        }
      });
      forget(uid);
      return true;
    },
    async deleteUser(uid) {
      requireEditable("delete users");
      const found = await findByUid(uid);
      if (!found) return false;
      const deleted = await withService("delete a user", async (c) => {
        try {
          await c.del(found.dn);
          return true;
        } catch (err) {
          if (ldapResultCode(err) === 32) return false;
          throw changeError(err, `delete user "${found.info.username}"`, "");
        }
      });
      forget(uid);
      return deleted;
    },
    async test(): Promise<ResolverTestResult> {
      const started = performance.now();
      try {
        const { total, withUid } = await pool.run(service, async (c) => {
          const entries = await searchEntries(c, cfg.searchFilter, {
            sizeLimit: cfg.sizeLimit,
            paged: true,
          });
          return {
            total: entries.length,
            withUid: entries.filter((e) => uidOf(e) !== undefined).length,
          };
        });
        const seconds = ((performance.now() - started) / 1000).toFixed(4);
        return total === withUid
          ? {
            success: true,
            description:
              `Your LDAP config seems to be OK, ${total} user objects found in ${seconds}s.`,
          }
          : {
            success: true,
            description:
              `Your LDAP config found ${total} user objects in ${seconds}s, but only ${withUid} with the specified uidtype.`,
          };
      } catch (err) {
        // a refused CA file is a bad parameter (400), as on save, not a failed test
        if (err instanceof ParameterError) throw err;
        return { success: false, description: testFailure(err, cfg) };
      } finally {
        await pool.close();
      }
    },
  };
}

/** Index where the parent of `dn` starts (after the first unescaped comma), or dn.length. */
function dnParentIndex(dn: string): number {
  for (let i = 0; i < dn.length; i++) {
    if (dn[i] === "\\") i++;
    else if (dn[i] === ",") return i + 1;
  }
  return dn.length;
}

function testFailure(err: unknown, cfg: LdapResolverConfig): string {
  const code = ldapResultCode(err);
  const text = ldapErrorText(err);
  if (code === 49) {
    return `Cannot bind as "${cfg.server.bindDn}": wrong BINDDN or BINDPW (${text})`;
  }
  if (code === 32) return `LDAPBASE "${cfg.base}" does not exist (${text})`;
  if (err instanceof LdapUnreachableError) return `Cannot reach the LDAP server: ${text}`;
  return `The LDAP search failed: ${text}`;
}
