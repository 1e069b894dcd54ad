/**
 * OCRA (RFC 6287) as privacyIDEA supports it: `OCRA-1:HOTP-<SHA1|SHA256|SHA512>-<digits>:
 * [C-]Q<A|N|H><4…64>[-P<hash>|-T<n><S|M|H>]` (the session input `S` is parsed but not
 * computed). Knows nothing of tokens or storage.
 *
 * @module
 */
import { createHash, createHmac } from "node:crypto";
import { truncateOtp } from "./otp.ts";

/** A parsed OCRA suite. */
export interface OcraSuite {
  /** The suite as given (the data input uses it as given). */
  text: string;
  hash: "sha1" | "sha256" | "sha512";
  digits: number;
  counter: boolean;
  questionType: "A" | "N" | "H";
  questionLength: number;
  /** `P` PIN hash, `S` session, `T` timestamp, or none. */
  signature?: { kind: "P"; hash: "sha1" | "sha256" | "sha512" } | { kind: "S" } | {
    kind: "T";
  };
}

/** Values of the optional data inputs. */
export interface OcraInputs {
  counter?: number;
  /** The PIN (hashed with the suite's PIN hash). */
  pin?: string;
  /** Time steps as a hex string. */
  timesteps?: string;
}

const HASHES = { SHA1: "sha1", SHA256: "sha256", SHA512: "sha512" } as const;

/** Parses `suite`; throws an Error naming what is wrong. */
export function parseOcraSuite(suite: string): OcraSuite {
  const parts = suite.toUpperCase().split(":");
  if (parts.length !== 3) {
    throw new Error(
      "The OCRAsuite consists of three fields 'algorithm', 'cryptofunction' and 'datainput' delimited by ':'",
    );
  }
  if (parts[0] !== "OCRA-1") {
    throw new Error("Error in algorithm. At the moment only version OCRA-1 is supported.");
  }
  const crypto = parts[1].split("-");
  if (crypto.length !== 3) {
    throw new Error(
      "The cryptofunction consists of three fields 'HOTP', 'SHA' and 'Truncation' delimited by '-'",
    );
  }
  if (crypto[0] !== "HOTP") throw new Error(`Only HOTP is allowed. You specified ${crypto[0]}`);
  const hash = HASHES[crypto[1] as keyof typeof HASHES];
  if (!hash) throw new Error(`Only SHA1, SHA256 or SHA512 is allowed. You specified ${crypto[1]}`);
  const digits = /^\d+$/.test(crypto[2]) ? Number(crypto[2]) : NaN;
  if (!(digits >= 4 && digits <= 10)) {
    throw new Error(`Only truncation of 4-10 is allowed. You specified ${crypto[2]}`);
  }
  const fields = parts[2].split("-");
  if (fields.length > 3) {
    throw new Error(
      "Error in datainput. The datainput must consist of 1, 2 or 3 fields separated by '-'",
    );
  }
  let counter = false;
  if (fields.length === 3 || (fields.length === 2 && fields[0] === "C")) {
    if (fields[0] !== "C") throw new Error("The counter in the datainput must be 'C'");
    counter = true;
    fields.shift();
  }
  const q = fields[0];
  const type = q.slice(0, 2);
  if (type !== "QA" && type !== "QN" && type !== "QH") {
    throw new Error(
      `Error in challenge. The challenge must start with QA, QN or QH. You specified ${q}`,
    );
  }
  const length = /^\d+$/.test(q.slice(2)) ? Number(q.slice(2)) : NaN;
  if (!(length >= 4 && length <= 64)) {
    throw new Error(
      `The length of the challenge must be specified between 4 and 64. You specified ${q.slice(2)}`,
    );
  }
  const out: OcraSuite = {
    text: suite,
    hash,
    digits,
    counter,
    questionType: type[1] as "A" | "N" | "H",
    questionLength: length,
  };
  const sig = fields[1];
  if (sig !== undefined) {
    if (sig[0] === "P") {
      const h = HASHES[sig.slice(1) as keyof typeof HASHES];
      if (!h) throw new Error("The signature hash needs to be SHA1, SHA256 or SHA512");
      out.signature = { kind: "P", hash: h };
    } else if (sig[0] === "S") {
      if (!["64", "128", "256", "512"].includes(sig.slice(1).replace(/^0+/, ""))) {
        throw new Error("The session length needs to be 64, 128, 256 or 512");
      }
      out.signature = { kind: "S" };
    } else if (sig[0] === "T") {
      const m = sig.match(/^T(\d+)([SMH])$/);
      if (!m || Number(m[1]) > 59) {
        throw new Error("You must specify a time value between 0 and 59 and S, M or H.");
      }
      out.signature = { kind: "T" };
    } else {
      throw new Error(`The signature needs to be P, S or T. You specified ${sig[0]}`);
    }
  }
  return out;
}

