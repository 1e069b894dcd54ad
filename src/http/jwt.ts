/**
 * JWTs for API callers: HS256 only, via `hono/jwt`; expiry checked against the
 * injected clock. A local admin's JWT carries the admin's credential version
 * and is refused once the admin is deleted or changes the password.
 *
 * @module
 */
import { sign, verify } from "hono/jwt";
import { AuthError } from "../errors.ts";
import type { Deps } from "../deps.ts";
import type { Identity } from "./context.ts";
import { randomString } from "../lib/random.ts";
import { adminCredentialVersion, isAdminCredentialCurrent } from "../domain/admin/mod.ts";
import type { ApiKeyStatus } from "../domain/validate/mod.ts";

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
  /** Local admins only: the admin's credential version at login. */
  credential_version?: string;
}

// A local admin (role admin, no realm) is a row of the admin table; admins of a
// superuser realm are realm users and carry no credential version.
function isLocalAdmin(identity: { role: string; realm: string }): boolean {
  return identity.role === "admin" && identity.realm === "";
}

/**
 * Issues a JWT for `identity`; returns the token and its claims. A local
 * admin's token carries `identity.credentialVersion` (the one read with the
 * password that was checked), or else the admin's current one.
 */
export async function issueJwt(
  deps: Deps,
  identity: Omit<Identity, "rights"> & { rights: string[]; credentialVersion?: string },
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
  if (isLocalAdmin(identity)) {
    const version = identity.credentialVersion ??
      await adminCredentialVersion(deps, identity.username);
    // no version (no such admin): the token is refused on first use
    if (version !== undefined) claims.credential_version = version;
  }
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

/**
 * Verifies a bare JWT and returns the caller's identity; throws 4304/4305.
 * A local admin's token is also checked against the admin's current
 * credential version (cheap: cached in the admin store until the admin table
 * changes, in any process).
 */
export async function verifyJwt(deps: Deps, token: string): Promise<Identity> {
  const payload = await verifiedPayload(deps, token);
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
  const realm = typeof payload.realm === "string" ? payload.realm : "";
  if (isLocalAdmin({ role, realm })) {
    const version = payload.credential_version;
    if (
      typeof version !== "string" ||
      !(await isAdminCredentialCurrent(deps, payload.username, version))
    ) {
      deps.log.info("Refused the JWT of a deleted admin or from before a password change", {
        username: payload.username,
      });
      throw new AuthError(
        "Authentication failure. Error decoding the Authorization token: " +
          "the admin was deleted or changed the password since the token was issued",
        4304,
      );
    }
  }
  return {
    username: payload.username,
    realm,
    role,
    resolver: typeof payload.resolver === "string" ? payload.resolver : "",
    authtype: typeof payload.authtype === "string" ? payload.authtype : "password",
    rights: Array.isArray(payload.rights)
      ? payload.rights.filter((r) => typeof r === "string")
      : [],
  };
}

/**
 * The claims of a JWT signed with our secret (HS256 only); AuthError 4304
 * when the signature, the algorithm or the form is wrong. Expiry and claims
 * are the caller's to check.
 */
async function verifiedPayload(
  deps: Deps,
  token: string,
): Promise<Readonly<Record<string, unknown>>> {
  let verified = verifiedTokens.get(deps.keys.jwtSecret);
  if (verified === undefined) verifiedTokens.set(deps.keys.jwtSecret, verified = new Map());
  let payload = verified.get(token);
  if (payload === undefined) {
    try {
      // exp is checked by the callers against the injected clock, on every request
      payload = await verify(token, jwtKey(deps), {
        alg: "HS256",
        exp: false,
        iat: false,
        nbf: false,
      });
    } catch (err) {
      // hono/jwt's messages carry the token itself: name the kind of failure only
      throw new AuthError(
        `Authentication failure. Error decoding the Authorization token: ${jwtFailure(err)}`,
        4304,
      );
    }
    if (verified.size >= VERIFIED_LIMIT) verified.clear();
    verified.set(token, Object.freeze(payload));
  }
  return payload;
}

/** The role of an API key: it may call the validate API, nothing else. */
export const API_KEY_ROLE = "validate";

/** Claims of an API key (privacyIDEA's `pi-manage api createtoken`). */
export interface ApiKeyClaims {
  username: string;
  realm: string;
  nonce: string;
  role: typeof API_KEY_ROLE;
  authtype: "API";
  exp: number;
}

/**
 * Issues an API key for the validate API: an HS256 JWT with role `validate`,
 * valid for `days` days, signed with the server's JWT secret.
 */
export async function issueApiKey(
  deps: Deps,
  input: { username: string; realm: string; days: number },
): Promise<{ token: string; claims: ApiKeyClaims }> {
  const claims: ApiKeyClaims = {
    username: input.username,
    realm: input.realm,
    nonce: randomString(deps.random, 40, HEX),
    role: API_KEY_ROLE,
    authtype: "API",
    exp: Math.floor(deps.clock.now() / 1000) + Math.round(input.days * 86_400),
  };
  return { token: await sign({ ...claims }, jwtKey(deps), "HS256"), claims };
}

/**
 * What `token` is as an API key (policy `api_key_required`): `valid` for an
 * unexpired JWT of ours with role `validate`, `not-api-key` for another
 * unexpired JWT of ours (an admin's or a user's), `invalid` for anything else
 * (missing, foreign, broken or expired).
 */
export async function apiKeyStatus(
  deps: Deps,
  token: string | undefined,
): Promise<ApiKeyStatus> {
  if (token === undefined) return "invalid";
  let payload: Readonly<Record<string, unknown>>;
  try {
    payload = await verifiedPayload(deps, token);
  } catch (err) {
    if (err instanceof AuthError) return "invalid";
    throw err;
  }
  // privacyIDEA fails with an unexpected error here; an expired key is simply no valid key
  const exp = payload.exp;
  if (typeof exp !== "number" || exp <= deps.clock.now() / 1000) return "invalid";
  return payload.role === API_KEY_ROLE ? "valid" : "not-api-key";
}

/** What went wrong with a JWT, in words that never repeat the token. */
function jwtFailure(err: unknown): string {
  const name = err instanceof Error ? err.name : "";
  if (name === "JwtTokenSignatureMismatched") return "Signature verification failed";
  if (name === "JwtAlgorithmMismatch" || name === "JwtAlgorithmNotAllowed") {
    return "The specified alg value is not allowed";
  }
  if (name === "JwtHeaderInvalid") return "Invalid header";
  return "Not enough segments or invalid token";
}
