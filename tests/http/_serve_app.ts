/**
 * Serves a test app on a real loopback listener (a second Tessera for the
 * Federation and `/privacyideaserver/` tests) and records what reached it.
 *
 * @module
 */
import type { TestApp } from "../test_app.ts";
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from "../fixtures/self_signed_tls.ts";

/** One request as the served app received it. */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** The urlencoded body parsed (empty for other bodies). */
  form: URLSearchParams;
  headers: Headers;
  /** Peer address. */
  peer: string;
}

/** A served app: its base URL, the requests it saw, and how to stop it. */
export interface ServedApp {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** Serves `t` on 127.0.0.1 (a free port); `tls` serves HTTPS with a self-signed certificate. */
export function serveApp(t: TestApp, options: { tls?: boolean } = {}): ServedApp {
  const seen: SeenRequest[] = [];
  const tls = options.tls ? { cert: SELF_SIGNED_CERT, key: SELF_SIGNED_KEY } : {};
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {}, ...tls },
    async (req, info) => {
      const url = new URL(req.url);
      const type = req.headers.get("content-type") ?? "";
      const text = type.includes("urlencoded") ? await req.clone().text() : "";
      seen.push({
        method: req.method,
        path: url.pathname,
        query: url.searchParams,
        form: new URLSearchParams(text),
        headers: req.headers,
        peer: info.remoteAddr.hostname,
      });
      return await t.app.fetch(req, info);
    },
  );
  const scheme = options.tls ? "https" : "http";
  return {
    url: `${scheme}://127.0.0.1:${server.addr.port}`,
    seen,
    close: () => server.shutdown(),
  };
}

/** A loopback port nothing listens on (bound, then released). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** A listener that accepts connections and never answers; returns its URL and a stop function. */
export function silentServer(): { url: string; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  (async () => {
    try {
      for await (const conn of listener) conns.push(conn);
    } catch {
      // closed
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    close() {
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
      listener.close();
    },
  };
}
