/**
 * `httpresolver`: users of an HTTP API, with privacyIDEA 3.12's keys and
 * meanings (spec 16 §2), and the engine `entraidresolver` and
 * `keycloakresolver` build on (they are this resolver with preset endpoints).
 *
 * Each operation (user by id, by name, list, create, edit, delete, password
 * check, service token) is one endpoint configuration: method, endpoint,
 * headers, a request template with `{tags}`, a response mapping and an
 * optional special error answer. Tessera deviates from privacyIDEA where it
 * is unsafe or silent, and says so in docs/http-resolvers.md:
 * - tag values are encoded for where they land (URL path, query, form, JSON,
 *   XML) instead of inserted raw, and `*` is never removed from a password;
 * - only an answer that says so means "no such user" (400, 404, 410, or the
 *   special error answer); a refused credential (401/403), a server error, a
 *   redirect, a timeout or an answer that is no JSON is an error, so an outage
 *   never reads as an unknown user or a wrong password;
 * - a login is only a user when the store confirms it (basic mode and
 *   configurations without `config_get_user_by_name` look the login up by id);
 * - operations the configuration lacks are refused, never answered `false`;
 * - the service token is reused until it expires (http_token.ts).
 *
 * Secrets: the service `password` (and each flavour's own) is stored encrypted
 * by mod.ts; it is only ever sent to the token endpoint of this resolver's
 * configuration, and mod.ts refuses to keep a stored secret when the URL it
 * goes to changes.
 *
 * @module
 */
import type { Config } from "../../config.ts";
import {
  AppError,
  errorMessageOf,
  missingParameter,
  ParameterError,
  ResolverError,
} from "../../errors.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Random } from "../../lib/random.ts";
import { sendToStore, type StoreAnswer, StoreUnreachableError } from "./http_client.ts";
import { expiresInOf, type FetchedToken, TokenCache } from "./http_token.ts";
import {
  applyResponseMapping,
  containsAll,
  encoderFor,
  fillEndpoint,
  fillTags,
  FORM_VALUE,
  pyStr,
  urlencode,
} from "./http_values.ts";
import { readAllUpTo, refuseOwnPath, resolveDataPath } from "./paths.ts";
import {
  emptyUserInfo,
  type ResolverTestResult,
  type UserInfo,
  type UserListEntry,
  type UserResolver,
} from "./types.ts";

/** `GET /resolver/httpresolver/default` (spec 16 §2.2). */
export const HTTP_DEFAULTS: Record<string, unknown> = {
  headers: {},
  Editable: false,
  verify_tls: true,
  type: "httpresolver",
  timeout: 60,
};

/** Keys whose values are JSON objects (listed as objects, as privacyIDEA does). */
export const HTTP_DICT_KEYS = [
  "attribute_mapping",
  "config_get_user_list",
  "config_get_user_by_id",
  "config_get_user_by_name",
  "config_create_user",
  "config_edit_user",
  "config_delete_user",
  "config_authorization",
  "config_user_auth",
];

/**
 * Keys that decide where the service `password` goes, or the token it buys:
 * the token endpoint gets the password, every other endpoint the token.
 */
export const HTTP_PASSWORD_TARGETS = [
  "base_url",
  "endpoint",
  "config_authorization",
  "config_get_user_by_id",
  "config_get_user_by_name",
  "config_get_user_list",
  "config_create_user",
  "config_edit_user",
  "config_delete_user",
  "config_user_auth",
];

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);
const TRUE_VALUES = new Set(["1", "true", "yes", "on"]);
const FALSE_VALUES = new Set(["0", "false", "no", "off"]);
/** Longest per-request timeout, in seconds. */
export const MAX_TIMEOUT_SECONDS = 300;
// statuses that say nothing about the user asked for: credentials, proxy, rate, timeout
const INDEFINITE_4XX = new Set([401, 403, 407, 408, 429]);
const MAX_CA_BYTES = 1024 * 1024;
const CERT_REGEXP = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** One endpoint configuration (spec 16 §2.3). */
export interface EndpointConfig {
  /** The configuration key it came from, for messages. */
  key: string;
  method: string;
  endpoint: string;
  /** The endpoint is a full URL (decided on the template, never on filled-in values). */
  isAbsolute: boolean;
  /** Own headers; undefined: the resolver's default headers. */
  headers?: Record<string, string>;
  /** The request template as text (a JSON object is kept as its JSON text). */
  requestMapping: string;
  responseMapping: Record<string, string>;
  hasErrorHandler: boolean;
  errorResponse: Record<string, unknown>;
}

/** A request ready to send: method, filled endpoint, headers and parameters. */
export interface PreparedRequest {
  config: EndpointConfig;
  endpoint: string;
  headers: Record<string, string>;
  /** An object (query for GET/DELETE, JSON body otherwise) or a text body. */
  params: Record<string, unknown> | string;
}

/** Whether `value` (a stored string or a default) means true, as privacyIDEA's `is_true`. */
export function isTrueValue(value: unknown): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value === 1;
  return typeof value === "string" && TRUE_VALUES.has(value.trim().toLowerCase());
}

/** A boolean key read strictly: anything but a yes or no is refused. */
export function strictBool(key: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === "") return fallback;
  if (typeof value === "boolean") return value;
  const text = String(value).trim().toLowerCase();
  if (TRUE_VALUES.has(text)) return true;
  if (FALSE_VALUES.has(text)) return false;
  throw new ParameterError(`Invalid value for '${key}': ${String(value).slice(0, 64)}.`);
}

