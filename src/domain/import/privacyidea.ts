/**
 * `tessera import privacyidea`: carries a privacyIDEA installation over
 * (spec 12 §4, §5). Everything is read and every secret decrypted first (a
 * wrong key file stops the import before anything is written); then one
 * transaction writes resolvers, realms, system config, policies, events,
 * machine resolvers, RADIUS and SMTP servers, admins, token groups, service
 * IDs, tokens with their machine bindings and group memberships through the
 * domain functions. Objects that already exist are
 * reported and left alone (tokens are replaced with `replace`), so a second
 * run changes nothing.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { AppError, ParameterError } from "../../errors.ts";
import { passlibScheme } from "../../lib/passlib.ts";
import { fromHex } from "../../lib/random.ts";
import { parseOcraSuite } from "../../lib/ocra.ts";
import { addImportedAdmin, adminExists, importedAdminHash } from "../admin/mod.ts";
import { listEventDefinitions, saveEventDefinition } from "../event/mod.ts";
import { listCaConnectors, saveCaConnector } from "../caconnector/mod.ts";
import { listPrivacyideaServers, setPrivacyideaServer } from "../privacyidea_server/mod.ts";
import { attachToken, listMachineResolvers, saveMachineResolver } from "../machine/mod.ts";
import { listPolicies, savePolicy, unlistedPolicyActions } from "../policy/mod.ts";
import { radiusServerIdentifiers, setRadiusServer } from "../radius_server/mod.ts";
import { getDefaultRealmName, realmExistsByName, setDefaultRealm, setRealm } from "../realm/mod.ts";
import { getResolver, resolverExists, saveResolver } from "../resolver/mod.ts";
import { saveSmtpServer, smtpServerIds } from "../smtp/mod.ts";
import { listServiceIds, setServiceId } from "../service_id/mod.ts";
import { addTokenToGroup, listTokenGroups, setTokenGroup } from "../token_group/mod.ts";
import { readSystemConfig, setSystemConfig } from "../system_config/mod.ts";
import {
  findTokenBySerial,
  importedPinHash,
  type ImportedToken,
  type InfoEntry,
  pinHashOf,
  tokenTypeOf,
  writeImportedToken,
} from "../token/mod.ts";
import {
  decryptPassword,
  decryptPin,
  decryptTokenKey,
  parseEncKey,
  PiDecryptError,
  type PiKeys,
} from "./pi_crypto.ts";
import {
  openPiSource,
  PI_CARRIED_TABLES,
  type PiRow,
  type PiSource,
  type PiTable,
} from "./privacyidea_store.ts";
import { inOneTransaction } from "./_transaction.ts";
import { bool, groupBy, int, type PiItem, str } from "./_pi_items.ts";
import { periodicTaskItems, smsGatewayItems } from "./_pi_gateways_tasks.ts";
import {
  containerExists,
  type ContainerPlan,
  containerPlans,
  PI_CONTAINER_TABLES,
  type PiContainerRows,
  templateItems,
  writeContainer,
} from "./_pi_containers.ts";

/** Options of {@link importPrivacyidea}. */
export interface PiImportOptions {
  /** Contents of privacyIDEA's `encKey` file. */
  encKey: Uint8Array;
  /** Password of a password-protected key file. */
  encKeyPassword?: string;
  /** `PI_PEPPER` of the privacyIDEA config (admin hashes); privacyIDEA's default "missing". */
  pepper?: string;
  /** Only report what would be imported. */
  dryRun?: boolean;
  /** Replace tokens whose serial exists (other objects are never replaced). */
  replace?: boolean;
  /** Called after each token. */
  onProgress?: (done: number, total: number) => void;
}

/** One line of the summary table. */
export interface SummaryRow {
  what: string;
  found: number;
  imported: number;
  existing: number;
  failed: number;
}

/** Result of {@link importPrivacyidea}. */
export interface PiImportReport {
  isDryRun: boolean;
  summary: SummaryRow[];
  /** What was skipped or failed and why, and what is not carried over. */
  log: string[];
  /** Objects written (0 on a dry run and on a repeated run). */
  changed: number;
  /**
   * Policies of the source that are not (or, on a dry run, would not be) imported: refused
   * for actions Tessera does not have, or failed. The command exits non-zero when any is.
   */
  policiesNotImported: string[];
}

const WRONG_KEY =
  "The key file does not decrypt this database's secrets: is it the encKey of this privacyIDEA?";
// types whose key string is the secret itself, not hex (spec 12 §2.2)
const TEXT_KEY_TYPES = new Set(["pw", "registration", "applspec", "passkey", "motp"]);

type Tables = Record<PiTable, PiRow[]>;

async function readAll(source: PiSource): Promise<Tables> {
  const out = {} as Tables;
  for (const t of PI_CARRIED_TABLES) out[t] = await source.rows(t);
  return out;
}

/** Decrypts every secret up front; counts failures to tell a wrong key file. */
class Secrets {
  ok = 0;
  failed: string[] = [];
  constructor(readonly keys: PiKeys) {}

  attempt<T>(what: string, fn: () => T): T | undefined {
    try {
      const v = fn();
      this.ok++;
      return v;
    } catch (err) {
      if (!(err instanceof PiDecryptError)) throw err;
      this.failed.push(`${what}: ${err.message}`);
      return undefined;
    }
  }

  password(what: string, value: string): string | undefined {
    return this.attempt(what, () => decryptPassword(this.keys, value));
  }
}

type Item = PiItem;

