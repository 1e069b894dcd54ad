/**
 * Actions `/policy/defs` lists that have no registered effect test yet (see `_registry.ts`).
 *
 * This list only shrinks: register an action's effect test with `actionTest(...)` and delete
 * its line here in the same commit (the walker fails while an action is both registered and
 * pending, and when an entry names no listed action). Entries are `scope:action`; a pattern
 * (`{type}`, `{TYPE}`) stands for every listed action it expands to.
 *
 * @module
 */

/** `scope:action` entries without a registered effect test yet. */
export const PENDING: readonly string[] = [
  // --- admin
  // --- user
  // --- authentication
  "authentication:change_pin_via_validate",
  "authentication:enroll_via_multichallenge_optional",
  "authentication:enroll_via_multichallenge_passkey_offline",
  "authentication:enroll_via_multichallenge",
  "authentication:enroll_via_multichallenge_text",
  "authentication:mangle",
  "authentication:{type}_challenge_text",
  "authentication:webauthn_user_verification_requirement",
  "authentication:webauthn_timeout",
  "authentication:webauthn_allowed_transports",
  // --- authorization
  "authorization:require_auth_for_resolver_details",
  "authorization:no_detail_on_fail",
  "authorization:auth_max_success",
  "authorization:auth_max_fail",
  "authorization:webauthn_authenticator_selection_list",
  // --- enrollment
  "enrollment:autoassignment",
  "enrollment:email_validation",
  "enrollment:webauthn_relying_party_id",
  "enrollment:webauthn_relying_party_name",
  "enrollment:webauthn_timeout",
  "enrollment:webauthn_user_verification_requirement",
  "enrollment:webauthn_public_key_credential_algorithms",
  "enrollment:webauthn_authenticator_attachment",
  "enrollment:webauthn_authenticator_attestation_form",
  "enrollment:webauthn_authenticator_attestation_level",
  "enrollment:webauthn_authenticator_selection_list",
  "enrollment:webauthn_avoid_double_registration",
  "enrollment:{type}_challenge_text",
  "enrollment:passkey_attestation_conveyance_preference",
  "enrollment:yubikey_access_code",
  // --- token
  "token:require_description_on_edit",
];
