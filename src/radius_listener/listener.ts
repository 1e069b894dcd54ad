/**
 * The native RADIUS listener: a UDP transport next to `src/http`. Each
 * Access-Request from a configured NAS client goes through the same validate
 * path as `POST /validate/check` and is answered with Access-Accept, -Reject or
 * -Challenge (State = transaction id, Reply-Message = detail.message).
 *
 * Packets from unknown clients, with a wrong Message-Authenticator (wrong shared
 * secret) or malformed ones are dropped without an answer (RFC 2865 §3).
 *
 * @module
 */
import dgram from "node:dgram";
import { Buffer } from "node:buffer";
import type { Deps } from "../deps.ts";
import { beginRequest } from "../db/direct.ts";
import type { RadiusClientConfig } from "../config.ts";
import { AppError, ConfigError } from "../errors.ts";
import { auditSerials, newAuditEntry } from "../domain/audit/mod.ts";
import { currentRequestId, withRequestId } from "../lib/logger.ts";
import { mayOverrideClient } from "../domain/radius_server/mod.ts";
import { inNetwork, type Network, parseIp, parseNetwork } from "../lib/ip.ts";
import { toHex } from "../lib/random.ts";
import {
  addDictionary,
  ATTR,
  attribute,
  checkMessageAuthenticator,
  CODE,
  encodeReply,
  type ParsedPacket,
  parsePacket,
  revealUserPassword,
  text,
} from "../domain/radius_server/packet.ts";

/** What the listener asks the validate path (the fields of `/validate/check`). */
export interface RadiusCheckRequest {
  user: string;
  realm?: string;
  pass: string;
  transactionId?: string;
  clientIp: string;
  userAgent: string;
  /** Told the serials of the user's tokens once they are loaded (audit of a failed request). */
  onTokens?: (serials: string[]) => void;
}

/** The validate path's answer: `result.value` and `detail`. */
export interface RadiusCheckResult {
  value: boolean;
  detail: Record<string, unknown>;
  /** Serial and type of the deciding token, and the realm (audit). */
  serial?: string;
  tokenType?: string;
  realm?: string;
}

/** The validate function the listener calls (`validateCheck` from src/domain/validate). */
export type RadiusCheck = (deps: Deps, request: RadiusCheckRequest) => Promise<RadiusCheckResult>;

/** Options of {@link startRadiusListener}. */
export interface RadiusListenerOptions {
  host: string;
  /** UDP port; 0 picks an ephemeral one. */
  port: number;
  clients: RadiusClientConfig[];
  check: RadiusCheck;
  /** Extra FreeRADIUS-format dictionary file. */
  dictionary?: string;
  /** How long a reply is kept for retransmitted requests (ms, default 5000). */
  duplicateWindowMs?: number;
  /** Requests validated at the same time; more are dropped (the NAS retransmits). Default 256. */
  maxInFlight?: number;
}

/** A running listener. */
export interface RadiusListener {
  address: string;
  port: number;
  /** Number of packets dropped without an answer (unknown client, bad secret, malformed). */
  dropped(): number;
  close(): Promise<void>;
}

/** The User-Agent the validate path sees; policies written for the FreeRADIUS plugin match it. */
export const RADIUS_USER_AGENT = "FreeRADIUS";
/** Audit action of RADIUS requests. */
export const RADIUS_AUDIT_ACTION = "RADIUS Access-Request";
/** Reply-Message of an Access-Accept (as privacyIDEA's FreeRADIUS plugin sends it). */
export const ACCEPT_MESSAGE = "privacyIDEA access granted";
/** Reply-Message of every Access-Reject for a failed authentication (the reason goes to the audit). */
export const DENY_MESSAGE = "privacyIDEA server denied access!";

const MAX_CACHE = 10_000;
const MAX_INFO = 900;

interface Client {
  network: Network;
  secret: string;
  name: string;
}

interface CacheEntry {
  expires: number;
  reply?: Uint8Array;
}

