/**
 * A small certificate authority on well-kept libraries: PKCS#10 requests,
 * certificates and CRLs through `@peculiar/x509` (on Web Crypto), PKCS#12
 * files through `pkijs`, private key formats through `node:crypto`. No
 * hand-written ASN.1: the only encoding done here is PEM armour (base64
 * lines between markers).
 *
 * @module
 */
import type * as x509 from "@peculiar/x509";
import type * as pkijs from "pkijs";
import { Buffer } from "node:buffer";
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";

/** The certificate libraries, loaded together on first use. */
interface X509Libraries {
  x509: typeof import("@peculiar/x509");
  pkijs: typeof import("pkijs");
  asn1js: typeof import("asn1js");
}

let librariesLoading: Promise<X509Libraries> | undefined;

// about 10 MB resident with @simplewebauthn/server's share, and only certificate tokens and CAs
// use them: loaded on first use, not with the server
function libraries(): Promise<X509Libraries> {
  return librariesLoading ??= (async () => {
    // @peculiar/x509 resolves its algorithm providers through tsyringe, which needs the
    // Reflect metadata API before the library loads
    await import("reflect-metadata");
    const [x509, pkijs, asn1js] = await Promise.all([
      import("@peculiar/x509"),
      import("pkijs"),
      import("asn1js"),
    ]);
    return { x509, pkijs, asn1js };
  })();
}

/** A CA key ready to sign, with the signature algorithm that goes with it. */
export interface SigningKey {
  privateKey: CryptoKey;
  algorithm: Algorithm | EcdsaParams;
}

/** A distinguished name as ordered (type OID, value) pairs, one attribute per RDN. */
export type NameAttributes = readonly (readonly [oid: string, value: string])[];

/** OIDs of the name attributes Tessera's CA knows by name. */
export const NAME_OIDS = {
  C: "2.5.4.6",
  ST: "2.5.4.8",
  L: "2.5.4.7",
  O: "2.5.4.10",
  OU: "2.5.4.11",
  CN: "2.5.4.3",
  emailAddress: "1.2.840.113549.1.9.1",
} as const;

const OID_NAMES: Record<string, string> = {
  "2.5.4.6": "C",
  "2.5.4.8": "ST",
  "2.5.4.7": "L",
  "2.5.4.10": "O",
  "2.5.4.11": "OU",
  "2.5.4.3": "CN",
  "1.2.840.113549.1.9.1": "E",
};

const RSA_SHA256 = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

/** A CSR or key text that cannot be used (bad PEM, bad structure, bad signature). */
export class X509InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "X509InputError";
  }
}

/** A copy of `u` on its own ArrayBuffer (what Web Crypto takes). */
function bytes(u: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(u);
}

