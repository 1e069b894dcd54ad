/**
 * `POST /token/load/<filename>` (spec 12 §1): token seed files become tokens.
 * Unlike privacyIDEA, a file is imported all or nothing: every token is
 * written in one transaction, and a bad record refuses the whole file.
 * A record naming an existing token re-initialises it only when the caller
 * may act on that token (its realms and owner); otherwise the record is
 * refused, reported as unauthorized, and the token is left alone.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, PolicyError, TokenAdminError, UserError } from "../../errors.ts";
import { child, childrenNamed, parseXml, textOf, XmlError } from "../../lib/xml.ts";
import { loadSystemConfig, type SystemConfig } from "../system_config/mod.ts";
import {
  checkSerial,
  findTokenBySerial,
  type ImportedToken,
  type InfoEntry,
  tokenTypeOf,
  type TokenWithInfo,
  type UserRef,
  writeImportedToken,
} from "../token/mod.ts";
import { realmExists, resolveUser } from "../user/mod.ts";
import { parseOathCsv, parseYubikeyCsv } from "./csv_files.ts";
import { type MacMode, parsePsk, parsePskc } from "./pskc.ts";
import type { TokenRecord } from "./records.ts";
import { inOneTransaction } from "./_transaction.ts";
import { decryptImportFile, PGP_MESSAGE_HEADER } from "./gpg.ts";

const FILE_TYPES: Record<string, "oathcsv" | "yubikeycsv" | "pskc" | "aladdin-xml"> = {
  "aladdin-xml": "aladdin-xml",
  "oathcsv": "oathcsv",
  "OATH CSV": "oathcsv",
  "yubikeycsv": "yubikeycsv",
  "Yubikey CSV": "yubikeycsv",
  "pskc": "pskc",
};

/** Input of {@link loadTokenFile}. */
export interface TokenFileInput {
  /** `type` as sent (exact, case-sensitive). */
  type: string;
  /** The file's bytes. */
  content: Uint8Array;
  psk?: string;
  password?: string;
  macMode?: MacMode;
  /** Realms every token is put into (unknown ones are skipped). */
  tokenRealms?: string[];
  /** Realms the caller may import into (a realm-limited admin); undefined: any. */
  allowedRealms?: string[];
  /**
   * Whether the caller may re-initialise `token`, an existing token the file names (the
   * caller's rights on that token's realms); false refuses that record.
   */
  mayReinit(token: TokenWithInfo): Promise<boolean>;
}

/** Result of {@link loadTokenFile} (`result.value` plus the serials for the audit). */
export interface TokenFileResult {
  n_imported: number;
  /** Keys refused by a MAC check plus records refused as unauthorized. */
  n_not_imported: number;
  /** Serials written. */
  serials: string[];
  /** Serials of existing tokens the caller may not act on: refused, left unchanged. */
  unauthorized: string[];
}

function decode(content: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(content);
  } catch {
    throw new ParameterError("Unable to convert file contents. Binary data is not supported");
  }
}

/**
 * Parses a token file into records and the count of keys refused by a MAC check; an
 * OpenPGP-encrypted file is first decrypted with `decrypt` (without it, refused).
 */
export async function parseTokenFile(
  input: Pick<TokenFileInput, "type" | "content" | "psk" | "password" | "macMode">,
  decrypt?: (armored: string) => Promise<Uint8Array>,
): Promise<{ records: TokenRecord[]; notImported: number }> {
  let text = decode(input.content);
  if (text.trim() === "") throw new ParameterError("Error loading token file. File empty!");
  const kind = FILE_TYPES[input.type];
  if (!kind) {
    throw new TokenAdminError(
      `Unknown file type: '${input.type}'. Supported types are: aladdin-xml, oathcsv, OATH CSV, yubikeycsv, Yubikey CSV, pskc`,
    );
  }
  if (input.psk !== undefined && input.psk !== "") parsePsk(input.psk);
  if (text.trimStart().startsWith(PGP_MESSAGE_HEADER)) {
    if (!decrypt) throw new ParameterError("GPG decryption failed: no import key", 304);
    text = decode(await decrypt(text));
  }
  switch (kind) {
    case "oathcsv":
      return { records: parseOathCsv(text), notImported: 0 };
    case "yubikeycsv":
      return { records: parseYubikeyCsv(text), notImported: 0 };
    case "aladdin-xml":
      return { records: parseAladdinXml(text), notImported: 0 };
    default:
      return await parsePskc(text, input);
  }
}

