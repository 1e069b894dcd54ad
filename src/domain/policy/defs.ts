/**
 * The static policy action catalogue (spec 04 §3) and the dynamic additions
 * built from token types, realms and resolvers at request time.
 *
 * What `/policy/defs` lists is what Tessera does: every listed action has an
 * effect test (tests/policy_actions/walk_test.ts walks the list). Actions of
 * features Tessera does not have are kept per feature in {@link FEATURE_DEFS}
 * and stay out of the list (so a policy naming one is refused, as privacyIDEA
 * refuses actions it does not define) until their feature is built.
 *
 * @module
 */

/** One action definition as `/policy/defs` returns it. */
export interface ActionDef {
  type: "bool" | "str" | "int" | "text";
  desc: string;
  group?: string;
  value?: (string | number)[];
  multiple?: boolean;
  mainmenu?: string[];
}

/** Every scope name a policy may have (spec 04 §1). */
export const SCOPES = [
  "admin",
  "user",
  "authentication",
  "authorization",
  "enrollment",
  "webui",
  "register",
  "container",
  "token",
  "hardening",
  "audit",
] as const;

/** A policy scope. */
export type Scope = typeof SCOPES[number];

/** Runtime value lists used in the catalogue. */
export interface DefsContext {
  realms: string[];
  resolvers: string[];
  /** Token types: name (lower case) and description; `userEnroll` false hides it from scope user. */
  tokenTypes: { type: string; description: string; userEnroll?: boolean }[];
  /** Ids of RADIUS servers (for `passthru`). */
  radiusServers?: string[];
}

/** Token types known before the token registry is wired (used when none are given). */
export const DEFAULT_TOKEN_TYPES: DefsContext["tokenTypes"] = [
  { type: "hotp", description: "HOTP: event based One Time Passwords" },
  { type: "totp", description: "TOTP: time based One Time Passwords" },
  { type: "spass", description: "SPass: Simple Pass token. Static passwords" },
  { type: "pw", description: "PW: A token with a static password", userEnroll: false },
  { type: "registration", description: "Registration token", userEnroll: false },
  { type: "sshkey", description: "SSHkey: An SSH public key" },
  { type: "paper", description: "PPR: One Time Passwords printed on a sheet of paper" },
];

const ROLLOUT_STATES = ["clientwait", "enrolled", "verify", "pending"];

function b(desc: string, group?: string, mainmenu?: string[]): ActionDef {
  const d: ActionDef = { type: "bool", desc };
  if (group) d.group = group;
  if (mainmenu) d.mainmenu = mainmenu;
  return d;
}
function s(desc: string, extra: Partial<ActionDef> = {}): ActionDef {
  return { type: "str", desc, ...extra };
}
function n(desc: string, extra: Partial<ActionDef> = {}): ActionDef {
  return { type: "int", desc, ...extra };
}
function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
function bools(group: string, names: string[], mainmenu?: string[]): Record<string, ActionDef> {
  return Object.fromEntries(
    names.map((a) => [a, b(`The admin or user is allowed to use "${a}".`, group, mainmenu)]),
  );
}

const CONTAINER_BOOLS = [
  "container_info",
  "container_state",
  "container_description",
  "container_create",
  "container_delete",
  "container_add_token",
  "container_remove_token",
  "container_assign_user",
  "container_unassign_user",
  "container_realms",
  "container_list",
  "container_template_create",
  "container_template_delete",
  "container_template_list",
];

/** Container actions of the smartphone registration (feature `containerregistration`). */
const CONTAINER_REGISTRATION_BOOLS = [
  "container_register",
  "container_unregister",
  "container_rollover",
];

function pinDefs(group: string): Record<string, ActionDef> {
  return {
    otp_pin_maxlength: n("The maximum length of the OTP PIN.", { group, value: range(0, 31) }),
    otp_pin_minlength: n("The minimum length of the OTP PIN.", { group, value: range(0, 31) }),
    otp_pin_set_random: n("Length of a random OTP PIN set by the server.", {
      group,
      value: range(1, 31),
    }),
    otp_pin_contents: s(
      "Contents of the OTP PIN: c (letters), n (digits), s (special), + (grouping), - (exclusion).",
      { group },
    ),
  };
}

