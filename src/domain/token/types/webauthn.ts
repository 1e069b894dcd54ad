/**
 * `webauthn`: a FIDO2 security key (spec 11 §4). Enrolment has two steps:
 * step 1 answers `webAuthnRegisterRequest` (the token waits inactive in
 * `clientwait`), step 2 carries the authenticator's `clientdata`/`regdata`
 * with the request's Origin header and stores the credential: its raw id
 * as the secret, the COSE key (`pubKey`), `credential_id_hash` and the sign
 * count as the token counter. A correct PIN (or `/validate/triggerchallenge`)
 * makes a challenge with `webAuthnSignRequest`; the assertion answers it
 * through the FIDO branch of `/validate/check`.
 *
 * @module
 */
import type { X509Certificate } from "node:crypto";
import { EnrollmentError, missingParameter, ParameterError, PolicyError } from "../../../errors.ts";
import { fromHex, toHex } from "../../../lib/random.ts";
import { chainProblem } from "../../../lib/x509_chain.ts";
import { param } from "./_oath.ts";
import { trustAnchors } from "./_trust_anchors.ts";
import { isTrueValue } from "./_sent_code.ts";
import {
  aaguidList,
  algorithmIds,
  b64url,
  certificateFacts,
  consumeEnrolChallenge,
  counterCheck,
  credentialsOfOwner,
  DEFAULT_TRANSPORTS,
  FidoCheckError,
  type FidoTokenType,
  fromB64url,
  isCredentialTaken,
  noOtp,
  openEnrolChallenge,
  type Registration,
  relyingParty,
  requireOrigin,
  sha256Hex,
  storeEnrolChallenge,
  timeoutMs,
  uvLevel,
  verifyAssertion,
  verifyRegistration,
} from "./_fido.ts";
import {
  infoValue,
  type TypeChallengeContext,
  type TypeInitContext,
  type TypeInitResult,
} from "./token_type.ts";

/** Default registration message (policy `webauthn_challenge_text`, enrolment scope). */
export const WEBAUTHN_ENROLL_TEXT = "Please confirm with your WebAuthn token";
/** Default authentication message; `{0!s}` is the token description. */
export const WEBAUTHN_AUTH_TEXT = "Please confirm with your WebAuthn token ({0!s})";
/** The one answer of a refused registration (the reason goes to the log). */
export const WEBAUTHN_ENROLL_FAILED = "Could not enroll webauthn token!";
/** Description of a token without one and without an attestation certificate. */
export const WEBAUTHN_DEFAULT_DESCRIPTION = "Generic WebAuthn Token";

const ATTESTATION_FORMS = ["none", "indirect", "direct"];
const ATTESTATION_LEVELS = ["none", "untrusted", "trusted"];
// the attestation statement formats of spec 11 §4.3; others are refused
const ATTESTATION_FORMATS = ["packed", "fido-u2f", "none"];
/** Tokeninfo of an enrolled credential: dropped when the token is enrolled again. */
const CREDENTIAL_INFO = [
  "pubKey",
  "origin",
  "attestation_level",
  "aaguid",
  "credential_id_hash",
  "attestation_issuer",
  "attestation_subject",
  "attestation_serial",
];

/** `webauthn_authenticator_attestation_level` (default `untrusted`). */
function attestationLevel(value: string | undefined): string {
  const level = (value ?? "untrusted").trim().toLowerCase() || "untrusted";
  if (!ATTESTATION_LEVELS.includes(level)) {
    throw new PolicyError(
      "webauthn_authenticator_attestation_level must be one of none, untrusted, trusted",
    );
  }
  return level;
}

/** The trust anchors of level `trusted` (config `webauthn.trust_anchor_dir`); none for the others. */
async function anchorsFor(ctx: TypeInitContext, level: string): Promise<X509Certificate[]> {
  if (level !== "trusted") return [];
  return await trustAnchors(ctx.deps.config.webauthn.trustAnchorDir, ctx.deps.log);
}

function attestationForm(value: string | undefined): string {
  const form = (value ?? "direct").trim().toLowerCase() || "direct";
  if (!ATTESTATION_FORMS.includes(form)) {
    throw new PolicyError(
      "webauthn_authenticator_attestation_form must be one of none, indirect, direct",
    );
  }
  return form;
}

function attachmentOf(value: string | undefined): string | undefined {
  const v = value?.trim().toLowerCase();
  if (!v || v === "either") return undefined;
  if (v !== "platform" && v !== "cross-platform") {
    throw new PolicyError(
      "webauthn_authenticator_attachment must be one of platform, cross-platform",
    );
  }
  return v;
}

