/**
 * `certificate`: an X.509 certificate held for a user (spec 14 §1). It never
 * authenticates (privacyIDEA's check_otp answers −1). Three ways in, decided
 * in privacyIDEA's order: a CSR (`request`) signed by the CA connector `ca`,
 * a key the server makes (`genkey`) with the certificate and key handed out
 * once as PKCS#12, or an uploaded `certificate`. Revoking the token revokes
 * the certificate at its CA and renews the CRL.
 *
 * The PIN is hashed like every other PIN (privacyIDEA stores this type's PIN
 * encrypted because it is the PKCS#12 passphrase; the passphrase is only used
 * while enrolling, and privacyIDEA 3.12 never reads it back).
 *
 * @module
 */
import type { Deps } from "../../../deps.ts";
import {
  AppError,
  missingParameter,
  ParameterError,
  PolicyError,
  ResourceNotFoundError,
} from "../../../errors.ts";
import {
  certificateFacts,
  certificatePublicKey,
  createCertificateRequest,
  createPkcs12,
  generateRsaKey,
  NAME_OIDS,
  parseCertificateRequest,
  X509InputError,
} from "../../../lib/x509_ca.ts";
import { X509Certificate } from "node:crypto";
import { Buffer } from "node:buffer";
import { CAError, CSRError, revokeCertificate, signRequest } from "../../caconnector/mod.ts";
import { getUserInfo } from "../_users.ts";
import type { Token, TokenWithInfo } from "../model.ts";
import * as store from "../token_store.ts";
import { param } from "./_oath.ts";
import type { TokenType, TypeInitContext, TypeInitResult } from "./token_type.ts";

/** privacyIDEA's `DEFAULT_CA_PATH` of attestation chain directories. */
export const DEFAULT_TRUSTED_CA_PATH = "/etc/privacyidea/trusted_attestation_ca";

const REQUIRE_ACTIONS = ["ignore", "verify", "require_and_verify"];
const MAX_KEYSIZE = 4096;
const MAX_CHAIN_FILE_BYTES = 1024 * 1024;
const MAX_PEM = 64 * 1024;

function isTrue(v: string | undefined): boolean {
  return v !== undefined && ["1", "true", "True", "TRUE", "yes"].includes(v.trim());
}

function pemParam(ctx: TypeInitContext, name: string): string | undefined {
  const v = param(ctx, name);
  if (v === undefined || v.trim() === "") return undefined;
  if (v.length > MAX_PEM) throw new ParameterError(`Cannot parse parameter "${name}": too long`);
  return v;
}

/** The certificates of a chain file: BEGIN/END lines open and close one, `#` lines are comments. */
function parseChainFile(text: string): string[] {
  const certs: string[] = [];
  let current: string | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("-----BEGIN CERTIFICATE-----")) current = `${line}\n`;
    else if (line.startsWith("-----END CERTIFICATE-----")) {
      if (current !== undefined) certs.push(`${current}${line}\n`);
      current = undefined;
    } else if (line.startsWith("#") || line === "") continue;
    else if (current !== undefined) current += `${line}\n`;
  }
  return certs;
}

/** The chain (root first) signs `cert` link by link, as privacyIDEA's verify_certificate. */
function chainSigns(chain: string[], cert: X509Certificate): boolean {
  if (chain.length === 0) return false;
  const certs = chain.map((pem) => new X509Certificate(pem));
  let signer = certs[0];
  for (const next of certs.slice(1)) {
    if (!next.verify(signer.publicKey)) return false;
    signer = next;
  }
  return cert.verify(signer.publicKey);
}

/**
 * Whether `attestation` chains to a chain file in one of `dirs` (each regular
 * file of a directory is a chain, root first). A missing directory is logged.
 */
async function isTrustedAttestation(
  deps: Deps,
  attestation: X509Certificate,
  dirs: string[],
): Promise<boolean> {
  for (const dir of dirs) {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch {
      deps.log.warn("The configured attestation CA directory does not exist", { dir });
      continue;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isFile) continue;
      const path = `${dir.replace(/\/+$/, "")}/${entry.name}`;
      try {
        const info = await Deno.stat(path);
        if (info.size > MAX_CHAIN_FILE_BYTES) continue;
        if (chainSigns(parseChainFile(await Deno.readTextFile(path)), attestation)) return true;
      } catch (err) {
        deps.log.info("Cannot verify the attestation certificate against a chain file", {
          path,
          reason: (err as Error).message,
        });
      }
    }
  }
  return false;
}