/** SafeNet / Aladdin eToken PASS XML (spec 12 §1.6). */
function parseAladdinXml(text: string): TokenRecord[] {
  let root;
  try {
    root = parseXml(text);
  } catch (err) {
    if (!(err instanceof XmlError)) throw err;
    throw new ParameterError(`Could not parse XML data: ${err.message} (line ${err.line})`, 304);
  }
  if (root.name !== "tokens") throw new ParameterError("No toplevel element Tokens", 304);
  const out: TokenRecord[] = [];
  for (const token of childrenNamed(root, "token")) {
    const app = child(child(token, "applications"), "application");
    const seed = textOf(child(app, "seed"));
    const serial = token.attrs.serial ?? "";
    if (serial === "" || seed === "") continue;
    if (!/^([0-9a-fA-F]{2})+$/.test(seed)) {
      throw new ParameterError(
        `Cannot import the token on line ${token.line}: the Seed is not hex`,
        304,
      );
    }
    const counter = textOf(child(app, "movingfactor"));
    out.push({
      serial,
      type: "hotp",
      otpkey: seed.toLowerCase(),
      hashlib: seed.length === 64 ? "sha256" : "sha1",
      description: "imported",
      counter: counter === "" ? undefined : counter,
      where: `line ${token.line}`,
    });
  }
  return out;
}

function nowIso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "+00:00");
}

/** Turns a record into a token through its type module's enrolment (no enrolment policies). */
async function tokenOf(
  deps: Deps,
  system: SystemConfig,
  rec: TokenRecord,
  extra: { owner?: UserRef; realms: string[] },
): Promise<ImportedToken> {
  const module = tokenTypeOf(rec.type);
  if (!module) {
    throw new TokenAdminError(
      `Cannot import ${rec.where} ("${rec.serial}"): token type "${rec.type}" is not supported`,
    );
  }
  const params: Record<string, unknown> = { otpkey: rec.otpkey, description: rec.description };
  if (rec.otplen !== undefined) params.otplen = rec.otplen;
  if (rec.hashlib !== undefined) params.hashlib = rec.hashlib;
  if (rec.timeStep !== undefined) params.timeStep = rec.timeStep;
  if (rec.tans !== undefined) params.tans = rec.tans.join(" ");
  // `/ttype/yubikey` finds a yubikey by its public id before its first OTP
  if (rec.publicId) params["yubikey.prefix"] = rec.publicId;
  let typed;
  try {
    typed = await module.init({
      deps,
      system,
      serial: rec.serial,
      params,
      existing: undefined,
    });
  } catch (err) {
    if (!(err instanceof ParameterError || err instanceof TokenAdminError)) throw err;
    throw new ParameterError(`Cannot import ${rec.where} ("${rec.serial}"): ${err.message}`, 304);
  }
  const info: Record<string, InfoEntry> = {};
  for (const [k, v] of Object.entries(typed.info ?? {})) info[k] = { value: v, type: "" };
  for (const [k, v] of Object.entries(typed.secretInfo ?? {})) {
    info[k] = { value: v, type: "password" };
  }
  info.tokenkind = { value: "hardware", type: "" };
  if (rec.timeShift) info.timeShift = { value: rec.timeShift, type: "" };
  info.creation_date = { value: nowIso(deps.clock.now()), type: "" };
  const counter = rec.counter ? Number(rec.counter) : 0;
  if (!Number.isSafeInteger(counter) || counter < 0) {
    throw new ParameterError(
      `Cannot import ${rec.where} ("${rec.serial}"): the counter "${rec.counter}" is not a number`,
      304,
    );
  }
  return {
    serial: rec.serial,
    type: module.type,
    description: rec.description.slice(0, 80),
    secret: typed.secret,
    pinHash: "",
    active: true,
    revoked: false,
    locked: false,
    failcount: 0,
    maxfail: system.int("DefaultMaxFailCount"),
    count: counter,
    countWindow: system.int("DefaultCountWindow"),
    syncWindow: system.int("DefaultSyncWindow"),
    otplen: typed.otplen ?? (Number(rec.otplen) || 6),
    rolloutState: typed.rolloutState ?? "enrolled",
    owner: extra.owner,
    info,
    realms: extra.realms,
    createdAt: deps.clock.now(),
  };
}