function adminDefs(): Record<string, ActionDef> {
  const tokenMenu = ["tokens"];
  return {
    ...bools("token", [
      "enable",
      "disable",
      "set",
      "setdescription",
      "setpin",
      "setrandompin",
      "settokeninfo",
      "resync",
      "reset",
      "revoke",
      "assign",
      "unassign",
      "delete",
      "tokenrealms",
      "tokenlist",
    ], tokenMenu),
    hide_tokeninfo: s("Keys of the token info that are hidden (space separated).", {
      group: "token",
    }),
    enrollpin: b("The admin is allowed to set the OTP PIN during enrollment.", "enrollment"),
    ...bools("system", [
      "importtokens",
      "configwrite",
      "configdelete",
      "configread",
      "policywrite",
      "policydelete",
      "policyread",
      "resolverwrite",
      "resolverdelete",
      "resolverread",
      "mresolverwrite",
      "mresolverdelete",
      "mresolverread",
      "smtpserver_write",
      "smtpserver_read",
      "radiusserver_write",
      "radiusserver_read",
      "privacyideaserver_write",
      "privacyideaserver_read",
      "eventhandling_write",
      "eventhandling_read",
      "smsgateway_write",
      "smsgateway_read",
      "managesubscription",
    ], ["config"]),
    ...bools("system", ["auditlog"], ["audit"]),
    auditlog_age: s("The admin sees only audit entries younger than this (e.g. 10d, 4h).", {
      group: "system",
      mainmenu: ["audit"],
    }),
    hide_audit_columns: s("Audit columns that are hidden (space separated).", {
      group: "system",
      mainmenu: ["audit"],
    }),
    ...bools("general", [
      "userlist",
      "fetch_authentication_items",
      "getchallenges",
      "triggerchallenge",
    ]),
    ...bools("user", ["adduser", "updateuser", "deleteuser"], ["users"]),
    set_custom_user_attributes: s(
      "Custom user attributes that may be set: ':key1: v1 v2 :key2: *'.",
      { group: "user", mainmenu: ["users"] },
    ),
    delete_custom_user_attributes: s(
      "Custom user attributes that may be deleted (space separated, * for all).",
      { group: "user", mainmenu: ["users"] },
    ),
    ...bools("machine", ["machinelist", "manage_machine_tokens"], ["machines"]),
    ...bools("tools", ["getserial", "losttoken"]),
    ...pinDefs("pin"),
  };
}

function userDefs(): Record<string, ActionDef> {
  return {
    ...bools("token", [
      "assign",
      "disable",
      "enable",
      "delete",
      "unassign",
      "resync",
      "revoke",
      "reset",
      "setdescription",
      "setpin",
      "setrandompin",
      "enrollpin",
      "auditlog",
      "userlist",
      "updateuser",
    ]),
    ...pinDefs("pin"),
    auditlog_age: s("The user sees only audit entries younger than this (e.g. 10d, 4h).", {
      group: "system",
    }),
    hide_audit_columns: s("Audit columns that are hidden (space separated).", { group: "system" }),
    set_custom_user_attributes: s(
      "Custom user attributes that may be set: ':key1: v1 v2 :key2: *'.",
      { group: "user" },
    ),
    delete_custom_user_attributes: s(
      "Custom user attributes that may be deleted (space separated, * for all).",
      { group: "user" },
    ),
    hide_tokeninfo: s("Keys of the token info that are hidden (space separated).", {
      group: "token",
    }),
  };
}

function authenticationDefs(ctx: DefsContext): Record<string, ActionDef> {
  const types = ctx.tokenTypes.map((t) => t.type);
  return {
    ...Object.fromEntries(
      [
        "change_pin_via_validate",
        "resync_via_multichallenge",
        "enroll_via_multichallenge_optional",
        "enroll_via_multichallenge_passkey_offline",
        "passOnNoToken",
        "passOnNoUser",
        "reset_all_user_tokens",
        "increase_failcounter_on_challenge",
        "force_challenge_response",
        "client_mode_per_user",
        "hide_specific_error_message",
      ].map((a) => [a, b(`Authentication setting "${a}".`)]),
    ),
    otppin: s("Which PIN is checked: the token PIN, the user store password, or none.", {
      value: ["tokenpin", "userstore", "none"],
    }),
    challenge_response: s("Token types that may be triggered by the PIN alone.", {
      value: types,
      multiple: true,
    }),
    challenge_text: s("Text of the challenge prompt."),
    challenge_text_header: s("Header of the challenge prompt."),
    challenge_text_footer: s("Footer of the challenge prompt."),
    disabled_token_types: s("Token types that cannot be used to authenticate.", {
      value: types,
      multiple: true,
    }),
    // SMARTPHONE: a smartphone container registered with the app (compared case-insensitively)
    enroll_via_multichallenge: s(
      "Token type enrolled during authentication (SMARTPHONE: a smartphone container is " +
        "registered with the privacyIDEA Authenticator app).",
      { value: ["HOTP", "TOTP", "DAYPASSWORD", "EMAIL", "SMS", "PASSKEY", "PUSH", "SMARTPHONE"] },
    ),
    enroll_via_multichallenge_text: s("Text shown when a token is enrolled via multichallenge."),
    passthru: s("Without tokens, check the password against the user store or a RADIUS server.", {
      value: ["userstore", ...(ctx.radiusServers ?? [])],
    }),
    passthru_assign: s("Assign a token after a successful RADIUS passthru: pin:6[:window]."),
    mangle: s("Rewrite user, pass or realm: <field>/<regex>/<replacement>/."),
    set_realm: s("Overwrite the realm of the request.", { value: ctx.realms }),
    auth_cache: s("Accept repeated credentials within a time (4h, 4h/5m, 2d/3)."),
    preferred_client_mode: s("Order of client modes: interactive webauthn poll u2f."),
  };
}