function configOf(
  secrets: Secrets,
  what: string,
  rows: PiRow[],
): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const r of rows) {
    const key = str(r.Key);
    const value = r.Value === null || r.Value === undefined ? "" : String(r.Value);
    if (str(r.Type) === "password") {
      const plain = secrets.password(`${what} ${key}`, value);
      if (plain === undefined) return undefined;
      out[key] = plain;
    } else {
      out[key] = value;
    }
  }
  return out;
}

function resolverItems(t: Tables, secrets: Secrets): Item[] {
  const config = groupBy(t.resolverconfig, "resolver_id");
  return t.resolver.map((r) => {
    const name = str(r.name);
    const type = str(r.rtype);
    const params = configOf(secrets, `resolver ${name}`, config.get(int(r.id)) ?? []);
    return {
      kind: "resolvers",
      name,
      exists: (deps) => resolverExists(deps, name),
      write: async (deps) => {
        if (!params) throw new ParameterError("its password could not be decrypted");
        await saveResolver(deps, name, { type, params });
      },
    };
  });
}

function realmItems(t: Tables): Item[] {
  const resolvers = new Map(t.resolver.map((r) => [int(r.id), str(r.name)]));
  const members = groupBy(t.resolverrealm, "realm_id");
  return t.realm.map((r) => {
    const name = str(r.name).toLowerCase();
    const entries = members.get(int(r.id)) ?? [];
    const nodeBound = entries.filter((e) => str(e.node_uuid) !== "");
    const list = entries.filter((e) => str(e.node_uuid) === "");
    const priorities: Record<string, number> = {};
    for (const e of list) {
      if (e.priority !== null && e.priority !== undefined && str(e.priority) !== "") {
        priorities[resolvers.get(int(e.resolver_id)) ?? ""] = int(e.priority);
      }
    }
    return {
      kind: "realms",
      name,
      note: nodeBound.length > 0
        ? `realm ${name}: ${nodeBound.length} node-specific resolver entries not imported`
        : undefined,
      exists: (deps) => realmExistsByName(deps, name),
      write: async (deps) => {
        const res = await setRealm(deps, name, {
          resolvers: list.map((e) => resolvers.get(int(e.resolver_id)) ?? ""),
          priorities,
        });
        if (res.failed.length > 0) {
          throw new ParameterError(`unknown resolvers ${res.failed.join(", ")}`);
        }
        if (bool(r.default) && (await getDefaultRealmName(deps)) !== name) {
          await setDefaultRealm(deps, name);
        }
      },
    };
  });
}

function configItems(t: Tables, secrets: Secrets): Item[] {
  return t.config.filter((r) => str(r.Key) !== "__timestamp__").map((r) => {
    const key = str(r.Key);
    const isPassword = str(r.Type) === "password";
    const value = isPassword
      ? secrets.password(`config ${key}`, String(r.Value ?? ""))
      : String(r.Value ?? "");
    return {
      kind: "system config",
      name: key,
      exists: async (deps) => key in ((await readSystemConfig(deps)) as Record<string, unknown>),
      write: async (deps) => {
        if (value === undefined) throw new ParameterError("its value could not be decrypted");
        // a password stays one: re-encrypted under Tessera's key, censored when read
        await setSystemConfig(deps, {
          [key]: value,
          ...(isPassword ? { [`${key}.type`]: "password" } : {}),
        });
      },
    };
  });
}

function policyItems(t: Tables): Item[] {
  const conditions = groupBy(t.policycondition, "policy_id");
  const descriptions = new Map(
    t.description.filter((d) => str(d.object_type) === "policy")
      .map((d) => [int(d.object_id), String(d.description ?? "")]),
  );
  return t.policy.map((p) => {
    const name = str(p.name);
    const params: Record<string, unknown> = {
      scope: str(p.scope),
      action: String(p.action ?? ""),
      active: bool(p.active),
      priority: int(p.priority, 1) || 1,
      check_all_resolvers: bool(p.check_all_resolvers),
      user_case_insensitive: bool(p.user_case_insensitive),
      conditions: (conditions.get(int(p.id)) ?? []).map((c) => {
        const cond: unknown[] = [
          str(c.section),
          str(c.Key),
          str(c.comparator) || "equals",
          String(c.Value ?? ""),
          bool(c.active),
        ];
        if (str(c.handle_missing_data) !== "") cond.push(str(c.handle_missing_data));
        return cond;
      }),
    };
    for (
      const f of [
        "realm",
        "adminrealm",
        "adminuser",
        "resolver",
        "pinode",
        "user",
        "client",
        "time",
        "user_agents",
      ]
    ) {
      if (str(p[f]) !== "") params[f] = str(p[f]);
    }
    const description = descriptions.get(int(p.id));
    if (description) params.description = description;
    const scope = str(p.scope);
    return {
      kind: "policies",
      name,
      policy: { scope, isActive: bool(p.active) },
      exists: async (deps) => (await listPolicies(deps, { name })).length > 0,
      // no policy is imported in part: one action Tessera does not have refuses the policy
      refusal: () => {
        const unlisted = unlistedPolicyActions(scope, params.action);
        return unlisted.length > 0
          ? `scope ${scope}, actions Tessera does not have: ${unlisted.join(", ")}`
          : undefined;
      },
      write: async (deps) => void await savePolicy(deps, name, params),
    };
  });
}

/**
 * The safety note of an import that left out active admin or user policies: without any
 * active policy in the scope, privacyIDEA's rule (and Tessera's) allows every action.
 */
