/**
 * JWTs for API callers: HS256 only, via `hono/jwt`; expiry checked against the
 * injected clock.
 *
 * @module
 */
import { sign, verify } from "hono/jwt";
import { AuthError } from "../errors.ts";
import type { Deps } from "../deps.ts";
import type { Identity } from "./context.ts";
import { randomString } from "../lib/random.ts";

const HEX = "0123456789abcdef";

/** Claims Tessera puts into a JWT (spec 01 §6.2). */
export interface JwtClaims {
  username: string;
  realm: string;
  nonce: string;
  role: "admin" | "user";
  authtype: string;
  rights: string[];
  resolver: string;
  exp: number;
}

/** Issues a JWT for `identity`; returns the token and its claims. */
export async function issueJwt(
  deps: Deps,
  identity: Omit<Identity, "rights"> & { rights: string[] },
  lifetimeSeconds = deps.config.auth.jwtLifetime,
): Promise<{ token: string; claims: JwtClaims }> {
  const claims: JwtClaims = {
    username: identity.username,
    realm: identity.realm,
    nonce: randomString(deps.random, 40, HEX),
    role: identity.role,
    authtype: identity.authtype,
    rights: identity.rights,
    resolver: identity.resolver,
    exp: Math.floor(deps.clock.now() / 1000) + lifetimeSeconds,
  };
  const token = await sign({ ...claims }, jwtKey(deps), "HS256");
  return { token, claims };
}

const keyCache = new WeakMap<Uint8Array, string>();

// hono/jwt takes string keys; the secret is 32 random bytes, so hex keeps all entropy
function jwtKey(deps: Deps): string {
  let k = keyCache.get(deps.keys.jwtSecret);
  if (k === undefined) {
    k = Array.from(deps.keys.jwtSecret, (b) => b.toString(16).padStart(2, "0")).join("");
    keyCache.set(deps.keys.jwtSecret, k);
  }
  return k;
}

// A token whose signature checked out once keeps its payload (keyed by the exact
// token text, per secret): the HMAC key import and check cost ~40–80 µs per
// admin request. Expiry and claims are still checked on every use.
const verifiedTokens = new WeakMap<Uint8Array, Map<string, Readonly<Record<string, unknown>>>>();
const VERIFIED_LIMIT = 1000;

/** Verifies a bare JWT and returns the caller's identity; throws 4304/4305. */
export async function verifyJwt(deps: Deps, token: string): Promise<Identity> {
  let verified = verifiedTokens.get(deps.keys.jwtSecret);
  if (verified === undefined) verifiedTokens.set(deps.keys.jwtSecret, verified = new Map());
  let payload = verified.get(token);
  if (payload === undefined) {
    try {
      // exp is checked below against the injected clock, on every request
      payload = await verify(token, jwtKey(deps), {
        alg: "HS256",
        exp: false,
        iat: false,
        nbf: false,
      });
    } catch (err) {
      throw new AuthError(
        `Authentication failure. Error decoding the Authorization token: ${(err as Error).message}`,
        4304,
      );
    }
    if (verified.size >= VERIFIED_LIMIT) verified.clear();
    verified.set(token, Object.freeze(payload));
  }
  const exp = payload.exp;
  if (typeof exp !== "number" || exp <= deps.clock.now() / 1000) {
    throw new AuthError(
      "Authentication failure. Your token has expired: Signature has expired",
      4305,
    );
  }
  const role = payload.role;
  if ((role !== "admin" && role !== "user") || typeof payload.username !== "string") {
    throw new AuthError(
      "Authentication failure. Error decoding the Authorization token: invalid claims",
      4304,
    );
  }
  return {
    username: payload.username,
    realm: typeof payload.realm === "string" ? payload.realm : "",
    role,
    resolver: typeof payload.resolver === "string" ? payload.resolver : "",
    authtype: typeof payload.authtype === "string" ? payload.authtype : "password",
    rights: Array.isArray(payload.rights)
      ? payload.rights.filter((r) => typeof r === "string")
      : [],
  };
}
