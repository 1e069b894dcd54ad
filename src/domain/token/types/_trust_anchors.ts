/**
 * The WebAuthn attestation trust anchors (config `webauthn.trust_anchor_dir`,
 * spec 11 §4.1): the PEM certificates of the `.pem`/`.crt` files of that
 * directory, one or more per file.
 *
 * Cache rule: a directory is read once per process, on the first
 * registration that needs it; a read that fails or finds no certificate is
 * not kept, so the next registration tries again. New or removed anchors
 * take effect when the process restarts (on every node).
 *
 * @module
 */
import type { X509Certificate } from "node:crypto";
import { PolicyError } from "../../../errors.ts";
import { parsePemCertificates } from "../../../lib/x509_chain.ts";
import type { Logger } from "../../../lib/logger.ts";

const ANCHOR_FILE_REGEXP = /\.(pem|crt)$/i;
const cache = new Map<string, Promise<X509Certificate[]>>();

async function readAnchors(dir: string): Promise<X509Certificate[]> {
  const anchors: X509Certificate[] = [];
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && ANCHOR_FILE_REGEXP.test(entry.name)) names.push(entry.name);
  }
  for (const name of names.sort()) {
    const path = `${dir.replace(/\/+$/, "")}/${name}`;
    try {
      anchors.push(...parsePemCertificates(await Deno.readTextFile(path)));
    } catch (err) {
      throw new Error(`Cannot read trust anchor file "${path}": ${(err as Error).message}`);
    }
  }
  return anchors;
}

/**
 * The trust anchors of `dir`; throws a {@link PolicyError} that names
 * `webauthn.trust_anchor_dir` when it is empty, unreadable or has no
 * certificate (the details go to the log).
 */
export async function trustAnchors(dir: string, log: Logger): Promise<X509Certificate[]> {
  if (dir.trim() === "") {
    throw new PolicyError(
      "The attestation level 'trusted' needs trust anchors, but config webauthn.trust_anchor_dir is empty",
    );
  }
  let pending = cache.get(dir);
  if (!pending) {
    pending = readAnchors(dir);
    cache.set(dir, pending);
  }
  let anchors: X509Certificate[];
  try {
    anchors = await pending;
  } catch (err) {
    cache.delete(dir);
    log.error("Cannot read the WebAuthn trust anchors", {
      dir,
      reason: (err as Error).message,
    });
    throw new PolicyError(
      "The attestation level 'trusted' needs trust anchors, but config webauthn.trust_anchor_dir cannot be read",
    );
  }
  if (anchors.length === 0) {
    cache.delete(dir);
    throw new PolicyError(
      "The attestation level 'trusted' needs trust anchors, but config webauthn.trust_anchor_dir holds no certificate",
    );
  }
  return anchors;
}