function authorizationDefs(ctx: DefsContext): Record<string, ActionDef> {
  return {
    authorized: s("Grant or deny access after a successful authentication.", {
      value: ["grant_access", "deny_access"],
    }),
    ...Object.fromEntries(
      [
        "application_tokentype",
        "require_auth_for_resolver_details",
        "no_detail_on_success",
        "no_detail_on_fail",
        "add_user_in_response",
        "add_resolver_in_response",
        "api_key_required",
      ].map((a) => [a, b(`Authorization setting "${a}".`)]),
    ),
    auth_max_success: s("Maximum successful authentications per time: N/<duration>."),
    auth_max_fail: s("Maximum failed authentications per time: N/<duration>."),
    last_auth: s("Reject when the last successful authentication is older (10h, 7d, 1y)."),
    tokentype: s("Token types that may be used to authenticate (space separated)."),
    serial: s("Regular expression the serial of the authenticating token must match."),
    tokeninfo: s("A token info that must match: key/regex/."),
    setrealm: s("Move the authenticating user into this realm.", { value: ctx.realms }),
    webauthn_authenticator_selection_list: s(
      "AAGUIDs of the WebAuthn and passkey authenticators that may log in (space separated).",
    ),
  };
}

function enrollmentDefs(ctx: DefsContext): Record<string, ActionDef> {
  const types = ctx.tokenTypes.map((t) => t.type);
  return {
    max_token_per_realm: n("Maximum number of tokens in a realm."),
    max_token_per_user: n("Maximum number of tokens per user."),
    max_active_token_per_user: n("Maximum number of active tokens per user."),
    otp_pin_random: n("Length of a random OTP PIN set during enrollment.", {
      value: range(1, 31),
    }),
    "registration.length": n("Length of the registration code."),
    "pw.length": n("Length of the password of a PW token."),
    losttoken_PW_length: n("Length of the password of a lost token.", { value: range(1, 31) }),
    losttoken_valid: n("Days a lost-token replacement is valid.", { value: range(1, 60) }),
    require_description: s("Token types that need a description at enrollment.", {
      value: types,
      multiple: true,
    }),
    pinhandling: s(
      "Handler the random PIN of otp_pin_random is given to (logs that one was set).",
      {
        value: ["privacyidea.lib.pinhandling.base.PinHandler"],
      },
    ),
    change_pin_every: s("The user must change the PIN after this period (e.g. 180d)."),
    tokenlabel: s("Label of enrolled smartphone tokens (<u>, <r>, <s>, <i>)."),
    tokenissuer: s("Issuer of enrolled smartphone tokens."),
    appimageurl: s("Image URL shown in the authenticator app."),
    autoassignment: s("Assign an unassigned token on first use.", {
      value: ["any_pin", "userstore"],
    }),
    "registration.contents": s("Contents of the registration code."),
    "pw.contents": s("Contents of the password of a PW token."),
    email_validation: s("Module that validates email addresses.", {
      value: ["privacyidea.lib.utils.emailvalidation"],
    }),
    verify_enrollment: s("Token types whose enrollment must be verified.", {
      value: types,
      multiple: true,
    }),
    losttoken_PW_contents: s("Contents of the password of a lost token."),
    change_pin_on_first_use: b("The user must change the PIN on first use."),
    encrypt_pin: b("The OTP PIN is stored encrypted instead of hashed."),
  };
}

function webuiDefs(ctx: DefsContext): Record<string, ActionDef> {
  return {
    ...Object.fromEntries(
      [
        "admin_dashboard",
        "search_on_enter",
        "user_details",
        "dialog_no_token",
        "hide_welcome_info",
        "hide_buttons",
        "deletion_confirmation",
        "show_seed",
        "show_node",
        "tokenwizard",
        "tokenwizard_2nd_token",
        "show_android_privacyidea_authenticator",
        "show_ios_privacyidea_authenticator",
      ].map((a) => [a, b(`WebUI setting "${a}".`)]),
    ),
    logout_time: n("Seconds of inactivity before the WebUI logs out."),
    jwt_validity: n("Seconds a WebUI login stays valid."),
    token_page_size: n("Tokens per page."),
    user_page_size: n("Users per page."),
    audit_page_size: n("Audit entries per page."),
    rss_age: n("Days of RSS news shown."),
    login_mode: s("How WebUI users log in.", { value: ["userstore", "privacyIDEA", "disable"] }),
    login_text: s("Text on the login page."),
    timeout_action: s("What happens at the logout time.", { value: ["logout", "lockscreen"] }),
    remote_user: s("Accept REMOTE_USER.", { value: ["allowed", "disable", "force"] }),
    custom_menu: s("Custom menu template URL."),
    custom_baseline: s("Custom baseline template URL."),
    privacy_statement_link: s("Link to the privacy statement."),
    policy_template_url: s("URL of the policy templates."),
    logout_redirect: s("URL to redirect to after logout."),
    token_rollover: s("Token types that may be rolled over.", { multiple: true }),
    default_tokentype: s("Token type preselected for enrollment.", {
      value: ctx.tokenTypes.map((t) => t.type),
    }),
    realm_dropdown: s("Realms offered in a dropdown at login."),
    show_custom_authenticator: s("Show a custom authenticator app link."),
    passkey_login: s("Show the passkey login button.", { value: ["show", "hide"] }),
  };
}

