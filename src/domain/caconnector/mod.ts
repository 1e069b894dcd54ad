/**
 * CA connectors (`/caconnector/`, spec 14 §1.5-1.6) and the local CA that
 * signs and revokes the certificates of certificate tokens.
 *
 * privacyIDEA's local CA (`localca`) drives the `openssl ca` command over
 * files in a CA directory. Tessera keeps all of it in the database instead,
 * so every node signs with the same CA and hands out each serial once: the
 * CA key (encrypted under the key file's config key, like every configuration
 * secret), the CA certificate, the next serial, the templates, the issued and
 * revoked certificates (privacyIDEA's `index.txt`) and the current CRL. The
 * connector's `cakey` and `cacert` keys still name PEM files: they are read
 * once, when the connector is created or when either changes (the import of
 * an existing CA); then the CA directory's `serial` and `index.txt` are read
 * too, if there, so numbering and revocations carry on. `templates` names a
 * YAML file, read when it is set; its `extensions` name one of privacyIDEA's
 * generated openssl.cnf sections, which Tessera has built in. The CRL is
 * served at `GET /ca/<name>/crl` (not written to the `CRL` file).
 *
 * @module
 */
import { isAbsolute, join } from "node:path";
import { parse as parseYaml } from "yaml";
import type { Deps } from "../../deps.ts";
import { AppError, missingParameter, ParameterError, ResourceNotFoundError } from "../../errors.ts";
import { decryptSecret, encryptSecret } from "../../lib/crypto.ts";
import {
  certificateFacts,
  createCrl,
  crlNextUpdate,
  type CrlReason,
  EXTENSION_PROFILES,
  type ExtensionProfile,
  fromPem,
  isSignedBy,
  issueCertificate,
  keyMatchesCertificate,
  NAME_OIDS,
  type NameAttributes,
  normalSerial,
  privateKeyToPkcs8,
  signingKeyOf,
  slashName,
  X509InputError,
} from "../../lib/x509_ca.ts";
import { readAllUpTo, refuseOwnPath } from "../resolver/mod.ts";
import * as store from "./caconnector_store.ts";

/** privacyIDEA's CAError (code 503): the CA could not do what was asked. */
export class CAError extends AppError {
  constructor(message: string) {
    super(message, 503);
  }
}

/** privacyIDEA's CSRError (code 504): the request cannot be signed. */
export class CSRError extends AppError {
  constructor(message = "CSR invalid") {
    super(message, 504);
  }
}

/** The connector types Tessera has. */
export const CA_CONNECTOR_TYPES = ["local"] as const;

/** A template: validity in days and the extension profile. */
export interface CaTemplate {
  days: number;
  extensions: string;
}

/** A connector as `GET /caconnector/` shows it. */
export interface CaConnectorView {
  connectorname: string;
  type: string;
  data: Record<string, string>;
  templates: Record<string, CaTemplate>;
}

const NOT_FOUND = "The requested CAConnector could not be found.";
// privacyIDEA's sanity_name_check
const NAME_REGEXP = /^[A-Za-z0-9_\-.]+$/;
const KEY_REGEXP = /^[A-Za-z0-9_.-]{1,255}$/;
const MAX_VALUE = 4000;
const MAX_FILE_BYTES = 1024 * 1024;
const DAY_MS = 86_400_000;
// openssl ca's policy_anything, in its order (preserve = no): other attributes are dropped
const POLICY_ORDER = [
  NAME_OIDS.C,
  NAME_OIDS.ST,
  NAME_OIDS.L,
  NAME_OIDS.O,
  NAME_OIDS.OU,
  NAME_OIDS.CN,
  NAME_OIDS.emailAddress,
];
const CERTIFICATE_REGEXP = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/;

