/**
 * The HTTP SMS provider (spec 11 §3.1): one GET or POST to the gateway's URL
 * with every non-reserved option as a parameter (`{otp}` → the SMS text,
 * `{phone}` → the number), the gateway's headers, basic auth from
 * USERNAME/PASSWORD or the URL, a timeout, and success decided by the status
 * (200/201/202) and RETURN_SUCCESS / RETURN_FAIL.
 *
 * TLS certificates are always verified: `CHECK_SSL=no` is accepted in the
 * definition but has no effect (Deno's HTTP client cannot skip the check for
 * one request, and an unverified gateway would receive the codes).
 *
 * @module
 */
import { readBodyPrefix } from "../../lib/read_body.ts";

/** Options that configure the request instead of being sent as parameters. */
export const HTTP_RESERVED_OPTIONS = [
  "URL",
  "HTTP_METHOD",
  "RETURN_SUCCESS",
  "RETURN_FAIL",
  "USERNAME",
  "PASSWORD",
  "CHECK_SSL",
  "SEND_DATA_AS_JSON",
  "REGEXP",
  "PROXY",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "TIMEOUT",
];

/** The parameter description of `GET /smsgateway/providers`. */
export const HTTP_PARAMETERS: Record<string, Record<string, unknown>> = {
  URL: { required: true, description: "The base URL of the HTTP Gateway" },
  HTTP_METHOD: {
    required: true,
    description: "Should the HTTP Gateway be connected via an HTTP GET or POST request.",
    values: ["GET", "POST"],
  },
  RETURN_SUCCESS: {
    description:
      "Specify a substring, that indicates, that the SMS was delivered successfully. Use either RETURN_SUCCESS or RETURN_FAIL.",
  },
  RETURN_FAIL: {
    description:
      "Specify a substring, that indicates, that the SMS failed to be delivered. Use either RETURN_SUCCESS or RETURN_FAIL.",
  },
  USERNAME: { description: "Username in case of basic authentication." },
  PASSWORD: { description: "Password in case of basic authentication." },
  CHECK_SSL: {
    required: true,
    description: "Should the SSL certificate be verified (always verified by Tessera).",
    values: ["yes", "no"],
  },
  SEND_DATA_AS_JSON: {
    required: true,
    description: "Should the data be sent as JSON instead of form data (POST only).",
    values: ["yes", "no"],
  },
  REGEXP: {
    description:
      "Regular expression to modify the phone number to make it compatible with provider. Enter something like '/[\\+/]//' to remove pluses and slashes.",
  },
  PROXY: { description: "An optional proxy string. DEPRECATED. Do not use this anymore." },
  HTTP_PROXY: { description: "Proxy setting for HTTP connections." },
  HTTPS_PROXY: { description: "Proxy setting for HTTPS connections." },
  TIMEOUT: { description: "The timeout in seconds. Defaults to 3." },
};

/** Delivery through a gateway failed (the message names why, never the code). */
export class SmsDeliveryError extends Error {}

const OK_STATUSES = [200, 201, 202];
const MAX_REPLY = 65536;

function isYes(value: string | undefined): boolean {
  return ["yes", "true", "1", "on"].includes((value ?? "").trim().toLowerCase());
}

/** A parameter value with the tags filled in; sent as JSON when it parses as JSON (spec). */
function fill(value: string, phone: string, text: string): string {
  return value.replaceAll("{otp}", text).replaceAll("{phone}", phone);
}

function asJsonValue(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** Sends `text` to `phone` through an HTTP gateway; throws {@link SmsDeliveryError} on failure. */
export async function sendHttpSms(
  gateway: { options: Record<string, string>; headers: Record<string, string> },
  phone: string,
  text: string,
): Promise<void> {
  const o = gateway.options;
  let url: URL;
  try {
    url = new URL(o.URL ?? "");
  } catch {
    throw new SmsDeliveryError("the gateway URL is invalid");
  }
  const method = (o.HTTP_METHOD || "GET").toUpperCase();
  if (method !== "GET" && method !== "POST") {
    throw new SmsDeliveryError(`unsupported HTTP_METHOD "${method}"`);
  }
  const headers = new Headers(gateway.headers);
  let username = o.USERNAME ?? "";
  let password = o.PASSWORD ?? "";
  if (!username && url.username) {
    // user:pass@host in the URL is basic auth when USERNAME/PASSWORD are not set
    username = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
  }
  url.username = "";
  url.password = "";
  if (username) {
    const bytes = new TextEncoder().encode(`${username}:${password}`);
    headers.set("authorization", `Basic ${btoa(String.fromCharCode(...bytes))}`);
  }
  const params = Object.entries(o)
    .filter(([k]) => !HTTP_RESERVED_OPTIONS.includes(k))
    .map(([k, v]) => [k, fill(v, phone, text)] as const);
  let body: string | undefined;
  if (method === "GET") {
    for (const [k, v] of params) url.searchParams.append(k, v);
  } else if (isYes(o.SEND_DATA_AS_JSON)) {
    body = JSON.stringify(Object.fromEntries(params.map(([k, v]) => [k, asJsonValue(v)])));
    headers.set("content-type", "application/json");
  } else {
    body = new URLSearchParams(params.map(([k, v]) => [k, v])).toString();
    headers.set("content-type", "application/x-www-form-urlencoded");
  }
  const timeout = Number(o.TIMEOUT || "3");
  const proxy = (url.protocol === "https:" ? o.HTTPS_PROXY : o.HTTP_PROXY) || o.PROXY || "";
  const client = proxy ? Deno.createHttpClient({ proxy: { url: proxy } }) : undefined;
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      body,
      client,
      redirect: "manual",
      signal: AbortSignal.timeout((Number.isFinite(timeout) && timeout > 0 ? timeout : 3) * 1000),
    });
  } catch (err) {
    client?.close();
    throw new SmsDeliveryError(`the gateway did not answer: ${(err as Error).message}`);
  }
  try {
    // only a substring is looked for: the first MAX_REPLY bytes are enough
    const reply = (await readBodyPrefix(res, MAX_REPLY)).text;
    if (!OK_STATUSES.includes(res.status)) {
      throw new SmsDeliveryError(`the gateway answered HTTP ${res.status}`);
    }
    if (o.RETURN_SUCCESS) {
      if (!reply.includes(o.RETURN_SUCCESS)) {
        throw new SmsDeliveryError("the gateway's reply lacks RETURN_SUCCESS");
      }
    } else if (o.RETURN_FAIL && reply.includes(o.RETURN_FAIL)) {
      throw new SmsDeliveryError("the gateway's reply contains RETURN_FAIL");
    }
  } finally {
    client?.close();
  }
}
