/**
 * RADIUS packet work over the npm `radius` package (RFC 2865 encoding, User-Password
 * hiding, dictionaries). Authenticator and Message-Authenticator (RFC 3579) checks
 * are done here with constant-time comparisons: the package compares them as
 * UTF-8 strings, which maps different byte strings to equal text.
 *
 * @module
 */
import Radius from "radius";
import { Buffer } from "node:buffer";
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** RADIUS packet codes Tessera sends or answers. */
export const CODE = {
  accessRequest: 1,
  accessAccept: 2,
  accessReject: 3,
  accessChallenge: 11,
  statusServer: 12,
} as const;

const CODE_NAMES: Record<number, string> = {
  1: "Access-Request",
  2: "Access-Accept",
  3: "Access-Reject",
  11: "Access-Challenge",
};

/** Smallest and largest valid RADIUS packet (RFC 2865 §3). */
export const MIN_PACKET = 20;
/** Largest valid RADIUS packet (RFC 2865 §3). */
export const MAX_PACKET = 4096;
/** Longest value of one attribute. */
export const MAX_ATTRIBUTE_VALUE = 253;

const ATTR_USER_NAME = 1;
const ATTR_USER_PASSWORD = 2;
const ATTR_REPLY_MESSAGE = 18;
const ATTR_STATE = 24;
const ATTR_PROXY_STATE = 33;
const ATTR_MESSAGE_AUTHENTICATOR = 80;

/** One attribute as type number and raw value. */
export type RawAttribute = [number, Uint8Array];

/** A packet split into header fields and raw attributes. */
export interface ParsedPacket {
  code: number;
  identifier: number;
  authenticator: Uint8Array;
  attributes: RawAttribute[];
}

interface RadiusLib {
  encode(args: Record<string, unknown>): Buffer;
  decode(args: { packet: Buffer; secret: string }): {
    code: string;
    identifier: number;
    attributes: Record<string, unknown>;
  };
  add_dictionary(file: string): void;
  unload_dictionaries(): void;
  load_dictionaries(): void;
}

const lib = Radius as unknown as RadiusLib;

/**
 * Parses the packet header and attribute list without any secret. Undefined for
 * anything malformed (bad lengths, truncated attributes).
 */
export function parsePacket(input: Uint8Array): ParsedPacket | undefined {
  const data = plain(input);
  if (data.length < MIN_PACKET || data.length > MAX_PACKET) return undefined;
  const length = (data[2] << 8) | data[3];
  if (length < MIN_PACKET || length > data.length) return undefined;
  const attributes: RawAttribute[] = [];
  let off = 20;
  while (off < length) {
    if (off + 2 > length) return undefined;
    const type = data[off];
    const len = data[off + 1];
    if (len < 2 || off + len > length) return undefined;
    attributes.push([type, data.slice(off + 2, off + len)]);
    off += len;
  }
  return {
    code: data[0],
    identifier: data[1],
    authenticator: data.slice(4, 20),
    attributes,
  };
}

/** The first value of attribute `type`, if present. */
export function attribute(packet: ParsedPacket, type: number): Uint8Array | undefined {
  return packet.attributes.find(([t]) => t === type)?.[1];
}

/** Every value of attribute `type`. */
export function attributes(packet: ParsedPacket, type: number): Uint8Array[] {
  return packet.attributes.filter(([t]) => t === type).map(([, v]) => v);
}

