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