async function openScopeWarnings(
  deps: Deps,
  leftOut: Map<string, string[]>,
  added: Set<string>,
): Promise<string[]> {
  const out: string[] = [];
  for (const [scope, names] of leftOut) {
    if (scope !== "admin" && scope !== "user") continue;
    if (added.has(scope) || (await listPolicies(deps, { scope, active: true })).length > 0) {
      continue;
    }
    out.push(
      `warning: no active ${scope} policy is left: every ${scope} may do everything until ` +
        `you add one (privacyIDEA limited them with ${names.join(", ")}, not imported)`,
    );
  }
  return out;
}

function eventItems(t: Tables, secrets: Secrets): Item[] {
  const options = groupBy(t.eventhandleroption, "eventhandler_id");
  const conditions = groupBy(t.eventhandlercondition, "eventhandler_id");
  return t.eventhandler.map((e) => {
    const name = str(e.name);
    const params: Record<string, unknown> = {
      name,
      event: str(e.event),
      handlermodule: str(e.handlermodule),
      action: str(e.action),
      position: str(e.position) || "post",
      ordering: String(int(e.ordering)),
      active: bool(e.active),
      conditions: Object.fromEntries(
        (conditions.get(int(e.id)) ?? []).map((c) => [str(c.Key), String(c.Value ?? "")]),
      ),
    };
    const opts = configOf(secrets, `event ${name}`, options.get(int(e.id)) ?? []);
    for (const [k, v] of Object.entries(opts ?? {})) params[`option.${k}`] = v;
    return {
      kind: "event handlers",
      name,
      exists: async (deps) => (await listEventDefinitions(deps)).some((d) => d.name === name),
      write: async (deps) => {
        if (!opts) throw new ParameterError("an option could not be decrypted");
        await saveEventDefinition(deps, params);
      },
    };
  });
}

function machineResolverItems(t: Tables, secrets: Secrets): Item[] {
  const config = groupBy(t.machineresolverconfig, "resolver_id");
  return t.machineresolver.map((r) => {
    const name = str(r.name);
    const params = configOf(secrets, `machine resolver ${name}`, config.get(int(r.id)) ?? []);
    return {
      kind: "machine resolvers",
      name,
      exists: async (deps) => name in (await listMachineResolvers(deps, { name })),
      write: async (deps) => {
        if (!params) throw new ParameterError("its password could not be decrypted");
        await saveMachineResolver(deps, name, { ...params, type: str(r.rtype) });
      },
    };
  });
}

function radiusItems(t: Tables, secrets: Secrets): Item[] {
  return t.radiusserver.map((r) => {
    const identifier = str(r.identifier);
    const secret = secrets.password(`RADIUS server ${identifier}`, String(r.secret ?? ""));
    return {
      kind: "RADIUS servers",
      name: identifier,
      exists: async (deps) => (await radiusServerIdentifiers(deps)).includes(identifier),
      write: async (deps) => {
        if (secret === undefined) throw new ParameterError("its secret could not be decrypted");
        await setRadiusServer(deps, identifier, {
          server: str(r.server),
          secret,
          port: int(r.port, 1812),
          retries: int(r.retries, 3),
          timeout: int(r.timeout, 5),
          description: String(r.description ?? ""),
          dictionary: str(r.dictionary) || undefined,
          options: r.options === null || r.options === undefined || str(r.options) === ""
            ? undefined
            : String(r.options),
        });
      },
    };
  });
}

/** privacyIDEA server definitions (`/privacyideaserver/`), for remote tokens and federation. */
function privacyideaServerItems(rows: PiRow[]): Item[] {
  return rows.map((r) => {
    const identifier = str(r.identifier);
    return {
      kind: "privacyIDEA servers",
      name: identifier,
      exists: async (deps) => identifier in await listPrivacyideaServers(deps),
      write: async (deps) => {
        await setPrivacyideaServer(deps, identifier, {
          url: str(r.url),
          isTlsVerified: bool(r.tls),
          description: String(r.description ?? ""),
        });
      },
    };
  });
}

/**
 * CA connectors with their config. A local CA's key and certificate are read from the
 * files its cakey/cacert name (with the CA directory's serial and index.txt): the import
 * must run where privacyIDEA's CA directory is, or a copy of it under the same path.
 */
function caConnectorItems(connectors: PiRow[], configRows: PiRow[], secrets: Secrets): Item[] {
  const configs = groupBy(configRows, "caconnector_id");
  return connectors.map((r) => {
    const name = str(r.name);
    const catype = str(r.catype);
    const config = configOf(secrets, `CA connector ${name}`, configs.get(int(r.id)) ?? []);
    return {
      kind: "CA connectors",
      name,
      exists: async (deps) => (await listCaConnectors(deps, name)).length > 0,
      refusal: () =>
        catype !== "local"
          ? `type "${catype}", which Tessera does not have (the local CA only)`
          : undefined,
      write: async (deps) => {
        if (config === undefined) throw new ParameterError("its config could not be decrypted");
        const { name: _name, ...rest } = config;
        await saveCaConnector(deps, name, { ...rest, type: catype });
      },
    };
  });
}

