/**
 * JSON and text answers of 1 KB or more are gzipped for clients that accept
 * it; small answers (the /validate/check envelope) and clients that do not
 * accept gzip get the plain body.
 */
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { acceptsGzip, COMPRESS_MIN_BYTES } from "../../src/http/compress.ts";
import { createTestApp } from "../test_app.ts";

async function bytesOf(res: Response): Promise<Uint8Array> {
  return new Uint8Array(await res.arrayBuffer());
}

Deno.test("GET /policy/defs is gzipped when the client accepts it and plain otherwise", async () => {
  const t = await createTestApp();
  const plain = await t.asAdmin("GET", "/policy/defs", {
    headers: { "accept-encoding": "identity" },
  });
  assert.equal(plain.status, 200);
  assert.equal(plain.headers.get("content-encoding"), null);
  assert.equal(plain.headers.get("vary"), "Accept-Encoding");
  const text = new TextDecoder().decode(await bytesOf(plain));
  assert.ok(text.length > 20_000, `defs are large (${text.length} bytes)`);
  const defs = JSON.parse(text);
  assert.equal(defs.result.status, true);

  const gz = await t.asAdmin("GET", "/policy/defs", {
    headers: { "accept-encoding": "gzip, deflate, br" },
  });
  assert.equal(gz.status, 200);
  assert.equal(gz.headers.get("content-encoding"), "gzip");
  assert.equal(gz.headers.get("vary"), "Accept-Encoding");
  assert.match(gz.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(gz.headers.get("content-length"), null);
  assert.ok(gz.headers.get("x-request-id"), "the request id survives the compression");
  const packed = await bytesOf(gz);
  const unpacked = JSON.parse(new TextDecoder().decode(gunzipSync(packed)));
  // the same answer but for its time stamp
  assert.deepEqual({ ...unpacked, time: 0 }, { ...defs, time: 0 });
  assert.ok(packed.length * 4 < text.length, `${packed.length} of ${text.length} bytes`);

  // gzip refused by q=0 (even with a wildcard): plain
  const refused = await t.asAdmin("GET", "/policy/defs", {
    headers: { "accept-encoding": "gzip;q=0, *;q=1" },
  });
  assert.equal(refused.headers.get("content-encoding"), null);
  await refused.body?.cancel();
  await t.close();
});

Deno.test("small answers are never compressed: /validate/check, /healthz, a small error", async () => {
  const t = await createTestApp();
  const headers = { "accept-encoding": "gzip" };
  for (
    const res of [
      await t.post("/validate/check", { user: "nobody", pass: "123456" }, { headers }),
      await t.get("/healthz/", { headers }),
      await t.get("/no/such/path", { headers }),
      await t.get("/auth/rights", { headers }),
    ]
  ) {
    assert.equal(res.headers.get("content-encoding"), null, res.url);
    assert.equal(res.headers.get("vary"), null, res.url);
    const body = await bytesOf(res);
    assert.ok(body.length < COMPRESS_MIN_BYTES, `${res.url}: ${body.length} bytes`);
    JSON.parse(new TextDecoder().decode(body));
  }
  await t.close();
});

Deno.test("answers of unknown length (openapi.json) are measured, then gzipped", async () => {
  const t = await createTestApp();
  const res = await t.get("/openapi.json", { headers: { "accept-encoding": "gzip" } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-encoding"), "gzip");
  const doc = JSON.parse(new TextDecoder().decode(gunzipSync(await bytesOf(res))));
  assert.equal(typeof doc.openapi, "string");
  await t.close();
});

Deno.test("acceptsGzip reads Accept-Encoding with q values and the wildcard", () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ["", false],
    ["identity", false],
    ["gzip", true],
    ["GZIP", true],
    ["br, gzip;q=0.5", true],
    ["gzip;q=0", false],
    ["gzip; q=0.000", false],
    ["*", true],
    ["*;q=0", false],
    ["gzip;q=0, *", false],
    ["br, *;q=0.1", true],
    ["x-gzip", true],
  ];
  for (const [header, expected] of cases) {
    assert.equal(acceptsGzip(header), expected, String(header));
  }
});

Deno.test("a streamed answer of unknown length is compressed as it streams: its first kilobyte decides, the rest is not awaited", async () => {
  const { Hono } = await import("hono");
  const { compressAnswers } = await import("../../src/http/compress.ts");
  let release = () => {};
  const released = new Promise<void>((resolve) => release = resolve);
  const first = "a,b,c\n".repeat(400); // 2,400 bytes, then the stream waits
  const app = new Hono();
  app.use("*", compressAnswers as never);
  app.get("/stream", (c) =>
    c.body(
      new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode(first));
          await released;
          controller.enqueue(new TextEncoder().encode("last\n"));
          controller.close();
        },
      }),
      200,
      { "content-type": "text/csv" },
    ));
  // before the stream's end: the answer is there already (buffering would wait for `released`)
  let timer: ReturnType<typeof setTimeout> | undefined;
  const res = await Promise.race([
    app.request("/stream", { headers: { "accept-encoding": "gzip" } }),
    new Promise<"waited">((resolve) => timer = setTimeout(() => resolve("waited"), 2_000)),
  ]);
  clearTimeout(timer);
  release();
  assert.notEqual(res, "waited", "the middleware waited for the whole stream");
  const answer = res as Response;
  assert.equal(answer.headers.get("content-encoding"), "gzip");
  const text = new TextDecoder().decode(gunzipSync(await bytesOf(answer)));
  assert.equal(text, first + "last\n");

  // a short stream of unknown length is sent as it is
  const small = new Hono();
  small.use("*", compressAnswers as never);
  small.get("/s", (c) =>
    c.body(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("x,y\n"));
          controller.close();
        },
      }),
      200,
      { "content-type": "text/csv" },
    ));
  const plain = await small.request("/s", { headers: { "accept-encoding": "gzip" } });
  assert.equal(plain.headers.get("content-encoding"), null);
  assert.equal(await plain.text(), "x,y\n");
});
