/**
 * The smartphone container's cryptography against the independently computed
 * vectors of spec 13 §3.2 and the URL encodings of §3.3.
 */
import assert from "node:assert/strict";
import { createDecipheriv, generateKeyPairSync } from "node:crypto";
import { Buffer } from "node:buffer";
import {
  b64urlPadded,
  containerMessage,
  decodeBase64Any,
  digestNameOf,
  endpointUrl,
  parseEcPublicKeyPem,
  pyIsoUtc,
  registrationUrl,
  sealForApp,
  verifyEcdsaDer,
  x25519PublicOf,
  x25519Shared,
} from "../../src/lib/container_crypto.ts";
import { fromHex, toHex } from "../../src/lib/random.ts";

const APP_KEY_PEM = `-----BEGIN PUBLIC KEY-----
MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEXIakf0D27c1oyh49ESUi3IrJHOTBC3Q6
0+jiU48wvkiNUAN6AblA3cbfjXRlrhYmeJ5c1iRMeag7t9Oj5xOOudHyFqr9IVud
68iVDYbMQBoR68kp0D46rjIfN1YIqjFD
-----END PUBLIC KEY-----
`;

const REG_NONCE = "c238392af49250804c25bbd7d86408839e91fe97";
const REG_TIME = "2024-12-20T09:53:40.158319+00:00";
const SYNC_NONCE = "5e1f0e3a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e";
const SYNC_TIME = "2025-01-01T12:00:00.123456+00:00";
const SERIAL = "SMPH0001A2B3";
const BASE = "https://pi.example.com/";
const APP_ENC_KEY = "B6N8vBQgk8i3VdwbEOhstCY3StFqqFPtC9_AsrhtHHw=";
const CLIENT_DICT =
  '{"serial": "SMPH0001A2B3", "type": "smartphone", "tokens": [{"serial": "TOTP0001", "tokentype": "TOTP"}]}';

/** The four signed messages of §3.2, built with our message rule, and their signatures. */
const VECTORS = [
  {
    name: "finalize (brand, model, passphrase)",
    message: containerMessage({
      nonce: REG_NONCE,
      timeStamp: REG_TIME,
      serial: SERIAL,
      scope: endpointUrl(BASE, "container/register/finalize"),
      deviceBrand: "XY",
      deviceModel: "ABC123",
      passphrase: "top_secret",
    }),
    text:
      `${REG_NONCE}|${REG_TIME}|${SERIAL}|${BASE}container/register/finalize|XY|ABC123|top_secret`,
    signature:
      "MGUCMFBv8Z/MPXqFeBDykMjlRCDPON/Lx/ugjJ8rQ8N84gkE5Sfpawr/28xycIabrkMcCwIxALLcfMccYHejIH2VCgIZikRnSVgn6RixGE9CfCA2U57gR9WJftz/xqdAxDNPlnCWHQ==",
  },
  {
    name: "finalize (minimal)",
    message: containerMessage({
      nonce: REG_NONCE,
      timeStamp: REG_TIME,
      serial: SERIAL,
      scope: endpointUrl("https://pi.example.com", "container/register/finalize"),
      deviceBrand: "",
      deviceModel: "",
    }),
    text: `${REG_NONCE}|${REG_TIME}|${SERIAL}|${BASE}container/register/finalize`,
    signature:
      "MGUCMQD68pLhhE0aEfIzk1t6sn7F8MrcmI3wOVp44j22zykjQZ8pLL8NXfsvKOS2uNM4gqcCMCozhgfH+vI8fqiwUaNpid8KK/IS4DQLRBj7FdZ3mIrTHQkgJgaWhhZGd8KudBfejw==",
  },
  {
    name: "synchronize",
    message: containerMessage({
      nonce: SYNC_NONCE,
      timeStamp: SYNC_TIME,
      serial: SERIAL,
      scope: endpointUrl(BASE, "container/synchronize"),
      encKey: APP_ENC_KEY,
      containerDict: CLIENT_DICT,
    }),
    text:
      `${SYNC_NONCE}|${SYNC_TIME}|${SERIAL}|${BASE}container/synchronize|${APP_ENC_KEY}|${CLIENT_DICT}`,
    signature:
      "MGQCMGy/RBMXAYsG3KJAlc77eMEt7UVi09tof/sx0hCtVmYoPGo1Y2wlEYyRKnyxleSh/gIwG64hXhsRFRUZ2YsbDLcTaI4Pwy1WLo/MBJlmKUNptLPUnmz0flT5gEUhWftSBehU",
  },
  {
    name: "terminate/client",
    message: containerMessage({
      nonce: SYNC_NONCE,
      timeStamp: SYNC_TIME,
      serial: SERIAL,
      scope: endpointUrl(BASE, "container/register/terminate/client"),
    }),
    text: `${SYNC_NONCE}|${SYNC_TIME}|${SERIAL}|${BASE}container/register/terminate/client`,
    signature:
      "MGYCMQCdtf/resF6Nzhry01Fok6j+iSTr2QFcFDCHM5flpvUemsSquqGbjDe0zwGDepFLP4CMQCM41pEbph897Wwa7gIlK3BV8tjCv6N3ahwwZS4C6xN/daaIpOyXLJQVkZtvq0PDSU=",
  },
];