/** `timeout` in seconds: a whole number from 1 to {@link MAX_TIMEOUT_SECONDS}. */
export function timeoutOf(value: unknown, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const text = String(value).trim();
  const n = /^[+-]?\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_TIMEOUT_SECONDS) {
    throw new ParameterError(
      `Invalid value for 'timeout': ${text.slice(0, 32)}. ` +
        `A whole number of seconds from 1 to ${MAX_TIMEOUT_SECONDS} is needed.`,
    );
  }
  return n;
}

/** A JSON object from a stored text (or a default object); undefined when empty. */
export function dictOf(key: string, value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new ParameterError(`Invalid JSON format for '${key}': ${value.slice(0, 200)}`);
    }
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ParameterError(`Invalid datatype for '${key}': a JSON object is needed`);
  }
  return parsed as Record<string, unknown>;
}

function textMap(key: string, value: unknown, what: string): Record<string, string> {
  const dict = dictOf(key, value) ?? {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(dict)) {
    if (typeof v !== "string") {
      throw new ParameterError(`Invalid value in '${key}' for '${k.slice(0, 64)}': ${what}`);
    }
    out[k] = v;
  }
  return out;
}

// deno-lint-ignore no-control-regex
const HEADER_VALUE_REGEXP = /^[^\u0000-\u0008\u000a-\u001f\u007f]*$/;
const HEADER_NAME_REGEXP = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function headersOf(key: string, value: unknown): Record<string, string> | undefined {
  const dict = dictOf(key, value);
  if (dict === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(dict)) {
    if (
      !HEADER_NAME_REGEXP.test(k) || typeof v !== "string" || !HEADER_VALUE_REGEXP.test(v)
    ) {
      throw new ParameterError(
        `Invalid header '${k.slice(0, 64)}' in '${key}': a name and a text value are needed`,
      );
    }
    out[k] = v;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** The value of header `name` (any case). */
export function headerOf(headers: Record<string, string>, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

function isJsonType(contentType: string | undefined): boolean {
  const type = (contentType ?? "application/json").split(";")[0].trim().toLowerCase();
  return type === "application/json" || type.endsWith("+json");
}

/**
 * Parses one endpoint configuration; `defaultHeaders` decides how its
 * request template is read when it has no headers of its own.
 */
export function parseEndpoint(
  key: string,
  value: unknown,
  defaultHeaders: Record<string, string>,
): EndpointConfig {
  const raw = dictOf(key, value);
  if (raw === undefined) throw missingParameter(key);
  const method = raw.method;
  if (method === undefined || method === null || method === "") throw missingParameter("method");
  if (typeof method !== "string" || !METHODS.has(method.toUpperCase())) {
    throw new ParameterError(`Invalid method '${String(method).slice(0, 32).toLowerCase()}'!`);
  }
  const endpoint = raw.endpoint;
  if (endpoint === undefined || endpoint === null || endpoint === "") {
    throw missingParameter("endpoint");
  }
  if (typeof endpoint !== "string") throw new ParameterError(`Invalid endpoint in '${key}'`);
  const headers = headersOf("headers", raw.headers);
  let requestMapping = raw.requestMapping ?? "";
  if (typeof requestMapping === "object" && requestMapping !== null) {
    requestMapping = JSON.stringify(requestMapping);
  }
  if (typeof requestMapping !== "string") {
    throw new ParameterError(`Invalid datatype for 'requestMapping' in '${key}'`);
  }
  const responseMapping = textMap("responseMapping", raw.responseMapping, "text is needed");
  const hasErrorHandler = isTrueValue(raw.hasSpecialErrorHandler);
  const errorResponse = hasErrorHandler ? dictOf("errorResponse", raw.errorResponse) ?? {} : {};
  const cfg: EndpointConfig = {
    key,
    method: method.toUpperCase(),
    endpoint,
    isAbsolute: endpoint.startsWith("http"),
    headers,
    requestMapping,
    responseMapping,
    hasErrorHandler,
    errorResponse,
  };
  const contentType = headerOf(headers ?? defaultHeaders, "Content-Type");
  if (isJsonType(contentType)) {
    // every tag filled with a plain value must give a JSON object
    const probe = requestMapping.replace(/\{[A-Za-z0-9_.\-]+\}/g, "0");
    if (probe.trim() !== "") {
      let parsed: unknown;
      try {
        parsed = JSON.parse(probe);
      } catch {
        throw new ParameterError(
          `Invalid JSON format for 'requestMapping' '${requestMapping.slice(0, 200)}' in '${key}'`,
        );
      }
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
        throw new ParameterError(`Invalid 'requestMapping' in '${key}': a JSON object is needed`);
      }
    }
  } else if ((cfg.method === "GET" || cfg.method === "DELETE") && requestMapping.trim() !== "") {
    throw new ParameterError(
      `Invalid 'requestMapping' in '${key}': a ${cfg.method} request takes its parameters ` +
        "from a JSON object (Content-Type application/json)",
    );
  }
  return cfg;
}

/** Fills an endpoint configuration's tags and reads its request template. */
export function prepareRequest(
  cfg: EndpointConfig,
  options: {
    defaultHeaders: Record<string, string>;
    tags: Record<string, string>;
    wildcard: string;
    keepStars?: Set<string>;
  },
): PreparedRequest {
  const headers = { ...(cfg.headers ?? options.defaultHeaders) };
  const contentType = headerOf(headers, "Content-Type");
  const fill = { wildcard: options.wildcard, keepStars: options.keepStars };
  const endpoint = fillEndpoint(cfg.endpoint, options.tags, fill);
  const text = fillTags(cfg.requestMapping, options.tags, {
    ...fill,
    encode: encoderFor(contentType),
  });
  let params: Record<string, unknown> | string = text;
  if (isJsonType(contentType)) {
    let parsed: unknown = {};
    if (text.trim() !== "") {
      try {
        parsed = JSON.parse(text);
      } catch {
        // the text holds filled-in values (maybe a password): never echoed
        throw new ParameterError(`Invalid JSON format for 'requestMapping' of '${cfg.key}'`);
      }
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new ParameterError(`Invalid 'requestMapping' in '${cfg.key}': a JSON object is needed`);
    }
    params = parsed as Record<string, unknown>;
  }
  return { config: cfg, endpoint, headers, params };
}

/** The parsed configuration every HTTP-family resolver shares. */
export interface HttpConfig {
  baseUrl: string;
  headers: Record<string, string>;
  /** privacyIDEA attribute → user-store key. */
  attributeMapping: Record<string, string>;
  editable: boolean;
  isTlsVerified: boolean;
  /** Absolute path of a CA bundle. */
  tlsCaPath?: string;
  timeoutSeconds: number;
  byId?: EndpointConfig;
  byName?: EndpointConfig;
  list?: EndpointConfig;
  authorization?: EndpointConfig;
  userAuth?: EndpointConfig;
  create?: EndpointConfig;
  edit?: EndpointConfig;
  delete?: EndpointConfig;
  /** Service account of `config_authorization`. */
  username: string;
  password: string;
  /** `/resolver/test` parameters. */
  testUserId: string;
  testUsername: string;
}

/** The parts of a configuration privacyIDEA's test reports in a step of their own. */
type Part = "load" | "userAuth" | "create" | "edit" | "delete";

const PART_MESSAGES: Record<Exclude<Part, "load">, string> = {
  userAuth: "Failed to load config to check user password",
  create: "Failed to load create user config",
  edit: "Failed to load edit user config",
  delete: "Failed to load delete user config",
};

/** What a flavour (entraid, keycloak) presets. */
export interface HttpFlavour {
  type: string;
  /** Stored keys win over these, each key as a whole. */
  defaults: Record<string, unknown>;
  /** What `*` in a tag value becomes ("" removes it). */
  wildcard: string;
}

/** Everything an HTTP-family resolver instance needs. */
export interface HttpStoreOptions {
  name: string;
  /** The stored (decrypted) configuration. */
  config: Record<string, string>;
  now: () => number;
  log: Logger;
  appConfig: Config;
  random: Random;
}

/** An error object a user store put in its answer. */
export interface StoreError {
  code: string;
  message: string;
}

/** The generic HTTP resolver; flavours override the hooks below. */
export class HttpUserStore implements UserResolver {
  readonly name: string;
  readonly type: string;
  protected readonly raw: Record<string, unknown>;
  protected readonly cfg: HttpConfig;
  protected readonly wildcard: string;
  protected readonly log: Logger;
  protected readonly appConfig: Config;
  protected readonly now: () => number;
  protected readonly random: Random;
  protected readonly tokens: TokenCache;
  readonly #problems = new Map<Part, AppError>();
  #ca?: CaBundle;

  constructor(options: HttpStoreOptions, flavour: HttpFlavour) {
    this.name = options.name;
    this.type = flavour.type;
    this.wildcard = flavour.wildcard;
    this.log = options.log;
    this.appConfig = options.appConfig;
    this.now = options.now;
    this.random = options.random;
    this.tokens = new TokenCache(options.now);
    this.raw = { ...flavour.defaults, ...options.config };
    this.cfg = {
      baseUrl: "",
      headers: {},
      attributeMapping: {},
      editable: false,
      isTlsVerified: true,
      timeoutSeconds: 60,
      username: "",
      password: "",
      testUserId: "",
      testUsername: "",
    };
    this.loadPart(() => this.load());
  }

  /**
   * Runs a loading step unless an earlier one failed; a failure is the
   * configuration's load problem. Flavours load their own keys with it after
   * `super()` (their fields exist only then).
   */
  protected loadPart(work: () => void): void {
    if (this.#problems.has("load")) return;
    try {
      work();
    } catch (err) {
      this.#problems.set("load", asAppError(err));
    }
  }

  /** The first problem of the configuration, if any (a save is refused with it). */
  get problem(): AppError | undefined {
    return this.#problems.get("load") ?? [...this.#problems.values()][0];
  }

  get editable(): boolean {
    return this.cfg.editable;
  }

  #part(part: Exclude<Part, "load">, work: () => void): void {
    try {
      work();
    } catch (err) {
      this.#problems.set(part, asAppError(err));
    }
  }

  private load(): void {
    const raw = this.raw;
    const cfg = this.cfg;
    cfg.baseUrl = typeof raw.base_url === "string" ? raw.base_url : "";
    cfg.headers = headersOf("headers", raw.headers) ?? {};
    cfg.attributeMapping = textMap("attribute_mapping", raw.attribute_mapping, "text is needed");
    cfg.editable = isTrueValue(raw.Editable);
    cfg.isTlsVerified = strictBool("verify_tls", raw.verify_tls, true);
    const caPath = typeof raw.tls_ca_path === "string" ? raw.tls_ca_path.trim() : "";
    if (caPath !== "") {
      cfg.tlsCaPath = resolveDataPath(this.appConfig.storage.dataDir, caPath, "tls_ca_path");
    }
    cfg.timeoutSeconds = timeoutOf(raw.timeout, 60);
    const headers = cfg.headers;
    if (dictOf("config_get_user_by_id", raw.config_get_user_by_id) === undefined) {
      // basic mode (before privacyIDEA 3.12): the top-level keys read a user by id
      for (const key of ["endpoint", "method", "responseMapping"]) {
        if (raw[key] === undefined || raw[key] === "") throw missingParameter(key);
      }
      cfg.byId = parseEndpoint("config_get_user_by_id", {
        endpoint: raw.endpoint,
        method: raw.method,
        headers: raw.headers,
        requestMapping: raw.requestMapping,
        responseMapping: raw.responseMapping,
        hasSpecialErrorHandler: raw.hasSpecialErrorHandler,
        errorResponse: raw.errorResponse,
      }, headers);
    } else {
      cfg.byId = parseEndpoint("config_get_user_by_id", raw.config_get_user_by_id, headers);
    }
    const optional = (key: string) =>
      dictOf(key, raw[key]) === undefined ? undefined : parseEndpoint(key, raw[key], headers);
    cfg.byName = optional("config_get_user_by_name");
    cfg.list = optional("config_get_user_list");
    cfg.authorization = dictOf("config_authorization", raw.config_authorization) === undefined
      ? undefined
      : parseEndpoint("config_authorization", raw.config_authorization, AUTH_HEADERS);
    if (cfg.authorization) {
      cfg.username = typeof raw.username === "string" ? raw.username : "";
      cfg.password = typeof raw.password === "string" ? raw.password : "";
    }
    // privacyIDEA reports these in test steps of their own
    dictOf("config_user_auth", raw.config_user_auth);
    this.#part("userAuth", () => cfg.userAuth = optional("config_user_auth"));
    this.#part("create", () => cfg.create = optional("config_create_user"));
    this.#part("edit", () => cfg.edit = optional("config_edit_user"));
    this.#part("delete", () => cfg.delete = optional("config_delete_user"));
    const text = (key: string) => (typeof raw[key] === "string" ? raw[key] as string : "");
    cfg.testUserId = text("test_userid");
    cfg.testUsername = text("test_username") || text("testUser");
  }

  /** Throws the problem that keeps `part` from working. */
  protected requireWorking(part: Part = "load"): void {
    const load = this.#problems.get("load");
    if (load) throw load;
    const own = this.#problems.get(part);
    if (own) throw own;
  }

  /** Checks the files the configuration names (ParameterError when refused). */
  async checkFiles(): Promise<void> {
    if (this.cfg.tlsCaPath) await this.caCerts();
  }

  /** The CA bundle's certificates (undefined: the system store, or no verification). */
  protected async caCerts(): Promise<string[] | undefined> {
    if (!this.cfg.tlsCaPath || !this.cfg.isTlsVerified) return undefined;
    this.#ca ??= new CaBundle(this.cfg.tlsCaPath, this.appConfig);
    return await this.#ca.certs();
  }

  // --- hooks of the flavours ---

  /** Replaces resolver-specific tags in a URL (Keycloak's `{realm}`). */
  protected finishUrl(url: string): string {
    return url;
  }

  /** An error object in a user store's answer (none in the generic resolver). */
  protected errorOf(_answer: StoreAnswer): StoreError | undefined {
    return undefined;
  }

  /** Extra tags of the password check (Entra's tenant and client). */
  protected userAuthTags(): Record<string, string> {
    return {};
  }

  /** Search fields as request parameters (spec 16 §2.6). */
  protected searchParams(search: Record<string, string>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, value] of searchOrder(search)) {
      const storeKey = this.cfg.attributeMapping[key];
      if (storeKey === undefined) continue;
      const v = value.replaceAll("*", this.wildcard);
      if (v !== "") out[storeKey] = v;
    }
    return out;
  }

  /** The users in a (mapped) list answer: the answer itself must be a list. */
  protected usersOf(body: unknown): unknown[] {
    if (!Array.isArray(body)) throw this.malformed("list users", "the answer is no JSON list");
    return body;
  }

  /** privacyIDEA attributes as user-store attributes (only mapped keys). */
  protected toStore(attributes: Record<string, string>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(attributes)) {
      const storeKey = this.cfg.attributeMapping[key];
      if (storeKey !== undefined) out[storeKey] = value;
    }
    return out;
  }

  /** Whether a create answer is a success; throws the flavour's refusal. */
  protected createSucceeded(answer: StoreAnswer, cfg: EndpointConfig): boolean {
    return this.isSuccess(answer, cfg, "create a user");
  }

  /** A new service token: `config_authorization`'s request (no config: no header). */
  protected async fetchToken(): Promise<FetchedToken> {
    const auth = this.cfg.authorization;
    if (!auth) return { headers: {} };
    const prepared = prepareRequest(auth, {
      defaultHeaders: AUTH_HEADERS,
      tags: { username: this.cfg.username, password: this.cfg.password },
      wildcard: "",
      keepStars: new Set(["password"]),
    });
    const answer = await this.send(prepared, prepared.params, {}, "get a service token");
    if (!this.tokenSucceeded(answer, auth)) {
      this.logRefusal("get a service token", prepared, answer);
      throw new ResolverError("Failed to get authorization header.");
    }
    const body = this.jsonOf(answer, "get a service token");
    const mapped = applyResponseMapping(auth.responseMapping, body);
    if (mapped === null || typeof mapped !== "object" || Array.isArray(mapped)) {
      throw new ResolverError("Failed to get authorization header.");
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(mapped as Record<string, unknown>)) headers[k] = pyStr(v);
    return { headers, expiresIn: expiresInOf(body) };
  }

  /** Whether a token answer is a success. */
  protected tokenSucceeded(answer: StoreAnswer, cfg: EndpointConfig): boolean {
    if (answer.status !== 200 && this.errorOf(answer)) return false;
    return this.isSuccess(answer, cfg, "get a service token");
  }

  // --- requests ---

  /** privacyIDEA's success test (spec 16 §2.5); a 3xx is a failure (never followed). */
  protected isSuccess(answer: StoreAnswer, cfg: EndpointConfig, action: string): boolean {
    if (answer.status >= 300 || answer.status < 200) return false;
    if (answer.status === 204) return true;
    if (!cfg.hasErrorHandler) return true;
    return !containsAll(this.jsonOf(answer, action), cfg.errorResponse);
  }

  /** The answer's JSON; a ResolverError when it is none. */
  protected jsonOf(answer: StoreAnswer, action: string): unknown {
    try {
      return JSON.parse(answer.text);
    } catch {
      throw this.malformed(action, `the answer (status ${answer.status}) is no JSON`);
    }
  }

  protected malformed(action: string, why: string): ResolverError {
    return new ResolverError(`Cannot ${action} in resolver "${this.name}": ${why}`);
  }

  /** An answer that is neither a success nor a definite "no": an error naming the status. */
  protected failedAnswer(action: string, answer: StoreAnswer): ResolverError {
    const error = this.errorOf(answer);
    const detail = error ? ` (${[error.code, error.message].filter((x) => x).join(" - ")})` : "";
    const why = answer.status >= 300 && answer.status < 400
      ? `the user store answered with a redirect (${answer.status}), which is not followed`
      : `the user store answered ${answer.status}${detail.slice(0, 300)}`;
    return new ResolverError(`Cannot ${action} in resolver "${this.name}": ${why}`);
  }

  protected logRefusal(action: string, prepared: PreparedRequest, answer: StoreAnswer): void {
    const error = this.errorOf(answer);
    this.log.info("User store refused a request", {
      resolver: this.name,
      action,
      method: prepared.config.method,
      url: this.loggedUrl(prepared.config, this.fullUrl(prepared, "")),
      status: answer.status,
      ...(error ? { code: error.code, message: error.message.slice(0, 300) } : {}),
    });
  }

  /** The request's URL text: base_url unless the template is a full URL, then the query. */
  protected fullUrl(prepared: PreparedRequest, query: string): string {
    // absolute or not is decided on the template, so a filled-in value cannot pick the host
    const base = prepared.config.isAbsolute ? "" : this.cfg.baseUrl;
    return this.finishUrl(base + prepared.endpoint) + query;
  }

  /** A URL for the log: no query, and no path when the template puts a secret there. */
  protected loggedUrl(cfg: EndpointConfig, text: string): string {
    const bare = text.replace(/[?#].*$/s, "");
    if (!/\{(password|client_credential)\}/.test(cfg.endpoint)) return bare;
    return bare.replace(/^([a-z]+:\/\/[^/]*).*$/is, "$1/…");
  }

  /** Sends one request with `extraHeaders`; transport failures become a ResolverError. */
  protected async send(
    prepared: PreparedRequest,
    params: Record<string, unknown> | string,
    extraHeaders: Record<string, string>,
    action: string,
  ): Promise<StoreAnswer> {
    const cfg = prepared.config;
    const headers = { ...prepared.headers, ...extraHeaders };
    let query = "";
    let body: string | undefined;
    if (cfg.method === "GET" || cfg.method === "DELETE") {
      const qs = typeof params === "string" ? params : urlencode(params);
      if (qs !== "") query = (prepared.endpoint.includes("?") ? "&" : "?") + qs;
    } else if (typeof params === "string") {
      body = params;
    } else {
      body = JSON.stringify(params);
      if (headerOf(headers, "Content-Type") === undefined) {
        headers["Content-Type"] = "application/json";
      }
    }
    const text = this.fullUrl(prepared, query);
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new ParameterError(
        `Cannot use the endpoint of '${cfg.key}' in resolver "${this.name}": not a valid URL`,
      );
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new ParameterError(
        `Cannot use the endpoint of '${cfg.key}' in resolver "${this.name}": only http and https`,
      );
    }
    const started = performance.now();
    try {
      return await sendToStore({
        method: cfg.method,
        url,
        headers,
        body,
        isTlsVerified: this.cfg.isTlsVerified,
        caCerts: url.protocol === "https:" ? await this.caCerts() : undefined,
        timeoutMs: this.cfg.timeoutSeconds * 1000,
      });
    } catch (err) {
      if (!(err instanceof StoreUnreachableError)) throw err;
      this.log.warn("User store request failed", {
        resolver: this.name,
        action,
        method: cfg.method,
        url: this.loggedUrl(cfg, `${url.origin}${url.pathname}`),
        ms: Math.round(performance.now() - started),
        error: err.message,
      });
      // the answer names no server (it may go to unauthenticated clients); the log does
      throw new ResolverError(`Cannot ${action} in resolver "${this.name}": ${err.message}`);
    }
  }

  /** Sends a request to a fixed URL (token endpoints), without the service token. */
  protected async sendDirect(
    action: string,
    request: { method: string; url: string; headers?: Record<string, string>; body?: string },
  ): Promise<StoreAnswer> {
    const cfg: EndpointConfig = {
      key: action,
      method: request.method,
      endpoint: request.url,
      isAbsolute: true,
      requestMapping: "",
      responseMapping: {},
      hasErrorHandler: false,
      errorResponse: {},
    };
    const prepared = { config: cfg, endpoint: request.url, headers: request.headers ?? {} };
    return await this.send({ ...prepared, params: {} }, request.body ?? {}, {}, action);
  }

  /**
   * Sends a user-store request with the service token; a 401 to a cached token
   * drops it and tries once more with a new one (`canRetry`).
   */
  protected async call(
    action: string,
    prepared: PreparedRequest,
    params: Record<string, unknown> | string,
    options: { canRetry: boolean } = { canRetry: true },
  ): Promise<StoreAnswer> {
    const token = await this.serviceToken(action);
    let answer = await this.send(prepared, params, token.headers, action);
    if (answer.status === 401 && token.isCached && options.canRetry) {
      this.tokens.drop();
      const fresh = await this.serviceToken(action);
      answer = await this.send(prepared, params, fresh.headers, action);
    }
    return answer;
  }

  protected async serviceToken(action: string) {
    try {
      return await this.tokens.get(() => this.fetchToken());
    } catch (err) {
      if (err instanceof ResolverError && !err.message.startsWith("Cannot ")) {
        throw new ResolverError(`Cannot ${action} in resolver "${this.name}": ${err.message}`);
      }
      throw err;
    }
  }

  /** Reads one user; undefined when the store says there is none. */
  protected async getUser(
    cfg: EndpointConfig,
    tags: Record<string, string>,
    action: string,
  ): Promise<Record<string, unknown> | undefined> {
    const prepared = prepareRequest(cfg, {
      defaultHeaders: this.cfg.headers,
      tags,
      wildcard: "",
    });
    const answer = await this.call(action, prepared, prepared.params);
    const busy = this.busyReason(answer);
    if (busy) throw new ResolverError(`Cannot ${action} in resolver "${this.name}": ${busy}`);
    const error = answer.status !== 200 ? this.errorOf(answer) : undefined;
    if (!error && this.isSuccess(answer, cfg, action)) {
      const body = applyResponseMapping(cfg.responseMapping, this.jsonOf(answer, action));
      return this.toPi(body, action);
    }
    if (isDefiniteRefusal(answer.status) || (answer.status >= 200 && answer.status < 300)) {
      this.logRefusal(action, prepared, answer);
      return undefined;
    }
    throw this.failedAnswer(action, answer);
  }

  /** A reason to treat a success status as a failure (Entra's 202 "busy"). */
  protected busyReason(_answer: StoreAnswer): string | undefined {
    return undefined;
  }

  /** A user-store object as privacyIDEA attributes (attribute_mapping, when set). */
  protected toPi(body: unknown, action: string): Record<string, unknown> {
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw this.malformed(action, "the user is no JSON object");
    }
    const mapping = this.cfg.attributeMapping;
    if (Object.keys(mapping).length === 0) return body as Record<string, unknown>;
    const reverse: Record<string, string> = {};
    for (const [pi, store] of Object.entries(mapping)) reverse[store] = pi;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
      if (Object.hasOwn(reverse, k)) out[reverse[k]] = v;
    }
    return out;
  }

  // --- UserResolver ---

  async getUserInfo(uid: string): Promise<UserInfo | undefined> {
    const found = await this.#userById(uid);
    if (found === undefined) return undefined;
    const info = { ...emptyUserInfo(), ...flatInfo(found) };
    // basic mode maps no id: the uid asked for is the user's id
    if (info.userid === "") info.userid = uid;
    return info;
  }

  /** The attributes with lists kept (Graph's `businessPhones`), as privacyIDEA's user info. */
  async getUserAttributes(uid: string): Promise<UserListEntry | undefined> {
    const found = await this.#userById(uid);
    if (found === undefined) return undefined;
    const info: UserListEntry = { ...emptyUserInfo(), ...listEntry(found) };
    if (info.userid === "") info.userid = uid;
    return info;
  }

  async #userById(uid: string): Promise<Record<string, unknown> | undefined> {
    this.requireWorking();
    if (uid === "") return undefined;
    return await this.getUser(this.cfg.byId!, { userid: uid }, "read a user");
  }

  async getUserId(login: string): Promise<string | undefined> {
    this.requireWorking();
    if (login === "") return undefined;
    if (!this.cfg.byName) {
      // privacyIDEA echoes the login as uid; Tessera asks the store whether it is a user
      return (await this.getUserInfo(login)) === undefined ? undefined : login;
    }
    const found = await this.getUser(this.cfg.byName, { username: login }, "find a user");
    const uid = found === undefined ? "" : flatValue(found.userid);
    return uid === "" ? undefined : uid;
  }

  async getUserList(search: Record<string, string>): Promise<UserListEntry[]> {
    this.requireWorking();
    const cfg = this.cfg.list;
    if (!cfg) return [];
    const action = "list users";
    const prepared = prepareRequest(cfg, {
      defaultHeaders: this.cfg.headers,
      tags: search,
      wildcard: this.wildcard,
    });
    let params = prepared.params;
    const extra = this.searchParams(search);
    if (typeof params === "string") {
      params = appendForm(params, extra);
    } else {
      params = { ...params, ...extra };
    }
    const answer = await this.call(action, prepared, params);
    const error = answer.status !== 200 ? this.errorOf(answer) : undefined;
    if (error || !this.isSuccess(answer, cfg, action)) {
      this.logRefusal(action, prepared, answer);
      throw new ResolverError("Failed to get the user list!");
    }
    const body = applyResponseMapping(cfg.responseMapping, this.jsonOf(answer, action));
    const out: UserListEntry[] = [];
    for (const user of this.usersOf(body)) {
      if (user === null || typeof user !== "object" || Array.isArray(user)) continue;
      const entry = listEntry(this.toPi(user, action));
      // an entry without a login cannot be addressed as a user
      if (typeof entry.username === "string" && entry.username !== "") out.push(entry);
    }
    return out;
  }

  async checkPass(uid: string, password: string, login?: string): Promise<boolean> {
    this.requireWorking("userAuth");
    const cfg = this.cfg.userAuth;
    if (!cfg) {
      throw new ResolverError(
        `Cannot check a password in resolver "${this.name}": it has no config_user_auth`,
      );
    }
    const action = "check a password";
    const username = login ?? (await this.getUserInfo(uid))?.username ?? "";
    const prepared = prepareRequest(cfg, {
      defaultHeaders: this.cfg.headers,
      tags: { ...this.userAuthTags(), userid: uid, username, password },
      wildcard: this.wildcard,
      keepStars: new Set(["password", "client_credential"]),
    });
    // no second try: a 401 here is the user's wrong password, sent once
    const answer = await this.call(action, prepared, prepared.params, { canRetry: false });
    if (answer.status >= 200 && answer.status < 300) {
      const error = answer.status !== 200 ? this.errorOf(answer) : undefined;
      return !error && this.isSuccess(answer, cfg, action);
    }
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 429) return false;
    throw this.failedAnswer(action, answer);
  }

  /** Refuses a password the configured request would silently drop. */
  #requirePasswordUse(cfg: EndpointConfig, action: string): void {
    const used = cfg.requestMapping.includes("{password}") ||
      cfg.endpoint.includes("{password}") || this.cfg.attributeMapping.password !== undefined;
    if (!used) {
      throw new ResolverError(
        `Cannot ${action} in resolver "${this.name}": its ${cfg.key} sends no password ` +
          '("{password}" in requestMapping, or "password" in attribute_mapping)',
      );
    }
  }

  #requireEditable(action: string): void {
    if (!this.cfg.editable) {
      throw new ResolverError(`Cannot ${action} in resolver "${this.name}": it is not editable`);
    }
  }

  #writeParams(
    prepared: PreparedRequest,
    attributes: Record<string, string>,
  ): Record<string, unknown> | string {
    const mapped = this.toStore(attributes);
    if (typeof prepared.params !== "string") return { ...prepared.params, ...mapped };
    const type = headerOf(prepared.headers, "Content-Type") ?? "";
    if (!type.toLowerCase().startsWith("application/x-www-form-urlencode")) {
      throw new ParameterError(
        `Cannot send user attributes with '${prepared.config.key}': ` +
          "its Content-Type is neither JSON nor a form",
      );
    }
    return appendForm(prepared.params, mapped);
  }

  async addUser(attributes: Record<string, string>, password?: string): Promise<string> {
    const action = "create a user";
    this.requireWorking("create");
    this.#requireEditable(action);
    const cfg = this.cfg.create;
    if (!cfg) {
      throw new ResolverError(
        `Cannot ${action} in resolver "${this.name}": it has no config_create_user`,
      );
    }
    const attrs = { ...attributes };
    if (password !== undefined) {
      this.#requirePasswordUse(cfg, action);
      attrs.password = password;
    }
    const prepared = prepareRequest(cfg, {
      defaultHeaders: this.cfg.headers,
      tags: attrs,
      wildcard: this.wildcard,
      keepStars: new Set(["password"]),
    });
    const answer = await this.call(action, prepared, this.#writeParams(prepared, attrs));
    if (!this.createSucceeded(answer, cfg)) {
      this.logRefusal(action, prepared, answer);
      throw new ResolverError("Failed to create a user in the user store.");
    }
    let uid = "";
    if ((answer.headers["content-type"] ?? "").includes("application/json")) {
      const body = applyResponseMapping(cfg.responseMapping, this.jsonOf(answer, action));
      const key = this.cfg.attributeMapping.userid;
      if (key !== undefined && body !== null && typeof body === "object") {
        uid = flatValue((body as Record<string, unknown>)[key]);
      }
    }
    if (uid === "") uid = (await this.getUserId(attrs.username ?? "")) ?? "";
    return uid;
  }

  async updateUser(
    uid: string,
    attributes: Record<string, string>,
    password?: string,
  ): Promise<boolean> {
    const action = "update a user";
    this.requireWorking("edit");
    this.#requireEditable(action);
    const cfg = this.cfg.edit;
    if (!cfg) {
      throw new ResolverError(
        `Cannot ${action} in resolver "${this.name}": it has no config_edit_user`,
      );
    }
    const attrs = { ...attributes };
    if (password !== undefined) {
      this.#requirePasswordUse(cfg, action);
      attrs.password = password;
    }
    const prepared = prepareRequest(cfg, {
      defaultHeaders: this.cfg.headers,
      tags: { ...attrs, userid: uid },
      wildcard: "",
      keepStars: new Set(["password"]),
    });
    const answer = await this.call(action, prepared, this.#writeParams(prepared, attrs));
    return this.writeOutcome(action, prepared, answer);
  }

  async deleteUser(uid: string): Promise<boolean> {
    const action = "delete a user";
    this.requireWorking("delete");
    this.#requireEditable(action);
    const cfg = this.cfg.delete;
    if (!cfg) {
      throw new ResolverError(
        `Cannot ${action} in resolver "${this.name}": it has no config_delete_user`,
      );
    }
    const prepared = prepareRequest(cfg, {
      defaultHeaders: this.cfg.headers,
      tags: { userid: uid },
      wildcard: "",
    });
    const answer = await this.call(action, prepared, prepared.params);
    return this.writeOutcome(action, prepared, answer);
  }

  /** An update's or delete's answer: true, false (the store said no) or an error. */
  protected writeOutcome(action: string, prepared: PreparedRequest, answer: StoreAnswer): boolean {
    if (answer.status === 204) return true;
    const error = this.errorOf(answer);
    if (!error && this.isSuccess(answer, prepared.config, action)) return true;
    if (isDefiniteRefusal(answer.status) || (answer.status >= 200 && answer.status < 300)) {
      this.logRefusal(action, prepared, answer);
      return false;
    }
    throw this.failedAnswer(action, answer);
  }

  /** `POST /resolver/test` (spec 16 §2.8). */
  async test(): Promise<ResolverTestResult> {
    const fail = (description: string) => ({ success: false, description });
    const load = this.#problems.get("load");
    if (load) return fail(`Failed: ${textOf(load)}`);
    const tested: string[] = [];
    try {
      const token = await this.fetchToken();
      if (Object.keys(token.headers).length > 0) tested.push("Authorization");
    } catch (err) {
      return fail(`Failed to get authorization header: ${textOf(err)}`);
    }
    const { testUserId: uid, testUsername: login } = this.cfg;
    if (uid !== "") {
      let name: string;
      try {
        name = (await this.getUserInfo(uid))?.username ?? "";
      } catch (err) {
        return fail(`Failed to get user by ID '${uid}': ${textOf(err)}`);
      }
      if (name === "") return fail(`No user found for user ID '${uid}'.`);
      if (login !== "" && name !== login) {
        return fail(
          `Defined username '${login}' does not match resolved username '${name}' ` +
            `for the user id '${uid}'.`,
        );
      }
      tested.push("Get user by ID");
    }
    if (login !== "") {
      let found: string;
      try {
        found = (await this.getUserId(login)) ?? "";
      } catch (err) {
        return fail(`Failed to get user by name: ${textOf(err)}`);
      }
      if (found === "") return fail(`No user found for username '${login}'.`);
      if (uid !== "" && found !== uid) {
        return fail(
          `Defined user id '${uid}' does not match resolved user id '${found}' ` +
            `for the username '${login}'.`,
        );
      }
      tested.push("Get user by name");
    }
    try {
      await this.getUserList({});
    } catch (err) {
      return fail(`Failed to get user list: ${textOf(err)}`);
    }
    tested.push("User List");
    const description = `Resolver config seems to be OK. Tested configurations: ${
      tested.join(", ")
    }.`;
    const parts: Exclude<Part, "load">[] = this.cfg.editable
      ? ["userAuth", "create", "edit", "delete"]
      : ["userAuth"];
    for (const part of parts) {
      const problem = this.#problems.get(part);
      if (problem) return fail(`${PART_MESSAGES[part]}: ${errorMessageOf(problem)}`);
    }
    return { success: true, description };
  }
}

/** A PEM CA bundle named by `tls_ca_path`, re-read when the file changes. */
export class CaBundle {
  #path: string;
  #appConfig: Config;
  #cached?: { key: string; certs: string[] };

  constructor(path: string, appConfig: Config) {
    this.#path = path;
    this.#appConfig = appConfig;
  }

  /** The certificates; ParameterError when the file is refused or holds none. */
  async certs(): Promise<string[]> {
    const path = this.#path;
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path);
    } catch (err) {
      refuseOwnPath(this.#appConfig, path, "tls_ca_path");
      throw new ParameterError(`Cannot read tls_ca_path "${path}": ${(err as Error).name}`);
    }
    try {
      const info = await file.stat();
      refuseOwnPath(this.#appConfig, path, "tls_ca_path", info);
      const key = `${info.dev}:${info.ino}:${info.mtime?.getTime()}:${info.size}`;
      if (this.#cached?.key === key) return this.#cached.certs;
      const bytes = info.isFile && info.size <= MAX_CA_BYTES
        ? await readAllUpTo(file, MAX_CA_BYTES)
        : undefined;
      const certs = bytes ? new TextDecoder().decode(bytes).match(CERT_REGEXP) : null;
      if (!certs) {
        // the content is never echoed: the file may be any file the server can read
        throw new ParameterError(`Cannot use tls_ca_path "${path}": it holds no PEM certificate`);
      }
      this.#cached = { key, certs: [...certs] };
      return this.#cached.certs;
    } finally {
      file.close();
    }
  }
}

/** Headers of a token request without headers of its own. */
export const AUTH_HEADERS: Record<string, string> = {
  "Content-Type": "application/x-www-form-urlencoded",
};

/** Search fields in privacyIDEA's order: `username` first, then the request's. */
export function searchOrder(search: Record<string, string>): [string, string][] {
  const entries = Object.entries(search);
  return [
    ...entries.filter(([k]) => k === "username"),
    ...entries.filter(([k]) => k !== "username"),
  ];
}

function isDefiniteRefusal(status: number): boolean {
  return status >= 400 && status < 500 && !INDEFINITE_4XX.has(status);
}

// errors privacyIDEA's test reports with their bare message (no "ERR<code>: ")
const BARE = new WeakSet<AppError>();

/** A ParameterError (400 on save) that `/resolver/test` reports without its code. */
export function bareParameterError(message: string): ParameterError {
  const err = new ParameterError(message);
  BARE.add(err);
  return err;
}

function asAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new ParameterError((err as Error).message ?? String(err));
}

/** privacyIDEA's `str(error)`: `ERR<code>: <message>` for its own errors. */
function textOf(err: unknown): string {
  if (err instanceof AppError) return BARE.has(err) ? err.message : errorMessageOf(err);
  return (err as Error).message ?? String(err);
}

function appendForm(text: string, fields: Record<string, unknown>): string {
  const extra = Object.entries(fields).map(([k, v]) =>
    `${FORM_VALUE(k)}=${FORM_VALUE(typeof v === "string" ? v : pyStr(v))}`
  );
  if (extra.length === 0) return text;
  return [text, ...extra].filter((s) => s !== "").join("&");
}

/** One value as text: lists give their first value, null and missing give "". */
export function flatValue(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return flatValue(v[0]);
  if (typeof v === "object") return JSON.stringify(v);
  return pyStr(v);
}

function flatInfo(found: Record<string, unknown>): UserInfo {
  const out: UserInfo = {};
  for (const [k, v] of Object.entries(found)) out[k] = flatValue(v);
  return out;
}

function listEntry(found: Record<string, unknown>): UserListEntry {
  const out: UserListEntry = {};
  for (const [k, v] of Object.entries(found)) {
    out[k] = Array.isArray(v) ? v.map(flatValue) : flatValue(v);
  }
  return out;
}

/** Builds an `httpresolver` instance (never throws: see `problem`). */
export function httpResolver(options: HttpStoreOptions): HttpUserStore {
  return new HttpUserStore(options, { type: "httpresolver", defaults: {}, wildcard: "*" });
}