/** 16 URL-safe characters from 12 random bytes (Python's `secrets.token_urlsafe(12)`). */
function pkcs12Password(deps: Deps): string {
  return Buffer.from(deps.random.bytes(12)).toString("base64url");
}

function keysizeOf(ctx: TypeInitContext): number {
  const raw = param(ctx, "keysize");
  if (raw === undefined || raw === "") return 2048;
  const n = /^\d{1,6}$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isInteger(n)) {
    throw new ParameterError(`Cannot parse parameter "keysize": expected an integer, got "${raw}"`);
  }
  if (n > MAX_KEYSIZE) {
    throw new ParameterError(`Cannot use keysize ${n}: at most ${MAX_KEYSIZE} bits`);
  }
  // privacyIDEA raises smaller sizes to 2048
  return Math.max(n, 2048);
}

async function signCsr(
  ctx: TypeInitContext,
  ca: string,
  request: string,
  template: string | undefined,
  verifyAttestation: boolean,
): Promise<string> {
  if (param(ctx, "spkac")) {
    throw new ParameterError(
      "SPKAC requests (the browsers' retired <keygen>) are not supported: send a PKCS#10 request",
    );
  }
  let csr;
  try {
    csr = await parseCertificateRequest(request);
  } catch (err) {
    if (err instanceof X509InputError) throw new CSRError("CSR invalid");
    throw err;
  }
  if (!csr.isSignatureValid) throw new AppError("request has invalid signature.", 10);
  const attestation = pemParam(ctx, "attestation");
  if (attestation) {
    let att: X509Certificate;
    try {
      att = new X509Certificate(attestation);
    } catch {
      throw new ParameterError('Cannot parse parameter "attestation": not a PEM certificate');
    }
    if (
      !Buffer.from(await certificatePublicKey(att.toString())).equals(Buffer.from(csr.publicKey))
    ) {
      ctx.deps.log.warn("certificate request does not match attestation certificate.");
      throw new AppError("certificate request does not match attestation certificate.", 10);
    }
    const dirs = (ctx.policies?.certificate_trusted_Attestation_CA_path ?? DEFAULT_TRUSTED_CA_PATH)
      .split(/\s+/).filter((d) => d !== "");
    if (!(await isTrustedAttestation(ctx.deps, att, dirs))) {
      ctx.deps.log.warn("Failed to verify certificate chain of attestation certificate.");
      if (verifyAttestation) {
        throw new AppError("Failed to verify certificate chain of attestation certificate.", 10);
      }
    }
  }
  const issued = await signRequest(ctx.deps, ca, {
    subject: csr.subject,
    publicKey: csr.publicKey,
  }, { template });
  return issued.certificate;
}

async function generateAndSign(
  ctx: TypeInitContext,
  ca: string,
  template: string | undefined,
): Promise<{ certificate: string; pkcs12: string; password?: string }> {
  const owner = ctx.owner;
  if (!owner) throw missingParameter("'user'");
  const keysize = keysizeOf(ctx);
  const components = (ctx.policies?.certificate_request_subject_component ?? "").split(/\s+/);
  const subject: [string, string][] = [[NAME_OIDS.CN, owner.login]];
  if (components.includes("email")) {
    const email = (await getUserInfo(ctx.deps, owner)).email;
    if (email) subject.push([NAME_OIDS.emailAddress, email]);
  }
  if (components.includes("realm")) subject.push([NAME_OIDS.OU, owner.realm]);
  const keys = await generateRsaKey(keysize);
  const csrPem = await createCertificateRequest(subject, keys);
  const csr = await parseCertificateRequest(csrPem);
  const issued = await signRequest(ctx.deps, ca, {
    subject: csr.subject,
    publicKey: csr.publicKey,
  }, { template });
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  // the token PIN is the passphrase when one is set; else a random one, handed out once
  const pin = param(ctx, "pin");
  const password = pin !== undefined && pin !== "" ? undefined : pkcs12Password(ctx.deps);
  const p12 = await createPkcs12({
    pkcs8,
    certificate: issued.certificate,
    password: password ?? pin!,
    friendlyName: "certificatetoken",
  });
  pkcs8.fill(0);
  return { certificate: issued.certificate, pkcs12: Buffer.from(p12).toString("base64"), password };
}

