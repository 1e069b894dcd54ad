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
    // unknown length (openapi.json, metrics, a streamed CSV download, an answer an event
    // handler rebuilt): its first bytes decide, the rest streams on as it comes
    const start = await readStart(res.body, COMPRESS_MIN_BYTES);
    if (start.isWhole && start.bytes.length < COMPRESS_MIN_BYTES) {
      replace(c, new Response(start.bytes, res));
      return;
    }
    body = start.isWhole ? start.bytes : start.stream;
  }
  // from here on the answer differs by Accept-Encoding, compressed or not
  const vary = headers.get("vary");
  headers.set("vary", vary ? `${vary}, Accept-Encoding` : "Accept-Encoding");
  if (!acceptsGzip(c.req.header("accept-encoding"))) {
    // the original body was read (in part) to decide: the answer carries what was read
    if (body !== res.body) replace(c, new Response(body, res));
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

/**
 * Reads `stream` until `min` bytes or its end: the whole body when it ended
 * (`isWhole`), else a stream that gives the bytes read and then the rest.
 */
async function readStart(
  stream: ReadableStream<Uint8Array>,
  min: number,
): Promise<
  | { isWhole: true; bytes: Uint8Array<ArrayBuffer> }
  | { isWhole: false; stream: ReadableStream<Uint8Array> }
> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < min) {
    const { done, value } = await reader.read();
    if (done) {
      const bytes = new Uint8Array(size);
      let at = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, at);
        at += chunk.length;
      }
      return { isWhole: true, bytes };
    }
    chunks.push(value);
    size += value.length;
  }
  return {
    isWhole: false,
    stream: new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const head = chunks.shift();
        if (head !== undefined) return controller.enqueue(head);
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    }),
  };
}

/** Sets the answer without Hono copying the old answer's headers onto it again. */
function replace(c: Context<AppEnv>, res: Response): void {
  c.res = undefined;
  c.res = res;
}
