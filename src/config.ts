/**
 * Configuration: one defaults table, every key validated, all problems reported
 * together. {@link loadConfig} is pure: `main.ts` reads the file and the
 * environment and hands both in.
 *
 * @module
 */
import { parse as parseToml } from "smol-toml";
import { ConfigError } from "./errors.ts";

/** The validated configuration every part of Tessera receives. */
export interface Config {
  server: {
    host: string;
    port: number;
    nodeName: string;
    trustedProxies: string[];
    /**
     * The header a proxy of `trustedProxies` names the user it authenticated in (privacyIDEA's
     * REMOTE_USER); `""`: none is believed.
     */
    remoteUserHeader: string;
    bodyLimit: number;
    /** Processes `serve` starts on the same port (SO_REUSEPORT, Linux); 1 = one process. */
    workers: number;
  };
  storage: {
    dataDir: string;
    databaseUrl: string;
    keyFile: string;
    /**
     * Longest wait in milliseconds for one database call (a statement, a
     * connection, a lock, a request's audit row) before the request fails
     * with HTTP 503.
     */
    statementTimeout: number;
  };
  auth: {
    jwtLifetime: number;
    headerPrefix: string;
    superuserRealms: string[];
    /** Failed logins per client address within `loginFailureWindow` before 429. */
    loginFailures: number;
    /** Length of the failed-login window in seconds. */
    loginFailureWindow: number;
    /** Logins of one client address in progress at once. */
    loginParallel: number;
    /** Logins that may wait for an admin password hash; more get 429. */
    loginQueue: number;
  };
  log: { level: LogLevel; format: LogFormat };
  signing: { enabled: boolean; keyFile: string };
  compat: { policyList: boolean; versionnumber: string };
  radius: {
    enabled: boolean;
    host: string;
    port: number;
    clients: RadiusClientConfig[];
    dictionary: string;
  };
  subscriptions: { mode: "enforce" | "warn" | "off"; keyDir: string };
  events: { scriptDir: string };
  sms: { scriptDir: string };
  metrics: { enabled: boolean; token: string };
  /** Directory of the PEM trust anchors of attestation level `trusted`; empty: none. */
  webauthn: { trustAnchorDir: string };
  /** Push tokens: bits of the RSA key the server makes for each token. */
  push: { serverKeyBits: number; fcmUrl: string };
  /** The scheduler of periodic tasks (`/periodictask/`). */
  periodicTasks: {
    enabled: boolean;
    /** Milliseconds between two looks for due tasks. */
    tick: number;
    /** IANA time zone the intervals are read in; "" = the process's local zone. */
    timeZone: string;
  };
}

/** One RADIUS client (NAS) allowed to talk to the native listener. */
export interface RadiusClientConfig {
  /** Source address or CIDR the client sends from. */
  address: string;
  /** Shared secret. */
  secret: string;
  /** Optional name for logs and audit. */
  name: string;
}

/** Log levels in increasing severity. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Accepted log level names. */
export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/** Log line formats. */
export type LogFormat = "text" | "json";

/** Accepted log formats. */
export const LOG_FORMATS: readonly LogFormat[] = ["text", "json"];

type KeyType = "string" | "int" | "bool" | "string[]" | "clients";

interface KeySpec {
  type: KeyType;
  default: unknown;
  /** Returns a problem text, or undefined when the value is fine. */
  check?: (value: never) => string | undefined;
  doc: string;
}

// an HTTP field name (RFC 9110 token)
const HEADER_NAME_REGEXP = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Largest `server.workers` / `serve --workers`. */
export const MAX_WORKERS = 256;

const port = (v: number) => v >= 0 && v <= 65535 ? undefined : "must be between 0 and 65535";
const positive = (v: number) => v > 0 ? undefined : "must be greater than 0";

/**
 * The schema of every config key: section → key → type, default and check.
 * `config/tessera.example.toml` documents the same keys; a test keeps both in step.
 */
