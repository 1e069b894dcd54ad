/**
 * System configuration (`/system/`): known keys are typed, validated and have
 * defaults; other keys are stored as strings like privacyIDEA does.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError } from "../../errors.ts";
import { CENSORED, decryptSecretText, encryptSecret } from "../../lib/crypto.ts";
import { parseOcraSuite } from "../../lib/ocra.ts";
import * as store from "./system_store.ts";

/** The type of a secret entry (privacyIDEA's `<key>.type = password`): stored encrypted. */
const PASSWORD = "password";

/** Keys whose values are secrets whatever type the request gives them. */
function isSecretKey(key: string): boolean {
  return key === "yubico.secret" || key.startsWith("yubikey.apiid.");
}

type KeyType = "int" | "bool" | "string";

interface KnownKey {
  type: KeyType;
  default: string;
  description: string;
  /** Returns a problem text for a bad value. */
  check?: (value: string) => string | undefined;
}

const nonNegative = (v: string) => Number(v) >= 0 ? undefined : "must not be negative";
const HTTP_URL_REGEXP = /^https?:\/\/[^\s]+$/;
/** An http(s) URL or empty (unset: the default applies). */
const httpUrl = (v: string) =>
  v === "" || HTTP_URL_REGEXP.test(v) ? undefined : "must be an http(s) URL";