function smtpItems(t: Tables, secrets: Secrets): Item[] {
  return t.smtpserver.map((r) => {
    const identifier = str(r.identifier);
    const raw = String(r.password ?? "");
    // very old rows hold the password in clear (spec 12 §2.3)
    const password = raw === ""
      ? ""
      : /^[0-9a-f]{32}:[0-9a-f]+$/.test(raw)
      ? secrets.password(`SMTP server ${identifier}`, raw)
      : raw;
    // privacyIDEA 3.13 signs a server's mail with S/MIME when `smime` is set (spec 17 §4)
    const isSmime = bool(r.smime);
    return {
      kind: "SMTP servers",
      name: identifier,
      exists: async (deps) => (await smtpServerIds(deps)).includes(identifier),
      refusal: () =>
        isSmime
          ? "S/MIME signing (smime), which Tessera does not have: privacyIDEA signed this " +
            `server's mail${bool(r.dont_send_on_error) ? " and sent none unsigned" : ""}`
          : undefined,
      write: async (deps) => {
        if (password === undefined) {
          throw new ParameterError("its password could not be decrypted");
        }
        await saveSmtpServer(deps, identifier, {
          server: str(r.server),
          port: String(int(r.port, 25)),
          tls: bool(r.tls) ? "1" : "0",
          username: String(r.username ?? ""),
          password,
          sender: String(r.sender ?? ""),
          description: String(r.description ?? ""),
          timeout: String(int(r.timeout, 10)),
          enqueue_job: bool(r.enqueue_job) ? "1" : "0",
        });
      },
    };
  });
}

// Tessera keeps 255 characters of a group's or service ID's description, privacyIDEA 2000
const MAX_NAMED_DESCRIPTION = 255;

/**
 * Token groups or service IDs (privacyIDEA's `tokengroup`, `serviceid`: id, name,
 * Description); an existing name is left as it is, like every other named object.
 */
function namedItems(
  rows: PiRow[],
  kind: string,
  exists: (deps: Deps, name: string) => Promise<boolean>,
  save: (deps: Deps, name: string, description: string) => Promise<unknown>,
): Item[] {
  return rows.map((r) => {
    const name = str(r.name);
    const full = String(r.Description ?? "");
    const description = full.slice(0, MAX_NAMED_DESCRIPTION);
    return {
      kind,
      name,
      note: description.length < full.length
        ? `${kind} ${name}: description cut to ${MAX_NAMED_DESCRIPTION} characters`
        : undefined,
      exists: (deps) => exists(deps, name),
      write: async (deps) => void await save(deps, name, description),
    };
  });
}

/** The token groups each token serial is in (privacyIDEA's `tokentokengroup`). */
function groupsOfTokens(t: Tables, groups: PiRow[], members: PiRow[]): Map<string, string[]> {
  const serials = new Map(t.token.map((r) => [int(r.id), str(r.serial)]));
  const names = new Map(groups.map((g) => [int(g.id), str(g.name)]));
  const out = new Map<string, string[]>();
  for (const m of members) {
    const serial = serials.get(int(m.token_id));
    const group = names.get(int(m.tokengroup_id));
    if (serial === undefined || group === undefined) continue;
    out.set(serial, [...(out.get(serial) ?? []), group]);
  }
  return out;
}

function adminItems(t: Tables, pepper: string): Item[] {
  return t.admin.map((a) => {
    const username = str(a.username);
    const hash = str(a.password);
    return {
      kind: "admins",
      name: username,
      exists: (deps) => adminExists(deps, username),
      write: async (deps) => {
        if (passlibScheme(hash) === undefined) {
          throw new ParameterError("its password hash scheme is not supported");
        }
        await addImportedAdmin(deps, username, {
          passwordHash: importedAdminHash(deps, pepper, hash),
          email: str(a.email),
        });
      },
    };
  });
}

/** A token row prepared for writing (secrets decrypted, owner by uid). */
interface TokenPlan {
  token: ImportedToken;
  owner?: { uid: string; resolver: string; realm: string };
  notes: string[];
  pinPlain?: string;
  /** A remote token's privacyIDEA server definition (its id here is set when written). */
  remoteServer?: string;
  /** Why a token of a type Tessera leaves out is not imported (reported by serial). */
  leftOut?: string;
}

/**
 * Token types Tessera leaves out on purpose (docs/token-types.md): such tokens are not
 * imported but reported by serial, so nobody relies on a disabled copy.
 */
const LEFT_OUT_TYPES: Readonly<Record<string, string>> = {
  vasco: "VASCO/OneSpan Digipass: its algorithm exists only in the vendor's closed library",
  daplug: "daplug dongle: HOTP typed as letters, not supported; give the user another token",
};

