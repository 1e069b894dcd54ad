/**
 * `passkey`: a discoverable FIDO2 credential for logins without a user name
 * (spec 11 §5). Step 1 of the enrolment answers `passkey_registration` with
 * the user's handle (custom user attribute `fido2_user_id`, made on the
 * first passkey); step 2 carries `attestationObject`, `clientDataJSON` and
 * `credential_id` with the Origin header. The credential id (base64url
 * text) is the secret; `public_key`, `sign_count` and `credential_id_hash`
 * go to the tokeninfo. Logins start at `/validate/initialize?type=passkey`
 * (a challenge without a serial) and end in the FIDO branch of
 * `/validate/check`, which finds the token by `credential_id_hash`. A PIN
 * triggers a challenge only with `passkey_trigger_by_pin`.
 *
 * @module
 */
import { EnrollmentError, missingParameter, ParameterError } from "../../../errors.ts";
import { customAttributeOrCreate } from "../_users.ts";
import { param } from "./_oath.ts";
import { isTrueValue } from "./_sent_code.ts";
import {
  algorithmIds,
  aliasParam,
  b64url,
  canonicalB64url,
  certificateFacts,
  consumeEnrolChallenge,
  counterCheck,
  credentialsOfOwner,
  FidoCheckError,
  type FidoTokenType,
  fromB64url,
  isCredentialTaken,
  noOtp,
  openEnrolChallenge,
  pemWithoutNewlines,
  type Registration,
  relyingParty,
  requireOrigin,
  sha256Hex,
  storeEnrolChallenge,
  uvLevel,
  verifyAssertion,
  verifyRegistration,
} from "./_fido.ts";
import { sharedNonce } from "./webauthn.ts";
import { infoValue, type TypeInitContext, type TypeInitResult } from "./token_type.ts";

/**
 * The registration message (privacyIDEA defines `passkey_challenge_text` for
 * authentication only, not for enrolment).
 */
export const PASSKEY_ENROLL_TEXT = "Please confirm the registration with your passkey!";
/** Default authentication message (policy `passkey_challenge_text`). */
export const PASSKEY_AUTH_TEXT = "Please authenticate with your passkey!";
/** The custom user attribute holding the user's WebAuthn user handle. */
export const FIDO2_USER_ID = "fido2_user_id";
// privacyIDEA 3.12.3 sends 12 s; policy webauthn_timeout gives more
const DEFAULT_TIMEOUT_MS = 12_000;
const CONVEYANCE = ["none", "indirect", "direct", "enterprise"];
/** Tokeninfo of an enrolled credential: dropped when the token is enrolled again. */
const CREDENTIAL_INFO = [
  "public_key",
  "sign_count",
  "aaguid",
  "device_type",
  "backed_up",
  "credential_id_hash",
  "attestation_certificate",
];

function invalid(reason: string): EnrollmentError {
  return new EnrollmentError(`Invalid registration response: ${reason}`);
}

/** The raw credential id of a passkey: its secret is the base64url text. */
function credentialIdOfSecret(secret: Uint8Array): Uint8Array {
  return fromB64url(new TextDecoder().decode(secret)) ?? new Uint8Array(0);
}

/** Step 1: the registration options; the token waits for the authenticator's answer. */
async function requestRegistration(ctx: TypeInitContext): Promise<TypeInitResult> {
  const owner = ctx.owner;
  if (!owner) throw new ParameterError("User must be provided for passkey enrollment!", 9051);
  const p = ctx.policies ?? {};
  const rp = relyingParty(p, "PasskeyToken");
  const userVerification = uvLevel(p.webauthn_user_verification_requirement);
  const conveyance = (p.passkey_attestation_conveyance_preference ?? "none").trim().toLowerCase();
  const userHandle = await customAttributeOrCreate(
    ctx.deps,
    owner,
    FIDO2_USER_ID,
    () => b64url(ctx.deps.random.bytes(32)),
  );
  const challenge = b64url(ctx.deps.random.bytes(32));
  const message = PASSKEY_ENROLL_TEXT;
  const transactionId = await storeEnrolChallenge(ctx, {
    type: "passkey",
    nonce: challenge,
    message,
    userVerification,
  });
  const timeout = Number.parseInt(p.webauthn_timeout ?? "", 10);
  const excluded = await credentialsOfOwner(ctx, "passkey", credentialIdOfSecret);
  return {
    secret: new Uint8Array(0),
    info: {
      relying_party_id: rp.id,
      relying_party_name: rp.name,
      [FIDO2_USER_ID]: userHandle,
    },
    rolloutState: "clientwait",
    active: false,
    detail: {
      transaction_id: transactionId,
      passkey_registration: {
        rp: { name: rp.name, id: rp.id },
        user: { id: userHandle, name: owner.login, displayName: owner.login },
        challenge,
        pubKeyCredParams: algorithmIds(p.webauthn_public_key_credential_algorithms)
          .map((alg) => ({ type: "public-key", alg })),
        timeout: Number.isInteger(timeout) && timeout > 0 && timeout <= 3600
          ? timeout * 1000
          : DEFAULT_TIMEOUT_MS,
        excludeCredentials: excluded.map((id) => ({ id: b64url(id), type: "public-key" })),
        authenticatorSelection: {
          residentKey: "required",
          requireResidentKey: true,
          userVerification,
        },
        attestation: CONVEYANCE.includes(conveyance) ? conveyance : "none",
      },
    },
    ownsInfo: (key) => CREDENTIAL_INFO.includes(key),
  };
}