for (const v of VECTORS) {
  Deno.test(`container crypto: the ${v.name} message is spec 13 §3.2's text and its signature verifies`, () => {
    assert.equal(v.message, v.text);
    const key = parseEcPublicKeyPem(APP_KEY_PEM)!;
    assert.ok(key);
    const sig = decodeBase64Any(v.signature)!;
    assert.equal(verifyEcdsaDer(key, v.message, sig, "SHA256"), true);
    // the b64url spelling of the same signature verifies too
    const urlSig = decodeBase64Any(v.signature.replaceAll("+", "-").replaceAll("/", "_"))!;
    assert.equal(verifyEcdsaDer(key, v.message, urlSig, "sha256"), true);
  });

  Deno.test(`container crypto: a changed ${v.name} message or signature does not verify`, () => {
    const key = parseEcPublicKeyPem(APP_KEY_PEM)!;
    const sig = decodeBase64Any(v.signature)!;
    assert.equal(verifyEcdsaDer(key, `${v.message}x`, sig), false);
    assert.equal(verifyEcdsaDer(key, v.message.replace("SMPH", "smph"), sig), false);
    const flipped = sig.slice();
    flipped[10] ^= 1;
    assert.equal(verifyEcdsaDer(key, v.message, flipped), false);
    // raw r‖s (what WebCrypto produces) is not the DER the app sends
    assert.equal(verifyEcdsaDer(key, v.message, new Uint8Array(96)), false);
    assert.equal(verifyEcdsaDer(key, v.message, new Uint8Array(0)), false);
  });
}

Deno.test("container crypto: a man in the middle who swaps the app's encryption key or container dict breaks the signature", () => {
  const key = parseEcPublicKeyPem(APP_KEY_PEM)!;
  const sync = VECTORS[2];
  const sig = decodeBase64Any(sync.signature)!;
  const base = {
    nonce: SYNC_NONCE,
    timeStamp: SYNC_TIME,
    serial: SERIAL,
    scope: `${BASE}container/synchronize`,
  };
  const otherKey = b64urlPadded(x25519PublicOf(new Uint8Array(32).fill(7)));
  assert.equal(
    verifyEcdsaDer(
      key,
      containerMessage({ ...base, encKey: otherKey, containerDict: CLIENT_DICT }),
      sig,
    ),
    false,
  );
  assert.equal(
    verifyEcdsaDer(
      key,
      containerMessage({
        ...base,
        encKey: APP_ENC_KEY,
        containerDict: CLIENT_DICT.replace("TOTP0001", "TOTP0002"),
      }),
      sig,
    ),
    false,
  );
  // the signature of one scope is not accepted for another (sync signature as terminate)
  assert.equal(
    verifyEcdsaDer(
      key,
      containerMessage({ ...base, scope: `${BASE}container/register/terminate/client` }),
      sig,
    ),
    false,
  );
});