function tokenPlans(t: Tables, secrets: Secrets, piServers: PiRow[]): TokenPlan[] {
  const serverIdentifiers = new Map(piServers.map((r) => [int(r.id), str(r.identifier)]));
  const realms = new Map(t.realm.map((r) => [int(r.id), str(r.name).toLowerCase()]));
  const infos = groupBy(t.tokeninfo, "token_id");
  const owners = groupBy(t.tokenowner, "token_id");
  const tokenRealms = groupBy(t.tokenrealm, "token_id");
  const config = new Map(t.config.map((c) => [str(c.Key), String(c.Value ?? "")]));
  return t.token.map((row) => {
    const serial = str(row.serial);
    const type = str(row.tokentype).toLowerCase() || "hotp";
    const notes: string[] = [];
    const module = tokenTypeOf(type);
    let secret: Uint8Array | undefined;
    const keyEnc = str(row.key_enc);
    if (keyEnc !== "") {
      const plain = secrets.attempt(
        `token ${serial}`,
        () => decryptTokenKey(secrets.keys, keyEnc, str(row.key_iv)),
      );
      if (plain === undefined) notes.push("its secret could not be decrypted");
      else if (TEXT_KEY_TYPES.has(type)) secret = new TextEncoder().encode(plain);
      else if (/^([0-9a-fA-F]{2})+$/.test(plain)) secret = fromHex(plain);
      else {
        secrets.failed.push(`token ${serial}: the decrypted key is not hex`);
        notes.push("its secret could not be decrypted");
      }
    }
    const info: Record<string, InfoEntry> = {};
    for (const i of infos.get(int(row.id)) ?? []) {
      const key = str(i.Key);
      const value = String(i.Value ?? "");
      if (str(i.Type) === "password") {
        const plain = secrets.password(`tokeninfo ${serial} ${key}`, value);
        if (plain === undefined) notes.push(`tokeninfo ${key} could not be decrypted`);
        else info[key] = { value: plain, type: "password" };
      } else {
        info[key] = { value, type: str(i.Type) };
      }
    }
    if (type === "motp" && str(row.user_pin) !== "") {
      // privacyIDEA keeps the mOTP PIN in the token's encrypted user PIN column
      const motppin = secrets.attempt(
        `mOTP PIN of ${serial}`,
        () => decryptTokenKey(secrets.keys, str(row.user_pin), str(row.user_pin_iv)),
      );
      if (motppin === undefined) notes.push("its mOTP PIN could not be decrypted");
      else info.motppin = { value: motppin, type: "password" };
    }
    if ((type === "hotp" || type === "totp") && !info.hashlib) {
      // no per-token hash: the system default of privacyIDEA applied
      info.hashlib = { value: config.get(`${type}.hashlib`) || "sha1", type: "" };
    }
    const rawPin = str(row.pin_hash);
    let pinHash = "";
    let pinPlain: string | undefined;
    if (rawPin.startsWith("@@")) {
      pinPlain = secrets.attempt(`PIN of ${serial}`, () => decryptPin(secrets.keys, rawPin));
      if (pinPlain === undefined) notes.push("its encrypted PIN could not be decrypted");
    } else if (rawPin.startsWith("$")) {
      pinHash = importedPinHash(rawPin);
      if (passlibScheme(rawPin) === undefined) {
        notes.push("its PIN hash scheme is not supported: set a new PIN");
      }
    } else if (rawPin !== "") {
      pinHash = importedPinHash(rawPin, str(row.pin_seed));
    }
    const ownerRow = (owners.get(int(row.id)) ?? [])[0];
    if ((owners.get(int(row.id)) ?? []).length > 1) notes.push("extra owner rows not imported");
    const owner = ownerRow
      ? {
        uid: str(ownerRow.user_id),
        resolver: str(ownerRow.resolver),
        realm: realms.get(int(ownerRow.realm_id)) ?? "",
      }
      : undefined;
    let active = bool(row.active);
    if (!module) {
      active = false;
      notes.push(`token type "${type}" is not supported by Tessera: imported disabled`);
    }
    // a tiqr token is an OCRA token too, with its own default suite
    const suite = info.ocrasuite?.value ??
      (type === "tiqr" ? "OCRA-1:HOTP-SHA1-6:QN10" : undefined);
    if ((type === "ocra" || type === "tiqr") && active && !ocraSuiteUsable(suite)) {
      // privacyIDEA fails every check of such a token (counter, PIN or time input)
      active = false;
      notes.push("its OCRA suite needs a counter, PIN, session or time input: imported disabled");
    }
    if (type === "u2f" && active && !u2fRegistrationComplete(secret, info)) {
      // such a token can never answer its challenge: say so rather than carry a dead token
      active = false;
      notes.push(
        "its U2F registration (key handle, pubKey, appId) is incomplete: imported disabled",
      );
    }
    let remoteServer: string | undefined;
    if (type === "remote") {
      // privacyIDEA names the definition by its id, which differs here: map it by identifier
      const piId = info["remote.server_id"]?.value ?? "";
      remoteServer = /^\d+$/.test(piId) ? serverIdentifiers.get(Number(piId)) : undefined;
      delete info["remote.server_id"];
      if (remoteServer === undefined && active) {
        active = false;
        notes.push(
          "its privacyIDEA server is not a definition (remote.server_id), which Tessera needs: " +
            "imported disabled",
        );
      }
    }
    const leftOut = LEFT_OUT_TYPES[type];
    const failed = notes.some((n) => n.includes("could not be decrypted"));
    return {
      token: {
        serial,
        type,
        description: String(row.description ?? "").slice(0, 80),
        secret,
        pinHash,
        active,
        revoked: bool(row.revoked),
        locked: bool(row.locked),
        failcount: int(row.failcount),
        maxfail: int(row.maxfail, 10),
        count: int(row.count),
        countWindow: int(row.count_window, 10),
        syncWindow: int(row.sync_window, 1000),
        otplen: int(row.otplen, 6),
        rolloutState: str(row.rollout_state),
        info,
        realms: (tokenRealms.get(int(row.id)) ?? []).map((r) => realms.get(int(r.realm_id)) ?? "")
          .filter((r) => r !== ""),
        createdAt: 0,
      },
      owner,
      notes: failed ? ["failed: " + notes.join("; ")] : notes,
      pinPlain,
      remoteServer,
      leftOut,
    };
  });
}

/** A u2f token with what its check needs: a key handle, a 65-byte `pubKey` and an `appId`. */
function u2fRegistrationComplete(
  keyHandle: Uint8Array | undefined,
  info: Record<string, InfoEntry>,
): boolean {
  return (keyHandle?.length ?? 0) > 0 && /^04[0-9a-fA-F]{128}$/.test(info.pubKey?.value ?? "") &&
    (info.appId?.value ?? "") !== "";
}

/** An OCRA suite `/validate/check` can answer: valid, with the question as its only input. */
function ocraSuiteUsable(suite = "OCRA-1:HOTP-SHA1-8:QH40"): boolean {
  try {
    const parsed = parseOcraSuite(suite);
    return !parsed.counter && !parsed.signature;
  } catch {
    return false;
  }
}