/** A suite the TiQR app can answer: valid, with the question as its only data input. */
function tiqrSuiteProblem(v: string): string | undefined {
  try {
    const suite = parseOcraSuite(v);
    if (suite.counter || suite.signature) return "must have the question as its only data input";
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** The system config keys Tessera knows, with privacyIDEA's defaults. */
export const SYSTEM_KEYS: Record<string, KnownKey> = {
  DefaultMaxFailCount: {
    type: "int",
    default: "10",
    description: "fail counter limit of new tokens",
    check: nonNegative,
  },
  DefaultCountWindow: {
    type: "int",
    default: "10",
    description: "HOTP look-ahead window of new tokens",
    check: nonNegative,
  },
  DefaultSyncWindow: {
    type: "int",
    default: "1000",
    description: "resync window of new tokens",
    check: nonNegative,
  },
  DefaultOtpLen: {
    type: "int",
    default: "6",
    description: "OTP length of new tokens",
    check: (v) => v === "6" || v === "8" ? undefined : "must be 6 or 8",
  },
  DefaultChallengeValidityTime: {
    type: "int",
    default: "120",
    description: "seconds a challenge stays valid",
    check: (v) => Number(v) > 0 ? undefined : "must be greater than 0",
  },
  PrependPin: {
    type: "bool",
    default: "True",
    description: "the PIN comes before the OTP in pass",
  },
  splitAtSign: {
    type: "bool",
    default: "True",
    description: "split user@realm logins at the last @",
  },
  IncFailCountOnFalsePin: {
    type: "bool",
    default: "True",
    description: "a wrong PIN raises the fail counter",
  },
  AutoResync: {
    type: "bool",
    default: "False",
    description: "resync HOTP/TOTP with two consecutive OTPs",
  },
  AutoResyncTimeout: {
    type: "int",
    default: "300",
    description: "seconds between the two OTPs of an auto-resync",
    check: nonNegative,
  },
  failcounter_clear_timeout: {
    type: "int",
    default: "0",
    description: "minutes after which a maxed fail counter is cleared (0 = never)",
    check: nonNegative,
  },
  no_auth_counter: {
    type: "bool",
    default: "False",
    description: "do not count authentications in tokeninfo",
  },
  ReturnSamlAttributes: {
    type: "bool",
    default: "True",
    description: "samlcheck returns user attributes",
  },
  ReturnSamlAttributesOnFail: {
    type: "bool",
    default: "False",
    description: "samlcheck returns attributes on failure",
  },
  SerialLength: {
    type: "int",
    default: "8",
    description: "length of the generated part of serials",
    check: (v) => Number(v) >= 4 && Number(v) <= 32 ? undefined : "must be between 4 and 32",
  },
  OverrideAuthorizationClient: {
    type: "string",
    default: "",
    description: "proxies allowed to pass the client parameter",
  },
  "hotp.hashlib": {
    type: "string",
    default: "sha1",
    description: "default HOTP hash",
    check: (v) =>
      ["sha1", "sha256", "sha512"].includes(v) ? undefined : "must be sha1, sha256 or sha512",
  },
  "totp.hashlib": {
    type: "string",
    default: "sha1",
    description: "default TOTP hash",
    check: (v) =>
      ["sha1", "sha256", "sha512"].includes(v) ? undefined : "must be sha1, sha256 or sha512",
  },
  "totp.timeStep": {
    type: "int",
    default: "30",
    description: "default TOTP time step",
    check: (v) => v === "30" || v === "60" ? undefined : "must be 30 or 60",
  },
  "totp.timeWindow": {
    type: "int",
    default: "180",
    description: "default TOTP window in seconds",
    check: nonNegative,
  },
  UserCacheExpiration: {
    type: "int",
    default: "0",
    description: "seconds the user cache keeps which user a login named (0 = no user cache)",
    check: nonNegative,
  },
  "yubico.url": {
    type: "string",
    default: "https://api.yubico.com/wsapi/2.0/verify",
    description: "verify URL of the Yubico validation server of yubico tokens",
    check: (v) => /^https?:\/\/[^\s]+$/.test(v) ? undefined : "must be an http(s) URL",
  },
  "yubico.do_post": {
    type: "bool",
    default: "False",
    description: "yubico tokens ask the validation server with POST instead of GET",
  },
  "tiqr.regServer": {
    type: "string",
    default: "",
    description: "URL of this server's /ttype/tiqr for the TiQR app's enrolment",
    check: httpUrl,
  },
  "tiqr.authServer": {
    type: "string",
    default: "",
    description: "URL of /ttype/tiqr for the TiQR app's authentication (empty: tiqr.regServer)",
    check: httpUrl,
  },
  "tiqr.serviceIdentifier": {
    type: "string",
    default: "org.privacyidea",
    description: "service identifier the TiQR app files the accounts under",
  },
  "tiqr.serviceDisplayname": {
    type: "string",
    default: "privacyIDEA",
    description: "service name the TiQR app shows",
  },
  "tiqr.logoUrl": {
    type: "string",
    default: "",
    description: "URL of the logo the TiQR app shows",
    check: httpUrl,
  },
  "tiqr.infoUrl": {
    type: "string",
    default: "https://www.privacyidea.org",
    description: "URL of the service information the TiQR app links",
    check: httpUrl,
  },
  "tiqr.ocrasuite": {
    type: "string",
    default: "OCRA-1:HOTP-SHA1-6:QN10",
    description: "OCRA suite of new tiqr tokens",
    check: tiqrSuiteProblem,
  },
  "yubico.timeout": {
    type: "int",
    default: "5",
    description: "seconds a yubico token check waits for the validation server",
    check: (v) => Number(v) >= 1 && Number(v) <= 60 ? undefined : "must be between 1 and 60",
  },
};

const TRUE_VALUES = new Set(["true", "1", "yes", "on"]);
const FALSE_VALUES = new Set(["false", "0", "no", "off", ""]);
const MAX_KEY = 255;
const MAX_VALUE = 2000;

/** A snapshot of the system config with typed accessors and defaults. */
export class SystemConfig {
  readonly #values: Map<string, string>;
  readonly #secret: ReadonlySet<string>;
  /** `secret`: the keys stored encrypted (their values here are decrypted). */
  constructor(values: Map<string, string>, secret: ReadonlySet<string> = new Set()) {
    this.#values = values;
    this.#secret = secret;
  }
  /** True when `key` is stored as a secret (answered censored). */
  isSecret(key: string): boolean {
    return this.#secret.has(key);
  }
  /** The raw string, the known default, or `fallback`. */
  get(key: string, fallback = ""): string {
    return this.#values.get(key) ?? SYSTEM_KEYS[key]?.default ?? fallback;
  }
  /** A boolean value (privacyIDEA accepts True/true/1). */
  bool(key: string): boolean {
    return TRUE_VALUES.has(this.get(key).toLowerCase());
  }
  /** An integer value, or the default when the stored one is not a number. */
  int(key: string): number {
    const n = Number.parseInt(this.get(key), 10);
    return Number.isFinite(n) ? n : Number.parseInt(SYSTEM_KEYS[key]?.default ?? "0", 10);
  }
  /** Every stored key (no defaults). */
  entries(): [string, string][] {
    return [...this.#values.entries()];
  }
}

// a pure memo: the configuration of one frozen load of the store (by identity), secrets
// decrypted with one key; the store hands out a new array after a change
const decrypted = new WeakMap<
  readonly store.StoredValue[],
  { key: Uint8Array; config: SystemConfig }
>();

/** The whole system config, secrets decrypted (current as the system store says). */
export async function loadSystemConfig(deps: Deps): Promise<SystemConfig> {
  const rows = await store.currentValues(deps.db);
  const known = decrypted.get(rows);
  if (known !== undefined && known.key === deps.keys.config) return known.config;
  const secret = new Set<string>();
  const values = new Map<string, string>();
  for (const r of rows) {
    if (r.type === PASSWORD) {
      secret.add(r.key);
      values.set(r.key, decryptSecretText(deps.keys.config, r.value));
    } else values.set(r.key, r.value);
  }
  const config = new SystemConfig(values, secret);
  decrypted.set(rows, { key: deps.keys.config, config });
  return config;
}

/**
 * `GET /system/`: every stored key, or one value when `key` is given (null if
 * unset). Secret values are answered as {@link CENSORED}.
 */
export async function readSystemConfig(deps: Deps, key?: string): Promise<unknown> {
  const config = await loadSystemConfig(deps);
  const shown = (k: string, v: string) => config.isSecret(k) ? CENSORED : v;
  if (key !== undefined) {
    const stored = config.entries().find(([k]) => k === key);
    return stored ? shown(key, stored[1]) : (SYSTEM_KEYS[key]?.default ?? null);
  }
  return Object.fromEntries(config.entries().map(([k, v]) => [k, shown(k, v)]));
}

function normalise(
  key: string,
  raw: unknown,
  typeParam?: string,
): { value: string; type: string; description: string } {
  if (key.length === 0 || key.length > MAX_KEY || /[\0\s]/.test(key)) {
    throw new ParameterError(`Cannot set config key "${key.slice(0, 50)}": invalid key name`);
  }
  let value: string;
  if (typeof raw === "string") value = raw;
  else if (typeof raw === "number" || typeof raw === "boolean") value = String(raw);
  else {throw new ParameterError(
      `Cannot set config key "${key}": the value must be a string, number or boolean`,
    );}
  if (value.length > MAX_VALUE) {
    throw new ParameterError(
      `Cannot set config key "${key}": the value is longer than ${MAX_VALUE} characters`,
    );
  }
  const known = SYSTEM_KEYS[key];
  if (typeParam === PASSWORD || isSecretKey(key)) {
    return { value, type: PASSWORD, description: known?.description ?? "" };
  }
  if (!known) return { value, type: "", description: "" };
  if (known.type === "bool") {
    const v = value.toLowerCase();
    if (TRUE_VALUES.has(v)) value = "True";
    else if (FALSE_VALUES.has(v)) value = "False";
    else {throw new ParameterError(
        `Cannot set config key "${key}": expected a boolean, got "${value}"`,
      );}
  } else if (known.type === "int") {
    if (!/^-?\d+$/.test(value.trim())) {
      throw new ParameterError(
        `Cannot set config key "${key}": expected an integer, got "${value}"`,
      );
    }
    value = String(Number.parseInt(value, 10));
  }
  const problem = known.check?.(value);
  if (problem) {
    throw new ParameterError(`Cannot set config key "${key}": ${problem}, got "${value}"`);
  }
  return { value, type: known.type === "string" ? "" : known.type, description: known.description };
}

/**
 * `POST /system/setConfig`: validates every pair first, then stores them in one
 * transaction. Returns `{key: "insert"|"update"}`. As in privacyIDEA, `<key>.type`
 * and `<key>.desc` beside `<key>` give its type and description; type `password`
 * (and the keys that are always secrets) is stored encrypted, and
 * {@link CENSORED} as its value keeps the stored secret.
 */
export async function setSystemConfig(
  deps: Deps,
  pairs: Record<string, unknown>,
): Promise<Record<string, "insert" | "update">> {
  const suffixOf = (key: string) => /\.(type|desc)$/.exec(key)?.[1];
  const isAttribute = (key: string) =>
    suffixOf(key) !== undefined && key.slice(0, key.lastIndexOf(".")) in pairs;
  const stored = await loadSystemConfig(deps);
  const entries: store.ConfigEntry[] = [];
  const kept: string[] = [];
  for (const [key, raw] of Object.entries(pairs)) {
    if (isAttribute(key)) continue;
    const typeParam = pairs[`${key}.type`];
    const entry = { key, ...normalise(key, raw, typeof typeParam === "string" ? typeParam : "") };
    const desc = pairs[`${key}.desc`];
    if (typeof desc === "string") entry.description = desc.slice(0, 2000);
    if (entry.type === PASSWORD) {
      if (entry.value === CENSORED) {
        // the placeholder GET answered: the stored secret stays as it is
        if (!stored.isSecret(key)) {
          throw new ParameterError(`Cannot set config key "${key}": no secret stored to keep`);
        }
        kept.push(key);
        continue;
      }
      entry.value = encryptSecret(deps.keys.config, entry.value, deps.random);
    }
    entries.push(entry);
  }
  if (entries.length === 0 && Object.keys(pairs).length === 0) {
    throw new ParameterError("Missing parameter: key=value pairs to set");
  }
  const results = await store.upsertEntries(deps.db, entries);
  return Object.fromEntries([
    ...entries.map((e, i) => [e.key, results[i]]),
    ...kept.map((key) => [key, "update"]),
  ]);
}

/** `DELETE /system/<key>`: true if the key was stored. */
export async function deleteSystemConfig(deps: Deps, key: string): Promise<boolean> {
  return await store.deleteEntry(deps.db, key);
}
