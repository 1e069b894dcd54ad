/** Source of randomness; injected so tests can be deterministic. */
export interface Random {
  /** Returns `n` random bytes. */
  bytes(n: number): Uint8Array;
}

/** Cryptographically secure randomness from Web Crypto. */
export const secureRandom: Random = {
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    // getRandomValues is limited to 65536 bytes per call
    for (let i = 0; i < n; i += 65536) {
      crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)));
    }
    return out;
  },
};

/** A deterministic generator (xorshift) for tests; never for production secrets. */
export function seededRandom(seed: number): Random {
  let x = seed >>> 0 || 0x9e3779b9;
  return {
    bytes(n: number): Uint8Array {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        x ^= x << 13;
        x >>>= 0;
        x ^= x >>> 17;
        x ^= x << 5;
        x >>>= 0;
        out[i] = x & 0xff;
      }
      return out;
    },
  };
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Lower-case hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += HEX[b];
  return s;
}

/** Bytes of a hex string; throws on odd length or non-hex characters. */
export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new Error("invalid hex string");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** `length` random decimal digits (uniform, rejection-sampled). */
export function randomDigits(random: Random, length: number): string {
  let s = "";
  while (s.length < length) {
    for (const b of random.bytes(length)) {
      if (b < 250 && s.length < length) s += String(b % 10);
    }
  }
  return s;
}

/** `length` random characters from `alphabet` (uniform, rejection-sampled). */
export function randomString(random: Random, length: number, alphabet: string): string {
  const limit = 256 - (256 % alphabet.length);
  let s = "";
  while (s.length < length) {
    for (const b of random.bytes(length)) {
      if (b < limit && s.length < length) s += alphabet[b % alphabet.length];
    }
  }
  return s;
}
