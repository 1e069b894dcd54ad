/**
 * A local stand-in for Sipgate's REST endpoint (`Deno.serve` on loopback), for
 * the Sipgate provider tests.
 *
 * @module
 */

/** A request the Sipgate stub received. */
export interface SipgateRequest {
  method: string;
  path: string;
  authorization: string;
  contentType: string;
  body: string;
}

/** Sipgate's REST endpoint on 127.0.0.1: answers `status` (204 like Sipgate), or never. */
export function startSipgateStub(options: { status?: number; isSilent?: boolean } = {}): {
  url: string;
  requests: SipgateRequest[];
  close: () => Promise<void>;
} {
  const requests: SipgateRequest[] = [];
  const hanging = new AbortController();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    requests.push({
      method: req.method,
      path: url.pathname + url.search,
      authorization: req.headers.get("authorization") ?? "",
      contentType: req.headers.get("content-type") ?? "",
      body: await req.text(),
    });
    if (options.isSilent) {
      await new Promise((resolve) => hanging.signal.addEventListener("abort", resolve));
    }
    const status = options.status ?? 204;
    return new Response(status === 204 ? null : `{"status":${status}}`, { status });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/v2/sessions/sms`,
    requests,
    close: async () => {
      hanging.abort();
      await server.shutdown();
    },
  };
}
