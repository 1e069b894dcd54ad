/**
 * A stub user-store API on loopback for the HTTP-family resolver tests: it
 * records every request exactly as it arrived (method, path, raw query,
 * headers, raw body) and answers from the test's handler.
 *
 * @module
 */

/** One request as the stub saw it. */
export interface SeenRequest {
  method: string;
  /** The path as sent (still percent-encoded). */
  path: string;
  /** The raw query without `?` ("" when none). */
  query: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

/** A running stub. */
export interface StoreStub {
  /** `http(s)://127.0.0.1:<port>` */
  origin: string;
  port: number;
  requests: SeenRequest[];
  /** Requests whose path starts with `prefix` (all when omitted), as `METHOD path?query`. */
  lines(prefix?: string): string[];
  close(): Promise<void>;
}

/** Starts a stub on a free loopback port; `tls` serves HTTPS with that certificate. */
export function startStoreStub(
  handler: (req: SeenRequest) => Response | Promise<Response>,
  options: { tls?: { cert: string; key: string } } = {},
): StoreStub {
  const requests: SeenRequest[] = [];
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
    ...(options.tls ?? {}),
  }, async (req) => {
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => headers[k] = v);
    // the raw path and query, before any decoding
    const raw = req.url.slice(req.url.indexOf("/", req.url.indexOf("//") + 2));
    const q = raw.indexOf("?");
    const seen: SeenRequest = {
      method: req.method,
      path: q < 0 ? raw : raw.slice(0, q),
      query: q < 0 ? "" : raw.slice(q + 1),
      headers,
      body: await req.text(),
    };
    requests.push(seen);
    try {
      return await handler(seen);
    } catch (err) {
      return new Response(`stub failed: ${(err as Error).message}`, { status: 599 });
    }
  });
  const port = server.addr.port;
  return {
    origin: `${options.tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    requests,
    lines(prefix = "") {
      return requests.filter((r) => r.path.startsWith(prefix)).map((r) =>
        `${r.method} ${r.path}${r.query === "" ? "" : "?" + r.query}`
      );
    },
    close: () => server.shutdown(),
  };
}

/** A JSON answer. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** Whether `value` matches `pattern` with `*` as the only wildcard (case-insensitive). */
export function globMatch(pattern: string, value: string): boolean {
  const re = new RegExp(
    "^" + pattern.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$",
    "i",
  );
  return re.test(value);
}

/** Form fields of a urlencoded body. */
export function formOf(body: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(body));
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
