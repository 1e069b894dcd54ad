/**
 * The Firebase provider (spec 13 §1.7): not an SMS gateway but privacyIDEA
 * keeps it among them. A push token whose `push_firebase_configuration`
 * names such a definition gets its challenges as Firebase Cloud Messaging
 * (HTTP v1) messages: an OAuth2 access token from the service account
 * (a JWT signed RS256 with the account's key, POSTed to its `token_uri`),
 * then `POST <push.fcm_url>/v1/projects/<project_id>/messages:send`. With
 * the option `httpsproxy` both requests go through that proxy.
 *
 * @module
 */
import { createHash, sign } from "node:crypto";
import type { Deps } from "../../deps.ts";
import { ConfigAdminError } from "../../errors.ts";

/** Option of the service account file's path (privacyIDEA's name, with its spaces). */
export const JSON_CONFIG = "JSON config file";

/** Option of the proxy the token request and the message go through (privacyIDEA's name). */
export const HTTPS_PROXY = "httpsproxy";

/** The parameter description of `GET /smsgateway/providers`. */
export const FIREBASE_PARAMETERS: Record<string, Record<string, unknown>> = {
  [JSON_CONFIG]: {
    required: true,
    description: "The filename of the JSON config file, that contains the Firebase configuration.",
  },
  [HTTPS_PROXY]: {
    required: false,
    description: "Proxy setting for HTTPS connections to googleapis.com.",
  },
};

/**
 * Options of privacyIDEA's older Firebase providers (up to 3.7: the app's project, app ids and
 * API keys; the legacy API's registration URL and time to live) that its current provider
 * ignores (spec 13 §1.7); definitions made then still hold them.
 */
export const FIREBASE_LEGACY_OPTIONS = [
  "registration URL",
  "time to live",
  "projectid",
  "projectnumber",
  "appid",
  "apikey",
  "appidios",
  "apikeyios",
];

// the proxy kinds Deno's HTTP client speaks
const PROXY_PROTOCOLS = ["http:", "https:", "socks5:", "socks5h:"];

const SCOPES = [
  "https://www.googleapis.com/auth/cloud-platform",
  "https://www.googleapis.com/auth/datastore",
  "https://www.googleapis.com/auth/devstorage.read_write",
  "https://www.googleapis.com/auth/firebase",
  "https://www.googleapis.com/auth/identitytoolkit",
  "https://www.googleapis.com/auth/userinfo.email",
];
const TIMEOUT_MS = 10_000;

interface ServiceAccount {
  type: string;
  project_id: string;
  private_key_id?: string;
  private_key: string;
  client_email: string;
  token_uri: string;
}

function invalid(): ConfigAdminError {
  return new ConfigAdminError("The JSON file is not a valid firebase credentials file.");
}

/** Reads and checks a service account file; throws ERR302 when it is none. */
export async function readServiceAccount(path: string): Promise<ServiceAccount> {
  return (await loadServiceAccount(path)).account;
}

/** The checked account and the file's text (part of the access token cache's key). */
async function loadServiceAccount(
  path: string,
): Promise<{ account: ServiceAccount; text: string }> {
  let text: string;
  let parsed: unknown;
  try {
    text = await Deno.readTextFile(path);
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigAdminError("Please check your configuration. Can not load JSON file.");
  }
  const a = parsed as Partial<ServiceAccount> | null;
  if (!a || typeof a !== "object" || a.type !== "service_account") throw invalid();
  for (const key of ["project_id", "private_key", "client_email", "token_uri"] as const) {
    if (typeof a[key] !== "string" || a[key] === "") throw invalid();
  }
  return { account: a as ServiceAccount, text };
}

/** Problems of a definition's options (empty: fine). */
export async function firebaseOptionProblems(options: Record<string, string>): Promise<string[]> {
  const path = options[JSON_CONFIG] ?? "";
  if (path === "") return [`Missing parameter: option.${JSON_CONFIG}`];
  const proxy = options[HTTPS_PROXY] ?? "";
  if (proxy !== "" && proxyUrl(proxy) === undefined) {
    return [
      `Cannot parse parameter "option.${HTTPS_PROXY}": expected an http, https or socks5 URL ` +
      `such as "http://proxy.example.com:3128"`,
    ];
  }
  await readServiceAccount(path);
  return [];
}

/** The proxy's URL when `value` is one Deno's HTTP client can use; undefined otherwise. */
function proxyUrl(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (!PROXY_PROTOCOLS.includes(url.protocol) || url.hostname === "") return undefined;
  return value;
}