function registerDefs(ctx: DefsContext): Record<string, ActionDef> {
  return {
    resolver: s("Resolver where registered users are created.", { value: ctx.resolvers }),
    realm: s("Realm of registered users.", { value: ctx.realms }),
    smtpconfig: s("SMTP server for the registration email."),
    requiredemail: s("Regular expression a registration email must match."),
    registration_body: { type: "text", desc: "Body of the registration email." },
    hide_specific_error_message: b("Hide specific error messages of the registration."),
  };
}

function containerDefs(): Record<string, ActionDef> {
  return {
    privacyIDEA_server_url: s("URL of the server for container registration."),
    container_registration_ttl: n("Minutes a container registration stays valid."),
    container_challenge_ttl: n("Minutes a container challenge stays valid."),
    container_ssl_verify: s("Verify the server certificate.", { value: ["True", "False"] }),
    ...Object.fromEntries(
      [
        "container_client_rollover",
        "initially_add_tokens_to_container",
        "disable_client_token_deletion",
        "disable_client_container_unregister",
        "hide_specific_error_message",
      ].map((a) => [a, b(`Container setting "${a}".`)]),
    ),
  };
}

function tokenScopeDefs(ctx: DefsContext): Record<string, ActionDef> {
  return {
    require_description_on_edit: s("Token types that need a description when edited.", {
      value: ctx.tokenTypes.map((t) => t.type),
      multiple: true,
    }),
    hide_specific_error_message_for_ttype: b("Hide specific error messages of token types."),
    hide_specific_error_message_for_offline_refill: b(
      "Hide specific error messages of offline refills.",
    ),
  };
}

function hardeningDefs(): Record<string, ActionDef> {
  return {
    hide_version: b("Do not return the server version."),
    hide_auth_error_status: b("Return authentication errors with status true."),
  };
}

/** Actions of one feature, per scope. */
export type ScopeDefs = Partial<Record<Scope, Record<string, ActionDef>>>;

/** A feature's policy actions, kept out of `/policy/defs` until the feature is built. */
export interface FeatureDefs {
  /** What the feature is (for docs and messages). */
  description: string;
  /** True once the feature exists: only then are its actions listed and accepted. */
  isBuilt: boolean;
  actions(ctx: DefsContext): ScopeDefs;
}

/**
 * Policy actions of features Tessera does not have (yet). They are not listed by
 * `/policy/defs`, so `POST /policy/<name>`, `/policy/import` and the privacyIDEA
 * migration refuse them. When a feature lands, set `isBuilt` and register an
 * effect test for each of its actions (tests/policy_actions/_registry.ts).
 */
