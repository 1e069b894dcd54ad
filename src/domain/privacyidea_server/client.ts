/**
 * Outgoing HTTP to a remote privacyIDEA-compatible server: one form or query
 * request with a deadline, a cap on the answer's size and, per definition,
 * TLS certificate verification on or off (privacyIDEA's `tls` flag).
 *
 * `node:http(s)` rather than `fetch`: Deno's `fetch` cannot switch off
 * certificate verification for one request, and one code path serves both.
 *
 * @module
 */
import http from "node:http";
import https from "node:https";
import { Buffer } from "node:buffer";
import { VERSION } from "../../version.ts";

/** Largest answer read from a remote server; more is a failure. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;

/** One request to a remote server. */
export interface RemoteRequest {
  method: "GET" | "POST" | "DELETE";
  /** Absolute http(s) URL without a query. */
  url: string;
  /** Parameters: the query for GET, an urlencoded body otherwise. */
  params: [string, string][];
  headers?: Record<string, string>;
  /** Verify the server's certificate (https only). */
  isTlsVerified: boolean;
  /** Deadline for the whole exchange, answer included. */
  timeoutMs: number;
}

/** The remote answer as status and text. */
export interface RemoteResponse {
  status: number;
  text: string;
}

/** The remote server could not be reached or answered unusably (never a remote error envelope). */
export class RemoteServerError extends Error {
  override name = "RemoteServerError";
}

/** Sends `request`; throws {@link RemoteServerError} on network failure, timeout or an oversized answer. */
export function sendRemote(request: RemoteRequest): Promise<RemoteResponse> {
  const url = new URL(request.url);
  const encoded = new URLSearchParams(request.params).toString();
  let body: Buffer | undefined;
  if (request.method === "GET") {
    if (encoded !== "") url.search = encoded;
  } else {
    body = Buffer.from(encoded, "utf8");
  }
  const headers: Record<string, string> = {
    "user-agent": `Tessera/${VERSION}`,
    accept: "application/json",
    ...request.headers,
  };
  if (body) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    headers["content-length"] = String(body.length);
  }
  const isHttps = url.protocol === "https:";
  const options = {
    method: request.method,
    headers,
    ...(isHttps ? { rejectUnauthorized: request.isTlsVerified } : {}),
  };

  return new Promise<RemoteResponse>((resolve, reject) => {
    let done = false;
    const finish = (result: RemoteResponse | Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (result instanceof Error) {
        req.destroy();
        reject(
          result instanceof RemoteServerError ? result : new RemoteServerError(result.message),
        );
      } else {
        resolve(result);
      }
    };
    const onResponse = (res: http.IncomingMessage) => {
      const chunks: Uint8Array[] = [];
      let size = 0;
      res.on("data", (chunk: Uint8Array) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          finish(new RemoteServerError(`The answer is larger than ${MAX_RESPONSE_BYTES} bytes`));
          res.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on("end", () =>
        finish({
          status: res.statusCode ?? 0,
          text: new TextDecoder().decode(Buffer.concat(chunks)),
        }));
      res.on("error", (err: Error) => finish(err));
    };
    const req = isHttps
      ? https.request(url, options, onResponse)
      : http.request(url, options, onResponse);
    const timer = setTimeout(
      () => finish(new RemoteServerError(`No answer within ${request.timeoutMs} ms`)),
      request.timeoutMs,
    );
    req.on("error", (err: Error) => finish(err));
    req.end(body);
  });
}

/**
 * Percent-encodes like Python's `urllib.parse.quote` (`/` kept): privacyIDEA
 * pre-encodes the test request's user and password, which the remote's second
 * percent-decoding (spec 09 §1.2) undoes.
 */
export function pythonQuote(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll("%2F", "/");
}