export const CONFIG_SCHEMA: Record<string, Record<string, KeySpec>> = {
  server: {
    host: { type: "string", default: "127.0.0.1", doc: "address to listen on" },
    port: { type: "int", default: 5000, check: port, doc: "TCP port to listen on" },
    node_name: { type: "string", default: "", doc: "name of this node (default: hostname)" },
    trusted_proxies: {
      type: "string[]",
      default: [],
      doc: "proxies (IP/CIDR) whose X-Forwarded-For is believed",
    },
    remote_user_header: {
      type: "string",
      default: "",
      check: (v: string) =>
        v === "" || HEADER_NAME_REGEXP.test(v) ? undefined : "must be an HTTP header name",
      doc: "header in which a trusted proxy names the user it authenticated (REMOTE_USER)",
    },
    body_limit: {
      type: "int",
      default: 1_048_576,
      check: positive,
      doc: "largest accepted request body in bytes",
    },
    workers: {
      type: "int",
      default: 1,
      check: (v: number) =>
        v >= 1 && v <= MAX_WORKERS ? undefined : `must be between 1 and ${MAX_WORKERS}`,
      doc: "processes serving the same port (SO_REUSEPORT, Linux); 1 = one process",
    },
  },
  storage: {
    data_dir: { type: "string", default: "./data", doc: "directory for the database and keys" },
    database_url: {
      type: "string",
      default: "",
      check: (v: string) =>
        v === "" || v.startsWith("sqlite:") || v === ":memory:" ||
          /^postgres(?:ql)?:\/\/./i.test(v)
          ? undefined
          : 'must start with "sqlite:", "postgres://" or "postgresql://"',
      doc: "database URL: sqlite:<path> or postgres://user:password@host:port/db[?sslmode=…]; " +
        "empty means sqlite:<data_dir>/tessera.sqlite",
    },
    key_file: {
      type: "string",
      default: "",
      doc: "encryption key file; empty means <data_dir>/encKey",
    },
    statement_timeout: {
      type: "int",
      default: 5000,
      check: (v: number) =>
        v >= 1 && v <= 3_600_000 ? undefined : "must be between 1 and 3600000 (milliseconds)",
      doc: "longest wait for one database call in milliseconds before the request gets HTTP 503",
    },
  },
  auth: {
    jwt_lifetime: {
      type: "int",
      default: 3600,
      check: positive,
      doc: "lifetime of issued JWTs in seconds",
    },
    header_prefix: {
      type: "string",
      default: "PI",
      check: (v: string) =>
        /^[A-Za-z0-9-]*$/.test(v) ? undefined : "may only contain letters, digits and '-'",
      doc: "prefix of the <prefix>-Authorization header",
    },
    superuser_realms: {
      type: "string[]",
      default: [],
      doc: "realms whose users log in as admins",
    },
    login_failures: {
      type: "int",
      default: 10,
      check: positive,
      doc: "failed logins per client address within login_failure_window before /auth answers 429",
    },
    login_failure_window: {
      type: "int",
      default: 300,
      check: positive,
      doc: "seconds from a client address's first failed login until its count starts over",
    },
    login_parallel: {
      type: "int",
      default: 4,
      check: positive,
      doc: "logins one client address may have in progress at once; more get 429",
    },
    login_queue: {
      type: "int",
      default: 8,
      check: positive,
      doc: "logins that may wait for an admin password hash (one runs at a time); more get 429",
    },
  },
  log: {
    level: {
      type: "string",
      default: "info",
      check: (v: string) =>
        (LOG_LEVELS as readonly string[]).includes(v)
          ? undefined
          : `must be one of ${LOG_LEVELS.join(", ")}`,
      doc: "debug, info, warn or error",
    },
    format: {
      type: "string",
      default: "text",
      check: (v: string) =>
        (LOG_FORMATS as readonly string[]).includes(v)
          ? undefined
          : `must be one of ${LOG_FORMATS.join(", ")}`,
      doc: "text (one readable line per event) or json (one JSON object per line)",
    },
  },
  signing: {
    enabled: { type: "bool", default: true, doc: "sign JSON responses with RSA-PSS" },
    key_file: {
      type: "string",
      default: "",
      doc: "PEM private key for response signing; empty means <data_dir>/signing-key.pem",
    },
  },
  compat: {
    policy_list: {
      type: "bool",
      default: false,
      doc: "GET /policy/ returns privacyIDEA's list instead of a name map",
    },
    versionnumber: {
      type: "string",
      default: "3.12.3",
      doc: "privacyIDEA release whose API Tessera follows, reported in versionnumber",
    },
  },
  radius: {
    enabled: { type: "bool", default: false, doc: "run the native RADIUS listener" },
    host: { type: "string", default: "127.0.0.1", doc: "RADIUS listener address" },
    port: { type: "int", default: 1812, check: port, doc: "RADIUS listener UDP port" },
    clients: { type: "clients", default: [], doc: "NAS clients: [{address, secret, name}]" },
    dictionary: { type: "string", default: "", doc: "extra RADIUS dictionary file" },
  },
  subscriptions: {
    mode: {
      type: "string",
      default: "warn",
      check: (v: string) =>
        ["enforce", "warn", "off"].includes(v) ? undefined : "must be enforce, warn or off",
      doc: "what happens when a subscription is exceeded: enforce, warn or off",
    },
    key_dir: {
      type: "string",
      default: "",
      doc:
        "directory of trusted subscription signing keys; empty means <data_dir>/subscription-keys",
    },
  },
  events: {
    script_dir: {
      type: "string",
      default: "",
      doc: "directory of scripts the script event handler may run; empty means <data_dir>/scripts",
    },
  },
  sms: {
    script_dir: {
      type: "string",
      default: "",
      doc:
        "directory of scripts the script SMS provider may run; empty means <data_dir>/sms-scripts",
    },
  },
  metrics: {
    enabled: { type: "bool", default: false, doc: "serve GET /metrics (Prometheus text format)" },
    token: {
      type: "string",
      default: "",
      doc: "a bearer token that may read /metrics besides an admin JWT; empty: admins only",
    },
  },
  webauthn: {
    trust_anchor_dir: {
      type: "string",
      default: "",
      doc: "directory of PEM certificates (.pem/.crt) WebAuthn attestations must chain to under " +
        "attestation level 'trusted'; empty: no anchors (level 'trusted' refuses every key)",
    },
  },
  push: {
    server_key_bits: {
      type: "int",
      default: 4096,
      check: (v: number) =>
        v >= 2048 && v <= 8192 && v % 8 === 0
          ? undefined
          : "must be 2048 to 8192 (a multiple of 8)",
      doc: "bits of the RSA key pair the server makes for each push token (privacyIDEA: 4096)",
    },
    fcm_url: {
      type: "string",
      default: "https://fcm.googleapis.com",
      check: (v: string) => /^https?:\/\/[^\s]+$/.test(v) ? undefined : "must be an http(s) URL",
      doc: "base URL of Firebase Cloud Messaging (HTTP v1) for push tokens' messages",
    },
  },
  periodic_tasks: {
    enabled: {
      type: "bool",
      default: true,
      doc: "run the periodic tasks (/periodictask/) whose nodes name this node",
    },
    tick: {
      type: "int",
      default: 10_000,
      check: (v: number) =>
        v >= 100 && v <= 3_600_000 ? undefined : "must be between 100 and 3600000 (milliseconds)",
      doc: "milliseconds between two looks for due periodic tasks",
    },
    time_zone: {
      type: "string",
      default: "",
      check: (v: string) => v === "" || isTimeZone(v) ? undefined : "must be an IANA time zone",
      doc: "time zone of the intervals, e.g. Europe/Berlin; empty means the local time zone",
    },
  },
};

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Values given on the command line; they win over file and environment. */
export interface ConfigOverrides {
  dataDir?: string;
  host?: string;
  port?: number;
}

