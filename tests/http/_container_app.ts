/**
 * A software double of the privacyIDEA Authenticator app's container side,
 * built from spec 13 alone (§2.6–§2.11, §4): it scans the `pia://container/…`
 * registration URL, registers its P-384 key with a DER-signed finalize
 * message, asks for challenges, synchronises with a fresh X25519 key per
 * request (decrypting the server's AES-256-GCM answer, 16-byte IV, raw ECDH
 * secret as key), enrols the OTP tokens it receives (push tokens through the
 * push app double), and unregisters or rolls over with signed messages.
 * Everything goes over real HTTP (fetch). It deliberately does not use the
 * server's own message or encryption code, so a mistake there shows.
 *
 * @module
 */
import {
  createDecipheriv,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  type KeyObject,
  sign,
} from "node:crypto";
import { Buffer } from "node:buffer";
import { base32Decode, hotpAt, type OtpHash, totpAt } from "../../src/lib/otp.ts";
import { PushApp } from "./_push_app.ts";

/** A token the app holds after a synchronisation. */
export interface HeldToken {
  serial: string;
  type: string;
  secret: Uint8Array;
  digits: number;
  period: number;
  hash: OtpHash;
  counter: number;
  /** The push app double of a push token. */
  push?: PushApp;
}

/** One HTTP exchange of the app: the form it sent, the status and the body it got. */
export interface AppExchange {
  path: string;
  form: Record<string, string>;
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** Standard base64 with padding (the app's signature encoding in privacyIDEA's tests). */
function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64");
}

/** URL-safe base64 with `=` padding (Python's `urlsafe_b64encode`). */
function b64urlPadded(bytes: Uint8Array): string {
  return b64(bytes).replaceAll("+", "-").replaceAll("/", "_");
}

function fromB64any(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text.replaceAll("-", "+").replaceAll("_", "/"), "base64"));
}

/** Raw 32-byte public key of an X25519 key object. */
function rawX25519(key: KeyObject): Uint8Array {
  return new Uint8Array(Buffer.from(key.export({ format: "jwk" }).x as string, "base64url"));
}

/** The app double. `now` gives the time the app's clock shows (ms). */
export class ContainerApp {
  serial = "";
  /** The server's base URL as the QR code gave it. */
  serverUrl = "";
  nonce = "";
  time = "";
  hashAlgorithm = "SHA256";
  passphrasePrompt = "";
  sendPassphrase = "";
  sslVerify = "";
  ttl = "";
  /** The client policies of the last finalize or synchronisation. */
  policies: Record<string, unknown> = {};
  readonly tokens = new Map<string, HeldToken>();
  /** The plaintext of the last synchronisation answer. */
  // deno-lint-ignore no-explicit-any
  lastSync: any;
  keys: { privateKey: KeyObject; publicKey: KeyObject };

  constructor(readonly now: () => number) {
    this.keys = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
  }

  /** The signing key as the app sends it: PEM SubjectPublicKeyInfo. */
  publicKeyPem(): string {
    return this.keys.publicKey.export({ format: "pem", type: "spki" }) as string;
  }

  /** Reads a `pia://container/…` registration URL. */
  scan(url: string): void {
    const u = new URL(url.replace(/^pia:/, "https:"));
    const q = u.searchParams;
    this.serial = q.get("serial") ?? "";
    this.serverUrl = q.get("url") ?? "";
    this.nonce = q.get("nonce") ?? "";
    this.time = q.get("time") ?? "";
    this.hashAlgorithm = q.get("hash_algorithm") ?? "SHA256";
    this.passphrasePrompt = q.get("passphrase") ?? "";
    this.sendPassphrase = q.get("send_passphrase") ?? "";
    this.sslVerify = q.get("ssl_verify") ?? "";
    this.ttl = q.get("ttl") ?? "";
  }

  /** `<server url>/<endpoint>` (the endpoint kept if the URL already names it). */
  endpoint(path: string, base = this.serverUrl): string {
    if (base.includes(path)) return base;
    return base.endsWith("/") ? base + path : `${base}/${path}`;
  }

