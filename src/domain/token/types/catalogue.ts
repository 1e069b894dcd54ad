/**
 * The token types Tessera has, by name and description, as data. The policy
 * engine lists `enroll<TYPE>` actions from it; the type modules of mod.ts
 * implement exactly these (a test compares the two). It imports nothing: the
 * token types use the policy engine, so the engine reads the names here and
 * not from the modules.
 *
 * @module
 */

/** Type name (lower case) → description, for `/auth/rights` and policy `enroll<TYPE>` actions. */
export const TOKEN_TYPES: Readonly<Record<string, string>> = {
  hotp: "HOTP: event based One Time Passwords",
  totp: "TOTP: time based One Time Passwords",
  spass: "SPass: Simple Pass token. Static passwords",
  pw: "PW: A token with a fixed password",
  registration:
    "Registration: A token that creates a registration code that can be used as a second factor once",
  sshkey: "SSHkey: The token represents an SSH public key",
  paper: "PPR: One Time Passwords printed on a sheet of paper",
  radius: "RADIUS: Forward authentication request to a RADIUS server",
  email: "EMail: Send a One Time Password to the users email address.",
  sms: "SMS: Send a One Time Password to the users mobile phone.",
  tan: "TAN: TAN List",
  indexedsecret: "Indexed Secret: Challenge Response token that asks for characters of a secret",
  question: "Questionnaire: Token to answer several questions.",
  daypassword: "DayPassword: A time based password that stays valid for a whole time step.",
  webauthn: "WebAuthn: A FIDO2 security key (WebAuthn / U2F).",
  passkey: "Passkey: A discoverable FIDO2 credential for logins without a user name.",
  yubikey: "Yubikey AES mode: One Time Passwords with Yubikey.",
  yubico: "Yubikey Cloud mode: Forward authentication request to YubiCloud.",
  certificate: "Certificate: Enroll an x509 Certificate Token.",
  motp: "mOTP: classical mobile One Time Passwords.",
  push: "PUSH: Send a push notification to a smartphone.",
  ocra: "OCRA: Challenge Response token as defined in RFC 6287.",
  remote: "REMOTE token: Forward authentication request to another server.",
  applspec:
    "Application Specific Password: A token with a fixed password. Can be used for certain applications or services.",
  "4eyes": "4Eyes Token: Use tokens of two or more users to authenticate",
  tiqr: "TiQR: Enroll a TiQR token.",
};

/**
 * Types only administrators enroll: privacyIDEA's token classes give them no
 * user `enroll` right (class info `user: []`, ocra's commented out), so the
 * user scope lists no `enroll<TYPE>` action for them.
 */
export const ADMIN_ENROLLED_TYPES: ReadonlySet<string> = new Set([
  "pw",
  "registration",
  "remote",
  "ocra",
  "4eyes",
]);

/**
 * Types Tessera has only to authenticate existing tokens: privacyIDEA 3.12
 * removed them from the enrollable types, so `/token/init` refuses them
 * (ERR1610) and the policy definitions list no `enroll<TYPE>` or per-type
 * enrolment action for them. Type name → description.
 */
export const NOT_ENROLLED_TYPES: Readonly<Record<string, string>> = {
  u2f: "U2F: Enroll a U2F token.",
};
