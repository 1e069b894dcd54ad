/**
 * PSKC files (RFC 6030) as privacyIDEA reads them (spec 12 §1.7): plain
 * secrets, secrets under a pre-shared AES-128 key or a PBKDF2 key from a
 * password, and the ValueMAC of every encrypted secret.
 *
 * @module
 */
import { createDecipheriv, createHmac, pbkdf2, timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";
import { ParameterError, TokenAdminError } from "../../errors.ts";
import { child, childrenNamed, descendant, parseXml, textOf, XmlError } from "../../lib/xml.ts";
import type { XmlElement } from "../../lib/xml.ts";
import { toHex } from "../../lib/random.ts";
import type { TokenRecord } from "./records.ts";

/** How a wrong ValueMAC is handled (`pskcValidateMAC`). */
export type MacMode = "check_fail_hard" | "check_fail_soft" | "no_check" | string;

/** Options of {@link parsePskc}. */
export interface PskcOptions {
  /** Pre-shared key, 32 hex characters. */
  psk?: string;
  /** Password of a PBKDF2-derived key. */
  password?: string;
  macMode?: MacMode;
}

/** What a PSKC file yields: the tokens to create and how many keys were refused. */
export interface PskcResult {
  records: TokenRecord[];
  notImported: number;
}

/**
 * Most PBKDF2 rounds a PSKC file may ask for. Producers use far fewer (RFC 6030's example: 1,000;
 * rarely above 100,000); a file asking for millions would tie up the server for seconds.
 */
export const MAX_PBKDF2_ITERATIONS = 1_000_000;

const YUBICO_AES = "http://www.yubico.com/#yubikey-aes";
const PSKC_HOTP = "urn:ietf:params:xml:ns:keyprov:pskc:hotp";
const HEX_TYPES = new Set(["hotp", "totp", "yubikey"]);

function fileError(message: string): ParameterError {
  return new ParameterError(message, 304);
}

function keyError(message: string): ParameterError {
  return fileError(`Failed to import tokendata. Wrong encryption key? ${message}`);
}

function b64(text: string, what: string): Uint8Array {
  const clean = text.replace(/\s/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 !== 0) {
    throw keyError(`${what} is not valid base64`);
  }
  return new Uint8Array(Buffer.from(clean, "base64"));
}

/** Decrypts base64 `IV ‖ AES-128-CBC(key, IV, PKCS#7(data))`. */
function decryptValue(key: Uint8Array | undefined, cipherText: string, what: string): Uint8Array {
  if (!key) throw keyError("The file holds encrypted secrets, but no key was given");
  const all = b64(cipherText, what);
  if (all.length < 32 || all.length % 16 !== 0) throw keyError(`${what} has a wrong length`);
  try {
    const d = createDecipheriv("aes-128-cbc", key, all.subarray(0, 16));
    return new Uint8Array(Buffer.concat([d.update(all.subarray(16)), d.final()]));
  } catch (err) {
    throw keyError(`Cannot decrypt ${what}: ${(err as Error).message}`);
  }
}

function algorithmTail(el: XmlElement | undefined): string {
  const alg = el?.attrs.algorithm ?? "";
  return alg.slice(alg.indexOf("#") + 1).toLowerCase();
}

/** PBKDF2-HMAC-SHA1 on the thread pool, so the derivation never holds up other requests. */
function pbkdf2Sha1(
  password: string,
  salt: Uint8Array,
  iterations: number,
  length: number,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    pbkdf2(password, salt, iterations, length, "sha1", (err, key) => {
      if (err) reject(err);
      else resolve(new Uint8Array(key));
    });
  });
}

/** The key of a PBKDF2 `DerivedKey` (PRF always HMAC-SHA1, as privacyIDEA). */
async function derivedKey(derived: XmlElement, password: string | undefined): Promise<Uint8Array> {
  if (!algorithmTail(descendant(derived, "keyderivationmethod")).endsWith("pbkdf2")) {
    throw fileError("We only support PBKDF2 as Key derivation function!");
  }
  if (password === undefined || password === "") {
    throw fileError(
      "The XML KeyContainer specifies a derived encryption key, but no password given!",
    );
  }
  const salt = b64(textOf(descendant(derived, "salt")), "the PBKDF2 salt");
  const iterationText = textOf(descendant(derived, "iterationcount"));
  const iterations = Number(iterationText);
  const length = Number(textOf(descendant(derived, "keylength")));
  if (!/^\d+$/.test(iterationText) || !Number.isSafeInteger(iterations) || iterations < 1) {
    throw fileError("Cannot read the PBKDF2 IterationCount");
  }
  if (iterations > MAX_PBKDF2_ITERATIONS) {
    throw fileError(
      `The PBKDF2 IterationCount ${iterations} is above the limit of ${MAX_PBKDF2_ITERATIONS}`,
    );
  }
  if (!Number.isInteger(length) || length < 1 || length > 64) {
    throw fileError("Cannot read the PBKDF2 KeyLength");
  }
  return await pbkdf2Sha1(password, salt, iterations, length);
}

