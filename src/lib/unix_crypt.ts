/**
 * Password hashes found in user stores, as privacyIDEA's SQL resolver reads
 * them (spec 16 §1.7): phpass (`$P$`, `$H$`), Drupal's phpass (`$S$`),
 * LDAP-style `{SSHA}`, `{SSHA256}`, `{SSHA512}`, `{SHA}`, md5-crypt (`$1$`),
 * bcrypt (`$2a$`/`$2b$`/`$2y$`), sha512-crypt (`$6$`), sha256-crypt (`$5$`)
 * and bare hex SHA-256, each recognised by its exact format (a salt longer
 * than the format allows, or a mixed-case `{Ssha}`, never verifies).
 * Verification is constant-time where the hash format allows it.
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";
import bcrypt from "bcryptjs";

const CRYPT64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SALT_REGEXP = /^[./0-9A-Za-z]*$/;

/** Hash formats Tessera can write (sqlresolver `Password_Hash_Type`). */
export const WRITABLE_HASH_TYPES = [
  "PHPASS",
  "SHA",
  "SSHA",
  "SSHA256",
  "SSHA512",
  "OTRS",
  "SHA256CRYPT",
  "SHA512CRYPT",
  "MD5CRYPT",
  "BCRYPT",
] as const;

/** One of {@link WRITABLE_HASH_TYPES}. */
export type HashType = typeof WRITABLE_HASH_TYPES[number];

