/**
 * Helpers of the `u2f` tests: spec 14 §8.3's real-device vector, a key pair
 * made by the test that signs answers as a U2F key does, a token seeded as a
 * privacyIDEA migration leaves it, and a randomness source that hands out a
 * chosen challenge nonce.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { writeImportedToken } from "../../src/domain/token/mod.ts";
import { fromHex, type Random, secureRandom } from "../../src/lib/random.ts";
import { ALICE } from "./_challenge_types.ts";

/** Spec 14 §8.3: a real Yubico key's registration and one authentication. */
export const VECTOR = {
  serial: "U2F0010BF6F",
  appId: "https://puck.az.intern",
  pubKey: "04478f0c446050a42c7cf7c5dae689f28e1e5da1d7b06644943f4b563d3d10214b6475f3a4f7f75604" +
    "fabcaa5a2b3d1d299da745e946a51a2a4f4bf25c494cfa53",
  keyHandle:
    "X_EUn8sCwqQ9PMojBSU8iMZkOwua_R6fYjJrXtjPxfw5Lz1-7HBk68SiT41A4pRMk_dq239FV7d0QBur-I63IA",
  subject: "CN=Yubico U2F EE Serial 1432534688",
  issuer: "CN=Yubico U2F Root CA Serial 457200631",
  certSerial: "1432534688",
  description: "Yubico U2F EE Serial 1432534688",
  nonceHex: "1616515928c389ba9e028d83eb5f63782cbf351ca6abbc81aeb0dddd4895b609",
  nonceB64url: "FhZRWSjDibqeAo2D619jeCy_NRymq7yBrrDd3UiVtgk",
  clientData:
    "eyJ0eXAiOiJuYXZpZ2F0b3IuaWQuZ2V0QXNzZXJ0aW9uIiwiY2hhbGxlbmdlIjoiRmhaUldTakRpYnFlQW8y" +
    "RDYxOWplQ3lfTlJ5bXE3eUJyckRkM1VpVnRnayIsIm9yaWdpbiI6Imh0dHBzOi8vcHVjay5hei5pbnRlcm4iLCJjaWRf" +
    "cHVia2V5IjoidW51c2VkIn0",
  signatureData: "AQAAAAMwRQIgU8d6waOIRVVydg_AXxediEZGkfFioUjd6FG3OxH2wUMCIQDpxzavJyxRlMwgNmD1Kw-" +
    "iw_oP2egdshU9hrpxFHTRzQ",
  counter: 3,
};

/** The PIN the seeded tokens get. */
export const U2F_PIN = "u2fpin";

/** base64url without padding. */
export function b64u(bytes: Uint8Array | string): string {
  return Buffer.from(bytes).toString("base64url");
}

/**
 * A randomness source that answers the next 32-byte draws (a challenge
 * nonce) with the nonces queued by `next`; everything else is random.
 */
export function nonceRandom(): Random & { next(hex: string): void } {
  const queue: Uint8Array[] = [];
  return {
    bytes(n: number) {
      if (n === 32 && queue.length > 0) return queue.shift()!;
      return secureRandom.bytes(n);
    },
    next(hex: string) {
      queue.push(fromHex(hex));
    },
  };
}

/** A test app with `alice` in realm1 and a nonce-queuing randomness source. */
export async function u2fApp(): Promise<{ t: TestApp; random: ReturnType<typeof nonceRandom> }> {
  const random = nonceRandom();
  const t = await createTestApp({ deps: { random } });
  await createUsers(t.deps, { realm: "realm1", users: [ALICE] });
  return { t, random };
}

/** A U2F key made by the test: its public key (65 bytes, hex) and a signer of answers. */
export interface TestKey {
  pubKeyHex: string;
  privateKey: KeyObject;
}

/** A new P-256 key pair. */
export function newKey(): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = publicKey.export({ format: "jwk" });
  const raw = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x!, "base64url"),
    Buffer.from(jwk.y!, "base64url"),
  ]);
  return { pubKeyHex: raw.toString("hex"), privateKey };
}

