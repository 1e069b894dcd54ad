/**
 * A pool of LDAP servers (`LDAPURI` with several URIs) shared by the LDAP user
 * resolver and the LDAP machine resolver: servers are tried in the configured
 * strategy, a server that fails to connect (refused, TLS failure, no answer
 * within the timeout) is skipped for `SERVERPOOL_SKIP` seconds, and after
 * `SERVERPOOL_ROUNDS` walks without a working server the operation fails.
 *
 * Every connection phase (TCP, TLS or StartTLS, bind) is bounded by the
 * timeout as a whole, and every answer by the timeout again (ldapts'
 * per-operation timer), so no caller waits on a silent server for longer than
 * about the timeout per server tried. A connection is bound either as the
 * service account (searches, changes) or as a user (password checks); a
 * user-bound connection is always closed after its one bind and never serves
 * anything else. Only service-bound connections are kept between requests,
 * and only with `SERVERPOOL_PERSISTENT`.
 *
 * @module
 */
import { connect as netConnect, isIP, type Socket } from "node:net";
import {
  connect as tlsConnect,
  type ConnectionOptions,
  type SecureVersion,
  type TLSSocket,
} from "node:tls";
import { Client, ResultCodeError } from "ldapts";
import { AppError } from "../../errors.ts";
import type { Random } from "../../lib/random.ts";

/** How the pool picks the server to try first. */
export type PoolStrategy = "ROUND_ROBIN" | "FIRST" | "RANDOM";

/** The parsed connection settings of an LDAP resolver (user or machine). */
export interface LdapServerSettings {
  /** `ldap://` or `ldaps://` URIs (host and port only). */
  uris: string[];
  /** Service account; "" means an anonymous bind. */
  bindDn: string;
  bindPw: string;
  /** Seconds for connecting and for each answer, in milliseconds. */
  timeoutMs: number;
  startTls: boolean;
  tlsVerify: boolean;
  /** Absolute path of a PEM file with the CA certificates (verified connections only). */
  tlsCaFile?: string;
  tlsMinVersion?: SecureVersion;
  strategy: PoolStrategy;
  rounds: number;
  skipMs: number;
  persistent: boolean;
}

/** Who a connection binds as. */
export type BindAs = { kind: "service" } | { kind: "user"; dn: string; password: string };

/** Services the pool needs from its owner. */
export interface PoolEnv {
  /** Milliseconds since the epoch (the skip periods). */
  now(): number;
  random: Random;
  /** PEM text of the CA file (the owner applies its path rules). */
  readCa(path: string): Promise<string>;
}

/**
 * No server of the pool could be used. `reason` names the last failure with
 * its server (for admins and the log); `failure` is the same without the
 * server (for answers to clients).
 */
export class LdapUnreachableError extends Error {
  constructor(readonly reason: string, readonly failure: string) {
    super(reason);
    this.name = "LdapUnreachableError";
  }
}

/** LDAP result codes by number (RFC 4511 §4.1.9), for readable messages. */
const RESULT_NAMES: Record<number, string> = {
  1: "operationsError",
  2: "protocolError",
  3: "timeLimitExceeded",
  4: "sizeLimitExceeded",
  7: "authMethodNotSupported",
  8: "strongerAuthRequired",
  10: "referral",
  11: "adminLimitExceeded",
  13: "confidentialityRequired",
  16: "noSuchAttribute",
  17: "undefinedAttributeType",
  18: "inappropriateMatching",
  19: "constraintViolation",
  20: "attributeOrValueExists",
  21: "invalidAttributeSyntax",
  32: "noSuchObject",
  34: "invalidDNSyntax",
  48: "inappropriateAuthentication",
  49: "invalidCredentials",
  50: "insufficientAccessRights",
  51: "busy",
  52: "unavailable",
  53: "unwillingToPerform",
  54: "loopDetect",
  64: "namingViolation",
  65: "objectClassViolation",
  66: "notAllowedOnNonLeaf",
  67: "notAllowedOnRDN",
  68: "entryAlreadyExists",
  69: "objectClassModsProhibited",
  80: "other",
};

/** Result codes that mean "this server cannot serve now": try the next one. */
const SERVER_DOWN_CODES = new Set([51, 52]);

/** The LDAP result code of an error answered by the server, undefined for other errors. */
export function ldapResultCode(err: unknown): number | undefined {
  return err instanceof ResultCodeError ? err.code : undefined;
}

