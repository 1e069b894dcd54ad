/**
 * Remote privacyIDEA-compatible server definitions (`/privacyideaserver/`) and
 * the requests sent to them: the definition's test request and the
 * Federation event handler's forwarding.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ConfigAdminError, ParameterError, ResourceNotFoundError } from "../../errors.ts";
import * as store from "./privacyidea_server_store.ts";
import { pythonQuote, type RemoteRequest, RemoteServerError, sendRemote } from "./client.ts";

export { RemoteServerError } from "./client.ts";

/** Seconds a remote server has to answer, unless the caller says otherwise. */
export const DEFAULT_TIMEOUT_S = 10;
/** Longest deadline a caller may ask for. */
export const MAX_TIMEOUT_S = 60;

const MAX_IDENTIFIER = 255;
const MAX_URL = 255;
const MAX_DESCRIPTION = 2000;

/** Input of {@link setPrivacyideaServer}. */
export interface PrivacyideaServerInput {
  url: string;
  /** Verify the TLS certificate (privacyIDEA's `tls`, default true). */
  isTlsVerified?: boolean;
  description?: string;
}

/** One definition as `GET /privacyideaserver/` shows it. */
export interface PrivacyideaServerView {
  id: number;
  url: string;
  tls: boolean;
  description: string;
}

/** Spaces in identifiers become `_` (privacyIDEA does the same on create/update). */
export function normaliseIdentifier(identifier: string): string {
  const id = identifier.trim().replace(/ /g, "_");
  if (id === "") throw new ParameterError("Missing parameter: identifier");
  if (id.length > MAX_IDENTIFIER || /[\0/]/.test(id)) {
    throw new ParameterError(`Cannot use privacyIDEA server identifier "${id.slice(0, 50)}"`);
  }
  return id;
}

/**
 * Checks a server URL: http or https, no credentials, query or fragment (the
 * request path is appended to it, and the URL is shown to clients as
 * `detail.origin`). Returns it trimmed.
 */