export const FEATURE_DEFS: Readonly<Record<string, FeatureDefs>> = {
  containers: {
    description: "token containers: create, list, tokens, owners, realms, states, info, templates",
    isBuilt: true,
    actions: () => ({
      admin: {
        ...bools("container", CONTAINER_BOOLS, ["tokens"]),
        hide_container_info: s("Keys of the container info that are hidden (space separated).", {
          group: "container",
        }),
      },
      user: {
        ...bools(
          "container",
          CONTAINER_BOOLS.filter((a) => a !== "container_info" && a !== "container_realms"),
        ),
        hide_container_info: s("Keys of the container info that are hidden (space separated).", {
          group: "container",
        }),
      },
    }),
  },
  containerregistration: {
    description: "registration and synchronisation of smartphone containers with the " +
      "privacyIDEA Authenticator app",
    isBuilt: true,
    actions: () => ({
      admin: bools("container", CONTAINER_REGISTRATION_BOOLS),
      user: bools("container", CONTAINER_REGISTRATION_BOOLS),
      container: containerDefs(),
    }),
  },
  containermultichallenge: {
    description: "a smartphone container registered during a login (enroll_via_multichallenge " +
      "with a container template)",
    isBuilt: true,
    actions: () => ({
      authentication: {
        enroll_via_multichallenge_template: s(
          "Smartphone container template a container made by enroll_via_multichallenge=" +
            "SMARTPHONE is created from (its tokens enrolled with the user's rights).",
        ),
      },
    }),
  },
  containerwebui: {
    description: "the web interface's container pages (container wizard, default container type)",
    isBuilt: true,
    actions: () => ({
      webui: {
        container_wizard_registration: b(
          "The container wizard registers the new smartphone container at once (shows the " +
            "registration QR code).",
        ),
        container_wizard_type: s(
          "Container type the container wizard creates; a user without a container sees only " +
            "the wizard until they have one.",
          { value: ["generic", "smartphone", "yubikey"] },
        ),
        container_wizard_template: s(
          "Container template the container wizard creates the container from (of the " +
            "wizard's type; `name` or `name(type)`).",
        ),
        default_container_type: s("Container type preselected.", {
          value: ["generic", "smartphone", "yubikey"],
        }),
      },
    }),
  },
  tokengroups: {
    description: "token groups",
    isBuilt: true,
    actions: () => ({
      admin: {
        ...bools("token", ["tokengroups"], ["tokens"]),
        ...bools("tokengroup", ["tokengroup_list", "tokengroup_add", "tokengroup_delete"]),
      },
    }),
  },
  serviceids: {
    description: "service IDs",
    isBuilt: true,
    actions: () => ({
      admin: bools("service ID", ["serviceid_list", "serviceid_add", "serviceid_delete"]),
    }),
  },
  auditdownload: {
    description: "the audit log as a CSV file (GET /audit/<file>.csv)",
    isBuilt: true,
    actions: () => ({ admin: bools("system", ["auditlog_download"], ["audit"]) }),
  },
  periodictasks: {
    description: "periodic tasks",
    isBuilt: true,
    actions: () => ({
      admin: bools("system", ["periodictask_write", "periodictask_read"], ["config"]),
    }),
  },
  caconnectors: {
    description: "CA connectors (certificate tokens)",
    isBuilt: true,
    actions: () => ({
      admin: bools("system", ["caconnectorwrite", "caconnectordelete", "caconnectorread"], [
        "config",
      ]),
    }),
  },
  registration: {
    description: "self-registration of users (/register) and password recovery (/recover)",
    isBuilt: true,
    actions: (ctx) => ({
      register: registerDefs(ctx),
      user: {
        password_reset: b(
          "The user may set a forgotten password with a code mailed to them (/recover).",
          "token",
        ),
      },
    }),
  },
  u2f: {
    description: "authentication with U2F keys registered in privacyIDEA (whose 3.12 no longer " +
      "enrols them: no enrollU2F, no enrolment actions)",
    isBuilt: true,
    actions: () => ({
      authentication: {
        u2f_facets: s(
          "Host names trusting the U2F tokens (space separated), listed by GET /ttype/u2f.",
        ),
        u2f_challenge_text: s("Challenge text of u2f tokens."),
      },
      authorization: {
        u2f_req: s(
          "Attestation rules a U2F token must match: subject/<re>/, issuer/<re>/, serial/<re>/.",
          { group: "conditions" },
        ),
      },
    }),
  },
  statistics: {
    description: "statistics (/monitoring)",
    isBuilt: true,
    actions: () => ({
      admin: bools("system", ["statistics_read", "statistics_delete"], ["config"]),
    }),
  },
  hsm: {
    description: "hardware security modules (/system/hsm)",
    isBuilt: false,
    actions: () => ({ admin: bools("system", ["set_hsm_password"], ["config"]) }),
  },
  documentation: {
    description: "the generated system documentation (/system/documentation)",
    isBuilt: true,
    actions: () => ({ admin: bools("system", ["system_documentation"], ["config"]) }),
  },
  clienttypes: {
    description: "the list of client applications (/client/)",
    isBuilt: true,
    actions: () => ({ admin: bools("system", ["clienttype"], ["config"]) }),
  },
  random: {
    description: "random data from the server (/system/random)",
    isBuilt: true,
    actions: () => ({ admin: bools("tools", ["getrandom"]) }),
  },
  tokencopy: {
    description: "copying a token's PIN or owner to another token (/token/copypin, /copyuser)",
    isBuilt: true,
    actions: () => ({ admin: bools("tools", ["copytokenpin", "copytokenuser"]) }),
  },
  rss: {
    description: "the news feeds of the web interface (/info/rss)",
    isBuilt: true,
    actions: () => ({ webui: { rss_feeds: s("RSS feeds shown in the WebUI.") } }),
  },
  privacyidea314: {
    description:
      "privacyIDEA 3.14 additions (API clients, remembered devices, challenge cancelling, " +
      "internal user attributes, rollout states for passthru, the hardening scope); " +
      "privacyIDEA 3.12 and 3.13 refuse these actions as well",
    isBuilt: false,
    actions: () => ({
      admin: {
        ...bools("general", ["cancelchallenge"]),
        ...bools("user", ["get_user_internal_attributes"], ["users"]),
        ...bools("API clients", [
          "api_client_list",
          "api_client_add",
          "api_client_edit",
          "api_client_rotate",
          "api_client_delete",
          "remembered_device_list",
          "remembered_device_revoke",
        ]),
      },
      authentication: {
        remember_device: b('Authentication setting "remember_device".'),
        remember_device_validity: n("Days a remembered device stays valid."),
        remember_device_max_devices: n("Maximum number of remembered devices per user."),
        passthru_ignore_rollout_state: s("Tokens in these rollout states do not block passthru.", {
          value: ROLLOUT_STATES,
          multiple: true,
        }),
        passonnotoken_ignore_rollout_state: s(
          "Tokens in these rollout states do not block passOnNoToken.",
          { value: ROLLOUT_STATES, multiple: true },
        ),
      },
      hardening: hardeningDefs(),
    }),
  },
};

