/**
 * RADIUS server definitions (`/radiusserver/`, spec 08 §1) and the outgoing
 * Access-Request built on them (test_request, radius token, passthru).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { AppError, ConfigAdminError, ParameterError, ResourceNotFoundError } from "../../errors.ts";
import { CENSORED, decryptSecretText, encryptSecret } from "../../lib/crypto.ts";
import { inAnyNetwork, type Network, parseIp, parseNetwork } from "../../lib/ip.ts";
import { loadSystemConfig, type SystemConfig } from "../system_config/mod.ts";
import { refuseMovedSecrets } from "../secret_targets/mod.ts";
import * as store from "./radius_store.ts";
import {
  type RadiusAnswer,
  type RadiusQuestion,
  type RadiusTarget,
  sendAccessRequest,
} from "./client.ts";

export { RadiusError } from "./client.ts";
export type { RadiusAnswer, RadiusQuestion, RadiusTarget } from "./client.ts";

/** Default dictionary path (stored and returned verbatim; built-in definitions are used). */
export const DEFAULT_DICTIONARY = "/etc/privacyidea/dictionary";
/** API defaults of a definition. */
export const DEFAULTS = { port: 1812, retries: 3, timeout: 5 } as const;
/** Default NAS-Identifier (system config `radius.nas_identifier`). */
export const DEFAULT_NAS_IDENTIFIER = "privacyIDEA";

/** The plaintext secret must fit 255 chars once encrypted in privacyIDEA: ≤ 95 UTF-8 bytes. */
const MAX_SECRET_BYTES = 95;
const MAX_IDENTIFIER = 255;
const MAX_SERVER = 255;
const MAX_DESCRIPTION = 2000;
const MAX_DICTIONARY = 255;

/** Allowed ranges of the integer fields. */
export const LIMITS = {
  port: [1, 65535],
  retries: [1, 10],
  timeout: [1, 60],
} as const;

/** The keys that decide where a definition's secret is sent. */
const SECRET_TARGETS = { secret: ["server", "port"] } as const;

/**
 * The stored secret of `identifier` for a request that sends `__CENSORED__`
 * (undefined when none is stored), refused when the secret would go to
 * another server or port than the stored one.
 */
async function keptSecret(
  deps: Deps,
  identifier: string,
  target: { server: string; port: number },
): Promise<string | undefined> {
  const stored = await store.findServer(deps.db, identifier);
  if (!stored) return undefined;
  refuseMovedSecrets(
    SECRET_TARGETS,
    { secret: stored.secretEnc, server: stored.server, port: String(stored.port) },
    { server: target.server, port: String(target.port) },
    () => true,
  );
  return stored.secretEnc;
}

/** Input of {@link setRadiusServer}; omitted fields take the API defaults. */
export interface RadiusServerInput {
  server: string;
  secret: string;
  port?: number;
  retries?: number;
  timeout?: number;
  description?: string;
  dictionary?: string;
  /** JSON object (or its text), null to clear, undefined to keep. */
  options?: unknown;
}

/** One definition as `GET /radiusserver/` shows it. */
export interface RadiusServerView {
  server: string;
  port: number;
  dictionary: string;
  description: string;
  secret: typeof CENSORED;
  timeout: number;
  retries: number;
  options: Record<string, unknown> | null;
}

/** Options of a definition. */
export interface RadiusOptions {
  message_authenticator?: boolean;
  [key: string]: unknown;
}

/** Spaces in identifiers become `_` (privacyIDEA does the same on create/update). */
export function normaliseIdentifier(identifier: string): string {
  const id = identifier.trim().replace(/ /g, "_");
  if (id === "") throw new ParameterError("Missing parameter: identifier");
  if (id.length > MAX_IDENTIFIER || /[\0/]/.test(id)) {
    throw new ParameterError(`Cannot use RADIUS server identifier "${id.slice(0, 50)}"`);
  }
  return id;
}

function checkServer(server: string): string {
  const s = server.trim();
  if (s === "") throw new ParameterError("Missing parameter: server");
  if (s.length > MAX_SERVER || /[\s\0/]/.test(s)) {
    throw new ParameterError(`Cannot parse parameter "server": "${s.slice(0, 50)}" is no host`);
  }
  return s;
}

function checkInt(name: keyof typeof LIMITS, value: number | undefined): number {
  const v = value ?? DEFAULTS[name];
  const [min, max] = LIMITS[name];
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new ParameterError(
      `Cannot parse parameter "${name}": expected an integer from ${min} to ${max}, got "${v}"`,
    );
  }
  return v;
}