export function checkUrl(url: string): string {
  const s = url.trim();
  if (s === "") throw new ParameterError("Missing parameter: url");
  const bad = () =>
    new ParameterError(
      `Cannot parse parameter "url": expected an http or https URL, got "${s.slice(0, 80)}"`,
    );
  if (s.length > MAX_URL || /[\s\0]/.test(s)) throw bad();
  let parsed: URL;
  try {
    parsed = new URL(s);
  } catch {
    throw bad();
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw bad();
  if (parsed.username || parsed.password || parsed.search || parsed.hash || s.includes("?")) {
    throw new ParameterError(
      'Cannot parse parameter "url": credentials, a query or a fragment are not allowed',
    );
  }
  return s;
}

/** `<url><path>` without a doubled slash between them. */
function join(url: string, path: string): string {
  return url.replace(/\/+$/, "") + path;
}

function checkDescription(description: string | undefined): string {
  const d = description ?? "";
  if (d.length > MAX_DESCRIPTION) {
    throw new ParameterError(
      `Cannot parse parameter "description": longer than ${MAX_DESCRIPTION} characters`,
    );
  }
  return d;
}

/**
 * `POST /privacyideaserver/<identifier>`: creates or updates a definition. As
 * in privacyIDEA an update is not partial: an omitted `tls` is true again and
 * an omitted description empty.
 */
export async function setPrivacyideaServer(
  deps: Deps,
  identifier: string,
  input: PrivacyideaServerInput,
): Promise<true> {
  await store.upsertServer(deps.db, {
    identifier: normaliseIdentifier(identifier),
    url: checkUrl(input.url),
    isTlsVerified: input.isTlsVerified ?? true,
    description: checkDescription(input.description),
  });
  return true;
}

/** `GET /privacyideaserver/`: every definition keyed by identifier. */
export async function listPrivacyideaServers(
  deps: Deps,
): Promise<Record<string, PrivacyideaServerView>> {
  const out: Record<string, PrivacyideaServerView> = {};
  for (const s of await store.listServers(deps.db)) {
    out[s.identifier] = {
      id: s.id,
      url: s.url,
      tls: s.isTlsVerified,
      description: s.description,
    };
  }
  return out;
}

/** `DELETE /privacyideaserver/<identifier>`: 404 (601) when it does not exist. */
export async function deletePrivacyideaServer(deps: Deps, identifier: string): Promise<true> {
  if (!(await store.deleteServer(deps.db, identifier))) {
    throw new ResourceNotFoundError("The requested PrivacyIDEAServer could not be found.");
  }
  return true;
}

/** The identifiers of every definition (the Federation handler's choices). */
export async function privacyideaServerIdentifiers(deps: Deps): Promise<string[]> {
  return (await store.listServers(deps.db)).map((s) => s.identifier);
}

/** Input of {@link testPrivacyideaServer} (`POST /privacyideaserver/test_request`). */
export interface PrivacyideaTestInput {
  url: string;
  isTlsVerified?: boolean;
  username: string;
  password: string;
}

/**
 * `POST /privacyideaserver/test_request`: sends `/validate/check` with the
 * given user and password to the (unsaved) URL. True only for HTTP 200 with
 * `result.status` and a truthy `result.value`. An unreachable server or an
 * unusable answer is logged and answers false.
 */
export async function testPrivacyideaServer(
  deps: Deps,
  input: PrivacyideaTestInput,
): Promise<boolean> {
  const url = join(checkUrl(input.url), "/validate/check");
  let status: number;
  let text: string;
  try {
    ({ status, text } = await sendRemote({
      method: "POST",
      url,
      // quoted once more, as privacyIDEA does: the remote decodes parameters twice
      params: [["user", pythonQuote(input.username)], ["pass", pythonQuote(input.password)]],
      isTlsVerified: input.isTlsVerified ?? true,
      timeoutMs: DEFAULT_TIMEOUT_S * 1000,
    }));
  } catch (err) {
    deps.log.warn("The privacyIDEA server test request failed", {
      url,
      error: (err as Error).message,
    });
    return false;
  }
  if (status !== 200) {
    deps.log.warn("The privacyIDEA server test request answered with an error status", {
      url,
      status,
    });
    return false;
  }
  const result = parseObject(text)?.result as Record<string, unknown> | undefined;
  return Boolean(result?.status) && Boolean(result?.value);
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A request forwarded to a definition (the Federation handler). */
export interface ForwardRequest {
  method: string;
  /** The request path, encoded, starting with `/`. */
  path: string;
  params: [string, string][];
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/** The remote answer: status, the JSON object, and the URL it came from. */
export interface ForwardResponse {
  status: number;
  body: Record<string, unknown>;
  url: string;
}

/**
 * Sends `request` to `<url of definition identifier><path>` with the same
 * method. Throws {@link ConfigAdminError} for an unknown definition or an
 * unsupported method, {@link RemoteServerError} when the server cannot be
 * reached or does not answer with a JSON object.
 */
export async function forwardToPrivacyideaServer(
  deps: Deps,
  identifier: string,
  request: ForwardRequest,
): Promise<ForwardResponse> {
  const server = await store.findServer(deps.db, identifier);
  if (!server) {
    throw new ConfigAdminError("The specified privacyIDEA Server configuration does not exist.");
  }
  const method = request.method.toUpperCase();
  if (method !== "GET" && method !== "POST" && method !== "DELETE") {
    throw new ConfigAdminError(`Cannot forward a ${method.slice(0, 10)} request`);
  }
  const url = join(server.url, request.path);
  const remote: RemoteRequest = {
    method,
    url,
    params: request.params,
    headers: request.headers,
    isTlsVerified: server.isTlsVerified,
    timeoutMs: request.timeoutMs ?? DEFAULT_TIMEOUT_S * 1000,
  };
  deps.log.info("Forwarding a request to a privacyIDEA server", { identifier, method, url });
  const { status, text } = await sendRemote(remote);
  const body = parseObject(text);
  if (!body) {
    throw new RemoteServerError(`The answer of "${url}" (HTTP ${status}) is no JSON object`);
  }
  return { status, body, url };
}

/** The definition with `id`, by identifier and URL; undefined when there is none. */
export async function privacyideaServerById(
  deps: Deps,
  id: number,
): Promise<{ identifier: string; url: string } | undefined> {
  if (!Number.isSafeInteger(id)) return undefined;
  const server = await store.findServerById(deps.db, id);
  return server && { identifier: server.identifier, url: server.url };
}

/** Outcome of {@link remoteValidateCheck}: accepted, and the remote token's serial. */
export interface RemoteCheckOutcome {
  isAccepted: boolean;
  serial?: string;
}

/**
 * A `remote` token's check: `POST <url of definition id>/validate/check` with the given
 * fields, each quoted once more as privacyIDEA does (the remote decodes twice), TLS as the
 * definition says. Accepted only for HTTP 200 with a truthy `result.value`. An unknown
 * definition, an unreachable server or an unusable answer is logged and not accepted.
 */
export async function remoteValidateCheck(
  deps: Deps,
  id: number,
  fields: [string, string][],
): Promise<RemoteCheckOutcome> {
  const server = Number.isSafeInteger(id) ? await store.findServerById(deps.db, id) : undefined;
  if (!server) {
    deps.log.warn("A remote token names a privacyIDEA server definition that does not exist", {
      id,
    });
    return { isAccepted: false };
  }
  const url = join(server.url, "/validate/check");
  let status: number;
  let text: string;
  try {
    ({ status, text } = await sendRemote({
      method: "POST",
      url,
      params: fields.map(([k, v]) => [k, pythonQuote(v)]),
      isTlsVerified: server.isTlsVerified,
      timeoutMs: DEFAULT_TIMEOUT_S * 1000,
    }));
  } catch (err) {
    deps.log.warn("The remote token's privacyIDEA server could not be asked", {
      url,
      error: (err as Error).message,
    });
    return { isAccepted: false };
  }
  const body = parseObject(text);
  const result = body?.result as Record<string, unknown> | undefined;
  if (status !== 200 || !result?.value) return { isAccepted: false };
  const detail = body?.detail as Record<string, unknown> | undefined;
  const serial = typeof detail?.serial === "string" ? detail.serial : undefined;
  return { isAccepted: true, serial };
}