function digest(alg: string, ...parts: Uint8Array[]): Uint8Array {
  const h = createHash(alg);
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

function utf8(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function to64(value: number, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) {
    s += CRYPT64[value & 0x3f];
    value >>>= 6;
  }
  return s;
}

function encodeGroups(bytes: Uint8Array, groups: number[][]): string {
  let s = "";
  for (const g of groups) {
    if (g.length === 3) s += to64((bytes[g[0]] << 16) | (bytes[g[1]] << 8) | bytes[g[2]], 4);
    else if (g.length === 2) s += to64((bytes[g[0]] << 8) | bytes[g[1]], 3);
    else s += to64(bytes[g[0]], 2);
  }
  return s;
}

const SHA512_ORDER = [
  [0, 21, 42],
  [22, 43, 1],
  [44, 2, 23],
  [3, 24, 45],
  [25, 46, 4],
  [47, 5, 26],
  [6, 27, 48],
  [28, 49, 7],
  [50, 8, 29],
  [9, 30, 51],
  [31, 52, 10],
  [53, 11, 32],
  [12, 33, 54],
  [34, 55, 13],
  [56, 14, 35],
  [15, 36, 57],
  [37, 58, 16],
  [59, 17, 38],
  [18, 39, 60],
  [40, 61, 19],
  [62, 20, 41],
  [63],
];
const SHA256_ORDER = [
  [0, 10, 20],
  [21, 1, 11],
  [12, 22, 2],
  [3, 13, 23],
  [24, 4, 14],
  [15, 25, 5],
  [6, 16, 26],
  [27, 7, 17],
  [18, 28, 8],
  [9, 19, 29],
  [31, 30],
];
const MD5_ORDER = [[0, 6, 12], [1, 7, 13], [2, 8, 14], [3, 9, 15], [4, 10, 5], [11]];

function repeatTo(block: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = block[i % block.length];
  return out;
}

/**
 * SHA-crypt (Drepper) for `$5$` (sha256) and `$6$` (sha512). `rounds` undefined
 * means the implicit default of 5000 (not written into the hash).
 */
export function shaCrypt(
  variant: "5" | "6",
  password: string,
  salt: string,
  rounds?: number,
): string {
  const alg = variant === "5" ? "sha256" : "sha512";
  const size = variant === "5" ? 32 : 64;
  const p = utf8(password);
  const s = utf8(salt.slice(0, 16));
  const r = rounds === undefined ? 5000 : Math.min(999_999_999, Math.max(1000, rounds));

  const b = digest(alg, p, s, p);
  const a = createHash(alg);
  a.update(p);
  a.update(s);
  let cnt = p.length;
  for (; cnt > size; cnt -= size) a.update(b);
  a.update(b.subarray(0, cnt));
  for (let i = p.length; i > 0; i >>= 1) a.update(i & 1 ? b : p);
  let c = new Uint8Array(a.digest());

  const dpCtx = createHash(alg);
  for (let i = 0; i < p.length; i++) dpCtx.update(p);
  const pp = repeatTo(new Uint8Array(dpCtx.digest()), p.length);
  const dsCtx = createHash(alg);
  for (let i = 0; i < 16 + c[0]; i++) dsCtx.update(s);
  const ss = repeatTo(new Uint8Array(dsCtx.digest()), s.length);

  for (let i = 0; i < r; i++) {
    const h = createHash(alg);
    h.update(i & 1 ? pp : c);
    if (i % 3) h.update(ss);
    if (i % 7) h.update(pp);
    h.update(i & 1 ? c : pp);
    c = new Uint8Array(h.digest());
  }
  const head = rounds === undefined ? `$${variant}$` : `$${variant}$rounds=${r}$`;
  return `${head}${salt.slice(0, 16)}$${
    encodeGroups(c, variant === "5" ? SHA256_ORDER : SHA512_ORDER)
  }`;
}

/** md5-crypt (`$1$`). */
export function md5Crypt(password: string, salt: string): string {
  const p = utf8(password);
  const s = utf8(salt.slice(0, 8));
  const magic = utf8("$1$");
  let fin = digest("md5", p, s, p);
  const ctx = createHash("md5");
  ctx.update(concat(p, magic, s));
  for (let pl = p.length; pl > 0; pl -= 16) ctx.update(fin.subarray(0, Math.min(pl, 16)));
  for (let i = p.length; i > 0; i >>= 1) {
    ctx.update(i & 1 ? new Uint8Array([0]) : p.subarray(0, 1));
  }
  fin = new Uint8Array(ctx.digest());
  for (let i = 0; i < 1000; i++) {
    const h = createHash("md5");
    h.update(i & 1 ? p : fin);
    if (i % 3) h.update(s);
    if (i % 7) h.update(p);
    h.update(i & 1 ? fin : p);
    fin = new Uint8Array(h.digest());
  }
  return `$1$${salt.slice(0, 8)}$${encodeGroups(fin, MD5_ORDER)}`;
}

function strEqual(a: string, b: string): boolean {
  const ab = utf8(a);
  const bb = utf8(b);
  if (ab.length !== bb.length) return false;
  return timingSafeEqual(ab, bb);
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function fromB64(s: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(s.trim()), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function toB64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

const LDAP_ALGS: Record<
  string,
  { alg: string; size: number; format: RegExp; minSalt: number; maxSalt: number }
> = {
  // passlib's formats and salt limits, as privacyIDEA 3.12 uses them (SSHA256 is its own: 4-32)
  SSHA: { alg: "sha1", size: 20, format: /^[+/a-zA-Z0-9]{32,}={0,2}$/, minSalt: 4, maxSalt: 16 },
  SSHA256: {
    alg: "sha256",
    size: 32,
    format: /^[+/a-zA-Z0-9]{48,}={0,2}$/,
    minSalt: 4,
    maxSalt: 32,
  },
  SSHA512: {
    alg: "sha512",
    size: 64,
    format: /^[+/a-zA-Z0-9]{91,}={0,2}$/,
    minSalt: 4,
    maxSalt: 16,
  },
  SHA: { alg: "sha1", size: 20, format: /^[+/a-zA-Z0-9]{27}=$/, minSalt: 0, maxSalt: 0 },
};

const IS_LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const MD5_SHIFTS = new Int32Array([7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]);
const MD5_K = Int32Array.from(
  { length: 64 },
  (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) | 0,
);
const MD5_WORD = Int32Array.from(
  { length: 64 },
  (_, i) => i < 16 ? i : i < 32 ? (5 * i + 1) & 15 : i < 48 ? (3 * i + 5) & 15 : (7 * i) & 15,
);

/**
 * `count` rounds of `h = MD5(h ‖ password)` from `h` (phpass): one buffer for
 * every round instead of a hash object per round, which node:crypto needs
 * and which makes PHPASS's 2^19 rounds take 3 s instead of 0.5 s.
 */
function md5Rounds(h: Uint8Array, password: Uint8Array, count: number): Uint8Array {
  if (!IS_LITTLE_ENDIAN) {
    let out = h;
    for (let r = 0; r < count; r++) out = digest("md5", out, password);
    return out;
  }
  const n = 16 + password.length;
  const blocks = ((n + 8) >>> 6) + 1;
  const buf = new Uint8Array(blocks * 64);
  buf.set(password, 16);
  buf[n] = 0x80;
  const words = new Int32Array(buf.buffer);
  words[blocks * 16 - 2] = n * 8;
  words[blocks * 16 - 1] = Math.floor(n / 0x20000000);
  const state = new Int32Array(4);
  const out = new Uint8Array(state.buffer);
  out.set(h);
  for (let r = 0; r < count; r++) {
    buf.set(out);
    let a0 = 0x67452301, b0 = 0xefcdab89 | 0, c0 = 0x98badcfe | 0, d0 = 0x10325476;
    for (let off = 0; off < blocks * 16; off += 16) {
      let a = a0, b = b0, c = c0, d = d0;
      for (let i = 0; i < 64; i++) {
        const f = i < 16
          ? (b & c) | (~b & d)
          : i < 32
          ? (d & b) | (~d & c)
          : i < 48
          ? b ^ c ^ d
          : c ^ (b | ~d);
        const s = MD5_SHIFTS[((i >> 4) << 2) | (i & 3)];
        const x = (a + f + MD5_K[i] + words[off + MD5_WORD[i]]) | 0;
        a = d;
        d = c;
        c = b;
        b = (b + ((x << s) | (x >>> (32 - s)))) | 0;
      }
      a0 = (a0 + a) | 0;
      b0 = (b0 + b) | 0;
      c0 = (c0 + c) | 0;
      d0 = (d0 + d) | 0;
    }
    state[0] = a0;
    state[1] = b0;
    state[2] = c0;
    state[3] = d0;
  }
  return out.slice();
}

/** phpass's base64: little-endian groups of 3 bytes in `./0-9A-Za-z`. */
function phpassEncode(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = bytes.length - i;
    const v = bytes[i] | (n > 1 ? bytes[i + 1] << 8 : 0) | (n > 2 ? bytes[i + 2] << 16 : 0);
    s += to64(v, n === 1 ? 2 : n === 2 ? 3 : 4);
  }
  return s;
}

/**
 * phpass (`$P$`, `$H$`: MD5) and Drupal's variant (`$S$`: SHA-512, 43
 * characters): `h = H(salt ‖ pw)`, then 2^rounds times `h = H(h ‖ pw)`.
 * `rounds` is 7-30 (the index of `roundsChar` in `./0-9A-Za-z`).
 */
export function phpassHash(
  id: "P" | "H" | "S",
  password: string,
  roundsChar: string,
  salt: string,
): string | undefined {
  const rounds = CRYPT64.indexOf(roundsChar);
  if (rounds < 7 || rounds > 30 || roundsChar.length !== 1) return undefined;
  const p = utf8(password);
  const count = 2 ** rounds;
  let h: Uint8Array;
  if (id === "S") {
    h = digest("sha512", utf8(salt), p);
    for (let r = 0; r < count; r++) h = digest("sha512", h, p);
  } else {
    h = md5Rounds(digest("md5", utf8(salt), p), p, count);
  }
  const encoded = phpassEncode(h);
  return `$${id}$${roundsChar}${salt}${id === "S" ? encoded.slice(0, 43) : encoded}`;
}

function ldapHashMatches(id: string, body: string, password: string): boolean {
  const spec = LDAP_ALGS[id];
  if (!spec || !spec.format.test(body)) return false;
  const raw = fromB64(body);
  if (!raw) return false;
  const saltLength = raw.length - spec.size;
  if (saltLength < spec.minSalt || saltLength > spec.maxSalt) return false;
  const salt = raw.subarray(spec.size);
  return bytesEqual(digest(spec.alg, utf8(password), salt), raw.subarray(0, spec.size));
}

/**
 * Verifies `password` against a stored hash of any supported format, tried
 * in privacyIDEA's order (spec 16 §1.7). Unknown or malformed formats, `x`,
 * `*` and empty hashes never verify.
 */
export async function verifyCryptHash(stored: string, password: string): Promise<boolean> {
  let hash = stored.trim();
  // ownCloud's marker
  if (hash.startsWith("1|")) hash = hash.slice(2);
  // a lower-case identifier is upper-cased ({ssha} is {SSHA}); a mixed-case one stays unknown
  hash = hash.replace(/^\{([a-z0-9]+)\}/, (_, id: string) => `{${id.toUpperCase()}}`);
  if (hash === "" || hash === "x" || hash === "*" || hash.startsWith("!")) return false;

  const phpass = hash.match(/^\$([PHS])\$([./0-9A-Za-z])([./0-9A-Za-z]{8})([./0-9A-Za-z]+)$/);
  if (phpass && phpass[4].length === (phpass[1] === "S" ? 43 : 22)) {
    const again = phpassHash(phpass[1] as "P" | "H" | "S", password, phpass[2], phpass[3]);
    return again !== undefined && strEqual(again, hash);
  }
  const ldap = hash.match(/^\{(SSHA|SSHA256|SSHA512|SHA)\}(.*)$/s);
  if (ldap) return ldapHashMatches(ldap[1], ldap[2], password);
  const md5 = hash.match(/^\$1\$([^$]{0,8})\$([./0-9A-Za-z]{22})$/);
  if (md5) return strEqual(md5Crypt(password, md5[1]), hash);
  if (/^\$2[abxy]?\$\d\d\$[./0-9A-Za-z]{53}$/.test(hash)) {
    try {
      return await bcrypt.compare(password, hash.replace(/^\$2y\$/, "$2b$"));
    } catch {
      return false;
    }
  }
  const sha = hash.match(/^\$([56])\$(?:rounds=(\d+)\$)?([^$]{0,16})\$([./0-9A-Za-z]+)$/);
  if (sha) {
    const rounds = sha[2] === undefined ? undefined : Number(sha[2]);
    return strEqual(shaCrypt(sha[1] as "5" | "6", password, sha[3], rounds), hash);
  }
  if (/^[0-9a-fA-F]{64}$/.test(hash)) {
    return strEqual(createHash("sha256").update(password).digest("hex"), hash.toLowerCase());
  }
  return false;
}

function cryptSalt(bytes: Uint8Array, length: number): string {
  let s = "";
  for (let i = 0; i < length; i++) s += CRYPT64[bytes[i % bytes.length] & 0x3f];
  return s;
}

/**
 * Hashes `password` in format `type`; `saltBytes` (at least 16 random bytes)
 * comes from the caller so this module stays free of randomness sources.
 */
export function hashCryptPassword(type: HashType, password: string, saltBytes: Uint8Array): string {
  switch (type) {
    case "SHA":
      return `{SHA}${toB64(digest("sha1", utf8(password)))}`;
    case "SSHA":
    case "SSHA256":
    case "SSHA512": {
      const spec = LDAP_ALGS[type];
      const salt = saltBytes.subarray(0, 16);
      return `{${type}}${toB64(concat(digest(spec.alg, utf8(password), salt), salt))}`;
    }
    case "PHPASS":
      // 2^19 rounds, as privacyIDEA writes them
      return phpassHash("P", password, "H", cryptSalt(saltBytes, 8))!;
    case "OTRS":
      return createHash("sha256").update(password).digest("hex");
    case "SHA256CRYPT":
      return shaCrypt("5", password, cryptSalt(saltBytes, 16));
    case "SHA512CRYPT":
      return shaCrypt("6", password, cryptSalt(saltBytes, 16));
    case "MD5CRYPT":
      return md5Crypt(password, cryptSalt(saltBytes, 8));
    case "BCRYPT":
      return bcrypt.hashSync(password, `$2b$10$${bcryptSalt(saltBytes)}`);
  }
}

const BCRYPT64 = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function bcryptSalt(bytes: Uint8Array): string {
  // 22 characters of bcrypt's base64; the last one carries only 2 significant bits
  let s = "";
  for (let i = 0; i < 21; i++) s += BCRYPT64[bytes[i % bytes.length] & 0x3f];
  return s + ".Oeu"[bytes[0] & 0x03];
}

/** True when `salt` only has crypt salt characters. */
export function isCryptSalt(salt: string): boolean {
  return SALT_REGEXP.test(salt);
}