function checkText(name: string, value: string | undefined, max: number, fallback: string) {
  const v = value ?? fallback;
  if (v.length > max) {
    throw new ParameterError(`Cannot parse parameter "${name}": longer than ${max} characters`);
  }
  return v;
}

/** Parses and checks `options`: a JSON object (or its text) or null. */
export function parseOptions(raw: unknown): RadiusOptions | null | undefined {
  if (raw === undefined) return undefined;
  let value = raw;
  if (typeof raw === "string") {
    if (raw.trim() === "") return null;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new ParameterError('Cannot parse parameter "options": expected a JSON object');
    }
  }
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new ParameterError('Cannot parse parameter "options": expected a JSON object');
  }
  const opts = value as RadiusOptions;
  const ma = opts.message_authenticator;
  if (ma !== undefined && typeof ma !== "boolean") {
    if (ma === "true" || ma === "True" || ma === "1" || ma === 1) opts.message_authenticator = true;
    else if (ma === "false" || ma === "False" || ma === "0" || ma === 0) {
      opts.message_authenticator = false;
    } else {
      throw new ParameterError(
        'Cannot parse parameter "options": message_authenticator must be a boolean',
      );
    }
  }
  if (JSON.stringify(opts).length > 2000) {
    throw new ParameterError('Cannot parse parameter "options": too long');
  }
  return opts;
}

function checkSecretLength(secret: string): void {
  if (new TextEncoder().encode(secret).length > MAX_SECRET_BYTES) {
    throw new AppError("The RADIUS secret is too long", 2234);
  }
}

/**
 * `POST /radiusserver/<identifier>`: creates or updates a definition. Omitted
 * port/retries/timeout/description/dictionary are reset to the defaults
 * [quirk]; options change only when given; secret `__CENSORED__` keeps the
 * stored secret of an existing definition.
 */
export async function setRadiusServer(
  deps: Deps,
  identifier: string,
  input: RadiusServerInput,
): Promise<true> {
  const id = normaliseIdentifier(identifier);
  const server = checkServer(input.server);
  if (input.secret === "") throw new ParameterError("Missing parameter: secret");
  const port = checkInt("port", input.port);
  const retries = checkInt("retries", input.retries);
  const timeout = checkInt("timeout", input.timeout);
  const description = checkText("description", input.description, MAX_DESCRIPTION, "");
  const dictionary = checkText(
    "dictionary",
    input.dictionary,
    MAX_DICTIONARY,
    DEFAULT_DICTIONARY,
  );
  const options = parseOptions(input.options);
  let secretEnc: string | undefined;
  if (input.secret === CENSORED) secretEnc = await keptSecret(deps, id, { server, port });
  if (secretEnc === undefined) {
    checkSecretLength(input.secret);
    secretEnc = encryptSecret(deps.keys.config, input.secret, deps.random);
  }
  await store.upsertServer(deps.db, {
    identifier: id,
    server,
    port,
    secretEnc,
    description,
    dictionary,
    retries,
    timeout,
    options: options === undefined ? undefined : options === null ? null : JSON.stringify(options),
  });
  return true;
}