Deno.test("container crypto: the r and s of spec 13 §3.2 are those inside the DER signatures", () => {
  // DER: 30 len 02 lr r 02 ls s (leading zero bytes for positive integers)
  function rs(b64: string): [string, string] {
    const der = decodeBase64Any(b64)!;
    let i = 2;
    const lr = der[i + 1];
    const r = der.subarray(i + 2, i + 2 + lr);
    i = i + 2 + lr;
    const ls = der[i + 1];
    const s = der.subarray(i + 2, i + 2 + ls);
    const strip = (x: Uint8Array) => toHex(x).replace(/^(00)+/, "").padStart(96, "0");
    return [strip(r), strip(s)];
  }
  assert.deepEqual(rs(VECTORS[0].signature), [
    "506ff19fcc3d7a857810f290c8e54420cf38dfcbc7fba08c9f2b43c37ce20904e527e96b0affdbcc7270869bae431c0b",
    "b2dc7cc71c6077a3207d950a02198a4467495827e918b1184f427c2036539ee047d5897edcffc6a740c4334f9670961d",
  ]);
  assert.deepEqual(rs(VECTORS[2].signature), [
    "6cbf441317018b06dca24095cefb78c12ded4562d3db687ffb31d210ad5666283c6a35636c25118c912a7cb195e4a1fe",
    "1bae215e1b11151519d98b1b0cb713688e0fc32d562e8fcc049966294369b4b3d49e6cf47e54f980452159fb5205e854",
  ]);
});

Deno.test("container crypto: malformed keys and signatures read as 'does not verify', never throw", () => {
  assert.equal(parseEcPublicKeyPem(""), undefined);
  assert.equal(
    parseEcPublicKeyPem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"),
    undefined,
  );
  assert.equal(parseEcPublicKeyPem(APP_KEY_PEM.replace("PUBLIC", "PRIVATE")), undefined);
  assert.equal(parseEcPublicKeyPem("x".repeat(10000)), undefined);
  // an RSA key is not an app signing key
  const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey
    .export({ format: "pem", type: "spki" }) as string;
  assert.equal(parseEcPublicKeyPem(rsa), undefined);
  assert.equal(decodeBase64Any("not base64!"), undefined);
  assert.equal(decodeBase64Any("A"), undefined);
  assert.equal(decodeBase64Any("AAA=="), undefined);
  assert.deepEqual(decodeBase64Any("AAECAw=="), new Uint8Array([0, 1, 2, 3]));
  assert.deepEqual(decodeBase64Any("AAECAw"), new Uint8Array([0, 1, 2, 3]));
  assert.deepEqual(decodeBase64Any("-_8="), new Uint8Array([0xfb, 0xff]));
  assert.deepEqual(decodeBase64Any("+/8="), new Uint8Array([0xfb, 0xff]));
});

Deno.test("container crypto: hash names are looked up case-insensitively, unknown ones mean SHA-256", () => {
  assert.equal(digestNameOf("SHA256"), "sha256");
  assert.equal(digestNameOf("sha384"), "sha384");
  assert.equal(digestNameOf("Sha512"), "sha512");
  assert.equal(digestNameOf("whirlpool"), "sha256");
  assert.equal(digestNameOf(undefined), "sha256");
});

