/**
 * Token seed files in CSV form (spec 12 §1.4, §1.5): OATH CSV and the
 * Yubico personalization tool's CSV. Parsers only: they turn text into
 * {@link TokenRecord}s and name the line of anything they refuse.
 *
 * @module
 */
import { ParameterError } from "../../errors.ts";
import type { TokenRecord } from "./records.ts";
import { modhexDecode } from "../../lib/yubico_otp.ts";

const VERSION_REGEXP = /^#\s*version:\s*(\d+)/;
const INT_REGEXP = /^-?\d+$/;
const OATH_TYPES = new Set(["hotp", "totp", "daypassword", "ocra", "tan", "pw", "spass"]);

function lineError(line: number, message: string): ParameterError {
  return new ParameterError(`Cannot import line ${line}: ${message}`, 304);
}

/** `hashlib` guessed from the key length in hex characters (spec 12 §1.4). */
export function hashlibOfKeyLength(hexLength: number): string {
  switch (hexLength) {
    case 64:
      return "sha256";
    case 128:
      return "sha512";
    case 56:
      return "sha224";
    case 96:
      return "sha384";
    default:
      return "sha1";
  }
}

/** Parses an OATH CSV file (`oathcsv`). */
export function parseOathCsv(text: string): TokenRecord[] {
  const lines = text.split("\n");
  const version = Number(VERSION_REGEXP.exec(lines[0] ?? "")?.[1] ?? "0");
  const out: TokenRecord[] = [];
  lines.forEach((raw, i) => {
    const lineNo = i + 1;
    if (raw.startsWith("#")) return;
    let fields = raw.split(",").map((f) => f.trim());
    if (fields.length <= 1) return;
    let owner: TokenRecord["owner"];
    if (version === 2) {
      if (fields.length < 5) throw lineError(lineNo, "expected user, resolver, realm, serial, key");
      owner = { login: fields[0], resolver: fields[1], realm: fields[2].toLowerCase() };
      fields = fields.slice(3);
    }
    const [serial, key] = fields;
    if (!serial || key === undefined) return;
    if (!/^([0-9a-fA-F]{2})+$/.test(key)) {
      throw lineError(lineNo, `the key of "${serial}" is not a hex string`);
    }
    const type = fields.length === 2 ? "hotp" : fields[2].toLowerCase();
    if (!OATH_TYPES.has(type)) throw lineError(lineNo, `unknown token type "${fields[2]}"`);
    const rec: TokenRecord = {
      serial,
      type,
      otpkey: key.toLowerCase(),
      hashlib: hashlibOfKeyLength(key.length),
      description: "imported",
      where: `line ${lineNo}`,
      owner,
    };
    const col3 = fields[3] ?? "";
    const col4 = fields[4] ?? "";
    if (type === "tan") {
      const tans = col3.split(/\s+/).filter((t) => t !== "");
      if (tans.length === 0) throw lineError(lineNo, `no TANs for "${serial}"`);
      rec.tans = tans;
      rec.otplen = String(tans[0].length);
    } else if (type !== "ocra") {
      // the OCRA suite of column 3 is dropped, as privacyIDEA does
      rec.otplen = col3 === "" ? "6" : col3;
      if (!INT_REGEXP.test(rec.otplen)) {
        throw lineError(lineNo, `the OTP length of "${serial}" is not a number: "${col3}"`);
      }
    }
    if (type === "hotp" && col4 !== "") {
      if (!INT_REGEXP.test(col4)) {
        throw lineError(lineNo, `the counter of "${serial}" is not a number: "${col4}"`);
      }
      rec.counter = col4;
    }
    if (type === "totp" || type === "daypassword") {
      rec.timeStep = col4 === "" ? "30" : col4;
      if (!INT_REGEXP.test(rec.timeStep)) {
        throw lineError(lineNo, `the time step of "${serial}" is not a number: "${col4}"`);
      }
    }
    out.push(rec);
  });
  return out;
}

function serialOfPublicId(publicId: string): string | undefined {
  const bytes = modhexDecode(publicId);
  if (!bytes) return undefined;
  let n = 0n;
  for (const b of bytes) n = n * 256n + BigInt(b);
  return n.toString().padStart(8, "0");
}

/** Parses the Yubico personalization tool's CSV (`yubikeycsv`). */
export function parseYubikeyCsv(text: string): TokenRecord[] {
  const out: TokenRecord[] = [];
  text.split("\n").forEach((raw, i) => {
    const lineNo = i + 1;
    const f = raw.split(",").map((x) => x.trim());
    if (f.length < 6) return;
    const mode = f[0].toLowerCase();
    if (mode === "yubico otp" || mode === "oath-hotp" || mode === "static password") {
      const [, , slot, publicId, , secret] = f;
      if (publicId === "" || mode === "static password") return;
      const num = serialOfPublicId(publicId);
      if (num === undefined) throw lineError(lineNo, `the public ID "${publicId}" is not modhex`);
      checkHex(lineNo, secret);
      out.push(
        mode === "yubico otp"
          ? {
            serial: `UBAM${num}_${slot}`,
            type: "yubikey",
            otpkey: secret.toLowerCase(),
            otplen: String(32 + publicId.length),
            publicId: publicId.toLowerCase(),
            description: publicId,
            where: `line ${lineNo}`,
          }
          : {
            serial: `UBOM${num}_${slot}`,
            type: "hotp",
            otpkey: secret.toLowerCase(),
            otplen: "6",
            hashlib: "sha1",
            description: publicId,
            where: `line ${lineNo}`,
          },
      );
    } else if (/^\d+$/.test(f[0])) {
      const [serialNo, publicId, privateId, secret] = f;
      if (privateId === "") return;
      checkHex(lineNo, secret);
      out.push(
        privateId === "0"
          ? {
            serial: `UBOM${serialNo}_X`,
            type: "hotp",
            otpkey: secret.toLowerCase(),
            otplen: "6",
            hashlib: "sha1",
            description: "",
            where: `line ${lineNo}`,
          }
          : {
            serial: `UBAM${serialNo}_X`,
            type: "yubikey",
            otpkey: secret.toLowerCase(),
            otplen: String(32 + publicId.length),
            publicId: publicId.toLowerCase(),
            description: publicId,
            where: `line ${lineNo}`,
          },
      );
    }
  });
  return out;
}

function checkHex(lineNo: number, secret: string): void {
  if (!/^([0-9a-fA-F]{2})+$/.test(secret)) {
    throw lineError(lineNo, "the secret is not a hex string");
  }
}