function b64url(bytes: Uint8Array | string): string {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  let bin = "";
  for (const b of data) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/*
 * Why a cache here, outside a store: DESIGN keeps caches of stored objects
 * behind their store, so that a change anywhere is seen everywhere. This one
 * holds no stored object but an external credential: Google's OAuth2 access
 * token for a service account, valid for `expires_in` seconds wherever it is
 * used. Each process keeps its own; a stale one costs at most one more token
 * request, never a wrong decision. Rule: an entry is used until
 * REFRESH_EARLY_S before its expiry (google-auth refreshes 3 min 45 s early),
 * dropped when FCM answers 401, and keyed by the file's path, the account's
 * client_email and private_key_id and a hash of the file's whole text, so a
 * replaced or edited file takes effect with the next message. The token is
 * never logged.
 */
const REFRESH_EARLY_S = 225;
const MAX_CACHED_TOKENS = 100;
const TOKENS = new Map<string, { token: string; refreshAt: number }>();

function cacheKey(path: string, account: ServiceAccount, text: string): string {
  return createHash("sha256")
    .update(JSON.stringify([path, account.client_email, account.private_key_id ?? "", text]))
    .digest("hex");
}

/** The cached access token of `key`, or a new one (then cached while `expires_in` allows). */
async function cachedAccessToken(
  deps: Deps,
  key: string,
  account: ServiceAccount,
  client: Deno.HttpClient | undefined,
): Promise<string> {
  const now = deps.clock.now();
  const hit = TOKENS.get(key);
  if (hit && hit.refreshAt > now) return hit.token;
  const { token, expiresIn } = await accessToken(deps, account, client);
  for (const [k, v] of TOKENS) if (v.refreshAt <= now) TOKENS.delete(k);
  // a token without a usable lifetime is used once, not kept
  if (expiresIn !== undefined && expiresIn > REFRESH_EARLY_S) {
    if (TOKENS.size >= MAX_CACHED_TOKENS) TOKENS.delete(TOKENS.keys().next().value!);
    TOKENS.set(key, { token, refreshAt: now + (expiresIn - REFRESH_EARLY_S) * 1000 });
  }
  return token;
}

/** The service account's OAuth2 access token (JWT bearer grant) and its lifetime in seconds. */
async function accessToken(
  deps: Deps,
  account: ServiceAccount,
  client: Deno.HttpClient | undefined,
): Promise<{ token: string; expiresIn?: number }> {
  const now = Math.floor(deps.clock.now() / 1000);
  const header: Record<string, string> = { alg: "RS256", typ: "JWT" };
  if (account.private_key_id) header.kid = account.private_key_id;
  const claims = {
    iss: account.client_email,
    scope: SCOPES.join(" "),
    aud: account.token_uri,
    iat: now,
    exp: now + 3600,
  };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature = sign("sha256", new TextEncoder().encode(input), account.private_key);
  const res = await fetch(account.token_uri, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      assertion: `${input}.${b64url(signature)}`,
    }),
    client,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const body = await res.json().catch(() => undefined);
  if (!res.ok || typeof body?.access_token !== "string") {
    throw new Error(`the token endpoint answered ${res.status}`);
  }
  const expiresIn = Number(body.expires_in);
  return {
    token: body.access_token,
    expiresIn: Number.isFinite(expiresIn) ? expiresIn : undefined,
  };
}

/**
 * Sends one push message (privacyIDEA's message shape); true iff FCM
 * answered 200. Any failure (file, token endpoint, network) is false and
 * logged without secrets.
 */
export async function sendFirebaseMessage(
  deps: Deps,
  options: Record<string, string>,
  firebaseToken: string,
  data: Record<string, string>,
): Promise<boolean> {
  let client: Deno.HttpClient | undefined;
  try {
    const path = options[JSON_CONFIG] ?? "";
    const { account, text } = await loadServiceAccount(path);
    const key = cacheKey(path, account, text);
    if (options[HTTPS_PROXY]) {
      // checked at save time; a definition stored otherwise (older data) fails here, not silently direct
      const proxy = proxyUrl(options[HTTPS_PROXY]);
      if (proxy === undefined) throw new Error(`option ${HTTPS_PROXY} is not a proxy URL`);
      client = Deno.createHttpClient({ proxy: { url: proxy } });
    }
    const token = await cachedAccessToken(deps, key, account, client);
    const message = {
      message: {
        data,
        token: firebaseToken,
        notification: { title: data.title, body: data.question },
        android: {
          priority: "HIGH",
          ttl: "120s",
          fcm_options: { analytics_label: "AndroidPushToken" },
        },
        apns: {
          headers: {
            "apns-priority": "10",
            "apns-push-type": "alert",
            "apns-collapse-id": "privacyidea.pushtoken",
            "apns-expiration": String(Math.floor(deps.clock.now() / 1000) + 120),
          },
          payload: {
            aps: {
              alert: { title: data.title, body: data.question },
              sound: "default",
              category: "PUSH_AUTHENTICATION",
            },
          },
          fcm_options: { analytics_label: "iOSPushToken" },
        },
      },
    };
    const base = deps.config.push.fcmUrl.replace(/\/+$/, "");
    const url = `${base}/v1/projects/${encodeURIComponent(account.project_id)}/messages:send`;
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json; UTF-8", authorization: `Bearer ${token}` },
      body: JSON.stringify(message),
      client,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await res.body?.cancel();
    // a token FCM no longer takes (revoked, key deleted) is fetched anew next time
    if (res.status === 401) TOKENS.delete(key);
    if (res.status !== 200) {
      deps.log.warn("Firebase did not take the push message", { status: res.status });
      return false;
    }
    return true;
  } catch (err) {
    deps.log.warn("Cannot send the push message to Firebase", { error: (err as Error).message });
    return false;
  } finally {
    client?.close();
  }
}