/** PEM armour of DER bytes under `label` (64-character lines). */
export function toPem(der: ArrayBuffer | Uint8Array, label: string): string {
  const b64 = btoa(String.fromCharCode(...new Uint8Array(der)));
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/** The DER bytes of the first PEM block labelled `label` in `text`; throws when there is none. */
export function fromPem(text: string, label: string): Uint8Array<ArrayBuffer> {
  const m = text.match(
    new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]*?)-----END ${label}-----`),
  );
  if (!m) throw new X509InputError(`no ${label} block`);
  const b64 = m[1].replace(/\s+/g, "");
  try {
    return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  } catch {
    throw new X509InputError(`the ${label} block is not base64`);
  }
}

function jsonName(attrs: NameAttributes): x509.JsonName {
  // one attribute per RDN, keyed by OID so no value is ever parsed as name syntax
  return attrs.map(([oid, value]) => ({ [oid]: [value] }));
}

/** The (type OID, value) pairs of a name, in order (multi-valued RDNs flattened). */
export function nameAttributes(name: x509.Name): [string, string][] {
  const out: [string, string][] = [];
  for (const rdn of name.toJSON()) {
    for (const [type, values] of Object.entries(rdn)) {
      const oid = type.includes(".") ? type : (NAME_OIDS as Record<string, string>)[type] ??
        Object.entries(OID_NAMES).find(([, n]) => n === type)?.[0] ?? type;
      for (const v of values as string[]) out.push([oid, v]);
    }
  }
  return out;
}

/** An OpenSSL-style one-line name (`/C=DE/O=x/CN=alice`), as `index.txt` writes it. */
export function slashName(attrs: NameAttributes): string {
  return attrs.map(([oid, v]) =>
    `/${OID_NAMES[oid] === "E" ? "emailAddress" : OID_NAMES[oid] ?? oid}=${v}`
  )
    .join("");
}

// ---------------------------------------------------------------------------
// keys

/**
 * Reads a PEM private key (PKCS#8, PKCS#1 `RSA PRIVATE KEY` or SEC1 `EC PRIVATE
 * KEY`, unencrypted) and returns it as PKCS#8 DER; throws {@link X509InputError}.
 */
export function privateKeyToPkcs8(pem: string): Uint8Array {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: "pem" });
  } catch {
    // the reason may quote the input: never echoed
    throw new X509InputError("not an unencrypted PEM private key");
  }
  const type = key.asymmetricKeyType;
  if (type !== "rsa" && type !== "ec") {
    throw new X509InputError(`unsupported key type "${type}" (RSA or EC keys only)`);
  }
  return new Uint8Array(key.export({ type: "pkcs8", format: "der" }));
}

/** Imports PKCS#8 DER (RSA or EC P-256/P-384/P-521) as a signing key with SHA-256 or the curve's hash. */
export async function signingKeyOf(pkcs8: Uint8Array): Promise<SigningKey> {
  const der = bytes(pkcs8);
  const key = createPrivateKey({ key: Buffer.from(pkcs8), format: "der", type: "pkcs8" });
  if (key.asymmetricKeyType === "rsa") {
    const privateKey = await crypto.subtle.importKey("pkcs8", der, RSA_SHA256, false, ["sign"]);
    return { privateKey, algorithm: RSA_SHA256 };
  }
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const named = curve === "prime256v1"
    ? ["P-256", "SHA-256"]
    : curve === "secp384r1"
    ? ["P-384", "SHA-384"]
    : curve === "secp521r1"
    ? ["P-521", "SHA-512"]
    : undefined;
  if (key.asymmetricKeyType !== "ec" || !named) {
    throw new X509InputError("unsupported CA key (RSA or EC P-256/P-384/P-521 only)");
  }
  const privateKey = await crypto.subtle.importKey(
    "pkcs8",
    der,
    { name: "ECDSA", namedCurve: named[0] },
    false,
    ["sign"],
  );
  return { privateKey, algorithm: { name: "ECDSA", hash: named[1] } };
}

/** True when the PKCS#8 key and the certificate's public key are one key pair. */
export async function keyMatchesCertificate(
  pkcs8: Uint8Array,
  certPem: string,
): Promise<boolean> {
  const key = createPrivateKey({ key: Buffer.from(pkcs8), format: "der", type: "pkcs8" });
  const spki = createPublicKey(key).export({ type: "spki", format: "der" });
  return spki.equals(Buffer.from(await certificatePublicKey(certPem)));
}

/** A new RSA key pair (e = 65537) for a certificate: its PKCS#8 DER and a signer for its CSR. */
export async function generateRsaKey(bits: number): Promise<CryptoKeyPair> {
  return await crypto.subtle.generateKey(
    { ...RSA_SHA256, publicExponent: new Uint8Array([1, 0, 1]), modulusLength: bits },
    true,
    ["sign", "verify"],
  );
}

// ---------------------------------------------------------------------------
// requests

/** A parsed, signature-checked PKCS#10 request. */
export interface CertificateRequest {
  /** The request as canonical PEM (64-character lines). */
  pem: string;
  subject: [string, string][];
  /** DER SubjectPublicKeyInfo. */
  publicKey: Uint8Array;
  /** Whether the request's self-signature verifies. */
  isSignatureValid: boolean;
}

/**
 * Parses a PEM CSR (markers optional, line breaks anywhere, as privacyIDEA
 * accepts it); throws {@link X509InputError} when it is no CSR.
 */
export async function parseCertificateRequest(text: string): Promise<CertificateRequest> {
  const BEGIN = "-----BEGIN CERTIFICATE REQUEST-----";
  const END = "-----END CERTIFICATE REQUEST-----";
  let body = text.replace(/\r?\n/g, "");
  if (!body.startsWith(BEGIN)) body = BEGIN + body;
  if (!body.endsWith(END)) body = body + END;
  const der = fromPem(body, "CERTIFICATE REQUEST");
  const { x509 } = await libraries();
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(der);
  } catch {
    throw new X509InputError("not a PKCS#10 certificate request");
  }
  let isSignatureValid = false;
  try {
    isSignatureValid = await csr.verify();
  } catch {
    isSignatureValid = false;
  }
  return {
    pem: toPem(csr.rawData, "CERTIFICATE REQUEST"),
    subject: nameAttributes(csr.subjectName),
    publicKey: new Uint8Array(csr.publicKey.rawData),
    isSignatureValid,
  };
}

/** A CSR for `subject`, signed with SHA-256 by the key pair's private key. */
export async function createCertificateRequest(
  subject: NameAttributes,
  keys: CryptoKeyPair,
): Promise<string> {
  const { x509 } = await libraries();
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: jsonName(subject),
    keys,
    signingAlgorithm: RSA_SHA256,
  });
  return toPem(csr.rawData, "CERTIFICATE REQUEST");
}

/** The DER SubjectPublicKeyInfo of a PEM certificate; throws {@link X509InputError}. */
export async function certificatePublicKey(pem: string): Promise<Uint8Array> {
  const { x509 } = await libraries();
  try {
    return new Uint8Array(new x509.X509Certificate(pem).publicKey.rawData);
  } catch {
    throw new X509InputError("not a PEM certificate");
  }
}

// ---------------------------------------------------------------------------
// certificates

/** Extension profiles: privacyIDEA's generated openssl.cnf sections. */
export const EXTENSION_PROFILES = [
  "server",
  "user",
  "usr_cert",
  "etoken",
  "ocsp",
  "v3_ca",
] as const;

/** One of {@link EXTENSION_PROFILES}. */
export type ExtensionProfile = typeof EXTENSION_PROFILES[number];

async function profileExtensions(
  x509: X509Libraries["x509"],
  profile: ExtensionProfile,
  subjectKey: x509.PublicKey,
  issuer: x509.X509Certificate,
  crlUrls: readonly string[],
): Promise<x509.Extension[]> {
  const F = x509.KeyUsageFlags;
  const ski = await x509.SubjectKeyIdentifierExtension.create(subjectKey);
  const aki = await x509.AuthorityKeyIdentifierExtension.create(issuer.publicKey);
  const crlDp = crlUrls.length > 0 ? [new x509.CRLDistributionPointsExtension([...crlUrls])] : [];
  const notCa = new x509.BasicConstraintsExtension(false);
  switch (profile) {
    case "server":
      return [
        new x509.KeyUsagesExtension(F.digitalSignature | F.keyEncipherment),
        notCa,
        ski,
        aki,
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      ];
    case "user":
    case "etoken":
      return [
        new x509.KeyUsagesExtension(F.nonRepudiation | F.digitalSignature | F.keyEncipherment),
        notCa,
        ski,
        aki,
        ...crlDp,
      ];
    case "usr_cert":
      return [notCa, ski, aki, ...crlDp];
    case "ocsp":
      return [
        new x509.KeyUsagesExtension(F.digitalSignature | F.keyEncipherment),
        new x509.ExtendedKeyUsageExtension(["1.3.6.1.5.5.7.3.9"]),
        notCa,
        ski,
        aki,
        ...crlDp,
      ];
    case "v3_ca":
      return [ski, aki, new x509.BasicConstraintsExtension(true)];
  }
}

/** What {@link issueCertificate} needs. */
export interface IssueOptions {
  caCertificate: string;
  caKey: SigningKey;
  subject: NameAttributes;
  /** DER SubjectPublicKeyInfo of the new certificate's key. */
  publicKey: Uint8Array;
  /** Upper-case hex, even length. */
  serialHex: string;
  notBefore: Date;
  notAfter: Date;
  profile: ExtensionProfile;
  /** CRL distribution point URLs (profiles user, usr_cert, etoken, ocsp). */
  crlUrls?: readonly string[];
}

/** Issues a certificate signed by the CA; returns its PEM. */
export async function issueCertificate(o: IssueOptions): Promise<string> {
  const { x509 } = await libraries();
  const issuer = new x509.X509Certificate(o.caCertificate);
  const publicKey = new x509.PublicKey(bytes(o.publicKey));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: o.serialHex,
    subject: jsonName(o.subject),
    // the CA's own encoding of its name, so issuer and subject compare byte for byte
    issuer: issuer.subjectName,
    notBefore: o.notBefore,
    notAfter: o.notAfter,
    publicKey,
    signingKey: o.caKey.privateKey,
    signingAlgorithm: o.caKey.algorithm,
    extensions: await profileExtensions(x509, o.profile, publicKey, issuer, o.crlUrls ?? []),
  });
  return toPem(cert.rawData, "CERTIFICATE");
}

/** A new self-signed CA certificate (profile v3_ca) for `keys`; returns its PEM. */
export async function createCaCertificate(o: {
  subject: NameAttributes;
  keys: CryptoKeyPair;
  serialHex: string;
  notBefore: Date;
  notAfter: Date;
}): Promise<string> {
  const { x509 } = await libraries();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: o.serialHex,
    name: jsonName(o.subject),
    notBefore: o.notBefore,
    notAfter: o.notAfter,
    keys: o.keys,
    signingAlgorithm: RSA_SHA256,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(o.keys.publicKey),
    ],
  });
  return toPem(cert.rawData, "CERTIFICATE");
}

/** What Tessera reads of a certificate. */
export interface CertificateFacts {
  serialHex: string;
  subject: [string, string][];
  issuer: [string, string][];
  notBefore: Date;
  notAfter: Date;
  isCa: boolean;
}

/** Facts of a PEM certificate; throws {@link X509InputError}. */
export async function certificateFacts(pem: string): Promise<CertificateFacts> {
  const { x509 } = await libraries();
  let cert: x509.X509Certificate;
  try {
    cert = new x509.X509Certificate(pem);
  } catch {
    throw new X509InputError("not a PEM certificate");
  }
  const bc = cert.getExtension(x509.BasicConstraintsExtension);
  return {
    serialHex: normalSerial(cert.serialNumber),
    subject: nameAttributes(cert.subjectName),
    issuer: nameAttributes(cert.issuerName),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    isCa: bc?.ca === true,
  };
}

/** True when `certPem` carries a signature made by the key of `caPem`. */
export async function isSignedBy(certPem: string, caPem: string): Promise<boolean> {
  const { x509 } = await libraries();
  try {
    const cert = new x509.X509Certificate(certPem);
    const ca = new x509.X509Certificate(caPem);
    return await cert.verify({ publicKey: ca.publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}

/** A serial as privacyIDEA's `int_to_hex` writes it: upper-case hex, even length. */
export function normalSerial(hex: string): string {
  const h = hex.replace(/^0+(?=.)/, "").toUpperCase();
  return h.length % 2 === 0 ? h : `0${h}`;
}

// ---------------------------------------------------------------------------
// CRLs

/** Revocation reasons privacyIDEA's local CA accepts (RFC 5280 CRLReason names). */
export const CRL_REASONS = [
  "unspecified",
  "keyCompromise",
  "CACompromise",
  "affiliationChanged",
  "superseded",
  "cessationOfOperation",
] as const;

/** One of {@link CRL_REASONS}. */
export type CrlReason = typeof CRL_REASONS[number];

/** One revoked certificate of a CRL. */
export interface CrlEntry {
  serialHex: string;
  revokedAt: Date;
  reason: CrlReason;
}

/** A CRL (v2, with CRL number and authority key identifier) signed by the CA; returns its PEM. */
export async function createCrl(o: {
  caCertificate: string;
  caKey: SigningKey;
  entries: readonly CrlEntry[];
  thisUpdate: Date;
  nextUpdate: Date;
  crlNumber: number;
}): Promise<string> {
  const { x509, asn1js } = await libraries();
  const ca = new x509.X509Certificate(o.caCertificate);
  const crlNumber = new asn1js.Integer({ value: o.crlNumber }).toBER(false);
  const crl = await x509.X509CrlGenerator.create({
    issuer: ca.subjectName,
    thisUpdate: o.thisUpdate,
    nextUpdate: o.nextUpdate,
    entries: o.entries.map((e) => ({
      serialNumber: e.serialHex,
      revocationDate: e.revokedAt,
      // RFC 5280 §5.3.1: the reason code unspecified SHOULD be absent
      ...(e.reason === "unspecified"
        ? {}
        : { reason: x509.X509CrlReason[e.reason as keyof typeof x509.X509CrlReason] }),
    })),
    extensions: [
      await x509.AuthorityKeyIdentifierExtension.create(ca.publicKey),
      new x509.Extension("2.5.29.20", false, crlNumber),
    ],
    signingKey: o.caKey.privateKey,
    signingAlgorithm: o.caKey.algorithm,
  });
  return toPem(crl.rawData, "X509 CRL");
}

/** The next-update time of a PEM CRL, or undefined when it has none or does not parse. */
export async function crlNextUpdate(pem: string): Promise<Date | undefined> {
  const { x509 } = await libraries();
  try {
    return new x509.X509Crl(fromPem(pem, "X509 CRL")).nextUpdate;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// PKCS#12

const PKCS12_ITERATIONS = 100_000;

/**
 * A PKCS#12 file (DER) holding the key and, when given, its certificate, both
 * under the friendly name and a local key id, encrypted with PBES2
 * (AES-256-CBC, PBKDF2-HMAC-SHA-256) and MAC'd with HMAC-SHA-256 under
 * `password` — what privacyIDEA's `BestAvailableEncryption` writes.
 */
export async function createPkcs12(o: {
  pkcs8: Uint8Array;
  certificate?: string;
  password: string;
  friendlyName: string;
}): Promise<Uint8Array> {
  const { pkijs, asn1js } = await libraries();
  const password = new TextEncoder().encode(o.password).buffer as ArrayBuffer;
  const keyInfo = pkijs.PrivateKeyInfo.fromBER(o.pkcs8.slice().buffer as ArrayBuffer);
  const certDer = o.certificate ? fromPem(o.certificate, "CERTIFICATE") : undefined;
  // the local key id ties the key to its certificate: SHA-1 of the certificate, as OpenSSL
  const keyId = new Uint8Array(
    await crypto.subtle.digest("SHA-1", bytes(certDer ?? o.pkcs8)),
  );
  const attributes = () => [
    new pkijs.Attribute({
      type: "1.2.840.113549.1.9.20",
      values: [new asn1js.BmpString({ value: o.friendlyName })],
    }),
    new pkijs.Attribute({
      type: "1.2.840.113549.1.9.21",
      values: [new asn1js.OctetString({ valueHex: keyId.buffer as ArrayBuffer })],
    }),
  ];
  // pkijs draws the IV itself; its parameter type asks for one
  const encryption = {
    password,
    contentEncryptionAlgorithm: { name: "AES-CBC", length: 256 },
    hmacHashAlgorithm: "SHA-256",
    iterationCount: PKCS12_ITERATIONS,
  } as unknown as Parameters<pkijs.PKCS8ShroudedKeyBag["makeInternalValues"]>[0];
  const keyBag = new pkijs.SafeBag({
    bagId: "1.2.840.113549.1.12.10.1.2",
    bagValue: new pkijs.PKCS8ShroudedKeyBag({ parsedValue: keyInfo }),
    bagAttributes: attributes(),
  });
  const contents: { privacyMode: number; value: pkijs.SafeContents }[] = [];
  const contentOptions: object[] = [];
  if (certDer) {
    const certBag = new pkijs.SafeBag({
      bagId: "1.2.840.113549.1.12.10.1.3",
      bagValue: new pkijs.CertBag({
        parsedValue: pkijs.Certificate.fromBER(certDer.slice().buffer as ArrayBuffer),
      }),
      bagAttributes: attributes(),
    });
    // the certificate travels encrypted too, as OpenSSL and cryptography write it
    contents.push({ privacyMode: 1, value: new pkijs.SafeContents({ safeBags: [certBag] }) });
    contentOptions.push(encryption);
  }
  contents.push({ privacyMode: 0, value: new pkijs.SafeContents({ safeBags: [keyBag] }) });
  contentOptions.push({});
  const pfx = new pkijs.PFX({
    parsedValue: {
      integrityMode: 0,
      authenticatedSafe: new pkijs.AuthenticatedSafe({ parsedValue: { safeContents: contents } }),
    },
  });
  await (keyBag.bagValue as pkijs.PKCS8ShroudedKeyBag).makeInternalValues(encryption);
  await pfx.parsedValue!.authenticatedSafe!.makeInternalValues({ safeContents: contentOptions });
  await pfx.makeInternalValues({
    password,
    iterations: PKCS12_ITERATIONS,
    pbkdf2HashAlgorithm: "SHA-256",
    hmacHashAlgorithm: "SHA-256",
  });
  return new Uint8Array(pfx.toSchema().toBER(false));
}
