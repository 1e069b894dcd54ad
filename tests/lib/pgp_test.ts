/**
 * src/lib/pgp.ts: a compressed message may not expand beyond the limit (a zlib packet turns a
 * small upload into a large text), and the limit's failure is an Error with a message.
 */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { decryptPgpMessage } from "../../src/lib/pgp.ts";

Deno.test("decryptPgpMessage: a compressed message expanding beyond maxBytes is refused; within it, decrypted", async () => {
  const { privateKey, publicKey } = await openpgp.generateKey({
    type: "ecc",
    userIDs: [{ name: "bomb" }],
    format: "armored",
  });
  const text = "0".repeat(2 * 1024 * 1024);
  const armored = await openpgp.encrypt({
    message: await openpgp.createMessage({ text }),
    encryptionKeys: await openpgp.readKey({ armoredKey: publicKey }),
    config: { preferredCompressionAlgorithm: openpgp.enums.compression.zlib },
  });
  // the upload is small: the size limit of the request body alone would let it through
  assert.ok(armored.length < 64 * 1024, `${armored.length} characters`);
  await assert.rejects(
    decryptPgpMessage(armored, [privateKey], 1024 * 1024),
    /decompressed message size/i,
  );
  const data = await decryptPgpMessage(armored, [privateKey], 4 * 1024 * 1024);
  assert.equal(data.length, text.length);
});