/**
 * The `clientdata` and `signaturedata` a U2F key sends for `challenge`
 * (base64url), signed by `key` over SHA256(appId) ‖ UP ‖ counter ‖ SHA256(clientData).
 */
export function signAnswer(
  key: TestKey,
  options: { appId: string; challenge: string; counter: number; typ?: string; up?: number },
): { clientdata: string; signaturedata: string } {
  const clientData = JSON.stringify({
    typ: options.typ ?? "navigator.id.getAssertion",
    challenge: options.challenge,
    origin: options.appId,
    cid_pubkey: "unused",
  });
  const head = Buffer.alloc(5);
  head[0] = options.up ?? 1;
  head.writeUInt32BE(options.counter, 1);
  const signed = Buffer.concat([
    createHash("sha256").update(options.appId).digest(),
    head,
    createHash("sha256").update(clientData).digest(),
  ]);
  const signature = sign("sha256", signed, { key: key.privateKey, dsaEncoding: "der" });
  return {
    clientdata: b64u(clientData),
    signaturedata: b64u(Buffer.concat([head, signature])),
  };
}

/**
 * Seeds a u2f token as a privacyIDEA migration leaves it (key handle as the
 * secret, `pubKey`, `appId`, attestation info, the counter) and assigns it to
 * alice with {@link U2F_PIN} through `POST /token/assign`.
 */
export async function seedU2f(
  t: TestApp,
  options: {
    serial: string;
    pubKeyHex: string;
    keyHandle?: Uint8Array;
    appId?: string;
    count?: number;
    description?: string;
    subject?: string;
  },
): Promise<void> {
  await writeImportedToken(t.deps, {
    serial: options.serial,
    type: "u2f",
    description: options.description ?? VECTOR.description,
    secret: options.keyHandle ?? Buffer.from(VECTOR.keyHandle, "base64url"),
    pinHash: "",
    active: true,
    revoked: false,
    locked: false,
    failcount: 0,
    maxfail: 10,
    count: options.count ?? 0,
    countWindow: 10,
    syncWindow: 1000,
    otplen: 6,
    rolloutState: "",
    info: {
      pubKey: { value: options.pubKeyHex, type: "" },
      appId: { value: options.appId ?? VECTOR.appId, type: "" },
      attestation_subject: { value: options.subject ?? VECTOR.subject, type: "" },
      attestation_issuer: { value: VECTOR.issuer, type: "" },
      attestation_serial: { value: VECTOR.certSerial, type: "" },
    },
    realms: [],
    createdAt: 0,
  }, { onExisting: "skip" });
  const res = await jsonOf(
    await t.asAdmin("POST", "/token/assign", {
      body: { serial: options.serial, user: "alice", realm: "realm1", pin: U2F_PIN },
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** `POST /validate/check` → `{status, body}`. */
export async function u2fCheck(t: TestApp, body: Record<string, unknown>) {
  return await jsonOf(await t.post("/validate/check", body));
}

/** Triggers alice's challenge with her PIN; returns the transaction id and the u2f entry. */
export async function u2fChallenge(t: TestApp): Promise<{ tid: string; entry: Json; body: Json }> {
  const res = await u2fCheck(t, { user: "alice", realm: "realm1", pass: U2F_PIN });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.value, false);
  assert.equal(res.body.result.authentication, "CHALLENGE", JSON.stringify(res.body));
  return {
    tid: res.body.detail.transaction_id,
    entry: res.body.detail.multi_challenge[0],
    body: res.body,
  };
}

/** The token's stored counter, fail counter and active flag as `GET /token/` lists them. */
export async function tokenState(
  t: TestApp,
  serial: string,
): Promise<{ count: number; failcount: number; active: boolean }> {
  const res = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
  const tok = res.body.result.value.tokens[0];
  return { count: tok.count, failcount: tok.failcount, active: tok.active };
}