function parseClients(clients: RadiusClientConfig[]): Client[] {
  const problems: string[] = [];
  const out: Client[] = [];
  for (const [i, c] of clients.entries()) {
    const network = parseNetwork(c.address);
    if (!network) problems.push(`radius.clients: entry ${i}: "${c.address}" is no IP or CIDR`);
    else out.push({ network, secret: c.secret, name: c.name || c.address });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out;
}

/** Starts the listener; resolves once the socket is bound. */
export async function startRadiusListener(
  deps: Deps,
  options: RadiusListenerOptions,
): Promise<RadiusListener> {
  const clients = parseClients(options.clients);
  if (options.dictionary) {
    try {
      // the package keeps every added path for good: only hand it a readable file
      if (!Deno.statSync(options.dictionary).isFile) throw new Error("not a file");
      addDictionary(options.dictionary);
    } catch (err) {
      throw new ConfigError([
        `radius.dictionary: cannot load "${options.dictionary}": ${(err as Error).message}`,
      ]);
    }
  }
  const window = options.duplicateWindowMs ?? 5000;
  const maxInFlight = options.maxInFlight ?? 256;
  let inFlight = 0;
  const cache = new Map<string, CacheEntry>();
  /** Source addresses that have sent a valid Message-Authenticator. */
  const signingSources = new Set<string>();
  let dropped = 0;
  const family = parseIp(options.host)?.kind() === "ipv6" ? "udp6" : "udp4";
  const socket = dgram.createSocket(family);

  const drop = (reason: string, fields: Record<string, unknown>) => {
    dropped++;
    deps.log.debug(`Dropping RADIUS packet: ${reason}`, fields);
  };

  const sweep = (now: number) => {
    for (const [key, entry] of cache) {
      if (entry.expires > now && cache.size <= MAX_CACHE) break;
      cache.delete(key);
    }
  };

  const send = (reply: Uint8Array, port: number, address: string) => {
    socket.send(Buffer.from(reply), port, address, (err: Error | null) => {
      if (err) deps.log.warn("Cannot send a RADIUS reply", { client: address, error: err.message });
    });
  };

  socket.on("message", (msg: Uint8Array, rinfo: { address: string; port: number }) => {
    const source = parseIp(rinfo.address);
    const client = source && clients.find((c) => inNetwork(source, c.network));
    if (!client) return drop("unknown client", { client: rinfo.address });
    const request = parsePacket(msg);
    if (!request) return drop("malformed packet", { client: rinfo.address });
    const isStatus = request.code === CODE.statusServer;
    if (request.code !== CODE.accessRequest && !isStatus) {
      return drop("not an Access-Request", { client: rinfo.address, code: request.code });
    }
    const ma = checkMessageAuthenticator(msg, client.secret);
    // Status-Server must carry a Message-Authenticator (RFC 5997 §3)
    if (ma === "invalid" || (isStatus && ma !== "valid")) {
      // a wrong shared secret: answering would only help an attacker
      return drop("wrong Message-Authenticator", { client: rinfo.address });
    }
    if (isStatus) {
      // health checks of NAS and proxies: answer, but no validate call and no audit row
      const reply = encodeReply({ code: CODE.accessAccept, request, secret: client.secret });
      return send(reply, rinfo.port, rinfo.address);
    }
    if (ma === "valid") {
      if (signingSources.size < MAX_CACHE) signingSources.add(rinfo.address);
    } else if (signingSources.has(rinfo.address)) {
      // like FreeRADIUS' require_message_authenticator = auto (BlastRADIUS): a NAS that signs
      // its requests always does, so an unsigned one from its address is forged
      return drop("missing Message-Authenticator", { client: rinfo.address });
    }
    const now = performance.now();
    sweep(now);
    const key = `${rinfo.address}|${rinfo.port}|${request.identifier}|${
      toHex(request.authenticator)
    }`;
    const seen = cache.get(key);
    if (seen) {
      // a retransmission: resend the same answer, or wait for the one in progress
      if (seen.reply) send(seen.reply, rinfo.port, rinfo.address);
      return;
    }
    if (inFlight >= maxInFlight) {
      return drop("too many requests in flight", { client: rinfo.address });
    }
    // in flight until answered: a retransmission meanwhile must not start a second validation
    const entry: CacheEntry = { expires: Number.POSITIVE_INFINITY };
    cache.set(key, entry);
    inFlight++;
    // the request's log lines and its audit row carry one id, as over HTTP
    void withRequestId(
      crypto.randomUUID(),
      () => answer(deps, options.check, client, request, msg, rinfo.address),
    ).finally(() => {
      inFlight--;
    }).then((reply) => {
      if (!reply) {
        cache.delete(key);
        dropped++;
        return;
      }
      entry.reply = reply;
      entry.expires = performance.now() + window;
      send(reply, rinfo.port, rinfo.address);
    }).catch((err) => {
      cache.delete(key);
      dropped++;
      deps.log.error("Cannot answer a RADIUS request", { error: err as Error });
    });
  });

  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(options.port, options.host, () => {
      socket.off("error", reject);
      resolve();
    });
  });
  socket.on("error", (err: Error) => deps.log.error("RADIUS socket error", { error: err.message }));
  const bound = socket.address();
  deps.log.info("RADIUS listener started", {
    address: `${bound.address}:${bound.port}`,
    clients: clients.length,
  });
  return {
    address: bound.address,
    port: bound.port,
    dropped: () => dropped,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

function firstString(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && typeof value[0] === "string") return value[0];
  return undefined;
}