/** Whether `now` is the token that was checked: same row, realms and owner (or still absent). */
function isUnchanged(checked: TokenWithInfo | undefined, now: TokenWithInfo | undefined): boolean {
  if (!checked || !now) return checked === now;
  const realms = (t: TokenWithInfo) => [...t.realms].sort().join(",");
  const owner = (t: TokenWithInfo) =>
    t.owner ? `${t.owner.realm}/${t.owner.resolver}/${t.owner.uid}` : "";
  return checked.id === now.id && realms(checked) === realms(now) && owner(checked) === owner(now);
}

/**
 * Imports a token file: all its tokens, or none when any record is refused
 * for its content. An existing serial of the same type is re-initialised
 * (privacyIDEA's rule) when `mayReinit` allows it; otherwise that record is
 * skipped and reported in `unauthorized`.
 */
export async function loadTokenFile(deps: Deps, input: TokenFileInput): Promise<TokenFileResult> {
  // an OpenPGP-encrypted file (spec 12 §1.8) is decrypted with the import keys first
  const { records, notImported } = await parseTokenFile(
    input,
    (armored) => decryptImportFile(deps, armored),
  );
  const serials = new Set<string>();
  for (const r of records) {
    try {
      checkSerial(r.serial);
    } catch (err) {
      throw new ParameterError(`Cannot import ${r.where}: ${(err as Error).message}`, 304);
    }
    if (serials.has(r.serial)) {
      throw new ParameterError(`Cannot import ${r.where}: the serial "${r.serial}" repeats`, 304);
    }
    serials.add(r.serial);
  }
  const system = await loadSystemConfig(deps);
  const realms: string[] = [];
  for (const name of input.tokenRealms ?? []) {
    const realm = name.toLowerCase();
    if (realm !== "" && await realmExists(deps, realm) && !realms.includes(realm)) {
      realms.push(realm);
    }
  }
  const tokens: { token: ImportedToken; checked: TokenWithInfo | undefined }[] = [];
  const unauthorized: string[] = [];
  for (const rec of records) {
    // a record naming an existing token acts on that token: the caller needs rights on it
    const existing = await findTokenBySerial(deps, rec.serial);
    if (existing && !await input.mayReinit(existing)) {
      unauthorized.push(rec.serial);
      continue;
    }
    let owner: UserRef | undefined;
    if (rec.owner) {
      owner = await resolveUser(deps, rec.owner.login, rec.owner.realm, rec.owner.resolver);
      if (!owner) {
        throw new UserError(
          `Cannot import ${rec.where}: user "${rec.owner.login}" not found in realm "${rec.owner.realm}"`,
        );
      }
      if (input.allowedRealms && !input.allowedRealms.includes(owner.realm)) {
        throw new PolicyError(
          "Admin actions are defined, but you are not allowed to upload token files.",
        );
      }
    }
    tokens.push({ token: await tokenOf(deps, system, rec, { owner, realms }), checked: existing });
  }
  await inOneTransaction(deps, async (trx) => {
    for (const { token, checked } of tokens) {
      // the rights were decided on the token as read above; a change since then is not covered
      if (!isUnchanged(checked, await findTokenBySerial(trx, token.serial))) {
        throw new TokenAdminError(
          `Cannot import the token "${token.serial}": it was created or changed during the upload; upload the file again`,
        );
      }
      await writeImportedToken(trx, token, { onExisting: "reinit" });
    }
  });
  return {
    n_imported: tokens.length,
    n_not_imported: notImported + unauthorized.length,
    serials: tokens.map((t) => t.token.serial),
    unauthorized,
  };
}