function str(params: Record<string, unknown>, name: string): string | undefined {
  const v = params[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new ParameterError(`Cannot parse parameter "${name}": expected a string`);
}

function parseTemplates(json: string): Record<string, CaTemplate> {
  try {
    return JSON.parse(json) as Record<string, CaTemplate>;
  } catch {
    return {};
  }
}

function view(row: store.ConnectorRow, templates: string | undefined): CaConnectorView {
  return {
    connectorname: row.name,
    type: row.catype,
    data: Object.fromEntries(Object.entries(row.config).map(([k, e]) => [k, e.value])),
    templates: parseTemplates(templates ?? "{}"),
  };
}

/** `GET /caconnector/[<name>]`: every connector, or the one named (unknown: `[]`). */
export async function listCaConnectors(deps: Deps, name?: string): Promise<CaConnectorView[]> {
  const rows = await store.listConnectors(deps.db, name);
  const out: CaConnectorView[] = [];
  for (const row of rows) {
    out.push(view(row, (await store.getLocalCa(deps.db, row.id))?.templates));
  }
  return out;
}

/** The names of the connectors (`certificate_ca_connector` values, `/system/names`). */
export async function caConnectorNames(deps: Deps): Promise<string[]> {
  return (await store.listConnectors(deps.db)).map((r) => r.name);
}

/** `GET /caconnector/specific/<catype>`: the type's specific options (`{}` for local). */
export function caConnectorSpecificOptions(catype: string): Record<string, unknown> {
  checkType(catype);
  return {};
}

function checkType(catype: string): void {
  if ((CA_CONNECTOR_TYPES as readonly string[]).includes(catype)) return;
  if (catype === "microsoft") {
    throw new ParameterError(
      'The CA connector type "microsoft" is not supported: Tessera has the local CA only',
    );
  }
  throw new ParameterError(
    `Cannot use CA connector type "${catype.slice(0, 50)}": expected one of ${
      CA_CONNECTOR_TYPES.join(", ")
    }`,
  );
}

function intKey(value: string | undefined, key: string, min: number, max: number) {
  if (value === undefined || value === "") return;
  const n = /^\d{1,6}$/.test(value.trim()) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) {
    throw new ParameterError(
      `Cannot parse parameter "${key}": expected an integer from ${min} to ${max}`,
    );
  }
}

/** A CA file path: absolute, or relative to an absolute `WorkingDir`. */
function caPath(value: string, key: string, workingDir: string | undefined): string {
  if (value.includes("\0")) throw new ParameterError(`Cannot use ${key} "${value}": NUL byte`);
  if (isAbsolute(value)) return value;
  if (workingDir && isAbsolute(workingDir)) return join(workingDir, value);
  throw new ParameterError(
    `Cannot use ${key} "${value.slice(0, 200)}": a relative path needs an absolute WorkingDir`,
  );
}

/** Reads a file the connector names, once: never one of Tessera's own files, at most 1 MiB. */
async function readCaFile(deps: Deps, path: string, key: string): Promise<string | undefined> {
  refuseOwnPath(deps.config, path, key);
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw new ParameterError(`Cannot read ${key} "${path}": ${(err as Error).name}`);
  }
  try {
    const info = await file.stat();
    refuseOwnPath(deps.config, path, key, info);
    const bytes = info.isFile ? await readAllUpTo(file, MAX_FILE_BYTES) : undefined;
    if (!bytes) {
      throw new ParameterError(`Cannot use ${key} "${path}": not a file of at most 1 MiB`);
    }
    return new TextDecoder().decode(bytes);
  } finally {
    file.close();
  }
}

async function requireCaFile(deps: Deps, path: string, key: string): Promise<string> {
  const text = await readCaFile(deps, path, key);
  if (text === undefined) throw new ParameterError(`Cannot read ${key} "${path}": no such file`);
  return text;
}

function checkTemplates(raw: unknown, path: string): Record<string, CaTemplate> {
  const bad = (why: string) => new ParameterError(`Cannot use templates "${path}": ${why}`);
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== "object" || Array.isArray(raw)) throw bad("not a mapping of templates");
  const out: Record<string, CaTemplate> = {};
  for (const [name, t] of Object.entries(raw as Record<string, unknown>)) {
    if (!NAME_REGEXP.test(name) || name.length > 100) {
      throw bad(`template name "${name.slice(0, 50)}"`);
    }
    const tt = (t ?? {}) as Record<string, unknown>;
    const days = tt.days === undefined ? 365 : Number(tt.days);
    if (!Number.isInteger(days) || days < 1 || days > 36500) {
      throw bad(`template "${name}": days must be an integer from 1 to 36500`);
    }
    const extensions = String(tt.extensions ?? "server");
    if (!(EXTENSION_PROFILES as readonly string[]).includes(extensions)) {
      throw bad(
        `template "${name}": extensions "${extensions.slice(0, 50)}" is none of ${
          EXTENSION_PROFILES.join(", ")
        }`,
      );
    }
    out[name] = { days, extensions };
  }
  return out;
}

