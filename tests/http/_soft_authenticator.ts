/**
 * A software FIDO2 authenticator for the WebAuthn and passkey tests: an
 * ES256 key (WebCrypto), authenticator data, client data JSON, attestation
 * objects in the `none` and `packed` (self attestation, or full attestation
 * with an x5c chain) formats, and assertions, with a small CBOR encoder.
 * Every field a test may want to get wrong (origin, RP id, flags, sign
 * count, challenge, type) is a parameter, and so is the way its client
 * passes the challenge on ({@link ChallengeForm}).
 *
 * @module
 */

const encoder = new TextEncoder();

/** base64url without padding. */
export function b64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Decodes base64url (padding optional). */
export function fromB64url(text: string): Uint8Array {
  const b64 = text.replaceAll("-", "+").replaceAll("_", "/");
  const bin = atob(b64 + "=".repeat((4 - b64.length % 4) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let i = 0;
  for (const p of parts) {
    out.set(p, i);
    i += p.length;
  }
  return out;
}

async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

/** A CBOR value the encoder knows: integers, byte and text strings, arrays, maps. */
export type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor>;

function head(major: number, n: number): Uint8Array {
  if (n < 24) return Uint8Array.of((major << 5) | n);
  if (n < 0x100) return Uint8Array.of((major << 5) | 24, n);
  if (n < 0x10000) return Uint8Array.of((major << 5) | 25, n >> 8, n & 0xff);
  return Uint8Array.of((major << 5) | 26, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);
}

/** Encodes a value in CBOR (RFC 8949, definite lengths, as authenticators write it). */
export function cbor(value: Cbor): Uint8Array {
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === "string") {
    const bytes = encoder.encode(value);
    return concat(head(3, bytes.length), bytes);
  }
  if (value instanceof Uint8Array) return concat(head(2, value.length), value);
  if (Array.isArray(value)) return concat(head(4, value.length), ...value.map(cbor));
  const parts: Uint8Array[] = [head(5, value.size)];
  for (const [k, v] of value) parts.push(cbor(k), cbor(v));
  return concat(...parts);
}

/** DER form of a raw (r ‖ s) P-256 signature, as WebAuthn carries ECDSA signatures. */
function derSignature(raw: Uint8Array): Uint8Array {
  const int = (x: Uint8Array) => {
    let i = 0;
    while (i < x.length - 1 && x[i] === 0) i++;
    let v = x.slice(i);
    if (v[0] & 0x80) v = concat(Uint8Array.of(0), v);
    return concat(Uint8Array.of(0x02, v.length), v);
  };
  const body = concat(int(raw.slice(0, 32)), int(raw.slice(32)));
  return concat(Uint8Array.of(0x30, body.length), body);
}

/** Authenticator data flags. */
export const FLAG_UP = 0x01;
export const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

/**
 * How a client turns the server's challenge text into the bytes the client
 * data carries: `bytes` decodes the base64url text (WebAuthn libraries,
 * privacyIDEA's `webauthn` clients), `text` takes the text's own bytes
 * (privacyIDEA's passkey clients: `Uint8Array.from(challenge, c =>
 * c.charCodeAt(0))`), so the client data's challenge is the base64url of
 * the text.
 */
export type ChallengeForm = "bytes" | "text";

/** The authenticator options of a client that passes challenges as privacyIDEA's passkey clients do. */
export const PI_PASSKEY = { challengeAs: "text" } as const;

/** The client data `challenge` a client of `form` sends for the server's `challenge` text. */
export function clientChallenge(challenge: string, form: ChallengeForm): string {
  return form === "text" ? b64url(encoder.encode(challenge)) : challenge;
}

/** What a ceremony is about; anything wrong on purpose is a parameter. */
export interface CeremonyOptions {
  /** base64url challenge (the server's nonce). */
  challenge: string;
  /** How the client passes the challenge on (default: the authenticator's {@link ChallengeForm}). */
  challengeAs?: ChallengeForm;
  origin: string;
  /** The RP id whose hash goes into the authenticator data. */
  rpId: string;
  /** Client data `type` (default `webauthn.create` / `webauthn.get`). */
  type?: string;
  /** User verified (UV flag); default false. */
  uv?: boolean;
  /** User present (UP flag); default true. */
  up?: boolean;
  /** Sign count to report; default: the next one (one more than last time). */
  signCount?: number;
}

/** A registration as `/token/init` step 2 carries it. */
export interface Attestation {
  credentialId: string;
  clientDataJSON: string;
  attestationObject: string;
}

/** An assertion as `/validate/check` carries it. */
export interface Assertion {
  credentialId: string;
  clientDataJSON: string;
  authenticatorData: string;
  signature: string;
  userHandle?: string;
}

/** The attestation key (P-256) and certificate chain (DER, leaf first) of a full attestation. */
export interface AttestationSigner {
  key: CryptoKey;
  x5c: Uint8Array[];
}

/** An ES256 signature (DER) of `data` with a P-256 private key. */
async function signEs256(key: CryptoKey, data: Uint8Array): Promise<Uint8Array> {
  const raw = new Uint8Array(
    await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      key,
      data as Uint8Array<ArrayBuffer>,
    ),
  );
  return derSignature(raw);
}