/** Runs one request through the validate path and encodes the reply (undefined = drop). */
async function answer(
  deps: Deps,
  check: RadiusCheck,
  client: Client,
  request: ParsedPacket,
  raw: Uint8Array,
  source: string,
): Promise<Uint8Array | undefined> {
  const started = performance.now();
  // as an HTTP request does: caches read other nodes' commits afresh, nothing older counts
  beginRequest(deps.db);
  const audit = newAuditEntry(deps.clock.now(), RADIUS_AUDIT_ACTION, deps.nodeName);
  audit.requestId = currentRequestId() ?? "";
  audit.client = parseIp(source)?.toString() ?? source;
  const nasIp = attribute(request, ATTR.nasIpAddress);
  const claimed = nasIp?.length === 4 ? nasIp.join(".") : undefined;
  // NAS-IP-Address may steer client policies only for NAS trusted like privacyIDEA's proxies
  if (claimed && claimed !== audit.client && await mayOverrideClient(deps, audit.client)) {
    audit.client = claimed;
  }
  audit.userAgent = RADIUS_USER_AGENT;
  let code: number = CODE.accessReject;
  let replyMessage: string | undefined = DENY_MESSAGE;
  let state: Uint8Array | undefined;
  let dropPacket = false;
  try {
    let pass: string | undefined;
    try {
      pass = revealUserPassword(raw, client.secret);
    } catch (err) {
      deps.log.debug("Dropping RADIUS packet: cannot decode it", {
        client: source,
        error: (err as Error).message,
      });
      dropPacket = true;
      return undefined;
    }
    const user = text(attribute(request, ATTR.userName)) ?? "";
    audit.user = user.slice(0, 255);
    audit.info = `client ${client.name}`;
    if (pass === undefined) {
      // CHAP and EAP need the cleartext secret of the OTP; only PAP can be checked
      replyMessage = attribute(request, ATTR.chapPassword) || attribute(request, ATTR.eapMessage)
        ? "Only PAP (User-Password) is supported"
        : DENY_MESSAGE;
      audit.info = replyMessage;
    } else {
      const stateBytes = attribute(request, ATTR.state);
      const result = await check(deps, {
        user,
        pass,
        transactionId: stateBytes && stateBytes.length > 0 ? text(stateBytes) : undefined,
        clientIp: audit.client,
        userAgent: RADIUS_USER_AGENT,
        // a request that fails later (the database goes away) is audited with its tokens
        onTokens: (serials) => audit.serial ||= auditSerials(serials),
      });
      const detail = result.detail ?? {};
      const message = typeof detail.message === "string" ? detail.message : undefined;
      const transactionId = typeof detail.transaction_id === "string"
        ? detail.transaction_id
        : undefined;
      audit.serial = (result.serial ?? firstString(detail.serial) ?? "").slice(0, 40);
      audit.tokenType = (result.tokenType ?? firstString(detail.type) ?? "").slice(0, 40);
      audit.realm = (result.realm ?? "").slice(0, 255);
      if (result.value === true) {
        code = CODE.accessAccept;
        replyMessage = ACCEPT_MESSAGE;
        audit.success = true;
      } else if (transactionId) {
        code = CODE.accessChallenge;
        replyMessage = message;
        state = new TextEncoder().encode(transactionId);
        audit.info = `challenge ${transactionId}`;
      }
      if (message && !audit.info.startsWith("challenge")) audit.info = message;
    }
  } catch (err) {
    // every reject looks the same to the NAS and its user (unknown user, wrong PIN or OTP …);
    // the audit row keeps the reason
    if (err instanceof AppError) audit.info = err.message;
    else {
      deps.log.error("RADIUS request failed", { error: err as Error });
      audit.info = "internal error";
    }
  } finally {
    if (!dropPacket) {
      audit.durationMs = performance.now() - started;
      audit.info = audit.info.slice(0, MAX_INFO);
      // the reply leaves once the row is committed, as an HTTP answer does
      await deps.audit.commit(audit, { timeoutMs: deps.config.storage.statementTimeout });
    }
  }
  return encodeReply({ code, request, secret: client.secret, replyMessage, state });
}