/** Authentication actions of token types that make their own challenges (spec 11 §12). */
const AUTH_TYPE_DEFS: Record<string, Record<string, ActionDef>> = {
  email: {
    emailtext: s("Body of the email with the OTP (tags like {otp}, {user}, {serial})."),
    emailsubject: s("Subject of the email with the OTP."),
  },
  sms: { smstext: s("Text of the SMS with the OTP (tags like {otp}, {user}, {serial}).") },
  indexedsecret: {
    indexedsecret_count: n("Number of positions of the secret asked in a challenge."),
  },
  question: { question_number: n("Number of questions to answer.", { value: range(1, 30) }) },
  webauthn: {
    webauthn_user_verification_requirement: s("User verification asked for at login.", {
      value: ["required", "preferred", "discouraged"],
    }),
    webauthn_timeout: n("Seconds the client waits for the authenticator at login."),
    webauthn_allowed_transports: s(
      "Transports offered for each credential at login (usb ble nfc internal).",
    ),
  },
  passkey: {
    webauthn_user_verification_requirement: s("User verification asked for at login.", {
      value: ["required", "preferred", "discouraged"],
    }),
    passkey_trigger_by_pin: b("A PIN (and /validate/triggerchallenge) may ask for a passkey."),
  },
  push: {
    push_text_on_mobile: s(
      "The question the user sees on the smartphone (tags like {serial}, {username}).",
    ),
    push_title_on_mobile: s("The title of the notification the user sees on the smartphone."),
    push_ssl_verify: s("The smartphone verifies TLS when it answers (default 1).", {
      value: ["0", "1"],
    }),
    push_require_presence: b("The user confirms a login by pressing the button shown at login."),
    push_presence_options: s("The buttons offered: A-Z, 00-99 or push_presence_custom_options.", {
      value: ["ALPHABETIC", "NUMERIC", "CUSTOM"],
    }),
    push_presence_custom_options: s("Custom buttons separated by ':' (e.g. 01:02:03:1A:1B:1C)."),
    push_presence_num_options: n("Number of buttons offered (2 to 10, default 3).", {
      value: range(2, 10),
    }),
    push_allow_polling: s("Whether push tokens may poll for challenges (default allow).", {
      value: ["allow", "deny", "token"],
    }),
    push_code_to_phone: b(
      "The user types the code the app shows after confirming (push_require_presence wins).",
    ),
    push_code_to_phone_message: s("The message shown above the code in the app."),
    push_wait: n(
      "Seconds /validate/check waits for the app to confirm (single-shot login).",
    ),
  },
};

/** Enrollment actions both FIDO types read (spec 11 §4.1, §5.1). */
const FIDO_ENROLL_DEFS: Record<string, ActionDef> = {
  webauthn_relying_party_id: s("Relying party id (a domain name) of WebAuthn and passkey tokens."),
  webauthn_relying_party_name: s("Relying party name shown by the authenticator."),
  webauthn_timeout: n("Seconds the client waits for the authenticator at registration."),
  webauthn_user_verification_requirement: s("User verification asked for at registration.", {
    value: ["required", "preferred", "discouraged"],
  }),
  webauthn_public_key_credential_algorithms: s("Key algorithms accepted for new credentials.", {
    value: ["ecdsa", "rsassa-pss", "rsassa-pkcs1v1_5"],
    multiple: true,
  }),
};

/** Enrollment actions of token types (matched on the owner). */
const ENROLL_TYPE_DEFS: Record<string, Record<string, ActionDef>> = {
  tan: { tantoken_count: n("Number of TANs of a new TAN list.") },
  push: {
    push_firebase_configuration: s(
      "How push tokens get their challenges: 'poll only' (the app polls) or the name of a " +
        "Firebase provider definition (/smsgateway/).",
    ),
    push_registration_url: s(
      "The URL the app contacts in the second enrolment step and to answer (…/ttype/push).",
    ),
    push_ttl: n("Minutes the app has for the second enrolment step (in the URL, default 10)."),
    push_ssl_verify: s("The smartphone verifies TLS during the enrolment (default 1).", {
      value: ["0", "1"],
    }),
    push_use_pia_scheme: b("The enrolment URL uses the app's scheme pia:// (opens the app)."),
  },
  webauthn: {
    ...FIDO_ENROLL_DEFS,
    webauthn_authenticator_attachment: s("Kind of authenticator asked for.", {
      value: ["platform", "cross-platform", "either"],
    }),
    webauthn_authenticator_attestation_form: s("Attestation asked of new WebAuthn tokens.", {
      value: ["none", "indirect", "direct"],
    }),
    webauthn_authenticator_attestation_level: s(
      "Attestation a new WebAuthn token must present ('trusted': chained to webauthn.trust_anchor_dir).",
      { value: ["none", "untrusted", "trusted"] },
    ),
    webauthn_authenticator_selection_list: s(
      "AAGUIDs of the authenticators that may be registered (space separated).",
    ),
    webauthn_avoid_double_registration: b("A user cannot register one security key twice."),
    webauthn_challenge_text: s("Message of the WebAuthn registration request."),
  },
  passkey: {
    ...FIDO_ENROLL_DEFS,
    passkey_attestation_conveyance_preference: s("Attestation asked of new passkeys.", {
      value: ["none", "indirect", "direct", "enterprise"],
    }),
  },
  certificate: {
    certificate_ca_connector: s("The CA connector used to issue certificates (replaces 'ca')."),
    certificate_template: s("The CA template used to issue certificates (replaces 'template')."),
    certificate_request_subject_component: s(
      "Parts added to the subject of a server-generated key's certificate: email, realm.",
      { value: ["email", "realm"], multiple: true },
    ),
    certificate_require_attestation: s(
      "Whether a CSR needs an attestation certificate that chains to a trusted CA.",
      { value: ["ignore", "verify", "require_and_verify"] },
    ),
  },
  yubikey: {
    yubikey_access_code: s(
      "Access code of the YubiKeys' configuration an enrollment client programs (read through /policy/check; no effect in the server).",
    ),
  },
};

