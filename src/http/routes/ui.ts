/**
 * The web interface's static files: `GET /` (the page) and `GET /ui/<file>`
 * (script and stylesheet), built into the program (`src/ui/assets.ts`).
 * The page is revalidated on every load; the script and stylesheet it links
 * by content hash are cached for good.
 * Public like any login page: the UI then calls the JSON API with the JWT of
 * its session, as every other client does.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import type { AppEnv } from "../context.ts";
import { HttpError } from "../../errors.ts";
import { UI_ASSETS, type UiAsset } from "../../ui/assets.ts";

/** `/` and `/ui/<file>`. */
export const uiRoutes = new Hono<AppEnv>();

// the page loads only its own script and style; images are the QR codes' data: URLs
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

type Encoding = "br" | "gzip";

// compressed once per process and asset, on first use
const compressed = new Map<string, Uint8Array<ArrayBuffer>>();

function compressedBody(
  name: string,
  asset: UiAsset,
  encoding: Encoding,
): Uint8Array<ArrayBuffer> {
  const key = `${encoding}:${name}`;
  let body = compressed.get(key);
  if (!body) {
    const raw = new TextEncoder().encode(asset.body);
    body = new Uint8Array(
      encoding === "br"
        ? brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } })
        : gzipSync(raw, { level: 9 }),
    );
    compressed.set(key, body);
  }
  return body;
}

function acceptedEncoding(header: string | undefined): Encoding | undefined {
  const accepted = (header ?? "").split(",").map((p) => p.split(";")[0].trim().toLowerCase());
  if (accepted.includes("br")) return "br";
  if (accepted.includes("gzip")) return "gzip";
  return undefined;
}

// a script or stylesheet asked for by its content hash (`?v=`, as the page links them) never
// changes under that address: browsers keep it a year without asking again
const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * True when the request names the asset's current content hash: the page is
 * always revalidated (no-cache), so it only links hashes that exist, and an
 * old hash gets today's file without the promise that it never changes.
 */
function isVersioned(c: Context<AppEnv>, name: string, asset: UiAsset): boolean {
  return name !== "index.html" && `"${c.req.query("v")}"` === asset.etag;
}

function serve(c: Context<AppEnv>, name: string): Response {
  const asset = Object.hasOwn(UI_ASSETS, name) ? UI_ASSETS[name] : undefined;
  if (!asset) throw new HttpError(404, "The requested URL was not found on the server.", 404);
  // the static files are not audited, as privacyIDEA audits none of its web UI's: each page
  // load would write a row per file (a name that is not one of them is audited)
  c.get("audit").isUnaudited = true;
  const headers: Record<string, string> = {
    "content-type": asset.contentType,
    "cache-control": isVersioned(c, name, asset) ? IMMUTABLE : "no-cache",
    etag: asset.etag,
    vary: "Accept-Encoding",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
  if (name === "index.html") {
    headers["content-security-policy"] = CONTENT_SECURITY_POLICY;
    headers["x-frame-options"] = "DENY";
  }
  if (c.req.header("if-none-match") === asset.etag) {
    return new Response(null, { status: 304, headers });
  }
  const encoding = acceptedEncoding(c.req.header("accept-encoding"));
  if (!encoding) return new Response(asset.body, { status: 200, headers });
  headers["content-encoding"] = encoding;
  return new Response(compressedBody(name, asset, encoding), { status: 200, headers });
}

uiRoutes.get("/", (c) => serve(c, "index.html"));
uiRoutes.get("/ui/:file", (c) => serve(c, c.req.param("file")));
