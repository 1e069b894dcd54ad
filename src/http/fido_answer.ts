/**
 * The WebAuthn/passkey assertion of a request (spec 11 §4.4, §5.3): the
 * fields under privacyIDEA's names and aliases, and the Origin header.
 * `/validate/check` and the passkey login of `POST /auth` read it alike.
 *
 * @module
 */
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";
import { stringParam } from "./params.ts";
import { missingParameter } from "../errors.ts";
import type { FidoAnswer } from "../domain/validate/mod.ts";

/** The first non-empty of several parameter names (privacyIDEA's aliases). */
export function aliasOf(p: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const v = stringParam(p, name);
    if (v !== undefined && v !== "") return v;
  }
  return undefined;
}

/** The assertion in the request's parameters; undefined without a credential id. */
export function fidoAnswerOf(c: Context<AppEnv>): FidoAnswer | undefined {
  const p = c.get("params");
  const credentialId = aliasOf(p, "credentialid", "credential_id");
  if (credentialId === undefined) return undefined;
  const required = (value: string | undefined, name: string) => {
    if (value === undefined) throw missingParameter(name);
    return value;
  };
  return {
    credentialId,
    clientDataJSON: required(aliasOf(p, "clientdata", "clientDataJSON"), "clientdata"),
    signature: required(aliasOf(p, "signaturedata", "signature"), "signaturedata"),
    authenticatorData: required(
      aliasOf(p, "authenticatordata", "authenticatorData"),
      "authenticatordata",
    ),
    userHandle: aliasOf(p, "userhandle", "userHandle"),
    origin: c.req.header("Origin"),
  };
}