/** Checks the `psk` parameter: 32 hex characters. */
export function parsePsk(psk: string): Uint8Array {
  if (!/^[0-9a-fA-F]{32}$/.test(psk)) {
    throw new TokenAdminError(
      "The Pre Shared Key must be 128 Bit hex encoded. It must be 32 characters long!",
    );
  }
  return new Uint8Array(Buffer.from(psk, "hex"));
}

/** Parses a PSKC document (`pskc`). */
export async function parsePskc(text: string, options: PskcOptions = {}): Promise<PskcResult> {
  let root: XmlElement;
  try {
    root = parseXml(text);
  } catch (err) {
    if (err instanceof XmlError) {
      throw fileError(`Could not parse XML data: ${err.message} (line ${err.line})`);
    }
    throw err;
  }
  const container = root.name === "keycontainer" ? root : descendant(root, "keycontainer");
  if (!container) {
    throw fileError("No KeyContainer found in PSKC data. Could not import any tokens.");
  }
  const derived = descendant(child(container, "encryptionkey"), "derivedkey");
  const key = derived
    ? await derivedKey(derived, options.password)
    : options.psk
    ? parsePsk(options.psk)
    : undefined;
  const macMode = options.macMode || "check_fail_hard";
  let macKey: Uint8Array | undefined;
  const macKeyOf = () => {
    if (macKey) return macKey;
    const cipher = descendant(descendant(child(container, "macmethod"), "mackey"), "ciphervalue");
    if (!cipher) throw keyError("The file has no MACKey");
    return macKey = decryptValue(key, textOf(cipher), "the MACKey");
  };

  const packages = childrenNamed(container, "keypackage");
  const records: TokenRecord[] = [];
  let notImported = 0;
  let isMacBroken = false;
  packages.forEach((pkg, i) => {
    const where = `KeyPackage ${i + 1} (line ${pkg.line})`;
    const k = child(pkg, "key");
    if (!k) throw fileError(`Cannot import ${where}: it has no Key element`);
    const device = child(pkg, "deviceinfo");
    const algorithm = k.attrs.algorithm ?? "";
    const id = k.attrs.id ?? "";
    let type = algorithm.slice(algorithm.lastIndexOf(":") + 1).toLowerCase();
    const serialNo = descendant(device, "serialno");
    let serial = serialNo ? textOf(serialNo) : id;
    const yubico = /^(\d+):(\d+)/.exec(id);
    if ((algorithm === YUBICO_AES || algorithm === PSKC_HOTP) && yubico) {
      type = algorithm === YUBICO_AES ? "yubikey" : "hotp";
      serial = `${type === "yubikey" ? "UBAM" : "UBOM"}${yubico[1]}_${yubico[2]}`;
    } else if (algorithm === YUBICO_AES) {
      type = "yubikey";
    }
    if (serial === "") throw fileError(`Cannot import ${where}: it has no serial number`);
    const params = child(k, "algorithmparameters");
    const otplen = descendant(params, "responseformat")?.attrs.length || "6";
    const suite = descendant(params, "suite");
    const hashlib = (textOf(suite) || suite?.attrs.hashalgo || "sha1").toLowerCase();
    const data = child(k, "data");
    const secret = child(data, "secret");
    const plain = descendant(secret, "plainvalue");
    const encrypted = descendant(secret, "encryptedvalue");
    let otpkey: string;
    if (plain) {
      otpkey = toHex(b64(textOf(plain), `the PlainValue of ${where}`));
    } else if (encrypted) {
      if (algorithmTail(descendant(encrypted, "encryptionmethod")) !== "aes128-cbc") {
        throw keyError("We only import PSKC files with AES128-CBC.");
      }
      const cipherText = textOf(descendant(encrypted, "ciphervalue"));
      const bytes = decryptValue(key, cipherText, `the secret of ${where}`);
      otpkey = HEX_TYPES.has(type) ? toHex(bytes) : new TextDecoder().decode(bytes);
      if (macMode !== "no_check") {
        const mac = createHmac("sha1", macKeyOf()).update(b64(cipherText, "CipherValue"))
          .digest();
        const given = b64(textOf(descendant(data, "valuemac")), `the ValueMAC of ${where}`);
        const isValid = given.length === mac.length && timingSafeEqual(given, mac);
        if (!isValid && macMode === "check_fail_hard") isMacBroken = true;
        if (!isValid && macMode === "check_fail_soft") {
          notImported++;
          return;
        }
      }
    } else {
      throw fileError(`Cannot import ${where}: it has no secret`);
    }
    const rec: TokenRecord = {
      serial,
      type,
      otpkey,
      otplen,
      hashlib,
      description: textOf(descendant(device, "manufacturer")) || "imported",
      where,
    };
    if (type === "hotp" || type === "totp") {
      const counter = textOf(child(data, "counter"));
      if (counter !== "") rec.counter = counter;
    }
    if (type === "totp") {
      const step = textOf(child(data, "timeinterval"));
      const drift = textOf(child(data, "timedrift"));
      if (step !== "") rec.timeStep = step;
      if (drift !== "") rec.timeShift = drift;
    }
    records.push(rec);
  });
  // a wrong MAC on any key refuses the whole file (check_fail_hard)
  if (isMacBroken) return { records: [], notImported: packages.length };
  return { records, notImported };
}
