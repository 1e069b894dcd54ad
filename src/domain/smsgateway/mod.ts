/**
 * SMS gateway definitions (`/smsgateway/`, spec 11 §3, spec 14 §21) and
 * sending an SMS through one. Providers: HTTP (a gateway's web API), Sipgate
 * (its REST API), SMTP (a mail to a mail-to-SMS gateway), SMPP (an SMSC) and
 * Script (a program from the configured `sms.script_dir`). Options and
 * headers whose name says they are secret (password, token, secret, auth,
 * API key) are stored encrypted and shown as `__CENSORED__`; sending that
 * placeholder back keeps the stored value, unless the module or an option
 * that decides where the secret goes (URL, proxy, SMSC host and port) changes
 * with it. A password inside a URL option (`https://user:pw@host/`) is shown
 * as `__CENSORED__` too and kept the same way while the URL's target stays.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { missingParameter, ParameterError, ResourceNotFoundError } from "../../errors.ts";
import { CENSORED, decryptSecretText, encryptSecret } from "../../lib/crypto.ts";
import { censorUrlPassword, keepUrlPassword } from "../secret_targets/url.ts";
import { smtpServerIds } from "../smtp/mod.ts";
import { HTTP_PARAMETERS, sendHttpSms, SmsDeliveryError } from "./http_provider.ts";
import { SCRIPT_NAME_REGEXP, SCRIPT_PARAMETERS, sendScriptSms } from "./script_provider.ts";
import {
  sendSipgateSms,
  SIPGATE_PARAMETERS,
  SIPGATE_TARGETS,
  sipgateOptionProblems,
} from "./sipgate_provider.ts";
import { sendSmtpSms, smtpSmsOptionProblems, smtpSmsParameters } from "./smtp_provider.ts";
import { sendSmppSms, SMPP_PARAMETERS, SMPP_TARGETS, smppOptionProblems } from "./smpp_provider.ts";
import * as store from "./smsgateway_store.ts";
import { FIREBASE_PARAMETERS, firebaseOptionProblems } from "./firebase_provider.ts";

export { SmsDeliveryError } from "./http_provider.ts";
export { FIREBASE_LEGACY_OPTIONS } from "./firebase_provider.ts";

/** Module path of the HTTP provider (the string privacyIDEA clients store). */
export const HTTP_PROVIDER = "privacyidea.lib.smsprovider.HttpSMSProvider.HttpSMSProvider";
/** Module path of the Sipgate provider. */
export const SIPGATE_PROVIDER = "privacyidea.lib.smsprovider.SipgateSMSProvider.SipgateSMSProvider";
/** Module path of the SMTP (SMS by mail) provider. */
export const SMTP_PROVIDER = "privacyidea.lib.smsprovider.SmtpSMSProvider.SmtpSMSProvider";
/** Module path of the SMPP provider. */
export const SMPP_PROVIDER = "privacyidea.lib.smsprovider.SmppSMSProvider.SmppSMSProvider";
/** Module path of the script provider. */
export const SCRIPT_PROVIDER = "privacyidea.lib.smsprovider.ScriptSMSProvider.ScriptSMSProvider";

/** Module path of the Firebase provider (push tokens, not SMS). */
export const FIREBASE_PROVIDER = "privacyidea.lib.smsprovider.FirebaseProvider.FirebaseProvider";

/**
 * Per module: the options that decide where its secrets are sent. A stored
 * secret is kept (`__CENSORED__` sent back) only while none of them changes.
 */
const SECRET_TARGETS: Record<string, string[]> = {
  [HTTP_PROVIDER]: ["URL", "PROXY", "HTTP_PROXY", "HTTPS_PROXY"],
  [SIPGATE_PROVIDER]: SIPGATE_TARGETS,
  [SMTP_PROVIDER]: [],
  [SMPP_PROVIDER]: SMPP_TARGETS,
  [SCRIPT_PROVIDER]: [],
  [FIREBASE_PROVIDER]: [],
};

