/**
 * Reads a response body up to a limit: a remote server (an SMS gateway, a
 * validation server) cannot make Tessera hold a large answer.
 *
 * @module
 */

/** The first `max` bytes of `res`'s body as UTF-8, and whether there was more (then cancelled). */
export async function readBodyPrefix(
  res: Response,
  max: number,
): Promise<{ text: string; isTruncated: boolean }> {
  const reader = res.body?.getReader();
  if (!reader) return { text: "", isTruncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  let isTruncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    if (size > max) {
      isTruncated = true;
      await reader.cancel();
      break;
    }
  }
  const out = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return { text: new TextDecoder().decode(out.subarray(0, max)), isTruncated };
}
