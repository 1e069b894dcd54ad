/**
 * Shared enrolment and URL helpers of the OATH types (hotp, totp, paper).
 *
 * @module
 */
import { EnrollmentError, ParameterError } from "../../../errors.ts";
import {
  base32Decode,
  base32Encode,
  keySizeOf,
  OTP_HASHES,
  type OtpHash,
} from "../../../lib/otp.ts";
import { fromHex, toHex } from "../../../lib/random.ts";
import qrcode from "qrcode-generator";
import type { TypeInitContext } from "./token_type.ts";

/** Reads a string init parameter. */
export function param(ctx: TypeInitContext, name: string): string | undefined {
  const v = ctx.params[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new ParameterError(`Cannot parse parameter "${name}": expected a string`);
}

function isTrue(v: string | undefined): boolean {
  return v !== undefined && ["1", "true", "yes", "on"].includes(v.toLowerCase());
}

/** The hash of a new token: `hashlib` param, the existing token's, or the system default. */
export function hashOf(ctx: TypeInitContext, systemKey: string): OtpHash {
  const given = param(ctx, "hashlib") ?? ctx.existing?.info.hashlib?.value ??
    ctx.system.get(systemKey, "sha1");
  const h = given.toLowerCase();
  if (!(OTP_HASHES as readonly string[]).includes(h)) {
    throw new ParameterError(
      `Cannot parse parameter "hashlib": expected sha1, sha256 or sha512, got "${given}"`,
    );
  }
  return h as OtpHash;
}

/** The OTP length of a new token: 6 or 8. */
export function otplenOf(ctx: TypeInitContext): number {
  const given = param(ctx, "otplen");
  if (given === undefined || given === "") {
    return ctx.existing?.otplen ?? ctx.system.int("DefaultOtpLen");
  }
  if (given !== "6" && given !== "8") {
    throw new ParameterError(`Cannot parse parameter "otplen": expected 6 or 8, got "${given}"`);
  }
  return Number(given);
}

/**
 * The OTP key: the given `otpkey` (hex or `base32check`) or a generated one of
 * the hash's size (`keysize` overrides). Both `genkey` and `otpkey` → 344.
 */
export function otpKeyOf(
  ctx: TypeInitContext,
  hash: OtpHash,
): { key: Uint8Array; isGenerated: boolean } {
  const otpkey = param(ctx, "otpkey");
  const genkey = isTrue(param(ctx, "genkey"));
  if (otpkey !== undefined && otpkey !== "" && genkey) {
    throw new ParameterError("Only one of the parameters otpkey or genkey is allowed.", 344);
  }
  if (otpkey !== undefined && otpkey !== "") {
    const format = (param(ctx, "otpkeyformat") ?? "hex").toLowerCase();
    if (format === "base32check") return { key: decodeBase32Check(otpkey), isGenerated: false };
    if (format !== "hex") {
      throw new ParameterError(
        `Cannot parse parameter "otpkeyformat": expected hex or base32check, got "${format}"`,
      );
    }
    const clean = otpkey.replace(/\s/g, "");
    if (clean.length > 256 || clean.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(clean)) {
      throw new ParameterError('Cannot parse parameter "otpkey": expected a hex string');
    }
    return { key: fromHex(clean), isGenerated: false };
  }
  const sizeParam = param(ctx, "keysize");
  let size = keySizeOf(hash);
  if (sizeParam !== undefined && sizeParam !== "") {
    size = Number(sizeParam);
    if (!Number.isInteger(size) || size < 10 || size > 128) {
      throw new ParameterError(
        `Cannot parse parameter "keysize": expected an integer from 10 to 128, got "${sizeParam}"`,
      );
    }
  }
  return { key: ctx.deps.random.bytes(size), isGenerated: true };
}

function decodeBase32Check(text: string): Uint8Array {
  // privacyIDEA's base32check: base32(checksum[4] || key), checksum = first 4 bytes of sha256(key)
  let raw: Uint8Array;
  try {
    raw = base32Decode(text);
  } catch {
    throw new EnrollmentError("Malformed base32check encoded string");
  }
  if (raw.length < 5) throw new EnrollmentError("Malformed base32check encoded string");
  return raw.subarray(4);
}

/**
 * An inline `<img>` of `text` as a QR code (what the WebUI shows for enrolment
 * apps to scan). privacyIDEA sends a PNG; an SVG data URL serves the same
 * purpose at a fraction of the cost of a raster image (no LZW/PNG encoding).
 */
export function qrImg(text: string): string {
  const qr = qrcode(0, "L");
  qr.addData(text, "Byte");
  qr.make();
  const svg = qr.createSvgTag({ cellSize: 4, margin: 16, scalable: true });
  return `<img width=250 src="data:image/svg+xml;base64,${btoa(svg)}"/>`;
}

/** The enrolment URLs and seed of an OATH token (spec 02 §4 HOTP). */
export function oathDetail(
  ctx: TypeInitContext,
  opts: { type: "hotp" | "totp"; key: Uint8Array; hash: OtpHash; otplen: number; period?: number },
): Record<string, unknown> {
  const serial = ctx.serial;
  const label = (param(ctx, "tokenlabel") ?? "<s>").replaceAll("<s>", serial)
    .replaceAll("<u>", param(ctx, "user") ?? "").replaceAll("<r>", param(ctx, "realm") ?? "");
  const issuer = (param(ctx, "tokenissuer") ?? "privacyIDEA").replaceAll("<s>", serial);
  const b32 = base32Encode(opts.key);
  const q = [`secret=${b32}`];
  if (opts.type === "hotp") q.push("counter=1");
  if (opts.type === "totp") q.push(`period=${opts.period ?? 30}`);
  if (opts.hash !== "sha1") q.push(`algorithm=${opts.hash.toUpperCase()}`);
  q.push(`digits=${opts.otplen}`, "creator=privacyidea", `issuer=${encodeURIComponent(issuer)}`);
  q.push(`serial=${encodeURIComponent(serial)}`);
  const googleurl = `otpauth://${opts.type}/${encodeURIComponent(label)}?${q.join("&")}`;
  const hex = toHex(opts.key);
  const oathurl =
    `oathtoken:///addToken?name=${encodeURIComponent(label)}&lockdown=true&key=${hex}` +
    (opts.type === "totp" ? `&timeBased=true` : "");
  // only the URL enrolment apps scan gets an image: QR generation costs milliseconds
  return {
    googleurl: {
      description: "URL for google Authenticator",
      value: googleurl,
      img: qrImg(googleurl),
    },
    oathurl: { description: "URL for OATH token", value: oathurl, img: "" },
    otpkey: { description: "OTP seed", value: `seed://${hex}`, value_b32: b32, img: "" },
  };
}
