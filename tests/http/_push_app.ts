/**
 * A software double of the privacyIDEA Authenticator app's push token, built
 * from spec 13 alone (§1.3–§1.9, §4): it reads the enrolment URL, registers
 * its RSA key at the URL's `/ttype/push`, keeps the server's key, polls with
 * a signed timestamp, checks the server's signature of each challenge, and
 * answers (accept, decline, presence) with its signature. Everything goes
 * over real HTTP (fetch).
 *
 * @module
 */
import { createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from "node:crypto";
import { Buffer } from "node:buffer";
import assert from "node:assert/strict";
import { base32Decode, base32Encode } from "../../src/lib/otp.ts";
import { jsonOf, type TestApp } from "../test_app.ts";
import { appWithAlice } from "./_challenge_types.ts";
import { serveApp, type ServedApp } from "./_serve_app.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";

/** One challenge as the app receives it. */
export type PhoneChallenge = Record<string, string>;

let sharedKeys: { privateKey: KeyObject; publicKey: KeyObject } | undefined;

/** The app's key pair (made once per test process: RSA is slow to generate). */
function appKeys() {
  sharedKeys ??= generateKeyPairSync("rsa", { modulusLength: 2048, publicExponent: 65537 });
  return sharedKeys;
}

/** b32 (with padding) of a PKCS#1 v1.5 SHA-256 signature of `text`. */
export function signB32(key: KeyObject, text: string): string {
  return base32Encode(sign("sha256", new TextEncoder().encode(text), key), true);
}

/** The app double. `now` gives the time the app's clock shows (ms). */
export class PushApp {
  serial = "";
  url = "";
  serverKey: KeyObject | undefined;
  readonly keys: { privateKey: KeyObject; publicKey: KeyObject };
  #micros = 0;

  constructor(readonly now: () => number, keys?: { privateKey: KeyObject; publicKey: KeyObject }) {
    this.keys = keys ?? appKeys();
  }

  /** The public key as the app sends it: SPKI DER, base64url alphabet with padding, one line. */
  pubkey(): string {
    const der = this.keys.publicKey.export({ format: "der", type: "spki" }) as Buffer;
    return der.toString("base64").replaceAll("+", "-").replaceAll("/", "_");
  }

  /** An ISO timestamp with microseconds, always a new one (as the app's clock). */
  timestamp(offsetMs = 0): string {
    this.#micros = (this.#micros + 1) % 1000;
    const iso = new Date(this.now() + offsetMs).toISOString(); // …T12:00:00.123Z
    return `${iso.slice(0, 23)}${String(this.#micros).padStart(3, "0")}+00:00`;
  }

  /** Scans the enrolment URL and registers (enrolment step 2); returns the response body. */
  async enrol(pushurl: string, options: { fbtoken?: string; credential?: string } = {}) {
    const u = new URL(pushurl);
    const q = u.searchParams;
    this.serial = q.get("serial") ?? "";
    this.url = q.get("url") ?? "";
    const res = await fetch(this.url, {
      method: "POST",
      body: new URLSearchParams({
        serial: this.serial,
        enrollment_credential: options.credential ?? q.get("enrollment_credential") ?? "",
        fbtoken: options.fbtoken ?? "",
        pubkey: this.pubkey(),
      }),
    });
    const body = await res.json();
    if (res.status === 200 && body.detail?.public_key) {
      this.serverKey = createPublicKey(
        `-----BEGIN RSA PUBLIC KEY-----\n${body.detail.public_key}\n-----END RSA PUBLIC KEY-----\n`,
      );
    }
    return { status: res.status, body };
  }

  /** A signed poll; `timestamp` and `signature` may be given to forge or replay one. */
  async poll(options: { timestamp?: string; signature?: string } = {}) {
    const timestamp = options.timestamp ?? this.timestamp();
    const signature = options.signature ??
      signB32(this.keys.privateKey, `${this.serial}|${timestamp}`);
    const q = new URLSearchParams({ serial: this.serial, timestamp, signature });
    const res = await fetch(`${this.url}?${q}`);
    return { status: res.status, body: await res.json(), timestamp, signature };
  }

  /** True if the server signed this challenge (S1, or S1p with presence options). */
  isServerSigned(c: PhoneChallenge): boolean {
    let text = `${c.nonce}|${c.url}|${c.serial}|${c.question}|${c.title}|${c.sslverify}`;
    if (c.require_presence !== undefined) text += `|${c.require_presence}`;
    return verify(
      "sha256",
      new TextEncoder().encode(text),
      this.serverKey!,
      Buffer.from(base32Decode(c.signature)),
    );
  }

  /** Answers a challenge (S3 / S3d / S3p); `signature` may be given to forge or replay. */
  async answer(
    c: PhoneChallenge,
    options: { decline?: boolean; presence?: string; signature?: string } = {},
  ) {
    let text = `${c.nonce}|${this.serial}`;
    if (options.decline) text += "|decline";
    if (options.presence) text += `|${options.presence}`;
    const signature = options.signature ?? signB32(this.keys.privateKey, text);
    const form: Record<string, string> = { serial: this.serial, nonce: c.nonce, signature };
    if (options.decline) form.decline = "1";
    if (options.presence) form.presence_answer = options.presence;
    const res = await fetch(this.url, { method: "POST", body: new URLSearchParams(form) });
    return { status: res.status, body: await res.json(), signature };
  }
}

/** Test keys are smaller than privacyIDEA's 4096 bits (RSA generation is slow). */
export const PUSH_CONFIG = "[push]\nserver_key_bits = 2048\n";

/** A served app with alice, the push enrolment policies and `extra` actions. */
export async function pushSetup(
  extra: { enrollment?: string; authentication?: string } = {},
): Promise<{ t: TestApp; served: ServedApp; app: PushApp }> {
  const t = await appWithAlice(PUSH_CONFIG);
  const served = serveApp(t);
  await savePolicy(t.deps, "push_enrol", {
    scope: "enrollment",
    action:
      `push_firebase_configuration=poll only, push_registration_url=${served.url}/ttype/push` +
      (extra.enrollment ? `, ${extra.enrollment}` : ""),
  });
  if (extra.authentication) {
    await savePolicy(t.deps, "push_auth", {
      scope: "authentication",
      action: extra.authentication,
    });
  }
  return { t, served, app: new PushApp(() => t.clock.now()) };
}

/** Enrols a push token for alice with PIN `pin` and lets the app register it. */
export async function enrolPush(t: TestApp, app: PushApp, pin = "1234") {
  const init = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: { type: "push", genkey: 1, user: "alice", realm: "realm1", pin },
      json: true,
    }),
  );
  assert.equal(init.status, 200, JSON.stringify(init.body));
  const reg = await app.enrol(init.body.detail.pushurl.value);
  assert.equal(reg.status, 200, JSON.stringify(reg.body));
  return { init: init.body, reg: reg.body, serial: init.body.detail.serial as string };
}

/** POSTs form fields to the served app. */
export async function postForm(served: ServedApp, path: string, body: Record<string, string>) {
  const res = await fetch(`${served.url}${path}`, {
    method: "POST",
    body: new URLSearchParams(body),
  });
  return { status: res.status, body: await res.json() };
}
