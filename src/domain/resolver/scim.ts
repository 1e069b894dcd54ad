/**
 * `scimresolver`: users of a SCIM 1.0 service, with privacyIDEA's keys
 * (`Authserver`, `Resourceserver`, `Client`, `Secret`, `Mapping`; spec 16 §5).
 *
 * A token comes from `GET {Authserver}/oauth/token?grant_type=client_credentials`
 * with HTTP Basic `Client:Secret` and is reused until it expires when the answer
 * says when (http_token.ts). Users are `GET {Resourceserver}/Users/{id}` and
 * `GET {Resourceserver}/Users`, read with privacyIDEA's SCIM 1.0 mapping; a
 * user's id is its login, as in privacyIDEA. Where privacyIDEA is silent or
 * unsafe Tessera deviates (docs/http-resolvers.md): a login is a user only when
 * the service knows it (privacyIDEA takes any login), a search filters the
 * listed users (privacyIDEA ignores it and lists everyone), `Secret` is
 * censored (privacyIDEA lists it), and password checks and writes, which SCIM
 * resolvers cannot do, are refused rather than answered `false`.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { parse as parseYaml } from "yaml";
import type { Config } from "../../config.ts";
import { AppError, ParameterError, ResolverError } from "../../errors.ts";
import type { Logger } from "../../lib/logger.ts";
import { sendToStore, type StoreAnswer, StoreUnreachableError } from "./http_client.ts";
import { expiresInOf, TokenCache } from "./http_token.ts";
import { CaBundle, strictBool, timeoutOf } from "./http.ts";
import { encodePathSegment } from "./http_values.ts";
import { resolveDataPath } from "./paths.ts";
import {
  emptyUserInfo,
  type ResolverTestResult,
  type UserInfo,
  type UserListEntry,
  type UserResolver,
} from "./types.ts";

/** Keys that decide where `Secret` (and the token it buys) is sent. */
export const SCIM_SECRET_TARGETS = ["Authserver", "Resourceserver"];

/** Fields a search may name (the attributes a SCIM user gives). */
const SEARCH_FIELDS = new Set(["username", "userid", "givenname", "surname", "email", "phone"]);

/** Everything a SCIM resolver instance needs. */
export interface ScimStoreOptions {
  name: string;
  config: Record<string, string>;
  now: () => number;
  log: Logger;
  appConfig: Config;
}

/** A failure with privacyIDEA's text (`Could not get user: 500`). */
class ScimFailure extends Error {}

/** A user of SCIM 1.0 as privacyIDEA reads it. */
function fillUser(user: unknown): Record<string, string> {
  const u = user !== null && typeof user === "object" ? user as Record<string, unknown> : {};
  const name = u.name !== null && typeof u.name === "object"
    ? u.name as Record<string, unknown>
    : {};
  const first = (list: unknown) =>
    Array.isArray(list) && list[0] !== null && typeof list[0] === "object"
      ? String((list[0] as Record<string, unknown>).value ?? "")
      : "";
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  return {
    phone: first(u.phoneNumbers),
    email: first(u.emails),
    mobile: "",
    username: text(u.userName),
    givenname: text(name.givenName),
    surname: text(name.familyName),
  };
}

function matches(pattern: string, value: string): boolean {
  const re = new RegExp(
    "^" + pattern.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$",
    "is",
  );
  return re.test(value);
}

/** The SCIM resolver. */
export class ScimStore implements UserResolver {
  readonly name: string;
  readonly type = "scimresolver";
  readonly editable = false;
  readonly problem?: AppError;
  #authServer = "";
  #resourceServer = "";
  #client = "";
  #secret = "";
  #timeoutSeconds = 60;
  #isTlsVerified = true;
  #ca?: CaBundle;
  #log: Logger;
  #tokens: TokenCache;

