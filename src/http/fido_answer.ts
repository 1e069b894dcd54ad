/**
 * The WebAuthn/passkey assertion of a request (spec 11 §4.4, §5.3): the
 * fields under privacyIDEA's names and aliases, and the Origin header.
 * `/validate/check` and the passkey login of `POST /auth` read it alike;
 * `/validate/check` also takes the registration of a passkey enrolled via
 * multichallenge.
 *
 * @module
 */
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";
import { stringParam } from "./params.ts";
import { missingParameter } from "../errors.ts";
import type { FidoAnswer, PasskeyRegistration } from "../domain/validate/mod.ts";
import type { SignedAnswer } from "../domain/token/types/mod.ts";

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

/**
 * A U2F key's signed answer (`clientdata`, `signaturedata`; spec 14 §8.2)
 * in a request without a credential id; undefined when it carries neither.
 */
export function signedAnswerOf(c: Context<AppEnv>): SignedAnswer | undefined {
  const p = c.get("params");
  const clientData = stringParam(p, "clientdata");
  const signatureData = stringParam(p, "signaturedata");
  if (!clientData && !signatureData) return undefined;
  return { clientData, signatureData };
}

/**
 * Step 2 of a passkey enrolment via multichallenge in `/validate/check`
 * parameters (spec 11 §5.4), with the Origin header; undefined without an
 * `attestationObject`.
 */
export function passkeyRegistrationOf(c: Context<AppEnv>): PasskeyRegistration | undefined {
  const p = c.get("params");
  const attestationObject = aliasOf(p, "attestationObject", "attestationobject");
  if (attestationObject === undefined) return undefined;
  return {
    attestationObject,
    clientDataJSON: aliasOf(p, "clientDataJSON", "clientdatajson", "clientdata"),
    credentialId: aliasOf(p, "credential_id", "credentialid"),
    rawId: aliasOf(p, "rawId", "rawid"),
    authenticatorAttachment: aliasOf(p, "authenticatorAttachment", "authenticatorattachment"),
    origin: c.req.header("Origin"),
  };
}