/** Admin and user actions of token types (matched on the caller). */
const CALLER_TYPE_DEFS: Record<string, Record<string, ActionDef>> = {
  certificate: {
    certificate_trusted_Attestation_CA_path: s(
      "Directories of attestation certificate chains (root first) a CSR's attestation must chain to.",
    ),
  },
  sms: {
    sms_gateways: s("SMS gateways that may be chosen at enrollment (space separated)."),
  },
  indexedsecret: {
    indexedsecret_force_attribute: s("User attribute that becomes the secret of the token."),
  },
  daypassword: {
    daypassword_timestep: s("Time step of day password tokens (e.g. 1d, 12h)."),
    daypassword_hashlib: s("Hash algorithm of day password tokens.", {
      value: ["sha1", "sha256", "sha512"],
    }),
    daypassword_otplen: n("OTP length of day password tokens.", { value: [6, 8] }),
    daypassword_force_server_generate: b("The server generates the key of day password tokens."),
  },
  motp: {
    motp_force_server_generate: b("The server generates the key of mOTP tokens."),
  },
  applspec: {
    applspec_force_server_generate: b(
      "The server generates the password of application-specific password tokens.",
    ),
  },
};

/**
 * Types with their own `<type>_challenge_text` (privacyIDEA defines it for these
 * only; the other types' prompt is the authentication action `challenge_text`).
 */
const CHALLENGE_TEXT_TYPES = new Set([
  "email",
  "sms",
  "indexedsecret",
  "webauthn",
  "passkey",
  "push",
]);

/** Per-token-type definitions (spec 04 §3 "Dynamic"), a useful subset. */
function tokenTypeDefs(ctx: DefsContext): Record<Scope, Record<string, ActionDef>> {
  const out = Object.fromEntries(SCOPES.map((sc) => [sc, {}])) as Record<
    Scope,
    Record<string, ActionDef>
  >;
  const prefix = (type: string, name: string) => name.startsWith(type) ? name : `${type}_${name}`;
  for (const t of ctx.tokenTypes) {
    const T = t.type.toUpperCase();
    out.admin[`enroll${T}`] = b(`Admin is allowed to initialize ${t.type} tokens.`, "enrollment", [
      "tokens",
    ]);
    if (t.userEnroll !== false) {
      out.user[`enroll${T}`] = b(`User is allowed to enroll ${t.type} tokens.`, "enrollment");
    }
    out.enrollment[prefix(t.type, "max_token_per_user")] = n(
      `Maximum number of ${t.type} tokens per user.`,
    );
    out.enrollment[prefix(t.type, "max_active_token_per_user")] = n(
      `Maximum number of active ${t.type} tokens per user.`,
    );
    if (t.type === "hotp" || t.type === "totp") {
      for (const scope of ["admin", "user"] as const) {
        out[scope][prefix(t.type, "hashlib")] = s(`Hash algorithm of ${t.type} tokens.`, {
          group: t.type,
          value: ["sha1", "sha256", "sha512"],
        });
        out[scope][prefix(t.type, "otplen")] = n(`OTP length of ${t.type} tokens.`, {
          group: t.type,
          value: [6, 8],
        });
        out[scope][prefix(t.type, "force_server_generate")] = b(
          `The server generates the key of ${t.type} tokens.`,
          t.type,
        );
        out[scope][prefix(t.type, "2step")] = s(`Two-step enrollment of ${t.type} tokens.`, {
          group: t.type,
          value: ["allow", "force"],
        });
        if (t.type === "totp") {
          out[scope][prefix(t.type, "timestep")] = n("Time step of TOTP tokens.", {
            group: t.type,
            value: [30, 60],
          });
        }
      }
      out.enrollment[prefix(t.type, "2step_clientsize")] = n(
        `Client part size of two-step ${t.type} tokens.`,
      );
      out.enrollment[prefix(t.type, "2step_serversize")] = n(
        `Server part size of two-step ${t.type} tokens.`,
      );
      out.enrollment[prefix(t.type, "2step_difficulty")] = n(
        `Key derivation rounds of two-step ${t.type} tokens.`,
      );
    }
    if (["hotp", "totp", "daypassword", "push"].includes(t.type)) {
      out.enrollment[prefix(t.type, "force_app_pin")] = b(
        `The privacyIDEA Authenticator must protect ${t.type} tokens with a PIN (pin=True).`,
      );
      out.enrollment[prefix(t.type, "app_force_unlock")] = s(
        `How the privacyIDEA Authenticator must unlock ${t.type} tokens.`,
        { value: ["any", "biometric", "pin"] },
      );
    }
    if (t.type === "spass") {
      for (const scope of ["admin", "user"] as const) {
        out[scope].spass_otp_pin_minlength = n("Minimum PIN length of spass tokens.", {
          group: "spass",
        });
        out[scope].spass_otp_pin_maxlength = n("Maximum PIN length of spass tokens.", {
          group: "spass",
        });
        out[scope].spass_otp_pin_contents = s("PIN contents of spass tokens.", {
          group: "spass",
        });
      }
    }
    if (t.type === "paper") out.enrollment.papertoken_count = n("Number of OTP values printed.");
    Object.assign(out.authentication, AUTH_TYPE_DEFS[t.type] ?? {});
    Object.assign(out.enrollment, ENROLL_TYPE_DEFS[t.type] ?? {});
    for (const scope of ["admin", "user"] as const) {
      for (const [name, def] of Object.entries(CALLER_TYPE_DEFS[t.type] ?? {})) {
        out[scope][name] = { ...def, group: t.type };
      }
    }
    if (t.type === "indexedsecret") {
      out.webui.indexedsecret_preset_attribute = s(
        "User attribute the enrollment dialog offers as the secret.",
      );
    }
    if (CHALLENGE_TEXT_TYPES.has(t.type)) {
      out.authentication[prefix(t.type, "challenge_text")] = s(
        `Challenge text of ${t.type} tokens.`,
      );
    }
  }
  return out;
}

