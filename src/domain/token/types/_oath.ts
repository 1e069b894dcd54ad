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

/**
 * Python's `urllib.parse.quote` (safe `/`) of the UTF-8 bytes of `text`:
 * unlike `encodeURIComponent` it also escapes `!'()*` and keeps `/`.
 */
export function pyQuote(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll("%2F", "/");
}

const FORMAT_REGEXP = /\{\{|\}\}|\{([^{}]*)\}|[{}]/g;

/**
 * Python's `str.format` with named values only: `{name}` is replaced, `{{`/`}}`
 * stand for braces; an unknown name or any other brace use gives undefined.
 */
function formatTags(
  template: string,
  values: Readonly<Record<string, string>>,
): string | undefined {
  let failed = false;
  const out = template.replace(FORMAT_REGEXP, (m, name: string | undefined) => {
    if (m === "{{") return "{";
    if (m === "}}") return "}";
    if (name !== undefined && Object.hasOwn(values, name)) return values[name];
    failed = true;
    return "";
  });
  return failed ? undefined : out;
}

/** Tags a label or issuer may use: `{serial}`, `{user}`, `{realm}`, `{givenname}`, `{surname}`. */
export const LABEL_TAGS = ["serial", "user", "realm", "givenname", "surname"] as const;

/** True when `text` names the owner's given name or surname (their lookup is needed). */
export function usesOwnerNames(text: string | undefined): boolean {
  return text !== undefined && /\{(givenname|surname)\}/.test(text);
}

/**
 * The extra URL parameters of an enrolment, in privacyIDEA's order: the
 * two-step ones, `image` (`appimageurl`), `pin=True` (`force_app_pin`) and
 * `app_force_unlock`.
 */
function extraParams(ctx: TypeInitContext, hash: OtpHash): [string, string][] {
  const out: [string, string][] = [];
  if (isTrue(param(ctx, "2stepinit"))) {
    out.push(["2step_salt", param(ctx, "2step_clientsize") ?? "8"]);
    out.push(["2step_output", String(keySizeOf(hash))]);
    out.push(["2step_difficulty", param(ctx, "2step_difficulty") ?? "10000"]);
  }
  const image = param(ctx, "appimageurl");
  if (image) out.push(["image", image]);
  if (isTrue(param(ctx, "force_app_pin"))) out.push(["pin", "True"]);
  const unlock = param(ctx, "app_force_unlock");
  if (unlock) out.push(["app_force_unlock", unlock]);
  return out;
}

/**
 * The enrolment URLs of an OATH-based token (privacyIDEA's
 * `create_google_authenticator_url` and `create_oathtoken_url`): the label
 * (`tokenlabel`, default `<s>`) with the tags `<s>`, `<u>`, `<r>` and then
 * {@link LABEL_TAGS}, cut to what fits a QR code; the issuer (`tokenissuer`,
 * default `privacyIDEA`) with the same tags. An unknown tag leaves both URLs
 * out, as there.
 */
function enrolmentUrls(
  ctx: TypeInitContext,
  opts: { type: string; key: Uint8Array; hash: OtpHash; otplen: number; period?: number },
): { googleurl: string; oathurl: string } | undefined {
  const serial = ctx.serial;
  const login = ctx.owner?.login ?? "";
  const realm = ctx.owner?.realm ?? "";
  const template = param(ctx, "tokenlabel") ?? "<s>";
  const legacy = template.replaceAll("<s>", serial).replaceAll("<u>", login)
    .replaceAll("<r>", realm);
  const values = {
    serial,
    user: login,
    realm,
    givenname: ctx.ownerInfo?.givenname ?? "",
    surname: ctx.ownerInfo?.surname ?? "",
  };
  const label = formatTags(legacy, values);
  const issuer = formatTags(param(ctx, "tokenissuer") ?? "privacyIDEA", values);
  if (label === undefined || issuer === undefined) return undefined;
  const b32 = base32Encode(opts.key);
  const room = MAX_QRCODE_LEN - `otpauth://${opts.type}/?secret=${b32}&counter=1`.length;
  const shortLabel = [...label].slice(0, Math.max(0, room)).join("");
  const q = [`secret=${b32}`];
  if (opts.type === "hotp") q.push("counter=1");
  if (opts.hash !== "sha1") q.push(`algorithm=${opts.hash.toUpperCase()}`);
  if (opts.period !== undefined) q.push(`period=${opts.period}`);
  q.push(`digits=${opts.otplen}`, "creator=privacyidea", `issuer=${pyQuote(issuer)}`);
  q.push(`serial=${pyQuote(serial)}`);
  const extra = extraParams(ctx, opts.hash).map(([k, v]) => `&${pyQuote(k)}=${pyQuote(v)}`)
    .join("");
  const googleurl = `otpauth://${opts.type}/${pyQuote(shortLabel)}?${q.join("&")}${extra}`;
  const oathurl = `oathtoken:///addToken?name=${pyQuote(legacy)}&lockdown=true&key=${
    toHex(opts.key)
  }${opts.type === "totp" ? "&timeBased=true" : ""}${extra}`;
  return { googleurl, oathurl };
}

// privacyIDEA's MAX_QRCODE_LEN: the label gets what is left of it
const MAX_QRCODE_LEN = 180;

/** The enrolment URLs and seed of an OATH-based token (spec 02 §4 HOTP, spec 15 §5.9–5.11). */
export function oathDetail(
  ctx: TypeInitContext,
  opts: { type: string; key: Uint8Array; hash: OtpHash; otplen: number; period?: number },
): Record<string, unknown> {
  const b32 = base32Encode(opts.key);
  const hex = toHex(opts.key);
  const otpkey = { description: "OTP seed", value: `seed://${hex}`, value_b32: b32, img: "" };
  const urls = enrolmentUrls(ctx, opts);
  if (urls === undefined) return { otpkey };
  // only the URL enrolment apps scan gets an image: QR generation costs milliseconds
  return {
    googleurl: {
      description: "URL for google Authenticator",
      value: urls.googleurl,
      img: qrImg(urls.googleurl),
    },
    oathurl: { description: "URL for OATH token", value: urls.oathurl, img: "" },
    otpkey,
  };
}