async function ownerLogin(
  deps: Deps,
  owner: { uid: string; resolver: string },
): Promise<string | undefined> {
  try {
    const resolver = await getResolver(deps, owner.resolver);
    return (await resolver?.getUserInfo(owner.uid))?.username || undefined;
  } catch {
    return undefined;
  }
}

function machineTokenWork(
  t: Tables,
): Map<
  string,
  { application: string; resolver?: string; machineid?: string; options: Record<string, string> }[]
> {
  const serials = new Map(t.token.map((r) => [int(r.id), str(r.serial)]));
  const resolvers = new Map(t.machineresolver.map((r) => [int(r.id), str(r.name)]));
  const options = groupBy(t.machinetokenoptions, "machinetoken_id");
  const out = new Map<
    string,
    {
      application: string;
      resolver?: string;
      machineid?: string;
      options: Record<string, string>;
    }[]
  >();
  for (const m of t.machinetoken) {
    const serial = serials.get(int(m.token_id));
    if (!serial) continue;
    const list = out.get(serial) ?? [];
    list.push({
      application: str(m.application),
      resolver: m.machineresolver_id === null
        ? undefined
        : resolvers.get(int(m.machineresolver_id)),
      machineid: str(m.machine_id) || undefined,
      options: Object.fromEntries(
        (options.get(int(m.id)) ?? []).map((o) => [str(o.mt_key), String(o.mt_value ?? "")]),
      ),
    });
    out.set(serial, list);
  }
  return out;
}

const NOT_CARRIED: [PiTable, string][] = [
  ["challenge", "pending challenges (logins waiting for their second step start again)"],
  ["subscription", "subscriptions"],
  ["customuserattribute", "custom user attributes"],
  ["pidea_audit", "audit entries (signed with privacyIDEA's audit key)"],
];

/**
 * Tables every privacyIDEA database has (pi-manage createdb makes them all, empty or not); a
 * database without them is something else, and importing from it would report 0 of everything.
 */
const PI_REQUIRED_TABLES: PiTable[] = [
  "token",
  "tokeninfo",
  "tokenrealm",
  "realm",
  "resolver",
  "resolverconfig",
  "resolverrealm",
  "policy",
  "config",
];

/** privacyIDEA's schema revisions (alembic heads) of the releases Tessera reads. */
const PI_SCHEMA_RELEASES: Readonly<Record<string, string>> = {
  "69e7817b9863": "3.10",
  "903a6ed6f6c4": "3.11",
  "1c48d4ffb8c3": "3.12",
  "06b105a4f941": "3.13.0",
  "b1a2c3d4e5f6": "3.13.1 to 3.13.3",
};

/** The log line that names the source's schema (its `alembic_version`). */
function schemaLine(revisions: PiRow[]): string {
  const revision = str(revisions[0]?.version_num);
  if (revision === "") {
    return "privacyIDEA database: no schema revision recorded (table alembic_version)";
  }
  const release = PI_SCHEMA_RELEASES[revision];
  return release
    ? `privacyIDEA database: schema of privacyIDEA ${release} (revision ${revision})`
    : `privacyIDEA database: schema revision ${revision}, not one of the releases Tessera ` +
      "knows (privacyIDEA 3.10 to 3.13.3): the tables are read as 3.13 has them; check the summary";
}

/** A privacyIDEA database read and decrypted, not yet written ({@link readPrivacyidea}). */
export interface PiSnapshot {
  /** What the source's schema revision says (the report's first line). */
  schema: string;
  groups: Item[][];
  plans: TokenPlan[];
  machineTokens: ReturnType<typeof machineTokenWork>;
  /** The token groups of each serial. */
  tokenGroups: Map<string, string[]>;
  /** The token containers, written after the tokens they hold. */
  containers: ContainerPlan[];
  /** Values that could not be decrypted. */
  undecrypted: string[];
  notCarried: string[];
}

/**
 * Reads a privacyIDEA database and decrypts its secrets; writes nothing. Refuses a database
 * that is not privacyIDEA's and a key file that does not decrypt it.
 */
