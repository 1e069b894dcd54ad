/**
 * Machine resolver type `ldap` (spec 07 §2, spec 10 §4): machines are the
 * entries under `LDAPBASE` that match `SEARCHFILTER`; `IDATTRIBUTE` (`DN`,
 * `objectGUID` or any attribute) gives the id, `HOSTNAMEATTRIBUTE` the host
 * names and `IPATTRIBUTE` (optional) the address. Lookups by host name, IP or
 * id become filter values (never filter text) and the result is matched again
 * with the same rules as every machine resolver. Connections go through the
 * LDAP server pool (failover, bounded timeouts) of the user resolvers; a pool
 * is kept per configuration so a dead server stays skipped between requests.
 *
 * A resolver whose directory cannot be reached contributes no machines (the
 * reason is logged), so one broken directory does not hide other resolvers.
 *
 * @module
 */
import type { Client, Entry, Filter } from "ldapts";
import type { Deps } from "../../deps.ts";
import { ParameterError } from "../../errors.ts";
import {
  checkCaFile,
  LDAP_BINDPW_TARGETS,
  ldapErrorText,
  LdapPool,
  type LdapServerSettings,
  ldapValues,
  parseServerSettings,
  readCaFile,
  refuseOwnPath,
} from "../resolver/mod.ts";
import { normalizeIp } from "./hosts.ts";
import {
  type Machine,
  type MachineFilter,
  type MachineResolverType,
  type MachineSource,
  matchesFilter,
} from "./types.ts";

interface MachineLdapConfig {
  server: LdapServerSettings;
  base: string;
  sizeLimit: number;
  searchFilter: Filter;
  /** undefined: the DN is the id. */
  idAttribute?: string;
  hostnameAttribute: string;
  ipAttribute?: string;
}

const DEFAULT_FILTER = "(objectClass=computer)";

function attributeOf(
  fail: (why: string) => ParameterError,
  key: string,
  value: string | undefined,
): string | undefined {
  const v = (value ?? "").trim();
  if (v === "") return undefined;
  if (!ldapValues.ATTRIBUTE_REGEXP.test(v)) {
    throw fail(`${key} "${v.slice(0, 64)}" is not an attribute name`);
  }
  return v;
}

function filterOf(fail: (why: string) => ParameterError, text: string | undefined): Filter {
  const t = (text ?? "").trim() || DEFAULT_FILTER;
  try {
    return ldapValues.parseFilter(t);
  } catch (err) {
    throw fail(`SEARCHFILTER is no LDAP filter: ${(err as Error).message.slice(0, 200)}`);
  }
}

/** Parses a stored `ldap` machine resolver configuration (ParameterError on problems). */
export function parseMachineLdapConfig(
  name: string,
  config: Record<string, string>,
  dataDir: string,
): MachineLdapConfig {
  const fail = (why: string) =>
    new ParameterError(`Cannot use LDAP machine resolver "${name}": ${why}`);
  const server = parseServerSettings(fail, config, dataDir);
  const sizeText = (config.SIZELIMIT ?? "").trim();
  const sizeLimit = sizeText === "" ? 500 : Number(sizeText);
  if (!Number.isInteger(sizeLimit) || sizeLimit < 1 || sizeLimit > 100_000) {
    throw fail("SIZELIMIT must be an integer from 1 to 100000");
  }
  const id = attributeOf(fail, "IDATTRIBUTE", config.IDATTRIBUTE);
  const hostnameAttribute = attributeOf(fail, "HOSTNAMEATTRIBUTE", config.HOSTNAMEATTRIBUTE);
  if (hostnameAttribute === undefined) {
    throw fail("HOSTNAMEATTRIBUTE is required (e.g. dNSHostName)");
  }
  return {
    server,
    base: (config.LDAPBASE ?? "").trim(),
    sizeLimit,
    searchFilter: filterOf(fail, config.SEARCHFILTER),
    idAttribute: id === undefined || id.toLowerCase() === "dn" ? undefined : id,
    hostnameAttribute,
    ipAttribute: attributeOf(fail, "IPATTRIBUTE", config.IPATTRIBUTE),
  };
}

// pools by configuration, per Deps: the skip state of a dead server outlives one request
const POOLS = new WeakMap<Deps, Map<string, LdapPool>>();
const MAX_POOLS = 64;

