/**
 * X.509 certificate chains against a set of trust anchors: PEM parsing, and
 * a check that a chain (leaf first, as a WebAuthn `x5c`) is signed link by
 * link, every certificate valid at a given time, and ends at an anchor.
 *
 * @module
 */
import { X509Certificate } from "node:crypto";

const PEM_CERTIFICATE_REGEXP =
  /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM text (one or more blocks); throws on a block that does not parse. */
export function parsePemCertificates(text: string): X509Certificate[] {
  return [...text.matchAll(PEM_CERTIFICATE_REGEXP)].map((m) => new X509Certificate(m[0]));
}

function isValidAt(cert: X509Certificate, atMs: number): boolean {
  return Date.parse(cert.validFrom) <= atMs && atMs <= Date.parse(cert.validTo);
}

function isSameCertificate(a: X509Certificate, b: X509Certificate): boolean {
  const x = a.raw;
  const y = b.raw;
  return x.length === y.length && x.every((byte, i) => byte === y[i]);
}

function isIssuedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  // the names must match and the signature must verify with the issuer's key
  return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
}

function nameOf(cert: X509Certificate): string {
  return cert.subject.replaceAll("\n", ",");
}

/**
 * Why `chain` (DER, leaf first) does not chain to one of `anchors` at time
 * `atMs`, or undefined when it does. Every certificate of the chain must be
 * valid at `atMs` and signed by the next one, which must be a CA; the walk
 * ends at the first certificate that is an anchor or is signed by a valid
 * anchor. An anchor is trusted as configured (it needs no CA flag).
 */
export function chainProblem(
  chain: readonly Uint8Array[],
  anchors: readonly X509Certificate[],
  atMs: number,
): string | undefined {
  if (chain.length === 0) return "no certificate chain";
  let certs: X509Certificate[];
  try {
    certs = chain.map((der) => new X509Certificate(der));
  } catch (err) {
    return `a certificate of the chain does not parse: ${(err as Error).message}`;
  }
  for (const cert of certs) {
    if (!isValidAt(cert, atMs)) {
      return `certificate "${nameOf(cert)}" is not valid at ${new Date(atMs).toISOString()}`;
    }
  }
  const validAnchors = anchors.filter((a) => isValidAt(a, atMs));
  for (let i = 0; i < certs.length; i++) {
    const cert = certs[i];
    if (validAnchors.some((a) => isSameCertificate(a, cert) || isIssuedBy(cert, a))) {
      return undefined;
    }
    const next = certs[i + 1];
    if (!next) return `certificate "${nameOf(cert)}" is not signed by a trust anchor`;
    if (!next.ca) return `certificate "${nameOf(next)}" signs but is not a CA`;
    if (!isIssuedBy(cert, next)) {
      return `certificate "${nameOf(cert)}" is not signed by "${nameOf(next)}"`;
    }
  }
  return "the chain does not end at a trust anchor";
}