export async function readPrivacyidea(
  databaseUrl: string,
  options: Pick<PiImportOptions, "encKey" | "encKeyPassword" | "pepper">,
): Promise<PiSnapshot> {
  let keys: PiKeys;
  try {
    keys = parseEncKey(options.encKey, options.encKeyPassword);
  } catch (err) {
    if (err instanceof PiDecryptError) {
      throw new ParameterError(`Cannot read the key file: ${err.message}`);
    }
    throw err;
  }
  const source = await openPiSource(databaseUrl);
  let t: Tables;
  let schema: string;
  const notCarried: string[] = [];
  let caConnectors: PiRow[] = [];
  let caConnectorConfig: PiRow[] = [];
  let piServers: PiRow[] = [];
  let tokenGroups: PiRow[] = [];
  let tokenGroupMembers: PiRow[] = [];
  let serviceIds: PiRow[] = [];
  let smsGateways: PiRow[] = [];
  let smsGatewayOptions: PiRow[] = [];
  let periodicTasks: PiRow[] = [];
  let periodicTaskOptions: PiRow[] = [];
  const containerRows: Record<string, PiRow[]> = {};
  try {
    const missing: PiTable[] = [];
    for (const table of PI_REQUIRED_TABLES) {
      if (!await source.has(table)) missing.push(table);
    }
    if (missing.length > 0) {
      throw new ParameterError(
        `The database is not a privacyIDEA database (missing tables: ${missing.join(", ")})`,
      );
    }
    schema = schemaLine(await source.rows("alembic_version"));
    t = await readAll(source);
    // older or partial databases may lack them; privacyIDEA's createdb makes both
    if (await source.has("caconnector") && await source.has("caconnectorconfig")) {
      caConnectors = await source.rows("caconnector");
      caConnectorConfig = await source.rows("caconnectorconfig");
    }
    piServers = await source.rows("privacyideaserver");
    // privacyIDEA 3.8 added them; a partial database may lack one
    if (await source.has("tokengroup")) tokenGroups = await source.rows("tokengroup");
    if (await source.has("tokentokengroup")) {
      tokenGroupMembers = await source.rows("tokentokengroup");
    }
    if (await source.has("serviceid")) serviceIds = await source.rows("serviceid");
    smsGateways = await source.rows("smsgateway");
    smsGatewayOptions = await source.rows("smsgatewayoption");
    periodicTasks = await source.rows("periodictask");
    periodicTaskOptions = await source.rows("periodictaskoption");
    // privacyIDEA 3.10 added them (a table it lacks reads as empty)
    for (const table of PI_CONTAINER_TABLES) containerRows[table] = await source.rows(table);
    for (const [table, what] of NOT_CARRIED) {
      const n = await source.count(table);
      if (n > 0) notCarried.push(`not imported: ${n} ${what} (table ${table})`);
    }
  } finally {
    await source.close();
  }
  // read and decrypt everything before writing anything
  const secrets = new Secrets(keys);
  const groups: Item[][] = [
    resolverItems(t, secrets),
    realmItems(t),
    configItems(t, secrets),
    policyItems(t),
    eventItems(t, secrets),
    machineResolverItems(t, secrets),
    radiusItems(t, secrets),
    smtpItems(t, secrets),
    smsGatewayItems(smsGateways, smsGatewayOptions),
    periodicTaskItems(periodicTasks, periodicTaskOptions),
    caConnectorItems(caConnectors, caConnectorConfig, secrets),
    privacyideaServerItems(piServers),
    templateItems(containerRows.tokencontainertemplate),
    adminItems(t, options.pepper ?? "missing"),
    namedItems(
      tokenGroups,
      "token groups",
      async (deps, name) => name in await listTokenGroups(deps, name),
      setTokenGroup,
    ),
    namedItems(
      serviceIds,
      "service IDs",
      async (deps, name) => name in await listServiceIds(deps, name),
      setServiceId,
    ),
  ];
  const plans = tokenPlans(t, secrets, piServers);
  if (secrets.failed.length > 0 && secrets.failed.length >= secrets.ok) {
    throw new ParameterError(
      `${WRONG_KEY} (${secrets.failed.length} of ${
        secrets.failed.length + secrets.ok
      } values failed, first: ${secrets.failed[0]})`,
    );
  }
  return {
    schema,
    groups,
    plans,
    machineTokens: machineTokenWork(t),
    tokenGroups: groupsOfTokens(t, tokenGroups, tokenGroupMembers),
    containers: containerPlans(
      {
        containers: containerRows.tokencontainer,
        owners: containerRows.tokencontainerowner,
        realms: containerRows.tokencontainerrealm,
        states: containerRows.tokencontainerstates,
        info: containerRows.tokencontainerinfo,
        tokens: containerRows.tokencontainertoken,
        templates: containerRows.tokencontainertemplate,
      } satisfies PiContainerRows,
      new Map(t.realm.map((r) => [int(r.id), str(r.name)])),
      new Map(t.token.map((r) => [int(r.id), str(r.serial)])),
    ),
    undecrypted: secrets.failed,
    notCarried,
  };
}