/** A readable text for an LDAP or connection error (never contains a password). */
export function ldapErrorText(err: unknown): string {
  if (err instanceof LdapUnreachableError) return err.reason;
  if (err instanceof ResultCodeError) {
    const name = RESULT_NAMES[err.code] ?? `result code ${err.code}`;
    const diagnostic = err.message.replace(/\s*Code: 0x[0-9a-f]+$/i, "").trim();
    return diagnostic === "" ? name : `${name}: ${diagnostic}`;
  }
  const message = (err as Error)?.message ?? String(err);
  // ldapts' "Socket error. Message type: …\n<cause>": the cause is what matters
  return message.split("\n").pop()!.trim().slice(0, 300);
}

const ADDRESS_REGEXP = /\b(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\])(?::\d+)?\b/gi;

/** `text` with the pool's servers and any IP address (and port) replaced by "<server>". */
function maskServers(text: string, uris: string[]): string {
  let out = text;
  for (const uri of uris) {
    const url = new URL(uri);
    for (const name of [uri, url.host, url.hostname]) {
      if (name !== "") out = out.split(name).join("<server>");
    }
  }
  return out.replace(ADDRESS_REGEXP, "<server>");
}

function isServerFailure(err: unknown): boolean {
  // our own refusals (a CA file that may not be read, …) are no server failures
  if (err instanceof AppError) return false;
  const code = ldapResultCode(err);
  return code === undefined || SERVER_DOWN_CODES.has(code);
}

/** Host part of an LDAP URI (brackets of IPv6 removed). */
function hostOf(uri: string): string {
  const host = new URL(uri).hostname;
  return host.startsWith("[") ? host.slice(1, -1) : host;
}

/** A client plus the sockets it opened, so a deadline can cut them all. */
interface Conn {
  client: Client;
  uri: string;
  sockets: Set<Socket | TLSSocket>;
  /** When the connection was last used. */
  lastUsed: number;
}

function destroy(conn: Conn): void {
  for (const s of conn.sockets) s.destroy();
  conn.sockets.clear();
}

async function close(conn: Conn): Promise<void> {
  try {
    await conn.client.unbind();
  } catch { /* closing anyway */ }
  destroy(conn);
}

/** Runs `work` and fails with `what` when it takes longer than `ms`; `onTimeout` cuts it off. */
async function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  what: string,
  onTimeout: () => void,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(what));
    }, ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
    work.catch(() => {});
  }
}

const MAX_IDLE_MS = 60_000;

/** A server pool for one resolver configuration. */
export class LdapPool {
  readonly #settings: LdapServerSettings;
  readonly #env: PoolEnv;
  /** Server URI → time until which it is skipped. */
  readonly #downUntil = new Map<string, number>();
  #next = 0;
  /** One idle service-bound connection (SERVERPOOL_PERSISTENT only). */
  #idle: Conn | undefined;

  constructor(settings: LdapServerSettings, env: PoolEnv) {
    this.#settings = settings;
    this.#env = env;
  }

  /** Servers in the order this call tries them. */
  #order(): string[] {
    const uris = [...this.#settings.uris];
    switch (this.#settings.strategy) {
      case "FIRST":
        return uris;
      case "RANDOM": {
        const bytes = this.#env.random.bytes(uris.length);
        for (let i = uris.length - 1; i > 0; i--) {
          const j = bytes[i] % (i + 1);
          [uris[i], uris[j]] = [uris[j], uris[i]];
        }
        return uris;
      }
      default: {
        const start = this.#next++ % uris.length;
        return [...uris.slice(start), ...uris.slice(0, start)];
      }
    }
  }

  async #tlsOptions(uri: string): Promise<ConnectionOptions> {
    const s = this.#settings;
    const host = hostOf(uri);
    const options: ConnectionOptions = { rejectUnauthorized: s.tlsVerify, host };
    if (isIP(host) === 0) options.servername = host;
    if (s.tlsMinVersion) options.minVersion = s.tlsMinVersion;
    if (s.tlsVerify && s.tlsCaFile) options.ca = [await this.#env.readCa(s.tlsCaFile)];
    return options;
  }