/** One credential of a software authenticator (P-256, ES256). */
export class SoftAuthenticator {
  /** Raw credential id. */
  readonly credentialId: Uint8Array;
  readonly aaguid: Uint8Array;
  /** The user handle the authenticator returns (discoverable credentials). */
  userHandle?: Uint8Array;
  /** The sign count of the last ceremony. */
  signCount = 0;
  /** When false the authenticator has no counter: it always reports 0. */
  hasCounter = true;
  /** How its client passes challenges on unless a ceremony says otherwise. */
  challengeAs: ChallengeForm = "bytes";
  readonly #keys: CryptoKeyPair;

  private constructor(keys: CryptoKeyPair, credentialId: Uint8Array, aaguid: Uint8Array) {
    this.#keys = keys;
    this.credentialId = credentialId;
    this.aaguid = aaguid;
  }

  /** A new credential (random id unless given; challenges as `bytes` unless given). */
  static async create(
    options: { credentialId?: Uint8Array; aaguid?: Uint8Array; challengeAs?: ChallengeForm } = {},
  ): Promise<SoftAuthenticator> {
    const keys = await crypto.subtle.generateKey(
      { name: "ECDSA", namedCurve: "P-256" },
      false,
      ["sign", "verify"],
    ) as CryptoKeyPair;
    const made = new SoftAuthenticator(
      keys,
      options.credentialId ?? crypto.getRandomValues(new Uint8Array(32)),
      options.aaguid ?? new Uint8Array(16),
    );
    if (options.challengeAs) made.challengeAs = options.challengeAs;
    return made;
  }

  /** The credential id in base64url. */
  get id(): string {
    return b64url(this.credentialId);
  }

  /** The COSE_Key of the public key (EC2, P-256, ES256). */
  async coseKey(): Promise<Uint8Array> {
    const raw = new Uint8Array(await crypto.subtle.exportKey("raw", this.#keys.publicKey));
    return cbor(
      new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, raw.slice(1, 33)], [-3, raw.slice(33)]]),
    );
  }

  #sign(data: Uint8Array): Promise<Uint8Array> {
    return signEs256(this.#keys.privateKey, data);
  }

  #nextCount(o: CeremonyOptions): number {
    if (o.signCount !== undefined) return o.signCount;
    if (!this.hasCounter) return 0;
    return this.signCount + 1;
  }

  async #authData(o: CeremonyOptions, count: number, attested?: Uint8Array): Promise<Uint8Array> {
    let flags = (o.up ?? true) ? FLAG_UP : 0;
    if (o.uv) flags |= FLAG_UV;
    if (attested) flags |= FLAG_AT;
    const counter = Uint8Array.of(
      count >>> 24,
      (count >> 16) & 0xff,
      (count >> 8) & 0xff,
      count & 0xff,
    );
    return concat(
      await sha256(encoder.encode(o.rpId)),
      Uint8Array.of(flags),
      counter,
      attested ?? new Uint8Array(0),
    );
  }

  /**
   * `navigator.credentials.create()`: an attestation in format `none` or
   * `packed`: self attestation, or full attestation (signed by
   * `attestation.key`, with the chain `attestation.x5c`) when given.
   */
  async register(
    o: CeremonyOptions & { fmt?: "none" | "packed"; attestation?: AttestationSigner },
  ): Promise<Attestation> {
    const clientData = encoder.encode(JSON.stringify({
      type: o.type ?? "webauthn.create",
      challenge: clientChallenge(o.challenge, o.challengeAs ?? this.challengeAs),
      origin: o.origin,
      crossOrigin: false,
    }));
    const id = this.credentialId;
    const attested = concat(
      this.aaguid,
      Uint8Array.of(id.length >> 8, id.length & 0xff),
      id,
      await this.coseKey(),
    );
    const count = this.#nextCount(o);
    const authData = await this.#authData(o, count, attested);
    this.signCount = count;
    const attStmt = new Map<Cbor, Cbor>();
    if ((o.fmt ?? "none") === "packed") {
      attStmt.set("alg", -7);
      const signed = concat(authData, await sha256(clientData));
      if (o.attestation) {
        attStmt.set("sig", await signEs256(o.attestation.key, signed));
        attStmt.set("x5c", o.attestation.x5c);
      } else {
        attStmt.set("sig", await this.#sign(signed));
      }
    }
    const attestationObject = cbor(
      new Map<Cbor, Cbor>([["fmt", o.fmt ?? "none"], ["attStmt", attStmt], ["authData", authData]]),
    );
    return {
      credentialId: this.id,
      clientDataJSON: b64url(clientData),
      attestationObject: b64url(attestationObject),
    };
  }

  /** `navigator.credentials.get()`: an assertion over the next sign count. */
  async assert(o: CeremonyOptions): Promise<Assertion> {
    const clientData = encoder.encode(JSON.stringify({
      type: o.type ?? "webauthn.get",
      challenge: clientChallenge(o.challenge, o.challengeAs ?? this.challengeAs),
      origin: o.origin,
      crossOrigin: false,
    }));
    const count = this.#nextCount(o);
    const authData = await this.#authData(o, count);
    if (count > this.signCount) this.signCount = count;
    const signature = await this.#sign(concat(authData, await sha256(clientData)));
    return {
      credentialId: this.id,
      clientDataJSON: b64url(clientData),
      authenticatorData: b64url(authData),
      signature: b64url(signature),
      ...(this.userHandle ? { userHandle: b64url(this.userHandle) } : {}),
    };
  }
}