function parseStoredOptions(text: string | null): RadiusOptions | null {
  if (text === null || text === "") return null;
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** `GET /radiusserver/`: every definition keyed by identifier, secrets censored. */
export async function listRadiusServers(deps: Deps): Promise<Record<string, RadiusServerView>> {
  const out: Record<string, RadiusServerView> = {};
  for (const s of await store.listServers(deps.db)) {
    out[s.identifier] = {
      server: s.server,
      port: s.port,
      dictionary: s.dictionary,
      description: s.description,
      secret: CENSORED,
      timeout: s.timeout,
      retries: s.retries,
      options: parseStoredOptions(s.options),
    };
  }
  return out;
}

/** `DELETE /radiusserver/<identifier>`: 404 (601) when it does not exist. */
export async function deleteRadiusServer(deps: Deps, identifier: string): Promise<true> {
  if (!(await store.deleteServer(deps.db, identifier))) {
    throw new ResourceNotFoundError("The requested RADIUSServer could not be found.");
  }
  return true;
}

/** The identifiers of every definition (for token enrolment checks and UIs). */
export async function radiusServerIdentifiers(deps: Deps): Promise<string[]> {
  return (await store.listServers(deps.db)).map((s) => s.identifier);
}

/**
 * The target of a stored definition with its decrypted secret. A definition
 * that does not exist is a configuration error (302).
 */
export async function radiusTarget(deps: Deps, identifier: string): Promise<RadiusTarget> {
  const s = await store.findServer(deps.db, identifier);
  if (!s) {
    throw new ConfigAdminError(`RADIUS server definition "${identifier}" does not exist`);
  }
  return {
    server: s.server,
    port: s.port,
    secret: decryptSecretText(deps.keys.config, s.secretEnc),
    retries: s.retries,
    timeout: s.timeout,
    messageAuthenticator: parseStoredOptions(s.options)?.message_authenticator === true,
  };
}

/** The NAS-Identifier Tessera sends: system config `radius.nas_identifier`. */
export function nasIdentifierOf(system: SystemConfig): string {
  return system.get("radius.nas_identifier", DEFAULT_NAS_IDENTIFIER) || DEFAULT_NAS_IDENTIFIER;
}

async function nasIdentifier(deps: Deps): Promise<string> {
  return nasIdentifierOf(await loadSystemConfig(deps));
}

/**
 * Sends one Access-Request to the definition `identifier` (radius token,
 * passthru). Timeouts and network errors answer "timeout"/"error".
 */
export async function askRadiusServer(
  deps: Deps,
  identifier: string,
  question: RadiusQuestion,
): Promise<RadiusAnswer> {
  return await sendRadiusTo(deps, await radiusTarget(deps, identifier), question);
}

/**
 * Auth policy `passthru=<identifier>` (spec 08 §4): sends the user's login and
 * `pass` to the definition; true only for Access-Accept (a challenge is not
 * supported and, like a reject or timeout, falls through).
 */
export async function radiusPassthru(
  deps: Deps,
  identifier: string,
  credentials: { login: string; pass: string },
): Promise<boolean> {
  const answer = await askRadiusServer(deps, identifier, {
    userName: credentials.login,
    password: credentials.pass,
  });
  return answer.result === "accept";
}

/**
 * Sends one Access-Request to an explicit target (legacy radius tokens,
 * test_request). NAS-Identifier: the question's, else the system config's.
 */
export async function sendRadiusTo(
  deps: Deps,
  target: RadiusTarget,
  question: RadiusQuestion,
): Promise<RadiusAnswer> {
  return await sendAccessRequest(target, {
    ...question,
    nasIdentifier: question.nasIdentifier ?? await nasIdentifier(deps),
  }, { random: deps.random, log: deps.log });
}

/**
 * True when `address` (a NAS or proxy) may name another client, e.g. by
 * NAS-IP-Address: it lies in system config `OverrideAuthorizationClient`
 * (comma-separated IPs or CIDRs), as privacyIDEA requires for its `client` parameter.
 */
export async function mayOverrideClient(deps: Deps, address: string): Promise<boolean> {
  const ip = parseIp(address);
  if (!ip) return false;
  const allowed = (await loadSystemConfig(deps)).get("OverrideAuthorizationClient")
    .split(",")
    .map((s) => parseNetwork(s))
    .filter((n): n is Network => n !== undefined);
  return inAnyNetwork(ip, allowed);
}

/** Input of {@link testRadiusRequest} (`POST /radiusserver/test_request`). */
export interface RadiusTestInput {
  identifier: string;
  server: string;
  secret: string;
  username: string;
  password: string;
  port?: number;
  retries?: number;
  timeout?: number;
  dictionary?: string;
  options?: unknown;
}

/**
 * `POST /radiusserver/test_request`: sends a real Access-Request with the given
 * (unsaved) settings; true only for Access-Accept. Secret `__CENSORED__` uses the
 * stored secret of `identifier` when that definition exists.
 */
export async function testRadiusRequest(deps: Deps, input: RadiusTestInput): Promise<boolean> {
  const server = checkServer(input.server);
  const port = checkInt("port", input.port);
  const retries = checkInt("retries", input.retries);
  const timeout = checkInt("timeout", input.timeout);
  checkText("dictionary", input.dictionary, MAX_DICTIONARY, DEFAULT_DICTIONARY);
  const options = parseOptions(input.options) ?? null;
  let secret = input.secret;
  if (secret === CENSORED) {
    const stored = await keptSecret(deps, input.identifier, { server, port });
    if (stored !== undefined) secret = decryptSecretText(deps.keys.config, stored);
  }
  const answer = await sendRadiusTo(deps, {
    server,
    port,
    secret,
    retries,
    timeout,
    messageAuthenticator: options?.message_authenticator === true,
  }, { userName: input.username, password: input.password });
  if (answer.result === "challenge") {
    deps.log.info("The RADIUS test request requires Challenge-Response", { server });
  } else if (answer.result !== "accept") {
    deps.log.info("The RADIUS test request was not accepted", { server, result: answer.result });
  }
  return answer.result === "accept";
}