/**
 * The full definition table `{scope: {action: def}}` (static merged with dynamic and the
 * built features'); a scope without actions is left out.
 */
export function policyDefinitions(ctx: DefsContext): Record<string, Record<string, ActionDef>> {
  const base: Record<string, Record<string, ActionDef>> = {
    admin: adminDefs(),
    user: userDefs(),
    authentication: authenticationDefs(ctx),
    authorization: authorizationDefs(ctx),
    enrollment: enrollmentDefs(ctx),
    webui: webuiDefs(ctx),
    token: tokenScopeDefs(ctx),
  };
  const merge = (defs: ScopeDefs) => {
    for (const [scope, actions] of Object.entries(defs)) {
      if (Object.keys(actions).length === 0) continue;
      base[scope] = { ...(base[scope] ?? {}), ...actions };
    }
  };
  merge(tokenTypeDefs(ctx));
  for (const feature of Object.values(FEATURE_DEFS)) {
    if (feature.isBuilt) merge(feature.actions(ctx));
  }
  return base;
}

/** Sections, comparators and missing-data handling for `/policy/defs/conditions`. */
export const CONDITION_DEFS = {
  sections: {
    userinfo: {
      description: "The policy only matches if certain conditions on the user info are fulfilled.",
    },
    token: {
      description: "The policy only matches if certain conditions on the token are fulfilled.",
    },
    tokeninfo: {
      description: "The policy only matches if certain conditions on the token info are fulfilled.",
    },
    "HTTP Request header": {
      description:
        "The policy only matches if certain conditions on the HTTP request header are fulfilled.",
    },
    "HTTP Environment": {
      description:
        "The policy only matches if certain conditions on the HTTP environment are fulfilled.",
    },
    container: {
      description: "The policy only matches if certain conditions on the container are fulfilled.",
    },
    container_info: {
      description:
        "The policy only matches if certain conditions on the container info are fulfilled.",
    },
    "Request Data": {
      description:
        "The policy only matches if certain conditions on the request data are fulfilled.",
    },
  },
  comparators: {
    equals: { description: "true if the two values are equal" },
    "!equals": { description: "false if the two values are equal" },
    contains: { description: "true if the left value (a list) contains the right value" },
    "!contains": { description: "false if the left value (a list) contains the right value" },
    in: { description: "true if the left value is in the comma-separated right value" },
    "!in": { description: "false if the left value is in the comma-separated right value" },
    matches: { description: "true if the regular expression on the right matches the left value" },
    "!matches": {
      description: "false if the regular expression on the right matches the left value",
    },
    "<": { description: "true if the left integer is smaller than the right integer" },
    ">": { description: "true if the left integer is greater than the right integer" },
    date_before: { description: "true if the left date is before the right date" },
    date_after: { description: "true if the left date is after the right date" },
    date_within_last: {
      description: "true if the left date lies within the last duration (e.g. 7d, 2h)",
    },
    "!date_within_last": {
      description: "false if the left date lies within the last duration (e.g. 7d, 2h)",
    },
    string_contains: { description: "true if the left string contains the right string" },
    "!string_contains": { description: "false if the left string contains the right string" },
  },
  handle_missing_data: {
    raise_error: {
      display_value: "Raise an error",
      description: "Raise an error if the data is missing.",
    },
    condition_is_true: {
      display_value: "Condition is true",
      description: "The condition is treated as fulfilled if the data is missing.",
    },
    condition_is_false: {
      display_value: "Condition is false",
      description: "The condition is treated as not fulfilled if the data is missing.",
    },
  },
} as const;
