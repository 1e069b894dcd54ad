/**
 * `entraidresolver`: users of Microsoft Entra ID through Microsoft Graph, with
 * privacyIDEA 3.12's keys and defaults (spec 16 §3). It is the HTTP resolver
 * (http.ts) with preset Graph endpoints, an application token from the
 * Microsoft identity platform (client credentials: a client secret or a
 * certificate), `$filter` searches, and Graph's error objects.
 *
 * Token flow: the authority's OpenID configuration names the token endpoint
 * (read once per instance; it must be on the authority's own server, since the
 * client secret goes there), then `grant_type=client_credentials` with
 * `scope=https://graph.microsoft.com/.default`. The token is reused until it
 * expires (http_token.ts). Password checks use the resource-owner password
 * flow of `config_user_auth` (secret credentials only, as privacyIDEA).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createPrivateKey, createSign, type KeyObject } from "node:crypto";
import { ParameterError, ResolverError } from "../../errors.ts";
import { toHex } from "../../lib/random.ts";
import type { StoreAnswer } from "./http_client.ts";
import { expiresInOf, type FetchedToken } from "./http_token.ts";
import {
  bareParameterError,
  dictOf,
  type EndpointConfig,
  HTTP_DICT_KEYS,
  HTTP_PASSWORD_TARGETS,
  type HttpStoreOptions,
  HttpUserStore,
  searchOrder,
  type StoreError,
} from "./http.ts";
import { encodePathSegment, quotePlus } from "./http_values.ts";
import { readAllUpTo, refuseOwnPath, resolveDataPath } from "./paths.ts";

const GRAPH_SCOPE = "https://graph.microsoft.com/.default";
const DEFAULT_AUTHORITY = "https://login.microsoftonline.com/{tenant}";
const MAX_KEY_BYTES = 64 * 1024;

/** Stored keys win over these, each as a whole (spec 16 §3.1). */
export const ENTRA_DEFAULTS: Record<string, unknown> = {
  base_url: "https://graph.microsoft.com/v1.0",
  attribute_mapping: {
    username: "userPrincipalName",
    userid: "id",
    givenname: "givenName",
    surname: "surname",
    email: "mail",
    mobile: "mobilePhone",
    phone: "businessPhones",
  },
  config_get_user_by_id: { method: "GET", endpoint: "/users/{userid}" },
  config_get_user_by_name: { method: "GET", endpoint: "/users/{username}" },
  config_get_user_list: {
    method: "GET",
    endpoint: "/users",
    headers: '{"ConsistencyLevel": "eventual"}',
  },
  config_create_user: {
    method: "POST",
    endpoint: "/users",
    requestMapping: '{"accountEnabled": true, "displayName": "{givenname} {surname}", ' +
      '"mailNickname": "{givenname}", "passwordProfile": {"password": "{password}"}}',
  },
  config_edit_user: { method: "PATCH", endpoint: "/users/{userid}" },
  config_delete_user: { method: "DELETE", endpoint: "/users/{userid}" },
  config_user_auth: {
    method: "POST",
    headers: '{"Content-Type": "application/x-www-form-urlencoded"}',
    endpoint: "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token",
    requestMapping: "client_id={client_id}&scope=https://graph.microsoft.com/.default&" +
      "username={username}&password={password}&grant_type=password&" +
      "client_secret={client_credential}",
  },
};

/** `GET /resolver/entraidresolver/default`. */
export const ENTRA_DEFAULT_VIEW: Record<string, unknown> = {
  ...ENTRA_DEFAULTS,
  headers: {},
  Editable: false,
  verify_tls: true,
  type: "entraidresolver",
  timeout: 60,
  advanced: true,
  authority: DEFAULT_AUTHORITY,
  client_credential_type: "secret",
};

/** Keys listed as JSON objects. */
export const ENTRA_DICT_KEYS = [...HTTP_DICT_KEYS, "client_certificate"];

/** Secrets: the service password, the client secret, the key file's passphrase. */
export const ENTRA_SECRETS = [
  "password",
  "client_secret",
  "client_certificate.private_key_password",
];

/**
 * Keys that decide where each secret goes, or the token it buys: the client
 * secret to the authority (and `config_user_auth`), the application token to
 * every Graph endpoint.
 */