  /** Opens a connection to `uri` and binds; bounded by the timeout as a whole. */
  async #open(uri: string, bind: BindAs): Promise<Conn> {
    const s = this.#settings;
    const secure = uri.toLowerCase().startsWith("ldaps:");
    const tls = secure || s.startTls ? await this.#tlsOptions(uri) : undefined;
    const sockets = new Set<Socket | TLSSocket>();
    const track = <T extends Socket | TLSSocket>(socket: T): T => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      return socket;
    };
    const client = new Client({
      url: uri,
      timeout: s.timeoutMs,
      connectTimeout: s.timeoutMs,
      // tlsOptions make ldapts connect with TLS at once: only for ldaps://
      tlsOptions: secure ? tls : undefined,
      // our own factories, so that a deadline can cut every socket of this client
      createConnection: ((...args: Parameters<typeof netConnect>) =>
        track(netConnect(...args))) as typeof netConnect,
      createSecureConnection: ((...args: Parameters<typeof tlsConnect>) =>
        track(tlsConnect(...args))) as typeof tlsConnect,
    });
    const conn: Conn = { client, uri, sockets, lastUsed: this.#env.now() };
    const phase = (async () => {
      if (!secure && s.startTls) await client.startTLS({ ...tls });
      if (bind.kind === "user") await client.bind(bind.dn, bind.password);
      else if (s.bindDn !== "") await client.bind(s.bindDn, s.bindPw);
    })();
    try {
      await withDeadline(
        phase,
        s.timeoutMs,
        `no answer within ${s.timeoutMs / 1000} s`,
        () => destroy(conn),
      );
    } catch (err) {
      destroy(conn);
      throw err;
    }
    return conn;
  }

  /**
   * Runs `work` on a connection bound as `bind`, trying the servers of the
   * pool until one can be connected to. Errors the server answers (wrong
   * password, no such object, …) end the walk at once; connection failures
   * mark the server as down and move on. Throws {@link LdapUnreachableError}
   * when no server could be used.
   */
  async run<T>(bind: BindAs, work: (client: Client) => Promise<T>): Promise<T> {
    const s = this.#settings;
    const reuse = bind.kind === "service" && s.persistent;
    if (reuse && this.#idle) {
      const idle = this.#idle;
      this.#idle = undefined;
      if (idle.client.isBound && this.#env.now() - idle.lastUsed < MAX_IDLE_MS) {
        try {
          const result = await work(idle.client);
          this.#keep(idle);
          return result;
        } catch (err) {
          destroy(idle);
          if (!isServerFailure(err)) throw err;
          // the kept connection went stale: walk the pool afresh
        }
      } else {
        await close(idle);
      }
    }
    let last: { uri: string; text: string } | undefined;
    for (let round = 0; round < s.rounds; round++) {
      for (const uri of this.#order()) {
        const until = this.#downUntil.get(uri);
        if (until !== undefined && until > this.#env.now()) continue;
        let conn: Conn;
        try {
          conn = await this.#open(uri, bind);
        } catch (err) {
          if (!isServerFailure(err)) throw err;
          last = { uri, text: ldapErrorText(err) };
          this.#markDown(uri);
          continue;
        }
        this.#downUntil.delete(uri);
        let kept = false;
        try {
          const result = await work(conn.client);
          if (reuse) kept = this.#keep(conn);
          return result;
        } catch (err) {
          // a server that stops answering mid-operation is down too (no retry: it may have acted)
          if (isServerFailure(err)) this.#markDown(uri);
          throw err;
        } finally {
          if (!kept) await close(conn);
        }
      }
    }
    if (last) {
      throw new LdapUnreachableError(`${last.uri}: ${last.text}`, maskServers(last.text, s.uris));
    }
    const skipped = `every LDAP server failed within the last ${
      s.skipMs / 1000
    } s (SERVERPOOL_SKIP)`;
    throw new LdapUnreachableError(skipped, skipped);
  }

  #markDown(uri: string): void {
    if (this.#settings.skipMs > 0) {
      this.#downUntil.set(uri, this.#env.now() + this.#settings.skipMs);
    }
  }

  #keep(conn: Conn): boolean {
    if (this.#idle !== undefined || !conn.client.isBound) return false;
    conn.lastUsed = this.#env.now();
    this.#idle = conn;
    return true;
  }

  /** Closes a kept connection. */
  async close(): Promise<void> {
    const idle = this.#idle;
    this.#idle = undefined;
    if (idle) await close(idle);
  }
}