/** Step 1: the registration request; the token waits for the authenticator's answer. */
async function requestRegistration(ctx: TypeInitContext): Promise<TypeInitResult> {
  const owner = ctx.owner;
  if (!owner) throw new ParameterError("User must be provided for WebAuthn enrollment!", 9051);
  const p = ctx.policies ?? {};
  const rp = relyingParty(p, "WebauthnToken");
  const userVerification = uvLevel(p.webauthn_user_verification_requirement);
  // level 'trusted' without anchors fails here, before the user touches the key
  await anchorsFor(ctx, attestationLevel(p.webauthn_authenticator_attestation_level));
  const attachment = attachmentOf(p.webauthn_authenticator_attachment);
  const nonce = ctx.deps.random.bytes(32);
  const message = (p.webauthn_challenge_text ?? WEBAUTHN_ENROLL_TEXT).replaceAll("\\,", ",");
  const transactionId = await storeEnrolChallenge(ctx, {
    type: "webauthn",
    nonce: toHex(nonce),
    message,
    userVerification,
  });
  const request: Record<string, unknown> = {
    transaction_id: transactionId,
    message,
    nonce: b64url(nonce),
    relyingParty: rp,
    serialNumber: ctx.serial,
    name: owner.login,
    displayName: `<${owner.login}.${owner.resolver}@${owner.realm}>`,
    pubKeyCredAlgorithms: algorithmIds(p.webauthn_public_key_credential_algorithms)
      .map((alg) => ({ alg, type: "public-key" })),
    authenticatorSelection: {
      userVerification,
      ...(attachment ? { authenticatorAttachment: attachment } : {}),
    },
    timeout: timeoutMs(p.webauthn_timeout),
    attestation: attestationForm(p.webauthn_authenticator_attestation_form),
  };
  const selection = aaguidList(p.webauthn_authenticator_selection_list);
  if (selection) request.authenticatorSelectionList = selection;
  if (isTrueValue(p.webauthn_avoid_double_registration)) {
    const ids = await credentialsOfOwner(ctx, "webauthn", (secret) => secret);
    if (ids.length > 0) {
      request.excludeCredentials = ids.map((id) => ({
        id: b64url(id),
        type: "public-key",
        transports: DEFAULT_TRANSPORTS,
      }));
    }
  }
  return {
    // no credential yet: an enrolled token enrolled again gives up its old one
    secret: new Uint8Array(0),
    info: { relying_party_id: rp.id, relying_party_name: rp.name },
    rolloutState: "clientwait",
    active: false,
    detail: { transaction_id: transactionId, webAuthnRegisterRequest: request },
    ownsInfo: (key) => CREDENTIAL_INFO.includes(key),
  };
}

/** Step 2: checks the authenticator's registration and stores the credential. */
async function completeRegistration(ctx: TypeInitContext): Promise<TypeInitResult> {
  const existing = ctx.existing;
  if (!existing || existing.rolloutState !== "clientwait") {
    throw new ParameterError(
      "regdata and or clientdata provided but token not in clientwait rollout_state.",
    );
  }
  const clientdata = param(ctx, "clientdata");
  const regdata = param(ctx, "regdata");
  if (!clientdata) throw missingParameter("clientdata");
  if (!regdata) throw missingParameter("regdata");
  const transactionId = param(ctx, "transaction_id");
  const challenge = await openEnrolChallenge(ctx, transactionId);
  const origin = requireOrigin(ctx.origin);
  const p = ctx.policies ?? {};
  const level = attestationLevel(p.webauthn_authenticator_attestation_level);
  const anchors = await anchorsFor(ctx, level);
  const rpId = infoValue(existing.info, "relying_party_id") ||
    relyingParty(p, "WebauthnToken").id;
  const refuse = (reason: string) => {
    // the client learns only that it failed; the reason is for the administrator
    ctx.deps.log.warn("Cannot enroll a webauthn token", { serial: ctx.serial, reason });
    return new EnrollmentError(WEBAUTHN_ENROLL_FAILED);
  };
  let reg: Registration;
  try {
    reg = await verifyRegistration({
      clientDataJSON: clientdata,
      attestationObject: regdata,
      challenge: challenge.nonce,
      origin,
      rpId,
      requireUv: challenge.userVerification === "required",
      algorithms: algorithmIds(p.webauthn_public_key_credential_algorithms),
    });
  } catch (err) {
    if (err instanceof FidoCheckError) throw refuse(err.message);
    throw err;
  }
  if (!ATTESTATION_FORMATS.includes(reg.fmt)) throw refuse(`attestation format "${reg.fmt}"`);
  if (level === "untrusted" && reg.fmt === "none") {
    throw refuse("the attestation level 'untrusted' needs an attestation, the key sent none");
  }
  if (level === "trusted") {
    // a self attestation (no x5c) proves nothing about the key's maker
    if (reg.x5c.length === 0) {
      throw refuse(
        `the attestation level 'trusted' needs a certificate chain, "${reg.fmt}" has none`,
      );
    }
    const problem = chainProblem(reg.x5c, anchors, ctx.deps.clock.now());
    if (problem) throw refuse(`the attestation does not chain to a trust anchor: ${problem}`);
  }
  const aaguid = reg.aaguid.replaceAll("-", "").toLowerCase();
  const selection = aaguidList(p.webauthn_authenticator_selection_list);
  if (selection && !selection.includes(aaguid)) {
    throw new PolicyError(
      "The WebAuthn token is not allowed to be registered due to a policy restriction.",
    );
  }
  const hash = await sha256Hex(reg.credentialId);
  if (await isCredentialTaken(ctx, hash)) {
    throw refuse("the credential id belongs to another token");
  }
  await consumeEnrolChallenge(ctx, transactionId!);
  const info: Record<string, string> = {
    pubKey: toHex(reg.publicKey),
    origin,
    attestation_level: level,
    aaguid,
    credential_id_hash: hash,
  };
  let description = WEBAUTHN_DEFAULT_DESCRIPTION;
  if (reg.x5c.length > 0) {
    const cert = await certificateFacts(reg.x5c[0]);
    info.attestation_issuer = cert.issuer;
    info.attestation_subject = cert.subject;
    info.attestation_serial = cert.serial;
    if (cert.cn) description = cert.cn;
  }
  const given = param(ctx, "description") ?? existing.description;
  return {
    secret: reg.credentialId,
    counter: reg.signCount,
    info,
    rolloutState: "enrolled",
    active: true,
    description: existing.description === "" ? description : undefined,
    detail: { webAuthnRegisterResponse: { subject: given || description } },
    // the unique index on credential_id_hash: another token got this credential first
    conflictError: new EnrollmentError(WEBAUTHN_ENROLL_FAILED),
    ownsInfo: (key) => CREDENTIAL_INFO.includes(key),
  };
}