export const ENTRA_SECRET_TARGETS: Record<string, string[]> = {
  password: HTTP_PASSWORD_TARGETS,
  client_secret: ["authority", "tenant", ...HTTP_PASSWORD_TARGETS],
};

interface Certificate {
  /** Absolute path of the PEM private key. */
  keyFile: string;
  /** SHA-1 thumbprint of the certificate. */
  thumbprint: Uint8Array;
  passphrase?: string;
}

/** The Entra ID resolver. */
export class EntraIdStore extends HttpUserStore {
  #clientId = "";
  #tenant = "";
  #authority = "";
  #secret?: string;
  #certificate?: Certificate;
  #tokenEndpoint?: string;
  #key?: { stamp: string; key: KeyObject };

  constructor(options: HttpStoreOptions) {
    super(options, { type: "entraidresolver", defaults: ENTRA_DEFAULTS, wildcard: "" });
    this.loadPart(() => this.#load());
  }

  #load(): void {
    const raw = this.raw;
    const text = (key: string) => typeof raw[key] === "string" ? (raw[key] as string).trim() : "";
    const required = (key: string) => {
      const v = text(key);
      if (v === "") throw new ParameterError(`Missing parameter: ${key}`);
      return v;
    };
    this.#clientId = required("client_id");
    this.#tenant = required("tenant");
    const authority = text("authority") || DEFAULT_AUTHORITY;
    this.#authority = authority.replaceAll("{tenant}", encodePathSegment(this.#tenant))
      .replace(/\/+$/, "");
    let url: URL;
    try {
      url = new URL(this.#authority);
    } catch {
      throw new ParameterError(`Invalid Authorization Configuration: no valid URL in 'authority'`);
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new ParameterError(`Invalid Authorization Configuration: 'authority' needs https`);
    }
    const type = required("client_credential_type");
    if (type === "secret") {
      this.#secret = required("client_secret");
    } else if (type === "certificate") {
      const cert = dictOf("client_certificate", raw.client_certificate);
      if (cert === undefined) throw new ParameterError("Missing parameter: client_certificate");
      const field = (key: string) => typeof cert[key] === "string" ? (cert[key] as string) : "";
      const keyFile = field("private_key_file").trim();
      if (keyFile === "") throw new ParameterError("Missing parameter: private_key_file");
      const fingerprint = field("certificate_fingerprint").replace(/[:\s]/g, "");
      if (fingerprint === "") {
        throw new ParameterError("Missing parameter: certificate_fingerprint");
      }
      if (!/^[0-9a-fA-F]{40}$/.test(fingerprint)) {
        throw new ParameterError(
          "Invalid 'certificate_fingerprint': the certificate's SHA-1 thumbprint in hex is needed",
        );
      }
      this.#certificate = {
        keyFile: resolveDataPath(this.appConfig.storage.dataDir, keyFile, "private_key_file"),
        thumbprint: Uint8Array.from(Buffer.from(fingerprint, "hex")),
        passphrase: field("private_key_password") || undefined,
      };
    } else {
      throw bareParameterError(`'${type.slice(0, 64)}' is not a valid ClientCredentialType`);
    }
  }

  override async checkFiles(): Promise<void> {
    await super.checkFiles();
    if (this.#certificate) await this.#privateKey();
  }

  /** The certificate's private key, re-read when the file changes; never one of Tessera's files. */
  async #privateKey(): Promise<KeyObject> {
    const cert = this.#certificate!;
    const cannot = (why: string) =>
      new ParameterError(`Could not read client certificate file '${cert.keyFile}': ${why}`);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(cert.keyFile);
    } catch (err) {
      refuseOwnPath(this.appConfig, cert.keyFile, "private_key_file");
      throw cannot((err as Error).name);
    }
    try {
      const info = await file.stat();
      refuseOwnPath(this.appConfig, cert.keyFile, "private_key_file", info);
      const stamp = `${info.dev}:${info.ino}:${info.mtime?.getTime()}:${info.size}`;
      if (this.#key?.stamp === stamp) return this.#key.key;
      const bytes = info.isFile && info.size <= MAX_KEY_BYTES
        ? await readAllUpTo(file, MAX_KEY_BYTES)
        : undefined;
      const pem = bytes ? new TextDecoder().decode(bytes) : "";
      // the content is never echoed: the file may be any file the server can read
      if (!/-----BEGIN (ENCRYPTED |RSA )?PRIVATE KEY-----/.test(pem)) {
        throw cannot("it holds no PEM private key");
      }
      let key: KeyObject;
      try {
        key = createPrivateKey({ key: pem, format: "pem", passphrase: cert.passphrase });
      } catch {
        throw cannot("the key cannot be read (wrong private_key_password?)");
      }
      if (key.asymmetricKeyType !== "rsa") throw cannot("an RSA key is needed");
      this.#key = { stamp, key };
      return key;
    } finally {
      file.close();
    }
  }

