/**
 * The Sipgate SMS provider with privacyIDEA's definition keys (USERNAME,
 * PASSWORD, PROXY, REGEXP; spec 14 §21.2). privacyIDEA 3.12 posts an XML-RPC
 * `samurai.SessionInitiate` to Sipgate's "samurai" endpoint, which Sipgate
 * has shut down; Tessera sends the same SMS through Sipgate's REST API
 * instead: `POST https://api.sipgate.com/v2/sessions/sms` with HTTP basic
 * auth (USERNAME/PASSWORD: an account or a personal access token) and the
 * JSON body `{"smsId", "recipient", "message"}`. SMSID (default `s0`), URL
 * and TIMEOUT (default 10 s) are Tessera's options. Success is a 2xx answer
 * (Sipgate answers 204); anything else fails with privacyIDEA's message
 * `SMS could not be sent: <status>`.
 *
 * @module
 */
import { readBodyPrefix } from "../../lib/read_body.ts";
import { SmsDeliveryError } from "./http_provider.ts";

/** Sipgate's SMS endpoint (the URL option replaces it, e.g. for a test double). */
export const SIPGATE_URL = "https://api.sipgate.com/v2/sessions/sms";

/** The parameter description of `GET /smsgateway/providers` (privacyIDEA's, plus Tessera's). */
export const SIPGATE_PARAMETERS: Record<string, Record<string, unknown>> = {
  USERNAME: { required: true, description: "The sipgate username." },
  PASSWORD: { required: true, description: "The sipgate password." },
  PROXY: { description: "An optional proxy URI." },
  REGEXP: {
    description:
      "Regular expression to modify the phone number to make it compatible with the provider. For example to remove pluses and slashes enter something like '/[\\+/]//'.",
  },
  SMSID: { description: "The sipgate SMS extension that sends the SMS (Tessera). Defaults to s0." },
  URL: { description: `The sipgate SMS API endpoint (Tessera). Defaults to ${SIPGATE_URL}.` },
  TIMEOUT: { description: "The timeout in seconds (Tessera). Defaults to 10." },
};

/** Option keys whose change means the stored PASSWORD would go to another server. */
export const SIPGATE_TARGETS = ["URL", "PROXY"];

const DEFAULT_TIMEOUT_S = 10;
const SMSID_REGEXP = /^[A-Za-z0-9]{1,32}$/;
const MAX_REPLY = 4096;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/** Problems of a definition's options (empty: fine), each naming its option. */
export function sipgateOptionProblems(options: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const key of ["USERNAME", "PASSWORD"]) {
    if (!options[key]) problems.push(`Missing parameter: option.${key}`);
  }
  if (options.URL && !isHttpUrl(options.URL)) {
    problems.push(`Cannot parse parameter "option.URL": expected an http(s) URL`);
  }
  if (options.PROXY && !isHttpUrl(options.PROXY)) {
    problems.push(`Cannot parse parameter "option.PROXY": expected an http(s) URL`);
  }
  if (options.SMSID && !SMSID_REGEXP.test(options.SMSID)) {
    problems.push(`Cannot parse parameter "option.SMSID": expected letters and digits, like s0`);
  }
  const timeout = options.TIMEOUT;
  if (timeout !== undefined && timeout !== "" && !(Number(timeout) >= 1 && Number(timeout) <= 60)) {
    problems.push(`Cannot parse parameter "option.TIMEOUT": expected seconds from 1 to 60`);
  }
  return problems;
}

function basicAuth(username: string, password: string): string {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

/**
 * Sends `text` to `phone` through Sipgate; throws {@link SmsDeliveryError}
 * on failure.
 */
export async function sendSipgateSms(
  options: Record<string, string>,
  phone: string,
  text: string,
): Promise<void> {
  const problems = sipgateOptionProblems(options);
  if (problems.length > 0) throw new SmsDeliveryError(`SMS could not be sent: ${problems[0]}`);
  // E.164 with its "+" (Sipgate's format); separators go, as privacyIDEA strips whitespace
  const recipient = phone.replace(/[^\d+]/g, "");
  const timeout = Number(options.TIMEOUT || DEFAULT_TIMEOUT_S);
  const client = options.PROXY
    ? Deno.createHttpClient({ proxy: { url: options.PROXY } })
    : undefined;
  try {
    let res: Response;
    try {
      res = await fetch(options.URL || SIPGATE_URL, {
        method: "POST",
        headers: {
          authorization: basicAuth(options.USERNAME, options.PASSWORD),
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify({ smsId: options.SMSID || "s0", recipient, message: text }),
        client,
        redirect: "manual",
        signal: AbortSignal.timeout(timeout * 1000),
      });
    } catch (err) {
      throw new SmsDeliveryError(`SMS could not be sent: ${(err as Error).message}`);
    }
    // the answer carries nothing we need; read a little so the connection can be reused
    await readBodyPrefix(res, MAX_REPLY).catch(() => undefined);
    if (res.status < 200 || res.status > 299) {
      throw new SmsDeliveryError(`SMS could not be sent: ${res.status}`);
    }
  } finally {
    client?.close();
  }
}
