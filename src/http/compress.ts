/**
 * Gzip for JSON and text answers when the client accepts it. Small answers
 * (the `/validate/check` envelope is a few hundred bytes) are left as they
 * are: compressing them saves nothing on the wire and costs every request.
 * The envelope records its length, so a small answer is recognised without
 * reading its body; an answer of unknown length is read once to decide.
 *
 * Hono's compress middleware decides by the Content-Length header, which our
 * answers do not carry (the event middleware rebuilds them), so it would
 * stream every small answer through a compressor.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";
import { ENVELOPE_LENGTHS } from "./envelope.ts";

/** Answers shorter than this (bytes) are sent uncompressed. */
export const COMPRESS_MIN_BYTES = 1024;

const COMPRESSIBLE_REGEXP = /^(?:application\/(?:[\w.+-]+\+)?json|text\/)/i;
const NO_TRANSFORM_REGEXP = /(?:^|,)\s*no-transform\s*(?:,|$)/i;
const VARY_ENCODING_REGEXP = /(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i;

/** True when `Accept-Encoding` allows gzip (by name or `*`, with q > 0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let wildcard = false;
  for (const part of header.split(",")) {
    const [name, ...params] = part.split(";");
    const coding = name.trim().toLowerCase();
    if (coding !== "gzip" && coding !== "x-gzip" && coding !== "*") continue;
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith("q="));
    const allowed = q === undefined || Number(q.slice(2)) > 0;
    if (coding === "*") wildcard = allowed;
    else return allowed;
  }
  return wildcard;
}

/** The middleware: gzip for compressible answers of at least {@link COMPRESS_MIN_BYTES}. */
export const compressAnswers: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const res = c.res;
  // the envelope's answers are mostly small: decided by a lookup first, nothing read (even
  // res.body would make a stream object)
  const length = ENVELOPE_LENGTHS.get(res);
  if (length !== undefined && length < COMPRESS_MIN_BYTES) return;
  if (!res.body || c.req.method === "HEAD" || res.status === 204 || res.status === 206) return;
  const headers = res.headers;
  if (
    // a route that chose its encoding itself (the UI's files) says so by its Vary
    headers.has("content-encoding") || VARY_ENCODING_REGEXP.test(headers.get("vary") ?? "") ||
    !COMPRESSIBLE_REGEXP.test(headers.get("content-type") ?? "") ||
    NO_TRANSFORM_REGEXP.test(headers.get("cache-control") ?? "")
  ) return;
  let body: ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer> = res.body;
  if (length === undefined) {
    const declared = headers.get("content-length");
    if (declared !== null && Number(declared) < COMPRESS_MIN_BYTES) return;
    // unknown length (openapi.json, metrics, an answer an event handler rebuilt): read to decide
    body = new Uint8Array(await res.arrayBuffer());
    if (body.length < COMPRESS_MIN_BYTES) {
      replace(c, new Response(body, res));
      return;
    }
  }
  // from here on the answer differs by Accept-Encoding, compressed or not
  const vary = headers.get("vary");
  headers.set("vary", vary ? `${vary}, Accept-Encoding` : "Accept-Encoding");
  if (!acceptsGzip(c.req.header("accept-encoding"))) {
    if (body instanceof Uint8Array) replace(c, new Response(body, res));
    return;
  }
  const out = new Headers(headers);
  out.delete("content-length");
  out.set("content-encoding", "gzip");
  const source = body instanceof Uint8Array ? new Blob([body]).stream() : body;
  // CompressionStream's writable side is typed for BufferSource, which Uint8Array chunks are
  const gzip = new CompressionStream("gzip") as unknown as ReadableWritablePair<
    Uint8Array<ArrayBuffer>,
    Uint8Array
  >;
  replace(
    c,
    new Response(source.pipeThrough(gzip), {
      status: res.status,
      statusText: res.statusText,
      headers: out,
    }),
  );
};

/** Sets the answer without Hono copying the old answer's headers onto it again. */
function replace(c: Context<AppEnv>, res: Response): void {
  c.res = undefined;
  c.res = res;
}