/** A plain Uint8Array view (Buffer.slice would share memory where we need copies). */
function plain(data: Uint8Array): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function md5(...parts: (Uint8Array | string)[]): Uint8Array {
  const h = createHash("md5");
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

function hmacMd5(secret: string, data: Uint8Array): Uint8Array {
  return new Uint8Array(createHmac("md5", secret).update(data).digest());
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Offset of the Message-Authenticator value in the raw packet, -1 if none, -2 if malformed. */
function messageAuthenticatorOffset(data: Uint8Array): number {
  const length = Math.min((data[2] << 8) | data[3], data.length);
  let off = 20;
  while (off + 2 <= length) {
    const len = data[off + 1];
    if (len < 2) return -1;
    if (data[off] === ATTR_MESSAGE_AUTHENTICATOR) return len === 18 ? off + 2 : -2;
    off += len;
  }
  return -1;
}

/**
 * Checks the Message-Authenticator of `data` (RFC 3579 §3.2). For a reply the
 * HMAC is computed with the request's authenticator in place of the response
 * authenticator. Returns "missing" when the packet has none.
 */
export function checkMessageAuthenticator(
  data: Uint8Array,
  secret: string,
  options: { requestAuthenticator?: Uint8Array } = {},
): "valid" | "invalid" | "missing" {
  const requestAuthenticator = options.requestAuthenticator;
  const at = messageAuthenticatorOffset(data);
  if (at === -2) return "invalid";
  if (at < 0) return "missing";
  const length = (data[2] << 8) | data[3];
  const copy = plain(data).slice(0, length);
  const got = copy.slice(at, at + 16);
  copy.fill(0, at, at + 16);
  if (requestAuthenticator) copy.set(requestAuthenticator, 4);
  return equalBytes(hmacMd5(secret, copy), got) ? "valid" : "invalid";
}

/** Checks a reply's Response Authenticator: MD5(Code|ID|Length|RequestAuth|Attributes|Secret). */
export function checkResponseAuthenticator(
  reply: Uint8Array,
  request: { authenticator: Uint8Array; secret: string },
): boolean {
  const { authenticator: requestAuthenticator, secret } = request;
  const length = (reply[2] << 8) | reply[3];
  const copy = plain(reply).slice(0, length);
  const got = copy.slice(4, 20);
  copy.set(requestAuthenticator, 4);
  return equalBytes(md5(copy, secret), got);
}

/** Input of {@link encodeAccessRequest}. */
export interface AccessRequestInput {
  identifier: number;
  /** 16 random bytes. */
  authenticator: Uint8Array;
  secret: string;
  userName: string;
  password: string;
  nasIdentifier?: string;
  state?: Uint8Array;
  messageAuthenticator: boolean;
}

/** Encodes an Access-Request with User-Password hidden per RFC 2865 §5.2. */
export function encodeAccessRequest(input: AccessRequestInput): Uint8Array {
  const attrs: unknown[][] = [
    [ATTR_USER_NAME, Buffer.from(input.userName, "utf8")],
    // an empty password still needs one 16-byte block (RFC 2865 §5.2); NUL is the padding
    ["User-Password", input.password === "" ? "\0" : input.password],
  ];
  if (input.nasIdentifier) attrs.push(["NAS-Identifier", input.nasIdentifier]);
  if (input.state && input.state.length > 0) attrs.push([ATTR_STATE, Buffer.from(input.state)]);
  return new Uint8Array(lib.encode({
    code: "Access-Request",
    identifier: input.identifier,
    authenticator: Buffer.from(input.authenticator),
    secret: input.secret,
    attributes: attrs,
    add_message_authenticator: input.messageAuthenticator,
  }));
}

/** Input of {@link encodeReply}. */
export interface ReplyInput {
  code: number;
  request: ParsedPacket;
  secret: string;
  replyMessage?: string;
  state?: Uint8Array;
}

/**
 * Encodes an Access-Accept/-Reject/-Challenge answering `request`: Reply-Message
 * (split into 253-byte pieces), State, the request's Proxy-State attributes, and
 * always a Message-Authenticator (RFC 3579; BlastRADIUS mitigation).
 */
export function encodeReply(input: ReplyInput): Uint8Array {
  const attrs: unknown[][] = [];
  if (input.replyMessage) {
    const bytes = Buffer.from(input.replyMessage, "utf8");
    for (let i = 0; i < bytes.length && i < 4 * MAX_ATTRIBUTE_VALUE; i += MAX_ATTRIBUTE_VALUE) {
      attrs.push([ATTR_REPLY_MESSAGE, bytes.subarray(i, i + MAX_ATTRIBUTE_VALUE)]);
    }
  }
  if (input.state && input.state.length > 0) {
    attrs.push([ATTR_STATE, Buffer.from(input.state.subarray(0, MAX_ATTRIBUTE_VALUE))]);
  }
  for (const v of attributes(input.request, ATTR_PROXY_STATE)) {
    attrs.push([ATTR_PROXY_STATE, Buffer.from(v)]);
  }
  return new Uint8Array(lib.encode({
    code: CODE_NAMES[input.code],
    identifier: input.request.identifier,
    authenticator: Buffer.from(input.request.authenticator),
    secret: input.secret,
    attributes: attrs,
    add_message_authenticator: true,
  }));
}

/** Reveals a hidden User-Password (RFC 2865 §5.2); undefined when the packet has none. */
export function revealUserPassword(data: Uint8Array, secret: string): string | undefined {
  const decoded = lib.decode({ packet: Buffer.from(data), secret });
  const value = decoded.attributes["User-Password"];
  return typeof value === "string" ? value : undefined;
}

/** Adds a FreeRADIUS-format dictionary file to the built-in ones and reloads them. */
export function addDictionary(path: string): void {
  lib.add_dictionary(path);
  lib.unload_dictionaries();
  lib.load_dictionaries();
}

/** Decodes attribute bytes as UTF-8 (invalid sequences replaced). */
export function text(bytes: Uint8Array | undefined): string | undefined {
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
}

/** Attribute type numbers used by Tessera. */
export const ATTR = {
  userName: ATTR_USER_NAME,
  userPassword: ATTR_USER_PASSWORD,
  chapPassword: 3,
  nasIpAddress: 4,
  replyMessage: ATTR_REPLY_MESSAGE,
  state: ATTR_STATE,
  proxyState: ATTR_PROXY_STATE,
  nasIdentifier: 32,
  eapMessage: 79,
  messageAuthenticator: ATTR_MESSAGE_AUTHENTICATOR,
} as const;
