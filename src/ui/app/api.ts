/**
 * The UI's only way to the server: Tessera's JSON API with the session's JWT,
 * exactly as any other client calls it.
 *
 * @module
 */

/** An API call that answered `result.status: false` (or no envelope at all). */
export class ApiError extends Error {
  constructor(message: string, readonly code?: number, readonly status?: number) {
    super(message);
  }
}

/** What a successful call returns: `result.value` and the envelope's `detail`. */
export interface ApiResult<T> {
  value: T;
  // deno-lint-ignore no-explicit-any
  detail: any;
  /** `result.authentication` of /validate and /auth answers (ACCEPT, REJECT, CHALLENGE). */
  authentication?: string;
}

type Method = "GET" | "POST" | "PUT" | "DELETE" | "PATCH";

let jwt: string | undefined;
let onSessionEnd: ((message: string) => void) | undefined;

/** Sets the JWT sent with every call (undefined: none). */
export function setApiToken(token: string | undefined): void {
  jwt = token;
}

/** Called when the server refuses the session's JWT (expired or no longer valid). */
export function onSessionEnded(handler: (message: string) => void): void {
  onSessionEnd = handler;
}

/**
 * A path or query value as the server reads it: Tessera decodes `%XX` a second
 * time (privacyIDEA's quirk), so a literal `%` is sent escaped once more.
 */
function protect(value: string): string {
  return value.replaceAll("%", "%25");
}

/** One path segment, encoded for the server's double decoding. */
export function seg(value: string | number): string {
  return encodeURIComponent(protect(String(value)));
}

function queryOf(params: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") continue;
    q.set(k, protect(String(v)));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

/**
 * Calls the API: GET and DELETE send `params` in the query, the others as a
 * JSON body (JSON values are not decoded twice).
 */
export async function api<T = unknown>(
  method: Method,
  path: string,
  params: Record<string, unknown> = {},
): Promise<ApiResult<T>> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (jwt) headers.authorization = jwt;
  const hasBody = method !== "GET" && method !== "DELETE";
  if (hasBody) headers["content-type"] = "application/json";
  return resultOf<T>(
    await fetch(path + (hasBody ? "" : queryOf(params)), {
      method,
      headers,
      body: hasBody ? JSON.stringify(params) : undefined,
      credentials: "omit",
      cache: "no-store",
    }),
  );
}

/** POSTs `form` as multipart/form-data (a file upload), with the session's JWT. */
export async function upload<T = unknown>(path: string, form: FormData): Promise<ApiResult<T>> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (jwt) headers.authorization = jwt;
  // the browser sets the multipart content type with its boundary
  return resultOf<T>(
    await fetch(path, {
      method: "POST",
      headers,
      body: form,
      credentials: "omit",
      cache: "no-store",
    }),
  );
}

/** The value of an answer's envelope, or the API's error (a refused JWT ends the session). */
async function resultOf<T>(res: Response): Promise<ApiResult<T>> {
  // deno-lint-ignore no-explicit-any
  let body: any;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(
      `The server answered HTTP ${res.status} without a JSON body`,
      -1,
      res.status,
    );
  }
  const result = body?.result;
  if (!result || result.status !== true) {
    const code = result?.error?.code;
    const message = result?.error?.message ?? `The request failed with HTTP ${res.status}`;
    // a refused JWT ends the session: expired (4305), invalid (4304) or gone (4033)
    if (jwt && res.status === 401 && [4033, 4304, 4305].includes(code)) {
      onSessionEnd?.(
        code === 4305
          ? "Your session has expired. Please log in again."
          : `Your session has ended: ${message}`,
      );
    }
    throw new ApiError(message, code, res.status);
  }
  return {
    value: result.value as T,
    detail: body.detail,
    authentication: typeof result.authentication === "string" ? result.authentication : undefined,
  };
}

/** The message of an error for the person at the screen. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError) return "Cannot reach the server";
  return err instanceof Error ? err.message : String(err);
}

/** `GET path`: the value only. */
export async function get<T = unknown>(
  path: string,
  params: Record<string, unknown> = {},
): Promise<T> {
  return (await api<T>("GET", path, params)).value;
}
