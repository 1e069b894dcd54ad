/**
 * Token secrets for the check path and the machine applications: the decrypted key
 * (kept for recently used tokens), plain tokeninfo values, a type module's check context.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { decryptSecret, decryptSecretText } from "../../lib/crypto.ts";
import type { SystemConfig } from "../system_config/mod.ts";
import type { Token, TokenInfo, TokenWithInfo } from "./model.ts";
import type { TypeCheckContext } from "./types/mod.ts";

// Decrypted secrets of recently used tokens, per encryption key, by encrypted text (a new
// secret has a new text). It spares an AES-GCM decryption (~20 µs) per check; the process
// holds the key that decrypts them anyway. Bounded; the oldest entry goes first.
const SECRETS = new WeakMap<Uint8Array, Map<string, Uint8Array>>();

const MAX_SECRETS = 1000;

/** The decrypted secret bytes of a token (empty when the type has none); do not modify. */
export function tokenSecret(deps: Deps, token: Token): Uint8Array {
  if (token.keyEnc === "") return new Uint8Array(0);
  const key = deps.keys.token;
  let byText = SECRETS.get(key);
  if (byText === undefined) SECRETS.set(key, byText = new Map());
  let secret = byText.get(token.keyEnc);
  if (secret === undefined) {
    secret = decryptSecret(key, token.keyEnc);
    if (byText.size >= MAX_SECRETS) byText.delete(byText.keys().next().value!);
    byText.set(token.keyEnc, secret);
  }
  return secret;
}

/** The plain value of a tokeninfo entry (decrypted when stored as "password"). */
export function infoPlain(deps: Deps, info: TokenInfo, key: string): string | undefined {
  const e = info[key];
  if (!e) return undefined;
  return e.type === "password" ? decryptSecretText(deps.keys.token, e.value) : e.value;
}

/** The context a type module needs to check an OTP of `token`. */
export function checkContext(
  deps: Deps,
  system: SystemConfig,
  token: TokenWithInfo,
): TypeCheckContext {
  return { deps, system, token, secret: tokenSecret(deps, token), nowMs: deps.clock.now() };
}