  /** b64 of the DER ECDSA/SHA-256 signature of `text` with `key` (default: ours). */
  signText(text: string, key: KeyObject = this.keys.privateKey): string {
    return b64(
      new Uint8Array(sign("sha256", Buffer.from(text, "utf8"), { key, dsaEncoding: "der" })),
    );
  }

  /** POSTs form fields to `path` of the server. */
  async post(path: string, form: Record<string, string>): Promise<AppExchange> {
    const res = await fetch(this.endpoint(path), {
      method: "POST",
      body: new URLSearchParams(form),
    });
    return { path, form, status: res.status, body: await res.json() };
  }

  /**
   * Finalizes the registration: signs `nonce|time|serial|scope[|brand][|model][|passphrase]`.
   * `signature`/`publicKey` may be given to forge one.
   */
  async finalize(
    options: {
      brand?: string;
      model?: string;
      passphrase?: string;
      signature?: string;
      publicKey?: string;
      signWith?: KeyObject;
    } = {},
  ): Promise<AppExchange> {
    const path = "container/register/finalize";
    let text = `${this.nonce}|${this.time}|${this.serial}|${this.endpoint(path)}`;
    for (const part of [options.brand, options.model, options.passphrase]) {
      if (part) text += `|${part}`;
    }
    const form: Record<string, string> = {
      container_serial: this.serial,
      signature: options.signature ?? this.signText(text, options.signWith),
      public_client_key: options.publicKey ?? this.publicKeyPem(),
    };
    if (options.brand) form.device_brand = options.brand;
    if (options.model) form.device_model = options.model;
    if (options.passphrase && this.sendPassphrase === "True") form.passphrase = options.passphrase;
    const ex = await this.post(path, form);
    if (ex.status === 200) this.policies = ex.body.result.value.policies;
    return ex;
  }

  /** Asks for a challenge for `path` (e.g. `container/synchronize`). */
  async challenge(path: string, scope = this.endpoint(path)): Promise<AppExchange> {
    return await this.post("container/challenge", { container_serial: this.serial, scope });
  }

  /** The container JSON the app sends: the tokens it holds. */
  containerDict(): string {
    const tokens = [...this.tokens.values()].map((t) => ({
      serial: t.serial,
      tokentype: t.type.toUpperCase(),
    }));
    return JSON.stringify({ serial: this.serial, type: "smartphone", tokens });
  }

  /**
   * Synchronises: a challenge, a fresh X25519 key, the signed request; on
   * success decrypts the answer and enrols the tokens in `add`. `tamper`
   * changes the request after signing (a man in the middle).
   */
  async synchronize(
    options: {
      containerDict?: string;
      tamper?: (form: Record<string, string>) => void;
      signWith?: KeyObject;
    } = {},
  ): Promise<AppExchange & { challenge: AppExchange }> {
    const path = "container/synchronize";
    const challenge = await this.challenge(path);
    if (challenge.status !== 200) return { ...challenge, challenge };
    const { nonce, time_stamp: timeStamp } = challenge.body.result.value;
    const enc = generateKeyPairSync("x25519");
    const encKey = b64urlPadded(rawX25519(enc.publicKey));
    const dict = options.containerDict ?? this.containerDict();
    const text = `${nonce}|${timeStamp}|${this.serial}|${this.endpoint(path)}|${encKey}|${dict}`;
    const form: Record<string, string> = {
      container_serial: this.serial,
      public_enc_key_client: encKey,
      container_dict_client: dict,
      signature: this.signText(text, options.signWith),
    };
    options.tamper?.(form);
    const ex = await this.post(path, form);
    if (ex.status === 200) {
      const v = ex.body.result.value;
      this.policies = v.policies;
      this.lastSync = JSON.parse(this.decrypt(enc.privateKey, v));
      for (const url of this.lastSync.tokens.add as string[]) await this.enrol(url);
    }
    return { ...ex, challenge };
  }

