import assert from "node:assert/strict";
import { inflateSync } from "node:zlib";
import qrcode from "qrcode-generator";
import { qrPngDataUri } from "../../src/lib/qr_png.ts";

function u32(b: Uint8Array, at: number): number {
  return ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
}

Deno.test("qrPngDataUri: a 1-bit PNG whose 10-pixel cells are the QR modules inside a 4-module quiet zone", () => {
  const text = "otpauth://hotp/OATH0001?secret=GEZDGNBV&counter=1&digits=6";
  const uri = qrPngDataUri(text);
  assert.match(uri, /^data:image\/png;base64,/);
  const png = Uint8Array.from(atob(uri.split(",")[1]), (c) => c.charCodeAt(0));
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const qr = qrcode(0, "L");
  qr.addData(text, "Byte");
  qr.make();
  const n = qr.getModuleCount();
  const size = (n + 8) * 10;
  // IHDR: width, height, bit depth 1, grey
  assert.equal(new TextDecoder().decode(png.subarray(12, 16)), "IHDR");
  assert.deepEqual([u32(png, 16), u32(png, 20), png[24], png[25]], [size, size, 1, 0]);
  const idatLength = u32(png, 33);
  assert.equal(new TextDecoder().decode(png.subarray(37, 41)), "IDAT");
  const raw = new Uint8Array(inflateSync(png.subarray(41, 41 + idatLength)));
  const rowBytes = Math.ceil(size / 8);
  const isWhite = (x: number, y: number) =>
    (raw[y * (rowBytes + 1) + 1 + (x >> 3)] & (0x80 >> (x & 7))) !== 0;
  for (let r = -4; r < n + 4; r++) {
    for (let c = -4; c < n + 4; c++) {
      const dark = r >= 0 && r < n && c >= 0 && c < n && qr.isDark(r, c);
      // the middle pixel of each cell
      assert.equal(isWhite((c + 4) * 10 + 5, (r + 4) * 10 + 5), !dark, `module ${r},${c}`);
    }
  }
  assert.equal(new TextDecoder().decode(png.subarray(png.length - 8, png.length - 4)), "IEND");
});

Deno.test("qrPngDataUri: text beyond Latin-1 is encoded as its UTF-8 bytes, Latin-1 text byte by byte", () => {
  // "€" is U+20AC: cut to one byte it would be 0xAC ("¬"), another text
  assert.notEqual(qrPngDataUri("Pay 5 €"), qrPngDataUri("Pay 5 ¬"));
  assert.equal(qrPngDataUri("Pay 5 €"), qrPngDataUri("Pay 5 \xe2\x82\xac"));
  // Latin-1 stays one byte per character, as privacyIDEA's segno writes it
  assert.notEqual(qrPngDataUri("Grüße"), qrPngDataUri("Gr\xc3\xbc\xc3\x9fe"));
});