/** The nonce all FIDO challenges of one request share (spec 11 §4.4). */
export function sharedNonce(ctx: TypeChallengeContext): Uint8Array {
  const shared = ctx.shared?.get("fido.nonce");
  if (shared instanceof Uint8Array) return shared;
  const nonce = ctx.deps.random.bytes(32);
  ctx.shared?.set("fido.nonce", nonce);
  return nonce;
}

/** The `webauthn` type. */
export const WEBAUTHN: FidoTokenType = {
  type: "webauthn",
  prefix: "WAN",
  authenticates: true,
  challenge: true,
  // a correct PIN always asks the key, no challenge_response policy needed
  challengeOnly: true,
  init(ctx) {
    const isSecondStep = param(ctx, "regdata") !== undefined ||
      param(ctx, "clientdata") !== undefined;
    return isSecondStep ? completeRegistration(ctx) : requestRegistration(ctx);
  },
  // never with a plain pass: the key's assertion is the answer
  checkOtp: noOtp,
  checkAnswer: noOtp,
  // a security key is asked after its PIN (or a trigger naming its user or serial), never
  // by the user-less challenge of /validate/initialize, which would skip the PIN
  answersUserlessChallenge: false,
  credentialIdOf(ctx) {
    return ctx.secret;
  },
  createChallenge(ctx) {
    const nonce = sharedNonce(ctx);
    const userVerification = uvLevel(ctx.policy("webauthn_user_verification_requirement"));
    const transports = (ctx.policy("webauthn_allowed_transports") ?? "").toLowerCase()
      .split(/[\s,]+/).filter((x) => x !== "");
    const text = ctx.policy("webauthn_challenge_text") ?? WEBAUTHN_AUTH_TEXT;
    const description = ctx.token.description;
    const message = text.replaceAll("\\,", ",").replaceAll("{0!s}", description)
      .replaceAll("{0}", description);
    return Promise.resolve({
      message,
      challenge: toHex(nonce),
      data: { user_verification: userVerification },
      extras: {
        client_mode: "webauthn",
        attributes: {
          hideResponseInput: true,
          webAuthnSignRequest: {
            challenge: b64url(nonce),
            allowCredentials: [{
              type: "public-key",
              id: b64url(ctx.secret),
              transports: transports.length > 0 ? transports : DEFAULT_TRANSPORTS,
            }],
            rpId: infoValue(ctx.token.info, "relying_party_id"),
            userVerification,
            timeout: timeoutMs(ctx.policy("webauthn_timeout")),
          },
        },
      },
    });
  },
  async checkAssertion(ctx, answer, challenge) {
    const t = ctx.token;
    if (answer.userHandle) {
      // the user handle of a webauthn credential is the serial (serialNumber at registration)
      const handle = fromB64url(answer.userHandle);
      if (!handle || new TextDecoder().decode(handle) !== t.serial) {
        return { isValid: false, reason: "the user handle is not the token's" };
      }
    }
    try {
      const { signCount } = await verifyAssertion({
        answer,
        challenge,
        rpId: infoValue(t.info, "relying_party_id"),
        credentialId: ctx.secret,
        publicKey: fromHex(infoValue(t.info, "pubKey")),
        storedCount: t.count,
      });
      return { isValid: true, ...counterCheck(signCount) };
    } catch (err) {
      if (err instanceof FidoCheckError) return { isValid: false, reason: err.message };
      throw err;
    }
  },
};