/** Step 2: checks the registration and stores the credential. */
async function completeRegistration(ctx: TypeInitContext): Promise<TypeInitResult> {
  const existing = ctx.existing;
  if (!existing || existing.rolloutState !== "clientwait") {
    throw new ParameterError(
      "attestationObject and or clientDataJSON provided but token not in clientwait rollout_state.",
    );
  }
  const transactionId = param(ctx, "transaction_id");
  if (!transactionId) throw missingParameter("transaction_id");
  const attestationObject = aliasParam(ctx, "attestationObject", "attestationobject");
  const clientDataJSON = aliasParam(ctx, "clientDataJSON", "clientdatajson", "clientdata");
  const credentialId = aliasParam(ctx, "credential_id", "credentialid", "rawId");
  if (!attestationObject) throw missingParameter("attestationObject");
  if (!clientDataJSON) throw missingParameter("clientDataJSON");
  if (!credentialId) throw missingParameter("credential_id");
  const challenge = await openEnrolChallenge(ctx, transactionId);
  const origin = requireOrigin(ctx.origin);
  const p = ctx.policies ?? {};
  const rpId = infoValue(existing.info, "relying_party_id") || relyingParty(p, "PasskeyToken").id;
  let reg: Registration;
  try {
    reg = await verifyRegistration({
      clientDataJSON,
      attestationObject,
      challenge: challenge.nonce,
      origin,
      rpId,
      // spec 11 §5.2: user verification is not enforced at registration
      requireUv: false,
      algorithms: algorithmIds(p.webauthn_public_key_credential_algorithms),
    });
  } catch (err) {
    if (err instanceof FidoCheckError) throw invalid(err.message);
    throw err;
  }
  const id = b64url(reg.credentialId);
  if (canonicalB64url(credentialId) !== id) {
    throw invalid("the credential id is not the one in the authenticator data");
  }
  const hash = await sha256Hex(reg.credentialId);
  if (await isCredentialTaken(ctx, hash)) throw invalid("the credential is already registered");
  await consumeEnrolChallenge(ctx, transactionId);
  const info: Record<string, string> = {
    public_key: b64url(reg.publicKey),
    sign_count: String(reg.signCount),
    aaguid: reg.aaguid,
    device_type: reg.deviceType,
    backed_up: reg.isBackedUp ? "True" : "False",
    credential_id_hash: hash,
  };
  let description: string | undefined;
  if (reg.x5c.length > 0) {
    info.attestation_certificate = pemWithoutNewlines(reg.x5c[0]);
    description = (await certificateFacts(reg.x5c[0])).cn || undefined;
  }
  return {
    secret: new TextEncoder().encode(id),
    counter: reg.signCount,
    info,
    rolloutState: "enrolled",
    active: true,
    description: existing.description === "" ? description : undefined,
    conflictError: invalid("the credential is already registered"),
    ownsInfo: (key) => CREDENTIAL_INFO.includes(key),
  };
}

/** The `passkey` type. */
export const PASSKEY: FidoTokenType = {
  type: "passkey",
  prefix: "PIPK",
  authenticates: true,
  challenge: true,
  challengeOnly: true,
  mayTrigger(policy) {
    return isTrueValue(policy("passkey_trigger_by_pin"));
  },
  init(ctx) {
    const isSecondStep = aliasParam(ctx, "attestationObject", "attestationobject") !== undefined ||
      aliasParam(ctx, "clientDataJSON", "clientdatajson") !== undefined;
    return isSecondStep ? completeRegistration(ctx) : requestRegistration(ctx);
  },
  checkOtp: noOtp,
  checkAnswer: noOtp,
  answersUserlessChallenge: true,
  credentialIdOf(ctx) {
    return credentialIdOfSecret(ctx.secret);
  },
  createChallenge(ctx) {
    const nonce = b64url(sharedNonce(ctx));
    const userVerification = uvLevel(ctx.policy("webauthn_user_verification_requirement"));
    const text = ctx.policy("passkey_challenge_text") ?? PASSKEY_AUTH_TEXT;
    return Promise.resolve({
      message: text.replaceAll("\\,", ","),
      challenge: nonce,
      data: { user_verification: userVerification },
      // flat extras, no attributes (spec 11 §5.3 point 3)
      extras: {
        client_mode: "webauthn",
        challenge: nonce,
        rpId: infoValue(ctx.token.info, "relying_party_id"),
        userVerification,
      },
    });
  },
  async checkAssertion(ctx, answer, challenge) {
    const t = ctx.token;
    if (answer.userHandle) {
      const handle = canonicalB64url(answer.userHandle);
      if (handle === undefined || handle !== canonicalB64url(infoValue(t.info, FIDO2_USER_ID))) {
        return { isValid: false, reason: "the user handle is not the token's" };
      }
    }
    const publicKey = fromB64url(infoValue(t.info, "public_key"));
    if (!publicKey) return { isValid: false, reason: "the token has no public key" };
    // an imported passkey may carry its count in the tokeninfo only
    const stored = Math.max(
      t.count,
      Number.parseInt(infoValue(t.info, "sign_count", "0"), 10) || 0,
    );
    try {
      const { signCount } = await verifyAssertion({
        answer,
        challenge,
        rpId: infoValue(t.info, "relying_party_id"),
        credentialId: credentialIdOfSecret(ctx.secret),
        publicKey,
        storedCount: stored,
      });
      return {
        isValid: true,
        ...counterCheck(signCount),
        info: { sign_count: String(signCount) },
      };
    } catch (err) {
      if (err instanceof FidoCheckError) return { isValid: false, reason: err.message };
      throw err;
    }
  },
};