function poolOf(deps: Deps, key: string, settings: LdapServerSettings): LdapPool {
  let pools = POOLS.get(deps);
  if (pools === undefined) POOLS.set(deps, pools = new Map());
  const hit = pools.get(key);
  if (hit) return hit;
  if (pools.size >= MAX_POOLS) pools.delete(pools.keys().next().value!);
  const pool = new LdapPool(settings, {
    now: () => deps.clock.now(),
    random: deps.random,
    readCa: (path) => readCaFile(path, deps.config),
  });
  pools.set(key, pool);
  return pool;
}

function isBinaryId(attribute: string | undefined): boolean {
  return attribute?.toLowerCase() === "objectguid";
}

/** The server-side part of a machine query (the exact match is done afterwards). */
function queryFilter(cfg: MachineLdapConfig, filter: MachineFilter): Filter | undefined {
  const { patternFilter, equalityFilter, andFilter } = ldapValues;
  const parts: Filter[] = [cfg.searchFilter];
  const contains = (attribute: string, value: string) =>
    patternFilter(attribute, `*${value.replaceAll("*", "")}*`);
  if (filter.exactHostname !== undefined) {
    parts.push(equalityFilter(cfg.hostnameAttribute, filter.exactHostname));
  }
  if (filter.hostname) {
    const f = contains(cfg.hostnameAttribute, filter.hostname);
    if (f) parts.push(f);
  }
  if (filter.ip !== undefined) {
    // without an address attribute no machine has an address
    if (cfg.ipAttribute === undefined) return undefined;
    parts.push(equalityFilter(cfg.ipAttribute, filter.ip));
  }
  const idSearchable = cfg.idAttribute !== undefined && !isBinaryId(cfg.idAttribute);
  if (filter.id && idSearchable) {
    const f = contains(cfg.idAttribute!, filter.id);
    if (f) parts.push(f);
  }
  // "any" is matched afterwards only: an id that is a DN or a GUID cannot be searched for, and
  // an address attribute often has no substring rule (ipHostNumber)
  return andFilter(parts);
}

class LdapMachineSource implements MachineSource {
  constructor(
    readonly deps: Deps,
    readonly name: string,
    readonly config: Record<string, string>,
  ) {}

  async machines(filter: MachineFilter): Promise<Machine[]> {
    let cfg: MachineLdapConfig;
    try {
      cfg = parseMachineLdapConfig(this.name, this.config, this.deps.config.storage.dataDir);
    } catch (err) {
      this.deps.log.warn("LDAP machine resolver is misconfigured; skipping", {
        resolver: this.name,
        error: (err as Error).message,
      });
      return [];
    }
    const query = queryFilter(cfg, filter);
    if (query === undefined) return [];
    const pool = poolOf(this.deps, `${this.name}\0${JSON.stringify(this.config)}`, cfg.server);
    let entries: Entry[];
    try {
      entries = await pool.run({ kind: "service" }, (c) => search(c, cfg, query));
    } catch (err) {
      if (err instanceof ParameterError) throw err;
      this.deps.log.warn("Cannot query LDAP machine resolver; skipping", {
        resolver: this.name,
        error: ldapErrorText(err),
      });
      return [];
    }
    return entries.map((e) => machineOf(cfg, this.name, e))
      .filter((m): m is Machine => m !== undefined && matchesFilter(m, filter));
  }
}

async function search(
  c: Client,
  cfg: MachineLdapConfig,
  filter: Filter,
): Promise<Entry[]> {
  const attributes = [cfg.hostnameAttribute, cfg.idAttribute, cfg.ipAttribute].filter(
    (a): a is string => a !== undefined,
  );
  const result = await c.search(cfg.base, {
    scope: "sub",
    filter,
    attributes: attributes.length > 0 ? attributes : ["1.1"],
    explicitBufferAttributes: [
      "objectGUID",
      ...(isBinaryId(cfg.idAttribute) ? [cfg.idAttribute!] : []),
    ],
    sizeLimit: cfg.sizeLimit,
    paged: { pageSize: Math.min(cfg.sizeLimit, 500) },
    derefAliases: "never",
  });
  return result.searchEntries;
}

