/**
 * The Firebase provider (spec 13 §1.7): not an SMS gateway but privacyIDEA
 * keeps it among them. A push token whose `push_firebase_configuration`
 * names such a definition gets its challenges as Firebase Cloud Messaging
 * (HTTP v1) messages: an OAuth2 access token from the service account
 * (a JWT signed RS256 with the account's key, POSTed to its `token_uri`),
 * then `POST <push.fcm_url>/v1/projects/<project_id>/messages:send`.
 *
 * @module
 */
import { sign } from "node:crypto";
import type { Deps } from "../../deps.ts";
import { ConfigAdminError } from "../../errors.ts";

/** Option of the service account file's path (privacyIDEA's name, with its spaces). */
export const JSON_CONFIG = "JSON config file";

/** The parameter description of `GET /smsgateway/providers`. */
export const FIREBASE_PARAMETERS: Record<string, Record<string, unknown>> = {
  [JSON_CONFIG]: {
    required: true,
    description: "The filename of the JSON config file, that contains the Firebase configuration.",
  },
};

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
  let parsed: unknown;
  try {
    parsed = JSON.parse(await Deno.readTextFile(path));
  } catch {
    throw new ConfigAdminError("Please check your configuration. Can not load JSON file.");
  }
  const a = parsed as Partial<ServiceAccount> | null;
  if (!a || typeof a !== "object" || a.type !== "service_account") throw invalid();
  for (const key of ["project_id", "private_key", "client_email", "token_uri"] as const) {
    if (typeof a[key] !== "string" || a[key] === "") throw invalid();
  }
  return a as ServiceAccount;
}

/** Problems of a definition's options (empty: fine). */
export async function firebaseOptionProblems(options: Record<string, string>): Promise<string[]> {
  const path = options[JSON_CONFIG] ?? "";
  if (path === "") return [`Missing parameter: option.${JSON_CONFIG}`];
  await readServiceAccount(path);
  return [];
}

function b64url(bytes: Uint8Array | string): string {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  let bin = "";
  for (const b of data) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The service account's OAuth2 access token (JWT bearer grant). */
async function accessToken(deps: Deps, account: ServiceAccount): Promise<string> {
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
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const body = await res.json().catch(() => undefined);
  if (!res.ok || typeof body?.access_token !== "string") {
    throw new Error(`the token endpoint answered ${res.status}`);
  }
  return body.access_token;
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
  try {
    const account = await readServiceAccount(options[JSON_CONFIG] ?? "");
    const token = await accessToken(deps, account);
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
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await res.body?.cancel();
    if (res.status !== 200) {
      deps.log.warn("Firebase did not take the push message", { status: res.status });
      return false;
    }
    return true;
  } catch (err) {
    deps.log.warn("Cannot send the push message to Firebase", { error: (err as Error).message });
    return false;
  }
}
