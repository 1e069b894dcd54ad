/**
 * The dependency bundle every domain function receives first.
 *
 * @module
 */
import type { Config } from "./config.ts";
import type { Db } from "./db/schema.ts";
import type { Clock } from "./lib/clock.ts";
import type { Random } from "./lib/random.ts";
import type { Logger } from "./lib/logger.ts";
import type { AuditWriter } from "./domain/audit/writer.ts";

/** Keys derived from the key file. Never logged, never returned. */
export interface Keys {
  /** AES-256-GCM key for OTP secrets (slot 0). */
  token: Uint8Array;
  /** AES-256-GCM key for secrets in configuration (resolver passwords, …) (slot 1). */
  config: Uint8Array;
  /** Pepper for keyed PIN hashes. */
  pinPepper: Uint8Array;
  /** HS256 secret for JWTs. */
  jwtSecret: Uint8Array;
}

/** Signs response bodies (spec 01 §4); absent when signing is off. */
export interface ResponseSigner {
  /** Returns the hex signature of `text`. */
  sign(text: string): Promise<string>;
}

/** Everything a request handler or domain function may need. */
export interface Deps {
  config: Config;
  db: Db;
  clock: Clock;
  random: Random;
  keys: Keys;
  log: Logger;
  audit: AuditWriter;
  /** Name of this node (config `server.node_name` or the hostname). */
  nodeName: string;
  signer?: ResponseSigner;
}