Deno.test("container crypto: X25519 and AES-256-GCM reproduce spec 13 §3.2's encrypted container dict", () => {
  const appPrivate = fromHex("0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20");
  const serverPrivate = fromHex("2122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f40");
  assert.equal(b64urlPadded(x25519PublicOf(appPrivate)), APP_ENC_KEY);
  assert.equal(
    toHex(x25519PublicOf(serverPrivate)),
    "5869aff450549732cbaaed5e5df9b30a6da31cb0e5742bad5ad4a1a768f1a67b",
  );
  const shared = x25519Shared(serverPrivate, x25519PublicOf(appPrivate))!;
  assert.equal(toHex(shared), "a84dc7c3c8f058b1b2dc4cd1e9b5dc0a7987f88b6a9564cde3391fc421159e77");
  assert.equal(toHex(x25519Shared(appPrivate, x25519PublicOf(serverPrivate))!), toHex(shared));

  const plaintext =
    '{"container": {"type": "smartphone", "serial": "SMPH0001A2B3"}, "tokens": {"add": ["otpauth://totp/TOTP0002?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&period=30&digits=6&issuer=privacyIDEA"], "update": [{"serial": "TOTP0001", "tokentype": "totp", "offline": false}]}}';
  const iv = fromHex("000102030405060708090a0b0c0d0e0f");
  const sealed = sealForApp(APP_ENC_KEY, plaintext, serverPrivate, iv)!;
  assert.deepEqual(sealed, {
    publicServerKey: "WGmv9FBUlzLLqu1eXfmzCm2jHLDldCutWtShp2jxpns=",
    ciphertext:
      "rvy3UXRso0GGaKrN9iPm8GHRIjqk2HRcepUDHUMiBLNio82VODqCLyRYzUU375DIMDMlkNExHLPMzZt0WznlHBzr3JAYmVug9GdZqbNLIrMMpVPTwujqFHnahKfNHFvvmvYcH_YRoGOYzgJBXjr-_FHYf4vm5qpRVQ4x6lxNqsL__nolwjfbYhaVYzncuzcfjwAPoEnAMY4pSxoDJQiwZMfDs61guqG-NpxNYIsUuCbyDwD52dpO5B6ZZ8DzMFNZERyLmKP_qTikREMZdfqFZVYsJvIh87fUZXlHTeEIzk1ECAitYsCWKhYLqkn0w62ygpis8pvF2qpp_dPphl4GKnV-IMq0jIGl",
    initVector: "AAECAwQFBgcICQoLDA0ODw==",
    tag: "maZZ1VJoh594vwMTO5W3Mg==",
  });
  // the app side: decrypt with its own private key and the server's public key
  const key = x25519Shared(appPrivate, decodeBase64Any(sealed.publicServerKey)!)!;
  const d = createDecipheriv("aes-256-gcm", key, decodeBase64Any(sealed.initVector)!);
  d.setAuthTag(decodeBase64Any(sealed.tag)!);
  const out = Buffer.concat([d.update(decodeBase64Any(sealed.ciphertext)!), d.final()]);
  assert.equal(out.toString("utf8"), plaintext);
});

Deno.test("container crypto: a bad app encryption key gives no ciphertext", () => {
  const serverPrivate = new Uint8Array(32).fill(3);
  const iv = new Uint8Array(16);
  assert.equal(sealForApp("not base64!", "{}", serverPrivate, iv), undefined);
  assert.equal(sealForApp(b64urlPadded(new Uint8Array(31)), "{}", serverPrivate, iv), undefined);
  // the all-zero point has low order: the shared secret would be zero, a key everyone knows
  assert.equal(sealForApp(b64urlPadded(new Uint8Array(32)), "{}", serverPrivate, iv), undefined);
});

Deno.test("container crypto: endpoint URLs join with one slash and keep a URL that already names the endpoint", () => {
  assert.equal(
    endpointUrl("https://pi.example.com", "container/register/finalize"),
    "https://pi.example.com/container/register/finalize",
  );
  assert.equal(
    endpointUrl("https://pi.example.com/", "container/synchronize"),
    "https://pi.example.com/container/synchronize",
  );
  assert.equal(
    endpointUrl("https://pi.example.com/container/synchronize", "container/synchronize"),
    "https://pi.example.com/container/synchronize",
  );
  assert.equal(endpointUrl(" ", "container/synchronize"), " /container/synchronize");
});