async function readTemplates(
  deps: Deps,
  value: string,
  workingDir: string | undefined,
): Promise<Record<string, CaTemplate>> {
  if (value.trim() === "") return {};
  const path = caPath(value, "templates", workingDir);
  const text = await requireCaFile(deps, path, "templates");
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: 10 });
  } catch {
    // the content is never echoed: the file may be any file the server can read
    throw new ParameterError(`Cannot use templates "${path}": not a YAML file`);
  }
  return checkTemplates(raw, path);
}

/** openssl's `YYMMDDHHMMSSZ` as milliseconds, or undefined. */
function opensslTime(text: string): number | undefined {
  const m = text.match(/^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/);
  if (!m) return undefined;
  const year = Number(m[1]) < 50 ? 2000 + Number(m[1]) : 1900 + Number(m[1]);
  return Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

/** The lines of an `index.txt` (tab separated: status, expiry, revocation[,reason], serial, file, subject). */
function parseIndex(text: string): store.CertificateRow[] {
  const out: store.CertificateRow[] = [];
  for (const line of text.split("\n")) {
    const f = line.split("\t");
    if (f.length < 6 || !/^[VRE]$/.test(f[0]) || !/^[0-9A-Fa-f]{1,64}$/.test(f[3])) continue;
    const [revoked, reason] = f[2].split(",");
    out.push({
      serial: normalSerial(f[3]),
      subject: f[5].slice(0, 1024),
      notAfter: opensslTime(f[1]) ?? 0,
      status: f[0] as "V" | "R" | "E",
      revokedAt: f[0] === "R" ? opensslTime(revoked) ?? 0 : null,
      reason: f[0] === "R" ? (reason ?? "unspecified").slice(0, 32) : "",
      certificate: "",
    });
  }
  return out;
}

function incrementSerial(hex: string): string {
  return normalSerial((BigInt(`0x${hex}`) + 1n).toString(16));
}

/** The CA material read from the files the config names (the import of a CA). */
async function importCa(
  deps: Deps,
  config: Record<string, string>,
): Promise<
  { localCa: Omit<store.LocalCaRow, "crl" | "crlNumber">; index: store.CertificateRow[] }
> {
  const workingDir = config.WorkingDir || undefined;
  const keyPath = caPath(config.cakey, "cakey", workingDir);
  const certPath = caPath(config.cacert, "cacert", workingDir);
  const keyText = await requireCaFile(deps, keyPath, "cakey");
  const certText = await requireCaFile(deps, certPath, "cacert");
  let pkcs8: Uint8Array;
  let certificate: string;
  try {
    pkcs8 = privateKeyToPkcs8(keyText);
  } catch (err) {
    throw new ParameterError(`Cannot use cakey "${keyPath}": ${(err as Error).message}`);
  }
  const block = certText.match(CERTIFICATE_REGEXP)?.[0];
  try {
    if (!block) throw new X509InputError("no certificate");
    certificate = `${block}\n`;
    await certificateFacts(certificate);
  } catch {
    // the content is never echoed: the file may be any file the server can read
    throw new ParameterError(`Cannot use cacert "${certPath}": it holds no PEM certificate`);
  }
  if (!(await keyMatchesCertificate(pkcs8, certificate))) {
    throw new ParameterError(
      `Cannot use cakey "${keyPath}" with cacert "${certPath}": the key is not the certificate's`,
    );
  }
  await signingKeyOf(pkcs8);
  // carry on where openssl ca left off: its serial file, else past its index
  const dir = workingDir && isAbsolute(workingDir) ? workingDir : undefined;
  const serialText = dir ? await readCaFile(deps, join(dir, "serial"), "serial") : undefined;
  const index = dir
    ? parseIndex(await readCaFile(deps, join(dir, "index.txt"), "index.txt") ?? "")
    : [];
  let nextSerial = serialText?.trim().match(/^[0-9A-Fa-f]{1,64}$/)
    ? normalSerial(serialText.trim())
    : undefined;
  if (nextSerial === undefined && index.length > 0) {
    const max = index.map((c) => BigInt(`0x${c.serial}`)).reduce((a, b) => (a > b ? a : b));
    nextSerial = normalSerial((max + 1n).toString(16));
  }
  if (nextSerial === undefined) {
    // an imported CA whose earlier serials are unknown: start far from a sequential range
    const bytes = deps.random.bytes(8);
    bytes[0] = 0x10 | (bytes[0] & 0x3f);
    nextSerial = normalSerial([...bytes].map((b) => b.toString(16).padStart(2, "0")).join(""));
  }
  return {
    localCa: {
      keyEnc: encryptSecret(deps.keys.config, pkcs8, deps.random),
      certificate,
      nextSerial,
      templates: "{}",
    },
    index,
  };
}

/**
 * `POST /caconnector/<name>`: creates the connector or updates its config
 * (keys not sent are kept); returns its id. A local CA reads its CA key and
 * certificate when created and whenever `cakey` or `cacert` change.
 */
export async function saveCaConnector(
  deps: Deps,
  name: string,
  params: Record<string, unknown>,
): Promise<number> {
  if (!NAME_REGEXP.test(name) || name.length > 255) {
    throw new ParameterError(
      `Cannot use CA connector name "${name.slice(0, 50)}": only letters, digits, "_", "-" and "."`,
    );
  }
  const catype = str(params, "type");
  if (!catype) throw missingParameter("type");
  checkType(catype);
  const existing = (await store.listConnectors(deps.db, name))[0];
  if (existing && existing.catype !== catype) {
    throw new ParameterError(
      `CA Connector with similar name and other type already exists: ${name}`,
    );
  }
  const config: Record<string, store.ConfigEntry> = {};
  const types: Record<string, string> = {};
  const descs: Record<string, string> = {};
  for (const key of Object.keys(params)) {
    if (key === "caconnector" || key === "type") continue;
    const m = key.match(/^(type|desc)\.(.+)$/);
    if (m) {
      if (!(m[2] in params)) {
        throw new ParameterError(`Cannot use parameter "${key}": there is no parameter "${m[2]}"`);
      }
      (m[1] === "type" ? types : descs)[m[2]] = (str(params, key) ?? "").slice(0, 100);
      continue;
    }
    if (!KEY_REGEXP.test(key)) {
      throw new ParameterError(`Cannot use config key "${key.slice(0, 50)}"`);
    }
    const value = str(params, key) ?? "";
    if (value.length > MAX_VALUE || value.includes("\0")) {
      throw new ParameterError(`Cannot parse parameter "${key}": invalid value`);
    }
    config[key] = { value, type: "", description: "" };
  }
  for (const [k, t] of Object.entries(types)) config[k].type = t;
  for (const [k, d] of Object.entries(descs)) config[k].description = d.slice(0, 2000);
  for (const [k, e] of Object.entries(config)) {
    if (e.type === "password") {
      throw new ParameterError(
        `Cannot use parameter "type.${k}": the local CA has no secret keys (its key is read from cakey)`,
      );
    }
  }
  // privacyIDEA merges the URL's name into the parameters, and so stores it as a key
  config.name = { value: name, type: "", description: "" };
  const merged: Record<string, string> = {
    ...Object.fromEntries(Object.entries(existing?.config ?? {}).map(([k, e]) => [k, e.value])),
    ...Object.fromEntries(Object.entries(config).map(([k, e]) => [k, e.value])),
  };
  intKey(merged.CRL_Validity_Period, "CRL_Validity_Period", 1, 36500);
  intKey(merged.CRL_Overlap_Period, "CRL_Overlap_Period", 0, 36500);
  if (!merged.cakey) throw new ParameterError("required argument 'cakey' is missing.");
  if (!merged.cacert) throw new ParameterError("required argument 'cacert' is missing.");
  const stored = existing ? await store.getLocalCa(deps.db, existing.id) : undefined;
  const caChanged = !stored ||
    ("cakey" in config && config.cakey.value !== existing?.config.cakey?.value) ||
    ("cacert" in config && config.cacert.value !== existing?.config.cacert?.value);
  const save: store.ConnectorSave = { name, catype, config };
  let templates: string | undefined;
  if ("templates" in config) {
    templates = JSON.stringify(
      await readTemplates(deps, config.templates.value, merged.WorkingDir || undefined),
    );
  }
  if (caChanged) {
    const imported = await importCa(deps, merged);
    save.localCa = {
      ...imported.localCa,
      templates: templates ?? stored?.templates ?? "{}",
      // a new key for a CA Tessera already numbers for keeps counting on
      nextSerial: stored?.nextSerial ?? imported.localCa.nextSerial,
    };
    if (!stored) save.certificates = imported.index;
  } else if (templates !== undefined) {
    save.templates = templates;
  }
  return await store.saveConnector(deps.db, save);
}

/** `DELETE /caconnector/<name>`: returns the deleted id; unknown → 404. */
export async function deleteCaConnector(deps: Deps, name: string): Promise<number> {
  const id = await store.deleteConnector(deps.db, name);
  if (id === undefined) throw new ResourceNotFoundError(NOT_FOUND);
  return id;
}

/** A loaded local CA, ready to sign. */
interface LoadedCa {
  id: number;
  name: string;
  config: Record<string, string>;
  row: store.LocalCaRow;
}

async function loadCa(deps: Deps, name: string): Promise<LoadedCa> {
  const conn = (await store.listConnectors(deps.db, name))[0];
  const row = conn ? await store.getLocalCa(deps.db, conn.id) : undefined;
  if (!conn || !row) throw new ResourceNotFoundError(NOT_FOUND);
  return {
    id: conn.id,
    name,
    config: Object.fromEntries(Object.entries(conn.config).map(([k, e]) => [k, e.value])),
    row,
  };
}

async function caKeyOf(deps: Deps, ca: LoadedCa) {
  return await signingKeyOf(decryptSecret(deps.keys.config, ca.row.keyEnc));
}

/** What a signed request gives back. */
export interface IssuedCertificate {
  certificate: string;
  serialHex: string;
}

/**
 * Signs a request with CA `caName` (`template` picks days and extension
 * profile; without one 365 days and `server`, as privacyIDEA). The subject is
 * put in openssl's `policy_anything` order and a subject without a common name
 * is refused, as `openssl ca` does.
 */
export async function signRequest(
  deps: Deps,
  caName: string,
  request: { subject: NameAttributes; publicKey: Uint8Array },
  options: { template?: string } = {},
): Promise<IssuedCertificate> {
  const ca = await loadCa(deps, caName);
  const templates = parseTemplates(ca.row.templates);
  let days = 365;
  let profile: ExtensionProfile = "server";
  if (options.template) {
    const t = templates[options.template];
    if (!t) {
      throw new CAError(`The template "${options.template.slice(0, 100)}" does not exist.`);
    }
    days = t.days;
    profile = t.extensions as ExtensionProfile;
  }
  const subject = POLICY_ORDER.flatMap((oid) =>
    request.subject.filter(([o]) => o === oid).map(([o, v]) => [o, v] as const)
  );
  if (!subject.some(([oid]) => oid === NAME_OIDS.CN)) {
    deps.log.warn("CA signing refused: the request's subject has no commonName", { ca: caName });
    throw new CAError("An error occurred during signing of the certificate");
  }
  const serialHex = await store.takeSerial(deps.db, ca.id, incrementSerial);
  const now = deps.clock.now();
  // whole seconds, as openssl writes them
  const notBefore = new Date(Math.floor(now / 1000) * 1000);
  const notAfter = new Date(notBefore.getTime() + days * DAY_MS);
  const certificate = await issueCertificate({
    caCertificate: ca.row.certificate,
    caKey: await caKeyOf(deps, ca),
    subject,
    publicKey: request.publicKey,
    serialHex,
    notBefore,
    notAfter,
    profile,
  });
  await store.addCertificate(deps.db, ca.id, {
    serial: serialHex,
    subject: slashName(subject).slice(0, 1024),
    notAfter: notAfter.getTime(),
    status: "V",
    revokedAt: null,
    reason: "",
    certificate,
  });
  deps.log.info("Certificate issued", { ca: caName, serial: serialHex });
  return { certificate, serialHex };
}

/**
 * Revokes `certificate` on CA `caName` (it must be one the CA signed) and
 * makes a new CRL; returns the serial (upper-case hex). Revoking a revoked
 * certificate again changes nothing.
 */
export async function revokeCertificate(
  deps: Deps,
  caName: string,
  certificate: string,
  reason: CrlReason = "unspecified",
): Promise<string> {
  const ca = await loadCa(deps, caName);
  let facts;
  try {
    facts = await certificateFacts(certificate);
  } catch (err) {
    if (err instanceof X509InputError) throw new CAError("The token holds no valid certificate");
    throw err;
  }
  if (!(await isSignedBy(certificate, ca.row.certificate))) {
    throw new CAError(`The certificate ${facts.serialHex} was not issued by CA "${caName}"`);
  }
  await store.revokeCertificate(deps.db, ca.id, {
    serial: facts.serialHex,
    subject: slashName(facts.subject).slice(0, 1024),
    notAfter: facts.notAfter.getTime(),
    revokedAt: Math.floor(deps.clock.now() / 1000) * 1000,
    reason,
    certificate,
  });
  deps.log.info("Certificate revoked", { ca: caName, serial: facts.serialHex });
  await makeCrl(deps, ca);
  return facts.serialHex;
}

async function makeCrl(deps: Deps, ca: LoadedCa): Promise<string> {
  const validityDays = Number(ca.config.CRL_Validity_Period || "30");
  for (let attempt = 0; attempt < 10; attempt++) {
    const row = attempt === 0 ? ca.row : await store.getLocalCa(deps.db, ca.id);
    if (!row) throw new ResourceNotFoundError(NOT_FOUND);
    const revoked = await store.revokedCertificates(deps.db, ca.id);
    const now = new Date(Math.floor(deps.clock.now() / 1000) * 1000);
    const crl = await createCrl({
      caCertificate: row.certificate,
      caKey: await caKeyOf(deps, { ...ca, row }),
      entries: revoked.map((r) => ({
        serialHex: r.serial,
        revokedAt: new Date(r.revokedAt ?? 0),
        reason: (r.reason || "unspecified") as CrlReason,
      })),
      thisUpdate: now,
      nextUpdate: new Date(now.getTime() + validityDays * DAY_MS),
      crlNumber: row.crlNumber + 1,
    });
    if (await store.saveCrl(deps.db, ca.id, crl, row.crlNumber + 1)) return crl;
  }
  throw new CAError("Cannot store the CRL: too many concurrent changes");
}

/**
 * The current CRL of CA `name` (PEM). A new one is made when there is none
 * yet or the stored one is within `CRL_Overlap_Period` days (default 2) of
 * its next update, as privacyIDEA's CRL refresh does.
 */
export async function currentCrl(deps: Deps, name: string): Promise<string> {
  const ca = await loadCa(deps, name);
  const overlapDays = Number(ca.config.CRL_Overlap_Period || "2");
  const next = ca.row.crl ? await crlNextUpdate(ca.row.crl) : undefined;
  if (next && deps.clock.now() + overlapDays * DAY_MS <= next.getTime()) return ca.row.crl;
  return await makeCrl(deps, ca);
}

/** {@link currentCrl} as DER, what a CRL distribution point serves. */
export async function currentCrlDer(deps: Deps, name: string): Promise<Uint8Array<ArrayBuffer>> {
  return fromPem(await currentCrl(deps, name), "X509 CRL");
}

/** The CA certificate (PEM) of connector `name`. */
export async function caCertificate(deps: Deps, name: string): Promise<string> {
  return (await loadCa(deps, name)).row.certificate;
}
