/**
 * QR codes as images a web page can show inline.
 *
 * @module
 */
import qrcode from "qrcode-generator";

/**
 * A `data:` URL of an SVG image of `text` as a QR code. privacyIDEA sends PNGs; an SVG serves
 * the same purpose (an `<img src>`) at a fraction of the cost of a raster image.
 */
export function qrSvgDataUri(text: string): string {
  const qr = qrcode(0, "L");
  qr.addData(text, "Byte");
  qr.make();
  const svg = qr.createSvgTag({ cellSize: 4, margin: 16, scalable: true });
  return `data:image/svg+xml;base64,${btoa(svg)}`;
}