  /** The token endpoint named by the authority's OpenID configuration (read once). */
  async #endpoint(): Promise<string> {
    if (this.#tokenEndpoint) return this.#tokenEndpoint;
    const fail = (why: string) =>
      new ResolverError(`Failed to get access token to resolve users from EntraID: ${why}`);
    const answer = await this.sendDirect("read the OpenID configuration", {
      method: "GET",
      url: `${this.#authority}/v2.0/.well-known/openid-configuration`,
    });
    let endpoint: unknown;
    try {
      endpoint = answer.status === 200 ? JSON.parse(answer.text).token_endpoint : undefined;
    } catch {
      endpoint = undefined;
    }
    if (typeof endpoint !== "string") {
      throw fail(`the authority's OpenID configuration could not be read (${answer.status})`);
    }
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw fail("the authority names no valid token endpoint");
    }
    // the client secret goes to this endpoint: only ever the authority's own server
    if (url.origin !== new URL(this.#authority).origin) {
      throw fail("the token endpoint is not on the authority's server");
    }
    this.#tokenEndpoint = url.href;
    return this.#tokenEndpoint;
  }

  /** A signed client assertion (RFC 7523) for the certificate credential. */
  async #assertion(audience: string): Promise<string> {
    const key = await this.#privateKey();
    const b64 = (data: string | Uint8Array) => Buffer.from(data).toString("base64url");
    const now = Math.floor(this.now() / 1000);
    const header = { alg: "RS256", typ: "JWT", x5t: b64(this.#certificate!.thumbprint) };
    const payload = {
      aud: audience,
      iss: this.#clientId,
      sub: this.#clientId,
      jti: toHex(this.random.bytes(16)),
      nbf: now,
      iat: now,
      exp: now + 600,
    };
    const input = `${b64(JSON.stringify(header))}.${b64(JSON.stringify(payload))}`;
    const signature = createSign("RSA-SHA256").update(input).sign(key);
    return `${input}.${b64(signature)}`;
  }

  /** An application token by client credentials (spec 16 §3.2). */
  protected override async fetchToken(): Promise<FetchedToken> {
    const endpoint = await this.#endpoint();
    const fields: [string, string][] = [
      ["grant_type", "client_credentials"],
      ["client_id", this.#clientId],
      ["scope", GRAPH_SCOPE],
    ];
    if (this.#secret !== undefined) {
      fields.push(["client_secret", this.#secret]);
    } else {
      fields.push([
        "client_assertion_type",
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      ]);
      fields.push(["client_assertion", await this.#assertion(endpoint)]);
    }
    const answer = await this.sendDirect("get an access token", {
      method: "POST",
      url: endpoint,
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: fields.map(([k, v]) => `${quotePlus(k)}=${quotePlus(v)}`).join("&"),
    });
    let body: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(answer.text);
      if (parsed !== null && typeof parsed === "object") body = parsed;
    } catch {
      // no JSON: reported by status below
    }
    const token = body.access_token;
    if (answer.status !== 200 || typeof token !== "string" || token === "") {
      const error = typeof body.error === "string" ? body.error : `status ${answer.status}`;
      this.log.warn("Entra ID refused the application token", {
        resolver: this.name,
        status: answer.status,
        error,
        description: String(body.error_description ?? "").slice(0, 300),
      });
      throw new ResolverError(`Failed to get access token to resolve users from EntraID: ${error}`);
    }
    return { headers: { Authorization: `Bearer ${token}` }, expiresIn: expiresInOf(body) };
  }

  protected override userAuthTags(): Record<string, string> {
    const tags: Record<string, string> = { tenant: this.#tenant, client_id: this.#clientId };
    if (this.#secret !== undefined) tags.client_credential = this.#secret;
    return tags;
  }

  override async checkPass(uid: string, password: string, login?: string): Promise<boolean> {
    this.requireWorking("userAuth");
    if (this.#certificate && this.cfg.userAuth) {
      throw new ResolverError(
        "User authentication with password is not supported when using a certificate for the " +
          "client!",
      );
    }
    return await super.checkPass(uid, password, login);
  }

  /** Graph's `$filter` (spec 16 §3.3); `'` in a value is doubled, as OData needs. */
  protected override searchParams(search: Record<string, string>): Record<string, string> {
    const parts: string[] = [];
    const listHeaders = dictOfSafe(this.raw.config_get_user_list);
    const isAdvanced = listHeaders?.ConsistencyLevel === "eventual";
    let usesEndsWith = false;
    for (const [key, value] of searchOrder(search)) {
      const attr = this.cfg.attributeMapping[key];
      if (attr === undefined || value === "*") continue;
      const v = value.replaceAll("*", "").replaceAll("'", "''");
      if (value.includes("*")) {
        if (isAdvanced) {
          usesEndsWith = true;
          parts.push(`(startswith(${attr}, '${v}') or endswith(${attr}, '${v}'))`);
        } else {
          parts.push(`startswith(${attr}, '${v}')`);
        }
      } else {
        parts.push(`${attr} eq '${v}'`);
      }
    }
    if (parts.length === 0) return {};
    const out: Record<string, string> = { $filter: parts.join(" and ") };
    // Graph runs endswith only as an advanced query, which needs $count=true
    if (usesEndsWith) out.$count = "true";
    return out;
  }

  protected override usersOf(body: unknown): unknown[] {
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw this.malformed("list users", "the answer is no JSON object");
    }
    const value = (body as Record<string, unknown>).value ?? [];
    if (!Array.isArray(value)) throw this.malformed("list users", "its value is no list");
    return value;
  }

  protected override toStore(attributes: Record<string, string>): Record<string, unknown> {
    const out = super.toStore(attributes);
    // Graph keeps business phones as a list
    if (typeof out.businessPhones === "string") out.businessPhones = [out.businessPhones];
    return out;
  }

  protected override errorOf(answer: StoreAnswer): StoreError | undefined {
    return graphError(answer);
  }

  protected override busyReason(answer: StoreAnswer): string | undefined {
    return answer.status === 202 ? "Entra ID is busy (202), try again" : undefined;
  }

  protected override createSucceeded(answer: StoreAnswer, cfg: EndpointConfig): boolean {
    if (answer.status === 201) {
      if (!this.isSuccess(answer, cfg, "create a user")) {
        throw new ResolverError("Failed to create user!");
      }
      return true;
    }
    const error = this.errorOf(answer);
    if (error) throw new ResolverError(`Failed to create user: ${error.code} - ${error.message}`);
    return this.isSuccess(answer, cfg, "create a user");
  }
}

function dictOfSafe(config: unknown): Record<string, unknown> | undefined {
  try {
    const list = dictOf("config_get_user_list", config);
    const headers = list?.headers;
    if (typeof headers === "string") return JSON.parse(headers);
    return headers !== null && typeof headers === "object"
      ? headers as Record<string, unknown>
      : undefined;
  } catch {
    return undefined;
  }
}

/** Graph's `{"error": {"code", "message"}}`, or a token endpoint's `{"error": "…"}`. */
export function graphError(answer: StoreAnswer): StoreError | undefined {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return undefined;
  }
  if (body === null || typeof body !== "object") return undefined;
  const error = (body as Record<string, unknown>).error;
  if (typeof error === "string" && error !== "") {
    const description = (body as Record<string, unknown>).error_description;
    return { code: error, message: typeof description === "string" ? description : "" };
  }
  if (error !== null && typeof error === "object") {
    const e = error as Record<string, unknown>;
    return { code: String(e.code ?? ""), message: String(e.message ?? "") };
  }
  return undefined;
}

/** Builds an `entraidresolver` instance (never throws: see `problem`). */
export function entraIdResolver(options: HttpStoreOptions): EntraIdStore {
  return new EntraIdStore(options);
}