async function init(ctx: TypeInitContext): Promise<TypeInitResult> {
  const policies = ctx.policies ?? {};
  // certificate_require_attestation (privacyIDEA's required_piv_attestation pre-policy)
  const require = policies.certificate_require_attestation;
  if (require !== undefined && !REQUIRE_ACTIONS.includes(require)) {
    throw new PolicyError(
      `The policy action "certificate_require_attestation" needs one of ${
        REQUIRE_ACTIONS.join(", ")
      }, got "${require}"`,
    );
  }
  if (require === "require_and_verify" && !pemParam(ctx, "attestation")) {
    throw new PolicyError("A policy requires that you provide an attestation certificate.");
  }
  const verifyAttestation = require === "verify" || require === "require_and_verify";
  const request = pemParam(ctx, "request");
  const upload = pemParam(ctx, "certificate");
  const genkey = isTrue(param(ctx, "genkey"));
  // policies name the CA and the template for the client
  const ca = policies.certificate_ca_connector ?? param(ctx, "ca");
  const template = policies.certificate_template ?? (param(ctx, "template") || undefined);
  const info: Record<string, string> = { tokenkind: "software" };
  const detail: Record<string, unknown> = {};
  let certificate: string | undefined;
  if (request || genkey) {
    if (!ca) throw missingParameter("'ca'");
    info.CA = ca;
  }
  if (request) {
    certificate = await signCsr(ctx, ca!, request, template, verifyAttestation);
  } else if (genkey) {
    const made = await generateAndSign(ctx, ca!, template);
    certificate = made.certificate;
    info.pkcs12 = made.pkcs12;
    detail.pkcs12 = made.pkcs12;
    if (made.password !== undefined) detail.pkcs12_password = made.password;
  } else if (upload) {
    try {
      await certificateFacts(upload);
    } catch {
      throw new ParameterError('Cannot parse parameter "certificate": not a PEM certificate');
    }
    certificate = upload;
  }
  if (certificate) info.certificate = certificate;
  detail.certificate = certificate ?? null;
  return {
    info,
    detail,
    // on re-enrolment the old certificate, CA and container go unless set again
    ownsInfo: (key) => ["certificate", "CA", "pkcs12", "requestId"].includes(key),
  };
}

/**
 * Revokes the token's certificate at its CA (reason unspecified) and renews
 * the CRL. A token without a CA (an uploaded certificate) or whose CA is gone
 * or did not issue it is revoked here only, as the spec advises where
 * privacyIDEA fails with a 500.
 */
async function revoke(deps: Deps, token: Token): Promise<void> {
  const info = (token as Partial<TokenWithInfo>).info ??
    (await store.withInfo(deps.db, [token], false))[0]?.info ?? {};
  const ca = info.CA?.value;
  const certificate = info.certificate?.value;
  if (!ca || !certificate) return;
  try {
    await revokeCertificate(deps, ca, certificate);
  } catch (err) {
    // the CA is gone or did not issue this certificate: the token is revoked all the same
    if (!(err instanceof ResourceNotFoundError) && !(err instanceof CAError)) throw err;
    deps.log.warn("The certificate was revoked in Tessera only", {
      serial: token.serial,
      ca,
      reason: err.message,
    });
  }
}

/** The `certificate` type. */
export const CERTIFICATE: TokenType = {
  type: "certificate",
  prefix: "CRT",
  authenticates: false,
  challenge: false,
  listInfo(info) {
    // privacyIDEA hides a legacy private key from token lists
    const { privatekey: _hidden, ...shown } = info;
    return shown;
  },
  init,
  checkOtp() {
    return { isValid: false };
  },
  revoke,
};