function machineOf(
  cfg: MachineLdapConfig,
  resolverName: string,
  entry: Entry,
): Machine | undefined {
  let id: string | undefined;
  if (cfg.idAttribute === undefined) id = entry.dn;
  else if (isBinaryId(cfg.idAttribute)) {
    const raw = ldapValues.rawValues(entry, cfg.idAttribute)[0];
    const bytes = typeof raw === "string" ? new TextEncoder().encode(raw) : raw;
    id = bytes?.length === 16 ? ldapValues.guidToString(bytes) : undefined;
  } else id = ldapValues.textValues(entry, cfg.idAttribute)[0];
  if (id === undefined) return undefined;
  const ips = cfg.ipAttribute === undefined ? [] : ldapValues.textValues(entry, cfg.ipAttribute)
    .map((v) => normalizeIp(v.trim()))
    .filter((v): v is string => v !== undefined);
  return {
    id,
    hostname: ldapValues.textValues(entry, cfg.hostnameAttribute),
    ip: ips.length === 0 ? null : ips.length === 1 ? ips[0] : ips,
    resolverName,
  };
}

/** The `ldap` machine resolver type. */
export const LDAP: MachineResolverType = {
  type: "ldap",
  keys: {
    LDAPURI: "string",
    LDAPBASE: "string",
    BINDDN: "string",
    BINDPW: "password",
    TIMEOUT: "int",
    SIZELIMIT: "int",
    HOSTNAMEATTRIBUTE: "string",
    IDATTRIBUTE: "string",
    IPATTRIBUTE: "string",
    SEARCHFILTER: "string",
    NOREFERRALS: "bool",
    AUTHTYPE: "string",
    TLS_VERSION: "int",
    TLS_VERIFY: "bool",
    TLS_CA_FILE: "string",
    START_TLS: "bool",
  },
  secretTargets: { BINDPW: LDAP_BINDPW_TARGETS },
  validate(deps: Deps, config: Record<string, string>): void {
    // an update sends only the changed keys: check what is given
    const fail = (why: string) => new ParameterError(`Cannot save LDAP machine resolver: ${why}`);
    if ((config.LDAPURI ?? "").trim() !== "") {
      parseServerSettings(fail, { LDAPURI: config.LDAPURI }, deps.config.storage.dataDir);
    }
    if ((config.AUTHTYPE ?? "").trim() !== "") {
      parseServerSettings(fail, {
        LDAPURI: "ldap://localhost",
        AUTHTYPE: config.AUTHTYPE,
      }, deps.config.storage.dataDir);
    }
    if ((config.SEARCHFILTER ?? "").trim() !== "") filterOf(fail, config.SEARCHFILTER);
    if ((config.TLS_CA_FILE ?? "").trim() !== "") {
      const path = parseServerSettings(fail, {
        LDAPURI: "ldap://localhost",
        TLS_CA_FILE: config.TLS_CA_FILE,
      }, deps.config.storage.dataDir).tlsCaFile;
      // the save hook is synchronous: the own-file rule now, the content whenever it is read
      if (path !== undefined) refuseOwnPath(deps.config, path, "TLS_CA_FILE");
    }
  },
  open(deps: Deps, name: string, config: Record<string, string>): MachineSource {
    return new LdapMachineSource(deps, name, config);
  },
  async test(deps: Deps, config: Record<string, string>) {
    let cfg: MachineLdapConfig;
    try {
      cfg = parseMachineLdapConfig("test", config, deps.config.storage.dataDir);
    } catch (err) {
      return { ok: false, description: (err as Error).message };
    }
    await checkCaFile(cfg.server.tlsCaFile, deps.config);
    const pool = new LdapPool(cfg.server, {
      now: () => deps.clock.now(),
      random: deps.random,
      readCa: (path) => readCaFile(path, deps.config),
    });
    const started = performance.now();
    try {
      const entries = await pool.run({ kind: "service" }, (c) => search(c, cfg, cfg.searchFilter));
      const seconds = ((performance.now() - started) / 1000).toFixed(4);
      return {
        ok: true,
        description:
          `Your LDAP config seems to be OK, ${entries.length} machine objects found in ${seconds}s.`,
      };
    } catch (err) {
      if (err instanceof ParameterError) throw err;
      return { ok: false, description: `The LDAP search failed: ${ldapErrorText(err)}` };
    }
  },
};