  /** Decrypts a synchronisation answer with our X25519 key and the server's. */
  // deno-lint-ignore no-explicit-any
  decrypt(privateKey: KeyObject, value: any): string {
    const publicKey = createPublicKey({
      key: {
        kty: "OKP",
        crv: "X25519",
        x: Buffer.from(fromB64any(value.public_server_key)).toString("base64url"),
      },
      format: "jwk",
    });
    const key = diffieHellman({ privateKey, publicKey });
    const d = createDecipheriv("aes-256-gcm", key, fromB64any(value.encryption_params.init_vector));
    d.setAuthTag(fromB64any(value.encryption_params.tag));
    return Buffer.concat([d.update(fromB64any(value.container_dict_server)), d.final()]).toString(
      "utf8",
    );
  }

  /** Enrols one `otpauth://` URL from a synchronisation. */
  async enrol(url: string): Promise<void> {
    const u = new URL(url);
    const type = u.host;
    if (type === "pipush") {
      const push = new PushApp(this.now);
      const reg = await push.enrol(url);
      if (reg.status !== 200) throw new Error(`push enrolment failed: ${JSON.stringify(reg.body)}`);
      this.tokens.set(push.serial, {
        serial: push.serial,
        type: "push",
        secret: new Uint8Array(),
        digits: 0,
        period: 0,
        hash: "sha1",
        counter: 0,
        push,
      });
      return;
    }
    const q = u.searchParams;
    const serial = q.get("serial") ?? decodeURIComponent(u.pathname.slice(1));
    this.tokens.set(serial, {
      serial,
      type,
      secret: base32Decode(q.get("secret") ?? ""),
      digits: Number(q.get("digits") ?? "6"),
      period: Number(q.get("period") ?? "30"),
      hash: (q.get("algorithm") ?? "SHA1").toLowerCase() as OtpHash,
      counter: Number(q.get("counter") ?? "0"),
    });
  }

  /** The next OTP value of a held token (HOTP advances its counter). */
  otp(serial: string): string {
    const t = this.tokens.get(serial);
    if (!t) throw new Error(`the app holds no token ${serial}`);
    if (t.type === "totp") {
      return totpAt(t.secret, Math.floor(this.now() / 1000), {
        step: t.period,
        digits: t.digits,
        hash: t.hash,
      });
    }
    return hotpAt(t.secret, t.counter++, t.digits, t.hash);
  }

  /** Unregisters from the app's side (a challenge for the terminate scope, signed). */
  async terminate(options: { signWith?: KeyObject } = {}): Promise<AppExchange> {
    const path = "container/register/terminate/client";
    const challenge = await this.challenge(path);
    if (challenge.status !== 200) return challenge;
    const { nonce, time_stamp: timeStamp } = challenge.body.result.value;
    const text = `${nonce}|${timeStamp}|${this.serial}|${this.endpoint(path)}`;
    return await this.post(path, {
      container_serial: this.serial,
      signature: this.signText(text, options.signWith),
    });
  }

  /**
   * Starts a rollover from this (old) device: signs a `container/rollover`
   * challenge under `policyUrl` (the current `privacyIDEA_server_url`).
   */
  async rollover(
    policyUrl: string,
    options: { brand?: string; model?: string; extra?: Record<string, string> } = {},
  ): Promise<AppExchange> {
    const path = "container/rollover";
    const scope = this.endpoint(path, policyUrl);
    const challenge = await this.challenge(path, scope);
    if (challenge.status !== 200) return challenge;
    const { nonce, time_stamp: timeStamp } = challenge.body.result.value;
    let text = `${nonce}|${timeStamp}|${this.serial}|${scope}`;
    if (options.brand) text += `|${options.brand}`;
    if (options.model) text += `|${options.model}`;
    const form: Record<string, string> = {
      container_serial: this.serial,
      signature: this.signText(text),
      ...options.extra,
    };
    if (options.brand) form.device_brand = options.brand;
    if (options.model) form.device_model = options.model;
    return await this.post(path, form);
  }
}