/** Input of {@link loadConfig}. */
export interface ConfigSource {
  /** Environment variables (only `TESSERA_*` are read). */
  env?: Record<string, string | undefined>;
  /** TOML text of the config file, if any. */
  fileText?: string;
  /** Name of the file for messages. */
  fileName?: string;
  overrides?: ConfigOverrides;
}

/** Builds a validated {@link Config} from defaults, file, environment and overrides. */
export function loadConfig(source: ConfigSource = {}): Config {
  const problems: string[] = [];
  const raw: Record<string, Record<string, unknown>> = {};
  for (const [section, keys] of Object.entries(CONFIG_SCHEMA)) {
    raw[section] = {};
    for (const [key, spec] of Object.entries(keys)) raw[section][key] = spec.default;
  }

  if (source.fileText !== undefined) {
    const where = source.fileName ?? "config file";
    let parsed: Record<string, unknown> = {};
    try {
      parsed = parseToml(source.fileText) as Record<string, unknown>;
    } catch (err) {
      // the parser's line and column, and its picture of the place, stay in the message
      const { line, column, codeblock } = err as {
        line?: number;
        column?: number;
        codeblock?: string;
      };
      const at = line === undefined ? "" : `:${line}${column === undefined ? "" : `:${column}`}`;
      const text = (err as Error).message.split("\n")[0].replace(/^Invalid TOML document: /, "");
      const picture = codeblock
        ? `\n${codeblock.replace(/\n+$/, "").replace(/^/gm, "      ")}`
        : "";
      problems.push(`${where}${at}: cannot parse TOML: ${text}${picture}`);
    }
    for (const [section, table] of Object.entries(parsed)) {
      const keys = CONFIG_SCHEMA[section];
      if (!keys) {
        problems.push(`${where}: unknown section [${section}]`);
        continue;
      }
      if (typeof table !== "object" || table === null || Array.isArray(table)) {
        problems.push(`${where}: [${section}] must be a table`);
        continue;
      }
      for (const [key, value] of Object.entries(table)) {
        const spec = keys[key];
        if (!spec) {
          problems.push(`${where}: unknown key ${section}.${key}`);
          continue;
        }
        const res = coerceValue(spec.type, value, false);
        if (typeof res === "string") problems.push(`${section}.${key}: ${res}`);
        else raw[section][key] = res.value;
      }
    }
  }

  for (const [name, value] of Object.entries(source.env ?? {})) {
    if (!name.startsWith("TESSERA_") || value === undefined || name === "TESSERA_CONFIG") continue;
    const rest = name.slice("TESSERA_".length).toLowerCase();
    const match = findEnvKey(rest);
    if (!match) {
      problems.push(`environment: unknown variable ${name}`);
      continue;
    }
    const [section, key] = match;
    const res = coerceValue(CONFIG_SCHEMA[section][key].type, value, true);
    if (typeof res === "string") problems.push(`${name}: ${res}`);
    else raw[section][key] = res.value;
  }

  const ov = source.overrides ?? {};
  if (ov.dataDir !== undefined) raw.storage.data_dir = ov.dataDir;
  if (ov.host !== undefined) raw.server.host = ov.host;
  if (ov.port !== undefined) raw.server.port = ov.port;

  for (const [section, keys] of Object.entries(CONFIG_SCHEMA)) {
    for (const [key, spec] of Object.entries(keys)) {
      const problem = spec.check?.(raw[section][key] as never);
      if (problem) problems.push(`${section}.${key}: ${problem}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const dataDir = raw.storage.data_dir as string;
  const join = (name: string) => `${dataDir.replace(/\/+$/, "")}/${name}`;
  const databaseUrl = (raw.storage.database_url as string) || `sqlite:${join("tessera.sqlite")}`;
  return {
    server: {
      host: raw.server.host as string,
      port: raw.server.port as number,
      nodeName: raw.server.node_name as string,
      trustedProxies: raw.server.trusted_proxies as string[],
      remoteUserHeader: raw.server.remote_user_header as string,
      bodyLimit: raw.server.body_limit as number,
      workers: raw.server.workers as number,
    },
    storage: {
      dataDir,
      databaseUrl,
      keyFile: (raw.storage.key_file as string) || join("encKey"),
      statementTimeout: raw.storage.statement_timeout as number,
    },
    auth: {
      jwtLifetime: raw.auth.jwt_lifetime as number,
      headerPrefix: raw.auth.header_prefix as string,
      superuserRealms: (raw.auth.superuser_realms as string[]).map((r) => r.toLowerCase()),
      loginFailures: raw.auth.login_failures as number,
      loginFailureWindow: raw.auth.login_failure_window as number,
      loginParallel: raw.auth.login_parallel as number,
      loginQueue: raw.auth.login_queue as number,
    },
    log: { level: raw.log.level as LogLevel, format: raw.log.format as LogFormat },
    signing: {
      enabled: raw.signing.enabled as boolean,
      keyFile: (raw.signing.key_file as string) || join("signing-key.pem"),
    },
    compat: {
      policyList: raw.compat.policy_list as boolean,
      versionnumber: raw.compat.versionnumber as string,
    },
    radius: {
      enabled: raw.radius.enabled as boolean,
      host: raw.radius.host as string,
      port: raw.radius.port as number,
      clients: raw.radius.clients as RadiusClientConfig[],
      dictionary: raw.radius.dictionary as string,
    },
    subscriptions: {
      mode: raw.subscriptions.mode as Config["subscriptions"]["mode"],
      keyDir: (raw.subscriptions.key_dir as string) || join("subscription-keys"),
    },
    events: { scriptDir: (raw.events.script_dir as string) || join("scripts") },
    sms: { scriptDir: (raw.sms.script_dir as string) || join("sms-scripts") },
    metrics: { enabled: raw.metrics.enabled as boolean, token: raw.metrics.token as string },
    webauthn: { trustAnchorDir: raw.webauthn.trust_anchor_dir as string },
    push: {
      serverKeyBits: raw.push.server_key_bits as number,
      fcmUrl: raw.push.fcm_url as string,
    },
    periodicTasks: {
      enabled: raw.periodic_tasks.enabled as boolean,
      tick: raw.periodic_tasks.tick as number,
      timeZone: raw.periodic_tasks.time_zone as string,
    },
  };
}

function findEnvKey(rest: string): [string, string] | undefined {
  for (const section of Object.keys(CONFIG_SCHEMA)) {
    if (!rest.startsWith(section + "_")) continue;
    const key = rest.slice(section.length + 1);
    if (key in CONFIG_SCHEMA[section]) return [section, key];
  }
  return undefined;
}

type Coerced = { value: unknown } | string;

function coerceValue(type: KeyType, value: unknown, fromEnv: boolean): Coerced {
  switch (type) {
    case "string":
      return typeof value === "string" ? { value } : `expected a string, got ${show(value)}`;
    case "int": {
      if (typeof value === "number" && Number.isInteger(value)) return { value };
      if (typeof value === "bigint") return { value: Number(value) };
      if (fromEnv && typeof value === "string" && /^-?\d+$/.test(value.trim())) {
        return { value: Number(value.trim()) };
      }
      return `expected an integer, got ${show(value)}`;
    }
    case "bool": {
      if (typeof value === "boolean") return { value };
      if (fromEnv && typeof value === "string") {
        const v = value.trim().toLowerCase();
        if (["1", "true", "yes", "on"].includes(v)) return { value: true };
        if (["0", "false", "no", "off", ""].includes(v)) return { value: false };
      }
      return `expected true or false, got ${show(value)}`;
    }
    case "string[]": {
      if (fromEnv && typeof value === "string") {
        return { value: value.split(",").map((s) => s.trim()).filter((s) => s !== "") };
      }
      if (Array.isArray(value) && value.every((v) => typeof v === "string")) return { value };
      return `expected a list of strings, got ${show(value)}`;
    }
    case "clients": {
      let list = value;
      if (fromEnv && typeof value === "string") {
        try {
          list = JSON.parse(value);
        } catch {
          return "expected a JSON list of {address, secret, name}";
        }
      }
      if (!Array.isArray(list)) return `expected a list of tables, got ${show(value)}`;
      const out: RadiusClientConfig[] = [];
      for (const [i, item] of list.entries()) {
        if (typeof item !== "object" || item === null) return `entry ${i} must be a table`;
        const { address, secret, name } = item as Record<string, unknown>;
        if (typeof address !== "string" || address === "") {
          return `entry ${i} needs an address`;
        }
        if (typeof secret !== "string" || secret === "") return `entry ${i} needs a secret`;
        if (name !== undefined && typeof name !== "string") {
          return `entry ${i}: name must be a string`;
        }
        out.push({ address, secret, name: (name as string | undefined) ?? address });
      }
      return { value: out };
    }
  }
}

function show(value: unknown): string {
  if (typeof value === "string") return `"${value}"`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