Deno.test("container crypto: timestamps are Python isoformat, the fraction left out when zero", () => {
  assert.equal(
    pyIsoUtc(Date.UTC(2024, 11, 20, 9, 53, 40, 158)),
    "2024-12-20T09:53:40.158000+00:00",
  );
  assert.equal(pyIsoUtc(Date.UTC(2024, 11, 20, 9, 53, 40, 0)), "2024-12-20T09:53:40+00:00");
  assert.equal(pyIsoUtc(Date.UTC(2025, 0, 1, 12, 0, 0, 5)), "2025-01-01T12:00:00.005000+00:00");
});

Deno.test("container crypto: the registration URL has privacyIDEA's parameter order and spec 13 §3.3's encodings", () => {
  const url = registrationUrl({
    serial: SERIAL,
    nonce: REG_NONCE,
    timeStamp: REG_TIME,
    serverUrl: BASE,
    ttl: 10,
    keyAlgorithm: "secp384r1",
    hashAlgorithm: "SHA256",
    sslVerify: "True",
    passphrasePrompt: "Enter your passphrase",
    sendPassphrase: "False",
  });
  assert.equal(
    url,
    "pia://container/SMPH0001A2B3?issuer=privacyIDEA&ttl=10&nonce=c238392af49250804c25bbd7d86408839e91fe97" +
      "&time=2024-12-20T09%3A53%3A40.158319%2B00%3A00&url=https%3A//pi.example.com/&serial=SMPH0001A2B3" +
      "&key_algorithm=secp384r1&hash_algorithm=SHA256&ssl_verify=True" +
      "&passphrase=Enter%20your%20passphrase&send_passphrase=False",
  );
  const extra = registrationUrl({
    serial: SERIAL,
    nonce: REG_NONCE,
    timeStamp: REG_TIME,
    serverUrl: BASE,
    ttl: 3,
    keyAlgorithm: "secp384r1",
    hashAlgorithm: "SHA256",
    sslVerify: "False",
    passphrasePrompt: "",
    sendPassphrase: "True",
    extra: [["a b", "c&d"], ["x", "ü"]],
  });
  assert.ok(
    extra.endsWith("&ssl_verify=False&passphrase=&send_passphrase=True&a%20b=c%26d&x=%C3%BC"),
    extra,
  );
  assert.ok(extra.includes("&ttl=3&"));
});

Deno.test("container crypto: the app double's signatures verify and it decrypts what the server seals", async () => {
  const { ContainerApp } = await import("../http/_container_app.ts");
  const app = new ContainerApp(() => Date.UTC(2026, 0, 1));
  const key = parseEcPublicKeyPem(app.publicKeyPem())!;
  assert.equal(key.asymmetricKeyDetails?.namedCurve, "secp384r1");
  const text = `${REG_NONCE}|${REG_TIME}|${SERIAL}|${BASE}container/register/finalize`;
  assert.equal(verifyEcdsaDer(key, text, decodeBase64Any(app.signText(text))!), true);
  assert.equal(verifyEcdsaDer(key, `${text}|x`, decodeBase64Any(app.signText(text))!), false);

  const appPrivate = fromHex("0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20");
  const { createPrivateKey } = await import("node:crypto");
  const appKey = createPrivateKey({
    key: Buffer.concat([Buffer.from("302e020100300506032b656e04220420", "hex"), appPrivate]),
    format: "der",
    type: "pkcs8",
  });
  const sealed = sealForApp(
    APP_ENC_KEY,
    '{"a": 1}',
    new Uint8Array(32).fill(9),
    new Uint8Array(16),
  )!;
  const plain = app.decrypt(appKey, {
    public_server_key: sealed.publicServerKey,
    container_dict_server: sealed.ciphertext,
    encryption_params: { init_vector: sealed.initVector, tag: sealed.tag },
  });
  assert.equal(plain, '{"a": 1}');
});