  constructor(options: ScimStoreOptions) {
    this.name = options.name;
    this.#log = options.log;
    this.#tokens = new TokenCache(options.now);
    const raw = options.config;
    try {
      const url = (key: string) => {
        const v = (raw[key] ?? "").trim().replace(/\/+$/, "");
        if (v === "") throw new ParameterError(`Missing parameter: ${key}`);
        let parsed: URL;
        try {
          parsed = new URL(v);
        } catch {
          throw new ParameterError(`Cannot use ${key} "${v.slice(0, 200)}": not a valid URL`);
        }
        if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
          throw new ParameterError(`Cannot use ${key} "${v.slice(0, 200)}": only http and https`);
        }
        return v;
      };
      this.#authServer = url("Authserver");
      this.#resourceServer = url("Resourceserver");
      this.#client = raw.Client ?? "";
      this.#secret = raw.Secret ?? "";
      if ((raw.Mapping ?? "").trim() !== "") {
        try {
          parseYaml(raw.Mapping);
        } catch {
          throw new ParameterError("Invalid YAML in 'Mapping'");
        }
      }
      this.#timeoutSeconds = timeoutOf(raw.timeout, 60);
      this.#isTlsVerified = strictBool("verify_tls", raw.verify_tls, true);
      const ca = (raw.tls_ca_path ?? "").trim();
      if (ca !== "" && this.#isTlsVerified) {
        const path = resolveDataPath(options.appConfig.storage.dataDir, ca, "tls_ca_path");
        this.#ca = new CaBundle(path, options.appConfig);
      }
    } catch (err) {
      this.problem = err instanceof AppError ? err : new ParameterError((err as Error).message);
    }
  }

  /** Checks the CA bundle `tls_ca_path` names. */
  async checkFiles(): Promise<void> {
    if (this.#ca) await this.#ca.certs();
  }

  #require(): void {
    if (this.problem) throw this.problem;
  }

  async #send(action: string, url: string, headers: Record<string, string>): Promise<StoreAnswer> {
    const target = new URL(url);
    const started = performance.now();
    try {
      return await sendToStore({
        method: "GET",
        url: target,
        headers,
        isTlsVerified: this.#isTlsVerified,
        caCerts: target.protocol === "https:" && this.#ca ? await this.#ca.certs() : undefined,
        timeoutMs: this.#timeoutSeconds * 1000,
      });
    } catch (err) {
      if (!(err instanceof StoreUnreachableError)) throw err;
      this.#log.warn("User store request failed", {
        resolver: this.name,
        action,
        url: `${target.origin}${target.pathname}`,
        ms: Math.round(performance.now() - started),
        error: err.message,
      });
      // the answer names no server (it may go to unauthenticated clients); the log does
      throw new ScimFailure(err.message);
    }
  }

  #parse(answer: StoreAnswer): unknown {
    try {
      return parseYaml(answer.text);
    } catch {
      throw new ScimFailure(`the answer (status ${answer.status}) is no JSON`);
    }
  }

  async #fetchToken() {
    const basic = Buffer.from(`${this.#client}:${this.#secret}`, "utf8").toString("base64");
    const answer = await this.#send(
      "get a token",
      `${this.#authServer}/oauth/token?grant_type=client_credentials`,
      { Authorization: `Basic ${basic}` },
    );
    if (answer.status !== 200) {
      throw new ScimFailure(`Could not get access token: ${answer.status}`);
    }
    const body = this.#parse(answer);
    const token = body !== null && typeof body === "object"
      ? (body as Record<string, unknown>).access_token
      : undefined;
    if (typeof token !== "string" || token === "") {
      throw new ScimFailure("Could not get access token: no access_token in the answer");
    }
    return { headers: { Authorization: `Bearer ${token}` }, expiresIn: expiresInOf(body) };
  }

  /** A GET of the resource server with the token; a 401 to a cached token is tried once more. */
  async #get(action: string, path: string): Promise<StoreAnswer> {
    const ask = async () => {
      const token = await this.#tokens.get(() => this.#fetchToken());
      const headers = { ...token.headers, "content-type": "application/json" };
      return { answer: await this.#send(action, this.#resourceServer + path, headers), token };
    };
    let { answer, token } = await ask();
    if (answer.status === 401 && token.isCached) {
      this.#tokens.drop();
      ({ answer, token } = await ask());
    }
    return answer;
  }

  /** Runs `work`; privacyIDEA's failure texts become a ResolverError naming the action. */
  async #as<T>(action: string, work: () => Promise<T>): Promise<T> {
    this.#require();
    try {
      return await work();
    } catch (err) {
      if (err instanceof ScimFailure) {
        throw new ResolverError(`Cannot ${action} in resolver "${this.name}": ${err.message}`);
      }
      throw err;
    }
  }

  async #user(uid: string): Promise<Record<string, string> | undefined> {
    const answer = await this.#get("read a user", `/Users/${encodePathSegment(uid)}`);
    if ([400, 404, 410].includes(answer.status)) return undefined;
    if (answer.status !== 200) throw new ScimFailure(`Could not get user: ${answer.status}`);
    return fillUser(this.#parse(answer));
  }

  async getUserInfo(uid: string): Promise<UserInfo | undefined> {
    if (uid === "") return undefined;
    return await this.#as("read a user", async () => {
      const found = await this.#user(uid);
      return found && { ...emptyUserInfo(), ...found, userid: uid };
    });
  }

  async getUserId(login: string): Promise<string | undefined> {
    if (login === "") return undefined;
    // the uid is the login (privacyIDEA); the service must know it
    return await this.#as("find a user", async () => (await this.#user(login)) && login);
  }

  async #list(): Promise<{ users: unknown[]; total: unknown }> {
    const answer = await this.#get("list users", "/Users");
    if (answer.status !== 200) throw new ScimFailure(`Could not get user list: ${answer.status}`);
    const body = this.#parse(answer);
    if (body === null || typeof body !== "object") throw new ScimFailure("the answer is no object");
    const b = body as Record<string, unknown>;
    return { users: Array.isArray(b.Resources) ? b.Resources : [], total: b.totalResults };
  }

  async getUserList(search: Record<string, string>): Promise<UserListEntry[]> {
    if (Object.keys(search).some((k) => !SEARCH_FIELDS.has(k))) return [];
    return await this.#as("list users", async () => {
      const out: UserListEntry[] = [];
      for (const user of (await this.#list()).users) {
        const entry = { ...fillUser(user) };
        if (entry.username === "") continue;
        entry.userid = entry.username;
        // privacyIDEA ignores the search and lists everyone; Tessera filters
        if (Object.entries(search).every(([k, p]) => matches(p, entry[k] ?? ""))) out.push(entry);
      }
      return out;
    });
  }

  checkPass(): Promise<boolean> {
    this.#require();
    return Promise.reject(
      new ResolverError(
        `Cannot check a password in resolver "${this.name}": a SCIM resolver checks no passwords`,
      ),
    );
  }

  #notEditable(action: string): Promise<never> {
    return Promise.reject(
      new ResolverError(`Cannot ${action} in resolver "${this.name}": it is not editable`),
    );
  }

  addUser(): Promise<string> {
    return this.#notEditable("create a user");
  }

  updateUser(): Promise<boolean> {
    return this.#notEditable("update a user");
  }

  deleteUser(): Promise<boolean> {
    return this.#notEditable("delete a user");
  }

  /** `POST /resolver/test`: the token and the user list (spec 16 §5). */
  async test(): Promise<ResolverTestResult> {
    if (this.problem) return { success: false, description: `Failed: ${this.problem.message}` };
    try {
      const { total } = await this.#list();
      const count = typeof total === "number" || typeof total === "string" ? total : -1;
      return { success: true, description: `Found ${count} users` };
    } catch (err) {
      if (!(err instanceof ScimFailure)) throw err;
      return { success: false, description: `failed to retrieve users: ${err.message}` };
    }
  }
}

/** Builds a `scimresolver` instance (never throws: see `problem`). */
export function scimResolver(options: ScimStoreOptions): ScimStore {
  return new ScimStore(options);
}
