/**
 * Outgoing HTTP of the HTTP-family resolvers (`httpresolver`, `entraidresolver`,
 * `keycloakresolver`, `scimresolver`): one request with a deadline for the whole
 * exchange, a cap on the answer's size, and TLS verification per resolver (on,
 * off, or against a CA bundle of the resolver's own).
 *
 * `node:http(s)` rather than `fetch`: Deno's `fetch` cannot switch off
 * certificate verification for one request. Redirects are never followed: a
 * user store that answers 3xx is treated as failing, so a request (and the
 * credentials it carries) never goes anywhere but the configured URL.
 *
 * @module
 */
import http from "node:http";
import https from "node:https";
import { Buffer } from "node:buffer";
import { VERSION } from "../../version.ts";

/** Largest answer read from a user store; more is a failure. */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** One request to a user store. */
export interface StoreRequest {
  method: string;
  /** Absolute http(s) URL, query included. */
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** Verify the server's certificate (https only). */
  isTlsVerified: boolean;
  /** PEM certificates to trust instead of the system store (https only). */
  caCerts?: string[];
  /** Deadline for the whole exchange, answer included. */
  timeoutMs: number;
}

/** The answer of a user store. */
export interface StoreAnswer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  text: string;
}

/** The user store could not be reached or answered unusably; the message names no server. */
export class StoreUnreachableError extends Error {
  override name = "StoreUnreachableError";
}

function reasonOf(err: Error): string {
  if (err instanceof StoreUnreachableError) return err.message;
  const code = (err as { code?: string }).code;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "unknown host name";
  if (code === "ECONNRESET") return "connection reset";
  if (/certificate|self.signed|CERT_|TLS|SSL/i.test(`${code ?? ""} ${err.message}`)) {
    return `TLS failed: ${err.message.replace(/\s+/g, " ").slice(0, 120)}`;
  }
  return err.message === "" ? "the request failed" : err.message.slice(0, 120);
}

/** Sends `request`; throws {@link StoreUnreachableError} on network failure, timeout or an oversized answer. */
export function sendToStore(request: StoreRequest): Promise<StoreAnswer> {
  const isHttps = request.url.protocol === "https:";
  const headers: Record<string, string> = {
    "user-agent": `Tessera/${VERSION}`,
    ...request.headers,
  };
  let body: Buffer | undefined;
  if (request.body !== undefined) {
    body = Buffer.from(request.body, "utf8");
    headers["content-length"] = String(body.length);
  }
  const options: https.RequestOptions = { method: request.method, headers };
  if (isHttps) {
    options.rejectUnauthorized = request.isTlsVerified;
    if (request.isTlsVerified && request.caCerts) options.ca = request.caCerts;
  }
  return new Promise<StoreAnswer>((resolve, reject) => {
    let done = false;
    let req: http.ClientRequest | undefined;
    const finish = (result: StoreAnswer | Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (result instanceof Error) {
        req?.destroy();
        reject(new StoreUnreachableError(reasonOf(result)));
      } else {
        resolve(result);
      }
    };
    const timer = setTimeout(
      () => finish(new StoreUnreachableError(`no answer within ${request.timeoutMs / 1000} s`)),
      request.timeoutMs,
    );
    const onAnswer = (res: http.IncomingMessage) => {
      const chunks: Uint8Array[] = [];
      let size = 0;
      res.on("data", (chunk: Uint8Array) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) {
          finish(new StoreUnreachableError(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
          res.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on("end", () => {
        const answerHeaders: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) {
          if (v !== undefined) answerHeaders[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
        }
        finish({
          status: res.statusCode ?? 0,
          headers: answerHeaders,
          text: new TextDecoder().decode(Buffer.concat(chunks)),
        });
      });
      res.on("error", (err: Error) => finish(err));
    };
    try {
      req = isHttps
        ? https.request(request.url, options, onAnswer)
        : http.request(request.url, options, onAnswer);
    } catch (err) {
      // an invalid header name or value, refused before anything was sent
      finish(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    req.on("error", (err: Error) => finish(err));
    req.end(body);
  });
}