function be64(value: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, value);
  return out;
}

function hexBytes(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new Error("not a hex string");
  return Uint8Array.from(hex.match(/../g) ?? [], (b) => parseInt(b, 16));
}

/** The question as its 128 data-input bytes (right-padded with zeros). */
function questionBytes(suite: OcraSuite, question: string): Uint8Array {
  let bytes: Uint8Array;
  if (suite.questionType === "N") {
    if (!/^\d+$/.test(question)) throw new Error("the question is not numeric");
    let hex = BigInt(question).toString(16);
    // privacyIDEA pads an odd length on the right (RFC 6287's reference does too)
    if (hex.length % 2 === 1) hex += "0";
    bytes = hexBytes(hex);
  } else if (suite.questionType === "A") {
    bytes = new TextEncoder().encode(question);
  } else {
    bytes = hexBytes(question);
  }
  if (bytes.length > 128) throw new Error("the question is longer than 128 bytes");
  const out = new Uint8Array(128);
  out.set(bytes);
  return out;
}

/** The DataInput of RFC 6287 §5.1 for `question`. */
export function ocraDataInput(suite: OcraSuite, question: string, inputs: OcraInputs = {}) {
  const parts: Uint8Array[] = [new TextEncoder().encode(suite.text), new Uint8Array(1)];
  if (suite.counter) {
    // privacyIDEA treats counter 0 as missing
    if (!inputs.counter) throw new Error(`The ocrasuite ${suite.text} requires a counter`);
    parts.push(be64(BigInt(inputs.counter)));
  }
  parts.push(questionBytes(suite, question));
  const sig = suite.signature;
  if (sig?.kind === "P") {
    if (!inputs.pin) throw new Error(`The ocrasuite ${suite.text} requires a PIN!`);
    parts.push(createHash(sig.hash).update(inputs.pin, "utf8").digest());
  } else if (sig?.kind === "T") {
    if (!inputs.timesteps) throw new Error(`The ocrasuite ${suite.text} requires timesteps`);
    parts.push(be64(BigInt("0x" + inputs.timesteps)));
  } else if (sig?.kind === "S") {
    throw new Error("OCRA Session not implemented, yet.");
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The OCRA response of `key` to `question` (throws when an input the suite needs is missing). */
export function ocraResponse(
  key: Uint8Array,
  suite: OcraSuite,
  question: string,
  inputs: OcraInputs = {},
): string {
  const mac = createHmac(suite.hash, key).update(ocraDataInput(suite, question, inputs)).digest();
  return truncateOtp(mac, suite.digits);
}

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function randomText(alphabet: string, length: number, randomBytes: (n: number) => Uint8Array) {
  let out = "";
  // rejection sampling keeps every character equally likely
  const limit = 256 - (256 % alphabet.length);
  while (out.length < length) {
    for (const b of randomBytes(length)) {
      if (b < limit && out.length < length) out += alphabet[b % alphabet.length];
    }
  }
  return out;
}

/**
 * A random question of the suite's type and length (`QN` digits, `QA` letters and digits,
 * `QH` lower-case hex); `randomBytes` gives uniformly random bytes.
 */
export function randomOcraQuestion(suite: OcraSuite, randomBytes: (n: number) => Uint8Array) {
  const alphabet = suite.questionType === "N"
    ? "0123456789"
    : suite.questionType === "H"
    ? "0123456789abcdef"
    : ALPHANUMERIC;
  return randomText(alphabet, suite.questionLength, randomBytes);
}

/** `length` random letters and digits (`[A-Za-z0-9]`), each equally likely. */
export function randomAlphanumeric(length: number, randomBytes: (n: number) => Uint8Array) {
  return randomText(ALPHANUMERIC, length, randomBytes);
}

/** The lower-case hex digest of `text` (UTF-8), a question made from a longer text. */
export function hashedQuestion(text: string, hash: "sha1" | "sha256" | "sha512"): string {
  return createHash(hash).update(text, "utf8").digest("hex");
}