const NOT_FOUND = "The SMS gateway could not be found.";
// no control characters, no path separators
// deno-lint-ignore no-control-regex
const IDENTIFIER_REGEXP = /^[^\x00-\x1f/\\]{1,255}$/;
// single inner spaces: the Firebase provider's option is "JSON config file"
const OPTION_KEY_REGEXP = /^(?=.{1,255}$)[A-Za-z0-9_.-]+(?: [A-Za-z0-9_.-]+)*$/;
// an HTTP header name (RFC 9110 token)
const HEADER_KEY_REGEXP = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,255}$/;
// deno-lint-ignore no-control-regex
const CONTROL_REGEXP = /[\x00-\x1f\x7f]/;
const SECRET_KEY_REGEXP = /pass|secret|token|auth|api[-_]?key/i;
const MAX_VALUE = 4000;
// digits with the usual separators; never something a script could take for an option
const PHONE_REGEXP = /^[+(]?[0-9][0-9 ()./-]{0,39}$/;

/** A gateway as `GET /smsgateway/` shows it (secrets censored). */
export interface SmsGatewayView {
  id: number;
  name: string;
  providermodule: string;
  description: string;
  options: Record<string, string>;
  headers: Record<string, string>;
}

/** True for an option or header whose value is stored encrypted and censored. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY_REGEXP.test(key);
}

function view(row: store.GatewayRow): SmsGatewayView {
  const pick = (type: "option" | "header") =>
    Object.fromEntries(
      row.options.filter((o) => o.type === type).map((
        o,
      ) => [o.key, o.isSecret ? CENSORED : censorUrlPassword(o.value)]),
    );
  return {
    id: row.id,
    name: row.identifier,
    providermodule: row.providerModule,
    description: row.description,
    options: pick("option"),
    headers: pick("header"),
  };
}

/** `GET /smsgateway/[<id>]`: a numeric id lists that gateway, anything else all (spec quirk). */
export async function listSmsGateways(deps: Deps, id?: string): Promise<SmsGatewayView[]> {
  const n = id !== undefined && /^\d{1,15}$/.test(id) ? Number(id) : undefined;
  return (await store.listGateways(deps.db, { id: n })).map(view);
}

/** `GET /smsgateway/providers`: module path → its parameters, in privacyIDEA's order. */
export async function smsProviders(deps: Deps): Promise<Record<string, unknown>> {
  const closed = (parameters: Record<string, Record<string, unknown>>) => ({
    options_allowed: false,
    headers_allowed: false,
    parameters,
  });
  return {
    [HTTP_PROVIDER]: { options_allowed: true, headers_allowed: true, parameters: HTTP_PARAMETERS },
    [SIPGATE_PROVIDER]: closed(SIPGATE_PARAMETERS),
    [SMTP_PROVIDER]: closed(smtpSmsParameters(await smtpServerIds(deps))),
    [SMPP_PROVIDER]: closed(SMPP_PARAMETERS),
    [SCRIPT_PROVIDER]: closed(SCRIPT_PARAMETERS),
    [FIREBASE_PROVIDER]: closed(FIREBASE_PARAMETERS),
  };
}

function str(params: Record<string, unknown>, name: string): string | undefined {
  const v = params[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new ParameterError(`Cannot parse parameter "${name}": expected a string`);
}

/** Throws the first problem: a missing option as "Missing parameter", others as they read. */
function refuse(problems: string[]): void {
  if (problems.length === 0) return;
  const missing = problems[0].match(/^Missing parameter: (.*)$/);
  throw missing ? missingParameter(missing[1]) : new ParameterError(problems[0]);
}

/** The closed providers take only their listed parameters and no headers. */
function checkClosedOptions(
  module: string,
  parameters: Record<string, unknown>,
  options: Record<string, string>,
  hasHeaders: boolean,
): void {
  const name = module.split(".").at(-1);
  if (hasHeaders) throw new ParameterError(`The ${name} takes no headers`);
  const unknown = Object.keys(options).find((k) => !Object.hasOwn(parameters, k));
  if (unknown !== undefined) {
    throw new ParameterError(`The ${name} takes no option "${unknown}"`);
  }
}

async function checkProviderOptions(
  deps: Deps,
  module: string,
  options: Record<string, string>,
  hasHeaders: boolean,
): Promise<void> {
  if (module === SIPGATE_PROVIDER) {
    checkClosedOptions(module, SIPGATE_PARAMETERS, options, hasHeaders);
    refuse(sipgateOptionProblems(options));
  } else if (module === SMTP_PROVIDER) {
    const ids = await smtpServerIds(deps);
    checkClosedOptions(module, smtpSmsParameters(ids), options, hasHeaders);
    refuse(smtpSmsOptionProblems(options, ids));
  } else if (module === SMPP_PROVIDER) {
    checkClosedOptions(module, SMPP_PARAMETERS, options, hasHeaders);
    refuse(smppOptionProblems(options));
  } else if (module === HTTP_PROVIDER) {
    const url = options.URL ?? "";
    if (url === "") throw missingParameter("option.URL");
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch { /* reported below */ }
    if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
      throw new ParameterError(`Cannot parse parameter "option.URL": expected an http(s) URL`);
    }
    const method = (options.HTTP_METHOD ?? "GET").toUpperCase();
    if (method !== "GET" && method !== "POST") {
      throw new ParameterError(
        `Cannot parse parameter "option.HTTP_METHOD": expected GET or POST, got "${method}"`,
      );
    }
    const timeout = options.TIMEOUT;
    if (
      timeout !== undefined && timeout !== "" && !(Number(timeout) > 0 && Number(timeout) <= 60)
    ) {
      throw new ParameterError(
        `Cannot parse parameter "option.TIMEOUT": expected seconds from 1 to 60, got "${timeout}"`,
      );
    }
    for (const key of ["PROXY", "HTTP_PROXY", "HTTPS_PROXY"]) {
      if (!options[key]) continue;
      try {
        new URL(options[key]);
      } catch {
        throw new ParameterError(`Cannot parse parameter "option.${key}": expected a URL`);
      }
    }
  } else if (module === FIREBASE_PROVIDER) {
    checkClosedOptions(module, FIREBASE_PARAMETERS, options, hasHeaders);
    refuse(await firebaseOptionProblems(options));
  } else if (module === SCRIPT_PROVIDER) {
    if (hasHeaders) throw new ParameterError("The script provider takes no headers");
    const script = options.script ?? "";
    if (script === "") throw missingParameter("option.script");
    if (!SCRIPT_NAME_REGEXP.test(script)) {
      throw new ParameterError(
        `Cannot parse parameter "option.script": a file name in the SMS script directory`,
      );
    }
    const background = options.background ?? "wait";
    if (background !== "wait" && background !== "background") {
      throw new ParameterError(
        `Cannot parse parameter "option.background": expected wait or background, got "${background}"`,
      );
    }
  } else {
    throw new ParameterError(
      `Cannot parse parameter "module": unknown SMS provider module "${module.slice(0, 200)}"`,
    );
  }
}

/**
 * Refuses to keep a stored secret when the module or an option that decides
 * where it is sent changes: an admin must not redirect a secret they cannot
 * read to a server of their choice.
 */
function checkSecretTargets(
  existing: store.GatewayRow,
  module: string,
  next: Record<string, string>,
  secret: string,
): void {
  const refusal = (what: string) =>
    new ParameterError(
      `Cannot keep the stored "${secret}": "${what}" changed, which decides where it is sent. ` +
        `Send "${secret}" again`,
    );
  if (existing.providerModule !== module) throw refusal("module");
  const before = new Map(
    existing.options.filter((o) => o.type === "option" && !o.isSecret).map((o) => [o.key, o.value]),
  );
  const changed = (SECRET_TARGETS[module] ?? []).find((key) =>
    (before.get(key) ?? "") !== (next[key] ?? "")
  );
  if (changed !== undefined) throw refusal(`option.${changed}`);
}

/**
 * `POST /smsgateway`: creates the gateway `name` or replaces it (options and
 * headers not sent are deleted); returns its id.
 */
export async function saveSmsGateway(deps: Deps, params: Record<string, unknown>): Promise<number> {
  const name = (str(params, "name") ?? "").trim();
  if (name === "") throw missingParameter("name");
  if (!IDENTIFIER_REGEXP.test(name)) {
    throw new ParameterError(`Cannot use SMS gateway name "${name.slice(0, 50)}"`);
  }
  const module = (str(params, "module") ?? "").trim();
  if (module === "") throw missingParameter("module");
  const description = (str(params, "description") ?? "").slice(0, 2000);
  const existing = (await store.listGateways(deps.db, { identifier: name }))[0];
  const options: store.GatewayOptionRow[] = [];
  const plain: Record<string, string> = {};
  // the secrets sent back as the placeholder, which keep their stored value
  const kept: string[] = [];
  for (const param of Object.keys(params)) {
    const m = param.match(/^(option|header)\.(.*)$/);
    if (!m) continue;
    const type = m[1] as "option" | "header";
    const key = m[2];
    const keyRegexp = type === "header" ? HEADER_KEY_REGEXP : OPTION_KEY_REGEXP;
    if (!keyRegexp.test(key)) {
      throw new ParameterError(`Cannot use ${type} name "${key.slice(0, 50)}"`);
    }
    const value = str(params, param) ?? "";
    if (value.length > MAX_VALUE || (type === "header" ? CONTROL_REGEXP : /\0/).test(value)) {
      throw new ParameterError(`Cannot parse parameter "${param}": invalid value`);
    }
    const isSecret = isSecretKey(key);
    let stored = value;
    if (isSecret && value === CENSORED) {
      // the placeholder sent back keeps the stored secret; none stored: nothing to keep
      const old = existing?.options.find((o) => o.type === type && o.key === key && o.isSecret);
      if (!old) continue;
      stored = old.value;
      kept.push(param);
      if (type === "option") plain[key] = decryptSecretText(deps.keys.config, old.value);
    } else {
      if (!isSecret) {
        // a URL's password shown as __CENSORED__ keeps the stored one while the URL's target stays
        const old = existing?.options.find((o) => o.type === type && o.key === key && !o.isSecret);
        stored = keepUrlPassword(param, value, old?.value);
      }
      if (type === "option") plain[key] = stored;
      if (isSecret) stored = encryptSecret(deps.keys.config, value, deps.random);
    }
    options.push({ key, value: stored, type, isSecret });
  }
  await checkProviderOptions(deps, module, plain, options.some((o) => o.type === "header"));
  if (existing && kept.length > 0) checkSecretTargets(existing, module, plain, kept[0]);
  return await store.saveGateway(deps.db, {
    identifier: name,
    description,
    providerModule: module,
    options,
  });
}

/** `DELETE /smsgateway/<name>`: returns the deleted id; unknown → 404. */
export async function deleteSmsGateway(deps: Deps, name: string): Promise<number> {
  const id = await store.deleteGateway(deps.db, name);
  if (id === undefined) throw new ResourceNotFoundError(NOT_FOUND);
  return id;
}

/**
 * `DELETE /smsgateway/option/<id>/<key>`: `key` is `option.X`, `header.X`
 * or `X` (an option); unknown gateway or key → 404.
 */
export async function deleteSmsGatewayOption(deps: Deps, id: string, key: string): Promise<true> {
  if (!/^\d{1,15}$/.test(id)) throw new ResourceNotFoundError(NOT_FOUND);
  const m = key.match(/^(option|header)\.(.+)$/);
  const type = (m?.[1] ?? "option") as "option" | "header";
  const name = m ? m[2] : key;
  if (!(await store.deleteGatewayOption(deps.db, Number(id), name, type))) {
    throw new ResourceNotFoundError(
      `The SMS gateway option "${key.slice(0, 100)}" does not exist.`,
    );
  }
  return true;
}

/**
 * Applies a gateway's REGEXP option (`/<pattern>/<replacement>/`, Python
 * style `\1` groups) to a phone number; an invalid expression changes nothing.
 */
export function manglePhone(phone: string, regexp: string | undefined): string {
  const m = (regexp ?? "").match(/^\/(.*)\/(.*)\/$/s);
  if (!m) return phone;
  try {
    const replacement = m[2].replace(/\$/g, "$$$$").replace(/\\(\d)/g, "$$$1");
    return phone.replace(new RegExp(m[1], "g"), replacement);
  } catch {
    return phone;
  }
}

/** True for a phone number Tessera sends to (digits and the usual separators). */
export function isPhoneNumber(text: string): boolean {
  return PHONE_REGEXP.test(text);
}

/**
 * Sends `text` to `phone` through the gateway `identifier`; throws
 * {@link SmsDeliveryError} (unknown gateway, bad number, delivery failed).
 */
export async function sendSms(
  deps: Deps,
  identifier: string,
  phone: string,
  text: string,
): Promise<void> {
  const row = (await store.listGateways(deps.db, { identifier }))[0];
  if (!row) throw new SmsDeliveryError(`no SMS gateway "${identifier.slice(0, 100)}"`);
  if (!isPhoneNumber(phone)) throw new SmsDeliveryError("not a phone number");
  const options: Record<string, string> = {};
  const headers: Record<string, string> = {};
  for (const o of row.options) {
    const value = o.isSecret ? decryptSecretText(deps.keys.config, o.value) : o.value;
    if (o.type === "header") headers[o.key] = value;
    else options[o.key] = value;
  }
  const number = manglePhone(phone, options.REGEXP);
  // deno-lint-ignore no-control-regex
  if (number === "" || number.startsWith("-") || /[\x00-\x1f]/.test(number)) {
    throw new SmsDeliveryError("the REGEXP option leaves no usable phone number");
  }
  if (row.providerModule === HTTP_PROVIDER) {
    await sendHttpSms({ options, headers }, number, text);
  } else if (row.providerModule === SIPGATE_PROVIDER) {
    await sendSipgateSms(options, number, text);
  } else if (row.providerModule === SMTP_PROVIDER) {
    await sendSmtpSms(deps, options, number, text);
  } else if (row.providerModule === SMPP_PROVIDER) {
    await sendSmppSms(options, number, text, deps.random);
  } else if (row.providerModule === SCRIPT_PROVIDER) {
    await sendScriptSms(deps.config.sms.scriptDir, options, number, text, (code) => {
      deps.log.warn("SMS script failed", { gateway: identifier, code });
    });
  } else {
    throw new SmsDeliveryError(`unsupported SMS provider "${row.providerModule}"`);
  }
}

/** The options of the Firebase provider definition `identifier`, or undefined if there is none. */
export async function firebaseGatewayOptions(
  deps: Deps,
  identifier: string,
): Promise<Record<string, string> | undefined> {
  const row = (await store.listGateways(deps.db, { identifier }))[0];
  if (!row || row.providerModule !== FIREBASE_PROVIDER) return undefined;
  const options: Record<string, string> = {};
  for (const o of row.options) {
    if (o.type !== "option") continue;
    options[o.key] = o.isSecret ? decryptSecretText(deps.keys.config, o.value) : o.value;
  }
  return options;
}