/** Writes what {@link readPrivacyidea} read (or, on a dry run, only reports what it would). */
export async function writePrivacyidea(
  deps: Deps,
  snapshot: PiSnapshot,
  options: Pick<PiImportOptions, "dryRun" | "replace" | "onProgress">,
): Promise<PiImportReport> {
  const { groups, plans, machineTokens, tokenGroups, notCarried } = snapshot;
  const summary = new Map<string, SummaryRow>();
  const row = (what: string) => {
    let r = summary.get(what);
    if (!r) summary.set(what, r = { what, found: 0, imported: 0, existing: 0, failed: 0 });
    return r;
  };
  const log: string[] = [snapshot.schema];
  let changed = 0;
  const policiesNotImported: string[] = [];
  // active admin/user policies left out, per scope, and the scopes that got an active one
  const leftOut = new Map<string, string[]>();
  const addedActive = new Set<string>();
  const notImported = (item: Item) => {
    if (!item.policy) return;
    policiesNotImported.push(item.name);
    if (item.policy.isActive) {
      leftOut.set(item.policy.scope, [...(leftOut.get(item.policy.scope) ?? []), item.name]);
    }
  };

  const run = async (d: Deps) => {
    for (const items of groups) {
      for (const item of items) {
        const r = row(item.kind);
        r.found++;
        if (await item.exists(d)) {
          r.existing++;
          log.push(`exists, skipped: ${item.kind} ${item.name}`);
          continue;
        }
        const refusal = item.refusal?.();
        if (refusal !== undefined) {
          r.failed++;
          log.push(
            `${options.dryRun ? "would not import" : "not imported"}: ${item.kind} ` +
              `${item.name} (${refusal})`,
          );
          notImported(item);
          continue;
        }
        if (options.dryRun) {
          r.imported++;
          log.push(`would import: ${item.kind} ${item.name}`);
          if (item.note) log.push(item.note);
          if (item.policy?.isActive) addedActive.add(item.policy.scope);
          continue;
        }
        try {
          const written = await item.write(d);
          r.imported++;
          changed++;
          if (item.note) log.push(item.note);
          if (written) log.push(written);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          r.failed++;
          log.push(`failed: ${item.kind} ${item.name}: ${err.message}`);
          notImported(item);
        }
      }
    }
    log.push(...await openScopeWarnings(d, leftOut, addedActive));
    const tokens = row("tokens");
    const bindings = row("machine tokens");
    let done = 0;
    for (const plan of plans) {
      const tk = plan.token;
      tokens.found++;
      if (plan.leftOut) {
        tokens.failed++;
        log.push(`not imported: token ${tk.serial} (type "${tk.type}": ${plan.leftOut})`);
        continue;
      }
      const failedNote = plan.notes.find((n) => n.startsWith("failed: "));
      if (failedNote) {
        tokens.failed++;
        log.push(`${failedNote.replace("failed: ", `failed: token ${tk.serial}: `)}`);
        continue;
      }
      if (plan.pinPlain !== undefined) tk.pinHash = pinHashOf(d, plan.pinPlain);
      if (plan.remoteServer !== undefined && !options.dryRun) {
        const id = (await listPrivacyideaServers(d))[plan.remoteServer]?.id;
        if (id === undefined) {
          tk.active = false;
          plan.notes.push(
            `privacyIDEA server ${plan.remoteServer} not imported: imported disabled`,
          );
        } else tk.info["remote.server_id"] = { value: String(id), type: "" };
      }
      if (plan.owner) {
        const login = options.dryRun ? undefined : await ownerLogin(d, plan.owner);
        if (!options.dryRun && login === undefined) {
          plan.notes.push(`owner ${plan.owner.uid} (${plan.owner.resolver}): login not found`);
        }
        tk.owner = { ...plan.owner, login: login ?? "" };
      }
      tk.createdAt = d.clock.now();
      tk.info = {
        ...tk.info,
        import_date: {
          value: new Date(Math.floor(d.clock.now() / 1000) * 1000).toISOString()
            .replace(".000Z", "+00:00"),
          type: "",
        },
      };
      let outcome: string;
      if (options.dryRun) {
        const exists = (await findTokenBySerial(d, tk.serial, { withRealms: false })) !==
          undefined;
        outcome = exists ? (options.replace ? "replaced" : "exists") : "created";
      } else {
        outcome = await writeImportedToken(d, tk, {
          onExisting: options.replace ? "replace" : "skip",
        });
      }
      if (outcome === "exists") {
        tokens.existing++;
        log.push(`exists, skipped: token ${tk.serial}`);
      } else {
        tokens.imported++;
        if (!options.dryRun) changed++;
        if (options.dryRun) {
          log.push(`would ${outcome === "created" ? "import" : "replace"}: token ${tk.serial}`);
        }
        for (const n of plan.notes) log.push(`token ${tk.serial}: ${n}`);
        for (const b of machineTokens.get(tk.serial) ?? []) {
          bindings.found++;
          if (options.dryRun) {
            bindings.imported++;
            continue;
          }
          try {
            await attachToken(d, { serial: tk.serial, ...b });
            bindings.imported++;
            changed++;
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            bindings.failed++;
            log.push(`failed: machine token ${tk.serial} ${b.application}: ${err.message}`);
          }
        }
        for (const group of tokenGroups.get(tk.serial) ?? []) {
          // a row only when the source has memberships, so older summaries stay as they were
          const memberships = row("token group memberships");
          memberships.found++;
          if (options.dryRun) {
            memberships.imported++;
            continue;
          }
          try {
            await addTokenToGroup(d, tk.serial, group);
            memberships.imported++;
            changed++;
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            memberships.failed++;
            log.push(`failed: token ${tk.serial} in token group ${group}: ${err.message}`);
          }
        }
      }
      options.onProgress?.(++done, plans.length);
    }
    // containers after the tokens they hold
    for (const plan of snapshot.containers) {
      const r = row("token containers");
      r.found++;
      if (await containerExists(d, plan)) {
        r.existing++;
        log.push(`exists, skipped: token container ${plan.serial}`);
        continue;
      }
      if (plan.refusal !== undefined) {
        r.failed++;
        log.push(
          `${
            options.dryRun ? "would not import" : "not imported"
          }: token container ${plan.serial} (${plan.refusal})`,
        );
        continue;
      }
      if (options.dryRun) {
        r.imported++;
        log.push(`would import: token container ${plan.serial}`);
        continue;
      }
      try {
        const notes = await writeContainer(d, plan, ownerLogin);
        r.imported++;
        changed++;
        for (const n of notes) log.push(`token container ${plan.serial}: ${n}`);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        r.failed++;
        log.push(`failed: token container ${plan.serial}: ${err.message}`);
      }
    }
  };
  if (options.dryRun) await run(deps);
  else await inOneTransaction(deps, run);
  for (const f of snapshot.undecrypted) log.push(`not decrypted: ${f}`);
  log.push(...notCarried);
  return {
    isDryRun: options.dryRun === true,
    summary: [...summary.values()],
    log,
    changed,
    policiesNotImported,
  };
}

/** Imports a privacyIDEA database (see the module doc): {@link readPrivacyidea}, then write. */
export async function importPrivacyidea(
  deps: Deps,
  databaseUrl: string,
  options: PiImportOptions,
): Promise<PiImportReport> {
  return await writePrivacyidea(deps, await readPrivacyidea(databaseUrl, options), options);
}
