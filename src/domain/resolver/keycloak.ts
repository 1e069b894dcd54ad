/**
 * `keycloakresolver`: users of a Keycloak realm through its admin REST API,
 * with privacyIDEA 3.12's keys and defaults (spec 16 §4). It is the HTTP
 * resolver (http.ts) with preset endpoints: a service account's token by the
 * password grant of `admin-cli` (reused until it expires, http_token.ts), the
 * realm's users by id, by exact user name and by search, writes, and the
 * password check by the same grant for the user. `{realm}` in any URL is the
 * `realm` key.
 *
 * @module
 */
import { ParameterError, ResolverError } from "../../errors.ts";
import type { StoreAnswer } from "./http_client.ts";
import {
  type EndpointConfig,
  flatValue,
  HTTP_PASSWORD_TARGETS,
  type HttpStoreOptions,
  HttpUserStore,
  prepareRequest,
  type StoreError,
} from "./http.ts";
import { applyResponseMapping, encodePathSegment } from "./http_values.ts";

const FORM = '{"Content-Type": "application/x-www-form-urlencoded"}';

/** Stored keys win over these, each as a whole (spec 16 §4.1). */
export const KEYCLOAK_DEFAULTS: Record<string, unknown> = {
  base_url: "http://localhost:8080",
  attribute_mapping: {
    username: "username",
    userid: "id",
    givenname: "firstName",
    surname: "lastName",
    email: "email",
  },
  config_authorization: {
    method: "POST",
    endpoint: "/realms/{realm}/protocol/openid-connect/token",
    requestMapping:
      "grant_type=password&client_id=admin-cli&username={username}&password={password}",
    responseMapping: '{"Authorization": "Bearer {access_token}"}',
    headers: FORM,
  },
  config_get_user_by_id: { method: "GET", endpoint: "/admin/realms/{realm}/users/{userid}" },
  config_get_user_by_name: {
    method: "GET",
    endpoint: "/admin/realms/{realm}/users",
    requestMapping: '{"username": "{username}", "exact": true}',
  },
  config_get_user_list: { method: "GET", endpoint: "/admin/realms/{realm}/users" },
  config_create_user: {
    method: "POST",
    endpoint: "/admin/realms/{realm}/users",
    requestMapping: '{"enabled": true}',
  },
  config_edit_user: { method: "PUT", endpoint: "/admin/realms/{realm}/users/{userid}" },
  config_delete_user: { method: "DELETE", endpoint: "/admin/realms/{realm}/users/{userid}" },
  config_user_auth: {
    method: "POST",
    headers: FORM,
    endpoint: "/realms/{realm}/protocol/openid-connect/token",
    requestMapping:
      "grant_type=password&client_id=admin-cli&username={username}&password={password}",
  },
};

/** `GET /resolver/keycloakresolver/default`. */
export const KEYCLOAK_DEFAULT_VIEW: Record<string, unknown> = {
  ...KEYCLOAK_DEFAULTS,
  headers: {},
  Editable: false,
  verify_tls: true,
  type: "keycloakresolver",
  timeout: 60,
  advanced: true,
};

/** Keys that decide where the service `password` or its token go (the realm only picks a path). */
export const KEYCLOAK_PASSWORD_TARGETS = HTTP_PASSWORD_TARGETS;

/** The Keycloak resolver. */
export class KeycloakStore extends HttpUserStore {
  #realm = "";

  constructor(options: HttpStoreOptions) {
    super(options, { type: "keycloakresolver", defaults: KEYCLOAK_DEFAULTS, wildcard: "" });
    this.loadPart(() => {
      this.#realm = typeof this.raw.realm === "string" ? this.raw.realm.trim() : "";
      // privacyIDEA would send "{realm}" as it is; every request would fail
      const usesRealm = Object.keys(this.raw).some((k) =>
        (k === "base_url" || k.startsWith("config_")) &&
        JSON.stringify(this.raw[k]).includes("{realm}")
      );
      if (this.#realm === "" && usesRealm) throw new ParameterError("Missing parameter: realm");
    });
  }

  protected override finishUrl(url: string): string {
    return this.#realm === "" ? url : url.replaceAll("{realm}", encodePathSegment(this.#realm));
  }

  /** Keycloak's `{"errorMessage"}`, or an OAuth `{"error", "error_description"}`. */
  protected override errorOf(answer: StoreAnswer): StoreError | undefined {
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return undefined;
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined;
    const b = body as Record<string, unknown>;
    if (typeof b.errorMessage === "string" && b.errorMessage !== "") {
      return { code: "", message: b.errorMessage };
    }
    const code = typeof b.error === "string" ? b.error : "";
    const message = typeof b.error_description === "string" ? b.error_description : "";
    return code !== "" || message !== "" ? { code, message } : undefined;
  }

  /** A login by the exact user-name search; several users with the name is an error. */
  override async getUserId(login: string): Promise<string | undefined> {
    this.requireWorking();
    const cfg = this.cfg.byName;
    if (login === "" || !cfg) return undefined;
    const action = "find a user";
    const prepared = prepareRequest(cfg, {
      defaultHeaders: this.cfg.headers,
      tags: { username: login },
      wildcard: "",
    });
    const answer = await this.call(action, prepared, prepared.params);
    const error = answer.status !== 200 ? this.errorOf(answer) : undefined;
    if (error || !this.isSuccess(answer, cfg, action)) {
      // the search lists nobody when no user has the name: a failure is no "unknown user"
      throw this.failedAnswer(action, answer);
    }
    const body = applyResponseMapping(cfg.responseMapping, this.jsonOf(answer, action));
    const users = this.usersOf(body).filter((u) => u !== null && typeof u === "object");
    if (users.length > 1) {
      throw new ResolverError(`Multiple users found for username '${login}'`);
    }
    if (users.length === 0) return undefined;
    const uid = flatValue(this.toPi(users[0], action).userid);
    return uid === "" ? undefined : uid;
  }

  protected override createSucceeded(answer: StoreAnswer, cfg: EndpointConfig): boolean {
    if (answer.status === 201) {
      if (!this.isSuccess(answer, cfg, "create a user")) {
        throw new ResolverError("Failed to create user!");
      }
      return true;
    }
    const error = this.errorOf(answer);
    if (error) throw new ResolverError(`Failed to create user: ${error.message || error.code}`);
    return this.isSuccess(answer, cfg, "create a user");
  }
}

/** Builds a `keycloakresolver` instance (never throws: see `problem`). */
export function keycloakResolver(options: HttpStoreOptions): KeycloakStore {
  return new KeycloakStore(options);
}
