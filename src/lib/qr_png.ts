/**
 * QR codes as PNG `data:` URLs, the image privacyIDEA puts into a challenge
 * (`create_img`: segno, 10 pixels per module, a quiet zone of 4 modules).
 * Clients that draw the image themselves (e.g. the Windows credential
 * provider) decode a raster image, not an SVG.
 *
 * @module
 */
import qrcode from "qrcode-generator";
import { crc32, deflateSync } from "node:zlib";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const SCALE = 10;
const BORDER = 4;

function u32(n: number): number[] {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

function chunk(type: string, data: Uint8Array): number[] {
  const typed = new Uint8Array(4 + data.length);
  for (let i = 0; i < 4; i++) typed[i] = type.charCodeAt(i);
  typed.set(data, 4);
  return [...u32(data.length), ...typed, ...u32(crc32(typed) >>> 0)];
}

function base64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x2000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x2000));
  }
  return btoa(text);
}

/** A `data:image/png;base64,…` URL of `text` as a QR code (black on white, 1 bit per pixel). */
export function qrPngDataUri(text: string): string {
  const qr = qrcode(0, "L");
  // byte mode takes one character per byte: Latin-1 text as it is (as segno, privacyIDEA's
  // library, encodes it), any other text as its UTF-8 bytes (else "€" would become "¬")
  const bytes = /[\u0100-\uffff]/.test(text)
    ? String.fromCharCode(...new TextEncoder().encode(text))
    : text;
  qr.addData(bytes, "Byte");
  qr.make();
  const modules = qr.getModuleCount();
  const size = (modules + 2 * BORDER) * SCALE;
  const rowBytes = Math.ceil(size / 8);
  // each row: filter byte 0, then the pixels, a set bit being white
  const raw = new Uint8Array((rowBytes + 1) * size);
  for (let y = 0; y < size; y++) {
    const row = y * (rowBytes + 1);
    const r = Math.floor(y / SCALE) - BORDER;
    for (let x = 0; x < size; x++) {
      const c = Math.floor(x / SCALE) - BORDER;
      const isDark = r >= 0 && r < modules && c >= 0 && c < modules && qr.isDark(r, c);
      if (!isDark) raw[row + 1 + (x >> 3)] |= 0x80 >> (x & 7);
    }
  }
  // width, height, bit depth 1, colour type 0 (grey), deflate, no filter method, no interlace
  const header = new Uint8Array([...u32(size), ...u32(size), 1, 0, 0, 0, 0]);
  const png = new Uint8Array([
    ...PNG_SIGNATURE,
    ...chunk("IHDR", header),
    ...chunk("IDAT", new Uint8Array(deflateSync(raw))),
    ...chunk("IEND", new Uint8Array(0)),
  ]);
  return `data:image/png;base64,${base64(png)}`;
}
