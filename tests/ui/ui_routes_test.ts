/**
 * The web interface's static routes: public, built into the program, with a
 * content security policy, compressed for browsers that ask, cached by ETag.
 */
import assert from "node:assert/strict";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { createTestApp, jsonOf } from "../test_app.ts";
import { UI_ASSETS } from "../../src/ui/assets.ts";

Deno.test("GET / serves the UI page without a JWT, with a strict content security policy", async () => {
  const t = await createTestApp();
  const res = await t.get("/");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
  const csp = res.headers.get("content-security-policy") ?? "";
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  const html = await res.text();
  assert.match(html, /<script type="module" src="\/ui\/app\.js\?v=[0-9a-f]{16}"><\/script>/);
  assert.match(html, /<link rel="stylesheet" href="\/ui\/app\.css\?v=[0-9a-f]{16}">/);
  await t.close();
});

Deno.test("GET /ui/<file> serves the script and stylesheet, brotli or gzip as the browser accepts", async () => {
  const t = await createTestApp();
  for (const file of ["app.js", "app.css"]) {
    const plain = await t.get(`/ui/${file}`, { headers: { "accept-encoding": "identity" } });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get("content-encoding"), null);
    assert.equal(await plain.text(), UI_ASSETS[file].body);

    const br = await t.get(`/ui/${file}`, { headers: { "accept-encoding": "gzip, deflate, br" } });
    assert.equal(br.headers.get("content-encoding"), "br");
    assert.equal(br.headers.get("vary"), "Accept-Encoding");
    const brBytes = new Uint8Array(await br.arrayBuffer());
    assert.equal(new TextDecoder().decode(brotliDecompressSync(brBytes)), UI_ASSETS[file].body);
    assert.ok(brBytes.length < UI_ASSETS[file].body.length / 2, `${file} compresses`);

    const gz = await t.get(`/ui/${file}`, { headers: { "accept-encoding": "gzip" } });
    assert.equal(gz.headers.get("content-encoding"), "gzip");
    const gzBytes = new Uint8Array(await gz.arrayBuffer());
    assert.equal(new TextDecoder().decode(gunzipSync(gzBytes)), UI_ASSETS[file].body);
  }
  assert.match(UI_ASSETS["app.js"].contentType, /^text\/javascript/);
  assert.match(UI_ASSETS["app.css"].contentType, /^text\/css/);
  await t.close();
});

Deno.test("GET /ui/<file> answers 304 to a matching If-None-Match and 404 to an unknown file", async () => {
  const t = await createTestApp();
  const first = await t.get("/ui/app.js");
  const etag = first.headers.get("etag")!;
  await first.body?.cancel();
  assert.match(etag, /^"[0-9a-f]{16}"$/);
  const again = await t.get("/ui/app.js", { headers: { "if-none-match": etag } });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), "");
  for (const path of ["/ui/nothing.js", "/ui/..%2Fassets.ts", "/ui/index.html.bak"]) {
    const res = await jsonOf(await t.get(path));
    assert.equal(res.status, 404, path);
    assert.equal(res.body.result.status, false, path);
  }
  await t.close();
});

Deno.test("GET /ui/<file>?v=<content hash> is cached for good; the page and other addresses are revalidated", async () => {
  const t = await createTestApp();
  const page = await t.get("/");
  assert.equal(page.headers.get("cache-control"), "no-cache");
  const html = await page.text();
  const linked = [...html.matchAll(/(?:src|href)="(\/ui\/[^"]+\?v=[0-9a-f]{16})"/g)].map((m) =>
    m[1]
  );
  assert.equal(linked.length, 2, html);
  for (const path of linked) {
    const res = await t.get(path, { headers: { "accept-encoding": "br" } });
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("cache-control"), "public, max-age=31536000, immutable", path);
    await res.body?.cancel();
  }
  // no hash or another hash (an old page's): today's file, revalidated, never promised forever
  for (const path of ["/ui/app.js", "/ui/app.js?v=0000000000000000", "/ui/app.css?v="]) {
    const res = await t.get(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("cache-control"), "no-cache", path);
    assert.ok(res.headers.get("etag"), path);
    await res.body?.cancel();
  }
  // the hash of one file does not make another immutable
  const cssHash = linked.find((p) => p.startsWith("/ui/app.css"))!.split("?v=")[1];
  const crossed = await t.get(`/ui/app.js?v=${cssHash}`);
  assert.equal(crossed.headers.get("cache-control"), "no-cache");
  await crossed.body?.cancel();
  await t.close();
});
