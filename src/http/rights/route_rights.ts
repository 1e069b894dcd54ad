/**
 * The rights table: for every route of the app, who may call it and which
 * policy action it needs. {@link guard} in `guard.ts` reads it for every
 * request; `tests/http/rights/route_rights_test.ts` walks the app's routes against
 * it, so no route exists without an entry. A route missing here is refused
 * (fail closed).
 *
 * @module
 */
import type { Params } from "../context.ts";

/** What a request acts on; resolved before the rights decision (see `guard.ts`). */
export type RouteObjects =
  /** Nothing realm-bound (configuration, lists filtered by their own realm rule). */
  | "none"
  /** Tokens: the serial(s) of the request (path first), the user, the `realm` tokens go to. */
  | "token"
  /** A user of a realm: `user` (+ `realm`, `resolver`), or a user of `resolver`. */
  | "user"
  /**
   * A token container: the path's `container_serial`, else the parameter (404 when unknown);
   * an admin's right must reach its owner or one of its realms, a user must own it.
   */
  | "container";

/** How one route is guarded. */
export interface RouteRule {
  /** `public`: no JWT; `admin`: an admin JWT; `any`: an admin or a user JWT. */
  roles: "public" | "admin" | "any";
  /**
   * The policy action (admin scope for admins, user scope for users), or how
   * it follows from the parameters; absent: the role is all it takes (`why` says why).
   */
  action?: string | ((params: Params, method: string) => string);
  /** The action is checked for admins only: a user acts on their own data. */
  isAdminActionOnly?: boolean;
  /** What the request acts on (default `none`). */
  objects?: RouteObjects;
  /**
   * The parameters that name the request's tokens instead of `serial` (`from` and `to` of a
   * copy): each token found is an object of the request, so the right must reach each one.
   */
  serialParams?: readonly string[];
  /** `user` is a search pattern of a list: resolved when it names one user, never required. */
  isUserFilter?: boolean;
  /** `user` is not a Tessera user (e.g. the login on a machine). */
  ignoresUserParam?: boolean;
  /** The denial when a user-role caller names another user. */
  otherUserMessage?: string;
  /** `user` is a login in `resolver` (the user store endpoints), not a realm user. */
  namesUserByResolver?: boolean;
  /**
   * A token action that, naming a user and no serial, acts on all of that user's tokens:
   * the rights step loads them (`userTokens`) once the request is allowed.
   */
  actsOnUserTokens?: boolean;
  /** The request creates a token: without a user or `realm`, it lands in no realm. */
  createsToken?: boolean;
  /** Realms the request moves a token into (`/token/realm`): each must be allowed. */
  movesTo?: (params: Params) => string[];
  /** Replaces the default denial message. */
  message?: (role: "admin" | "user") => string;
  /** A container route whose `serial` names tokens too: each must be allowed as well. */
  containerTokens?: boolean;
  /** The request creates a container: none is named; the `user`/`realm` given decide. */
  createsContainer?: boolean;
  /**
   * Assigning a container: a user may take one without owner, and an admin's right is matched
   * with the current owner only when there is one (privacyIDEA's container_assign_user).
   */
  isContainerAssign?: boolean;
  /** Why a non-public route checks no policy action. */
  why?: string;
}

const enrollType = (p: Params) =>
  `enroll${(typeof p.type === "string" && p.type !== "" ? p.type : "hotp").toUpperCase()}`;

const readOrWrite = (read: string, write: string) => (_p: Params, method: string) =>
  method === "GET" ? read : write;

/** `realms` of `/token/realm/<serial>`: a list or a CSV string. */
function realmsParam(p: Params): string[] {
  const raw = p.realms;
  const list = Array.isArray(raw) ? raw.map((r) => String(r)) : String(raw ?? "").split(",");
  return list.map((r) => r.trim().toLowerCase()).filter((r) => r !== "");
}

const YUBICO_PROTOCOL = "yubico-pam and other Yubico validation clients have no JWT; a client is " +
  "known by its API id (system config yubikey.apiid.<id>), the OTP is the credential";
const TOKEN_ANY = { roles: "any", objects: "token" } as const;
// a serial, else every token of the user named
const TOKENS_ANY = { ...TOKEN_ANY, actsOnUserTokens: true } as const;
const ADMIN = { roles: "admin" } as const;
const PUBLIC = { roles: "public" } as const;
const CONTAINER = { roles: "any", objects: "container" } as const;
// a container route whose `serial` names tokens: each is checked with the same action
const CONTAINER_TOKENS = { ...CONTAINER, containerTokens: true } as const;
const CONTAINER_TYPE_LISTS = "the container types, their token types and states: fixed lists, " +
  "no configuration";
// `user` on the machine endpoints is the login on the machine, not a Tessera user
const MACHINE_TOKEN = {
  ...ADMIN,
  objects: "token",
  ignoresUserParam: true,
  action: "manage_machine_tokens",
} as const;

/**
 * `tokenrealms` of `/token/load`: split on "," without trimming (privacyIDEA's
 * quirk), lower-cased. The guard checks and the handler uses this one list.
 */
export function tokenRealmsParam(p: Params): string[] {
  const raw = p.tokenrealms;
  const list = Array.isArray(raw) ? raw.map(String) : typeof raw === "string" ? raw.split(",") : [];
  return list.map((r) => r.toLowerCase()).filter((r) => r !== "");
}

// a token file lands in the `tokenrealms` given (each must be allowed), else in no realm
const TOKEN_LOAD: RouteRule = {
  ...ADMIN,
  action: "importtokens",
  createsToken: true,
  movesTo: tokenRealmsParam,
  message: () => "Admin actions are defined, but you are not allowed to upload token files.",
};

// privacyIDEA asks for an admin and no policy action on these (api/periodictask.py)
const PERIODIC_TASK_LISTS = "the names of the task modules and nodes and the options a module " +
  "takes: fixed lists, no configuration";

const PUSH_PROTOCOL = "the privacyIDEA Authenticator app has no login (privacyIDEA: no " +
  "authentication): the enrolment's second step needs the token's one-time enrolment credential, " +
  "polls and answers the app's RSA signature with the key it registered; refusals change nothing";
const U2F_FACETS = "the U2F trusted facet list: browsers fetch it anonymously";
const TIQR_PROTOCOL = "the TiQR app has no login (privacyIDEA: no authentication): metadata and " +
  "enrolment need the token's one-time enrolment session, an authentication the transaction id " +
  "of an open challenge and the OCRA response computed with the token's secret; refusals change " +
  "nothing but a wrong response's fail counter";
/** `rollover` in Python truthiness, as the registration itself reads it (container/smartphone.ts). */
function isRolloverRequest(p: Params): boolean {
  const v = p.rollover;
  return v !== undefined && v !== null && v !== false && v !== "" && v !== 0;
}

const CONTAINER_APP_PROTOCOL = "the privacyIDEA Authenticator app has no login (privacyIDEA: " +
  "no authentication): finalize needs the registration nonce from the QR code an admin or the " +
  "owner made, the other calls a fresh single-use nonce signed with the key the app registered; " +
  "a challenge itself reveals nothing and only a registered container gets one; refusals " +
  "change nothing";
const CRL_PUBLIC = "a CRL is public by design (RFC 5280 distribution points are fetched without " +
  "credentials); it names revoked serials only";

const REGISTER_PUBLIC = "a new user has no login: nothing happens unless a register policy " +
  "names the resolver, realm and SMTP server; the code goes to the address given";
const RECOVER_PUBLIC = "a user who forgot the password has no login: the user-scope right " +
  "password_reset of the user named gates it; the code goes only to the user's own address";

/** Route key: `METHOD /path` as registered (path without a trailing slash). */
export const ROUTE_RIGHTS: Readonly<Record<string, RouteRule>> = {
  // --- authentication and health: public
  "POST /auth": PUBLIC,
  "GET /auth/rights": { roles: "any", why: "the caller's own enrollable types" },
  "GET /healthz": PUBLIC,
  "GET /healthz/livez": PUBLIC,
  "GET /healthz/readyz": PUBLIC,
  "GET /healthz/startupz": PUBLIC,
  "GET /healthz/resolversz": {
    ...PUBLIC,
    why: "an anonymous probe gets the overall status; resolver names only with an admin JWT, " +
      "checked by the handler (and require_auth_for_resolver_details refuses a bad one)",
  },
  "GET /openapi.json": PUBLIC,
  "GET /metrics": {
    roles: "public",
    why: "answers an admin JWT or the configured metrics.token itself (a Prometheus scraper " +
      "has no JWT); 404 while metrics.enabled is off",
  },
  // the web interface's static files, public like a login page: the UI then calls the API
  // with its session's JWT, as any client does
  "GET /": PUBLIC,
  "GET /ui/:file": PUBLIC,
  // the login page's configuration, public as in privacyIDEA: nobody is logged in yet; it
  // reveals only what the webui policies put on a login page (docs/webui.md)
  "GET /config": PUBLIC,
  // --- validation: public (the credentials are the request), except triggering challenges
  "GET /validate/check": PUBLIC,
  "POST /validate/check": PUBLIC,
  "GET /validate/radiuscheck": PUBLIC,
  "POST /validate/radiuscheck": PUBLIC,
  "GET /validate/samlcheck": PUBLIC,
  "POST /validate/samlcheck": PUBLIC,
  "GET /validate/polltransaction": PUBLIC,
  "GET /validate/polltransaction/:transaction_id": PUBLIC,
  "POST /validate/offlinerefill": PUBLIC,
  "GET /validate/initialize": {
    ...PUBLIC,
    why: "the first step of a passkey login: the user is not known until the assertion",
  },
  "POST /validate/initialize": {
    ...PUBLIC,
    why: "the first step of a passkey login: the user is not known until the assertion",
  },
  // the Yubico validation protocol (spec 11 §6.4): clients are the system config's API ids, an
  // OTP is checked by the /validate/check engine (fail counter, locks, one success per OTP)
  "GET /ttype/yubikey": { ...PUBLIC, why: YUBICO_PROTOCOL },
  "POST /ttype/yubikey": { ...PUBLIC, why: YUBICO_PROTOCOL },
  "GET /ttype/push": { ...PUBLIC, why: PUSH_PROTOCOL },
  "POST /ttype/push": { ...PUBLIC, why: PUSH_PROTOCOL },
  "GET /ttype/tiqr": { ...PUBLIC, why: TIQR_PROTOCOL },
  "POST /ttype/tiqr": { ...PUBLIC, why: TIQR_PROTOCOL },
  // the FIDO trusted facet list a browser fetches without credentials (config and policy only)
  "GET /ttype/u2f": { ...PUBLIC, why: U2F_FACETS },
  "POST /ttype/u2f": { ...PUBLIC, why: U2F_FACETS },
  // the smartphone container's app (spec 13 §2.7-2.11): its signature is the authentication
  "POST /container/register/finalize": { ...PUBLIC, why: CONTAINER_APP_PROTOCOL },
  "POST /container/challenge": { ...PUBLIC, why: CONTAINER_APP_PROTOCOL },
  "POST /container/synchronize": { ...PUBLIC, why: CONTAINER_APP_PROTOCOL },
  "POST /container/register/terminate/client": { ...PUBLIC, why: CONTAINER_APP_PROTOCOL },
  "POST /container/rollover": { ...PUBLIC, why: CONTAINER_APP_PROTOCOL },
  // starting a registration (or with `rollover` a move to a new device) and ending it: the
  // right must reach the container's owner or realms, a user acts on their own container
  "POST /container/register/initialize": {
    ...CONTAINER,
    action: (p) => isRolloverRequest(p) ? "container_rollover" : "container_register",
  },
  "POST /container/register/:container_serial/terminate": {
    ...CONTAINER,
    action: "container_unregister",
  },
  "GET /validate/triggerchallenge": { ...ADMIN, action: "triggerchallenge", objects: "token" },
  // self-registration and password recovery: public as in privacyIDEA (nobody is logged in
  // yet); the register policies and the user right password_reset decide (src/domain/register)
  "GET /register": { ...PUBLIC, why: REGISTER_PUBLIC },
  "POST /register": { ...PUBLIC, why: REGISTER_PUBLIC },
  "POST /recover": { ...PUBLIC, why: RECOVER_PUBLIC },
  "POST /recover/reset": { ...PUBLIC, why: RECOVER_PUBLIC },
  "POST /validate/triggerchallenge": { ...ADMIN, action: "triggerchallenge", objects: "token" },
  // --- tokens
  "POST /token/init": {
    ...TOKEN_ANY,
    action: enrollType,
    createsToken: true,
    message: (role) =>
      `${
        role === "admin" ? "Admin" : "User"
      } actions are defined, but you are not allowed to enroll this token type!`,
  },
  "GET /token": {
    roles: "any",
    objects: "user",
    isUserFilter: true,
    action: "tokenlist",
    isAdminActionOnly: true,
  },
  "POST /token/assign": { ...TOKEN_ANY, action: "assign" },
  "POST /token/unassign": { ...TOKENS_ANY, action: "unassign" },
  "POST /token/enable": { ...TOKENS_ANY, action: "enable" },
  "POST /token/enable/:serial": { ...TOKENS_ANY, action: "enable" },
  "POST /token/disable": { ...TOKENS_ANY, action: "disable" },
  "POST /token/disable/:serial": { ...TOKENS_ANY, action: "disable" },
  "POST /token/revoke": { ...TOKENS_ANY, action: "revoke" },
  "POST /token/revoke/:serial": { ...TOKENS_ANY, action: "revoke" },
  "POST /token/reset": { ...TOKENS_ANY, action: "reset" },
  "POST /token/reset/:serial": { ...TOKENS_ANY, action: "reset" },
  "POST /token/resync": { ...TOKENS_ANY, action: "resync" },
  "POST /token/resync/:serial": { ...TOKENS_ANY, action: "resync" },
  "POST /token/setpin": { ...TOKENS_ANY, action: "setpin" },
  "POST /token/setpin/:serial": { ...TOKENS_ANY, action: "setpin" },
  "POST /token/setrandompin": { ...TOKENS_ANY, action: "setrandompin" },
  "POST /token/setrandompin/:serial": { ...TOKENS_ANY, action: "setrandompin" },
  "POST /token/description": { ...TOKENS_ANY, action: "setdescription" },
  "POST /token/description/:serial": { ...TOKENS_ANY, action: "setdescription" },
  "POST /token/set": { ...ADMIN, objects: "token", actsOnUserTokens: true, action: "set" },
  "POST /token/set/:serial": { ...ADMIN, objects: "token", actsOnUserTokens: true, action: "set" },
  "POST /token/realm/:serial": {
    ...ADMIN,
    objects: "token",
    action: "tokenrealms",
    movesTo: realmsParam,
  },
  "POST /token/info/:serial/:key": { ...ADMIN, objects: "token", action: "settokeninfo" },
  "DELETE /token/info/:serial/:key": { ...ADMIN, objects: "token", action: "settokeninfo" },
  "GET /token/challenges": { ...ADMIN, action: "getchallenges" },
  // privacyIDEA: admin JWT and no policy action (api/token.py); only expired challenges go,
  // which can answer nothing any more
  "DELETE /token/challenges/expired": {
    ...ADMIN,
    why: "privacyIDEA asks for an admin and no policy action; it deletes only expired " +
      "challenges, which no answer can use",
  },
  "GET /token/challenges/:serial": { ...ADMIN, objects: "token", action: "getchallenges" },
  "DELETE /token": { ...TOKENS_ANY, action: "delete" },
  "DELETE /token/:serial": { ...TOKENS_ANY, action: "delete" },
  "POST /token/lost/:serial": { ...TOKEN_ANY, action: "losttoken" },
  // admins only (privacyIDEA's admin_required); both tokens (from and to) are the request's
  // objects, so the right must reach each token's realms
  "POST /token/copypin": {
    ...ADMIN,
    objects: "token",
    serialParams: ["from", "to"],
    action: "copytokenpin",
  },
  "POST /token/copyuser": {
    ...ADMIN,
    objects: "token",
    serialParams: ["from", "to"],
    action: "copytokenuser",
  },
  "GET /token/getserial/:otp": { ...ADMIN, action: "getserial" },
  "POST /token/load/:filename": TOKEN_LOAD,
  "POST /token/load": TOKEN_LOAD,
  // --- users
  "GET /user": { roles: "any", objects: "user", isUserFilter: true, action: "userlist" },
  "POST /user": { ...ADMIN, objects: "user", namesUserByResolver: true, action: "adduser" },
  "PUT /user": { roles: "any", objects: "user", namesUserByResolver: true, action: "updateuser" },
  "DELETE /user/:resolver/:user": {
    ...ADMIN,
    objects: "user",
    namesUserByResolver: true,
    action: "deleteuser",
  },
  "POST /user/attribute": {
    roles: "any",
    objects: "user",
    why: "set_custom_user_attributes decides per key and value (domain/user)",
  },
  "GET /user/attribute": {
    roles: "any",
    objects: "user",
    why: "a user's custom attributes; the admin's policies must reach the user's realm",
  },
  "DELETE /user/attribute/:key/:user/:realm": {
    roles: "any",
    objects: "user",
    otherUserMessage: "User is not allowed to delete attributes of other users.",
    why: "delete_custom_user_attributes decides per key (domain/user)",
  },
  "GET /user/editable_attributes": {
    roles: "any",
    objects: "user",
    why: "what the caller may set; the admin's policies must reach the user's realm",
  },
  // --- realms, resolvers, configuration: admins
  "GET /realm": { ...ADMIN, why: "filtered to the realms of the admin's policies" },
  "GET /realm/superuser": { ...ADMIN, why: "configuration file values, no secrets" },
  "POST /realm/:realm": { ...ADMIN, action: "resolverwrite" },
  "POST /realm/:realm/node/:node": { ...ADMIN, action: "resolverwrite" },
  "DELETE /realm/:realm": { ...ADMIN, action: "resolverdelete" },
  "GET /defaultrealm": { ...ADMIN, why: "the default realm's name and resolvers" },
  "POST /defaultrealm/:realm": { ...ADMIN, action: "resolverwrite" },
  "DELETE /defaultrealm": { ...ADMIN, action: "resolverdelete" },
  "GET /resolver": { ...ADMIN, action: "resolverread" },
  "POST /resolver/test": { ...ADMIN, action: "resolverwrite" },
  "GET /resolver/:type/default": { ...ADMIN, action: "resolverread" },
  "GET /resolver/:name": { ...ADMIN, action: "resolverread" },
  "POST /resolver/:name": { ...ADMIN, action: "resolverwrite" },
  "DELETE /resolver/:name": { ...ADMIN, action: "resolverdelete" },
  "GET /system": { ...ADMIN, action: "configread" },
  "POST /system/setConfig": { ...ADMIN, action: "configwrite" },
  "GET /system/:key": { ...ADMIN, action: "configread" },
  "DELETE /system/:key": { ...ADMIN, action: "configdelete" },
  // privacyIDEA's admin_required and nothing more (api/system.py): no policy action, any realm
  "DELETE /system/user-cache": {
    ...ADMIN,
    why: "privacyIDEA asks for an admin and no policy action; emptying the user cache of every " +
      "realm reveals and changes no user, it only makes the next lookups ask the user stores",
  },
  "POST /system/setDefault": { ...ADMIN, action: "configwrite" },
  "POST /system/test/:tokentype": { ...ADMIN, action: "configwrite" },
  "GET /system/random": { ...ADMIN, action: "getrandom" },
  // every resolver, realm, policy and setting (secrets censored): admins with the right only
  "GET /system/documentation": { ...ADMIN, action: "system_documentation" },
  "GET /system/nodes": {
    ...ADMIN,
    why: "privacyIDEA asks for an admin and no policy action: the node's name, no realm data",
  },
  // admins and users who may enrol the type the names are for (privacyIDEA: check_base_action)
  "GET /system/names/radius": { roles: "any", action: "enrollRADIUS" },
  "GET /system/names/caconnector": { roles: "any", action: "enrollCERTIFICATE" },
  ...Object.fromEntries(
    [
      "GET /system/hsm",
      "POST /system/hsm",
    ].map((route) => [route, { ...ADMIN, why: "refused for every admin (not in Tessera)" }]),
  ),
  "GET /system/gpgkeys": {
    roles: "any",
    why: "the public import keys vendors encrypt token files to, no secret and no realm data; " +
      "privacyIDEA asks for a login only",
  },
  // a user reads the rows about themselves (privacyIDEA's user right auditlog)
  "GET /audit": { roles: "any", action: "auditlog" },
  // the log as CSV: admins only (privacyIDEA's admin_required), rows of the realms their auditlog
  // policies grant and their own actions, as GET /audit/
  "GET /audit/:filename": { ...ADMIN, action: "auditlog_download" },
  "GET /application": {
    ...ADMIN,
    why:
      "the machine applications' options and the service id names offered for ssh (privacyIDEA " +
      "asks for an admin only); no realm data",
  },
  // --- policies
  "GET /policy/defs": { ...ADMIN, action: "policyread" },
  "GET /policy/defs/conditions": { ...ADMIN, action: "policyread" },
  "GET /policy/defs/pinodes": { ...ADMIN, action: "policyread" },
  "GET /policy/defs/:scope": { ...ADMIN, action: "policyread" },
  "GET /policy/check": { ...ADMIN, action: "policyread" },
  "GET /policy/export/:fn": { ...ADMIN, action: "policyread" },
  "POST /policy/import/:fn": { ...ADMIN, action: "policywrite" },
  "POST /policy/enable/:name": { ...ADMIN, action: "policywrite" },
  "POST /policy/disable/:name": { ...ADMIN, action: "policywrite" },
  "GET /policy": { ...ADMIN, action: "policyread" },
  "GET /policy/:name": { ...ADMIN, action: "policyread" },
  "POST /policy/:name": { ...ADMIN, action: "policywrite" },
  "PATCH /policy/:name": { ...ADMIN, action: "policywrite" },
  "DELETE /policy/:name": { ...ADMIN, action: "policydelete" },
  // --- events
  ...Object.fromEntries(
    [
      "GET /event",
      "GET /event/available",
      "GET /event/handlermodules",
      "GET /event/actions/:module",
      "GET /event/conditions/:module",
      "GET /event/positions/:module",
      "GET /event/defaults/:module",
      "POST /event",
      "POST /event/enable/:id",
      "POST /event/disable/:id",
      "GET /event/:id",
      "DELETE /event/:id",
    ].map((
      k,
    ) => [k, { ...ADMIN, action: readOrWrite("eventhandling_read", "eventhandling_write") }]),
  ),
  // --- SMTP and RADIUS servers
  ...Object.fromEntries(
    [
      "GET /smtpserver",
      "POST /smtpserver/send_test_email",
      "GET /smtpserver/:identifier",
      "POST /smtpserver/:identifier",
      "DELETE /smtpserver/:identifier",
    ].map((k) => [k, { ...ADMIN, action: readOrWrite("smtpserver_read", "smtpserver_write") }]),
  ),
  "GET /radiusserver": { ...ADMIN, action: "radiusserver_read" },
  "POST /radiusserver/test_request": { ...ADMIN, action: "radiusserver_write" },
  "POST /radiusserver/:identifier": { ...ADMIN, action: "radiusserver_write" },
  "DELETE /radiusserver/:identifier": { ...ADMIN, action: "radiusserver_write" },
  // --- remote privacyIDEA servers (Federation handler)
  "GET /privacyideaserver": { ...ADMIN, action: "privacyideaserver_read" },
  "POST /privacyideaserver/test_request": { ...ADMIN, action: "privacyideaserver_write" },
  "POST /privacyideaserver/:identifier": { ...ADMIN, action: "privacyideaserver_write" },
  "DELETE /privacyideaserver/:identifier": { ...ADMIN, action: "privacyideaserver_write" },
  // --- SMS gateways (spec 11 §3)
  "GET /smsgateway": { ...ADMIN, action: "smsgateway_read" },
  "GET /smsgateway/providers": { ...ADMIN, action: "smsgateway_read" },
  "GET /smsgateway/:gwid": { ...ADMIN, action: "smsgateway_read" },
  "POST /smsgateway": { ...ADMIN, action: "smsgateway_write" },
  "DELETE /smsgateway/option/:gwid/:key": { ...ADMIN, action: "smsgateway_write" },
  "DELETE /smsgateway/:identifier": { ...ADMIN, action: "smsgateway_write" },
  // --- CA connectors (certificate tokens): admins only, as privacyIDEA's blueprint
  "GET /caconnector": { ...ADMIN, action: "caconnectorread" },
  "GET /caconnector/specific/:catype": { ...ADMIN, action: "caconnectorread" },
  "GET /caconnector/:name": { ...ADMIN, action: "caconnectorread" },
  "POST /caconnector/:name": { ...ADMIN, action: "caconnectorwrite" },
  "DELETE /caconnector/:name": { ...ADMIN, action: "caconnectordelete" },
  // a CRL distribution point: relying parties fetch it without a JWT; it is signed, public data
  "GET /ca/:name/crl": { ...PUBLIC, why: CRL_PUBLIC },
  "GET /ca/:name/crl.pem": { ...PUBLIC, why: CRL_PUBLIC },
  // --- the web interface's dashboard: counts only, of the tokens the admin's token list shows
  "GET /dashboard/tokens": { ...ADMIN, action: "tokenlist" },
  // --- subscriptions
  "GET /subscriptions": { ...ADMIN, action: "managesubscription" },
  "POST /subscriptions": { ...ADMIN, action: "managesubscription" },
  "GET /subscriptions/:application": { ...ADMIN, action: "managesubscription" },
  "DELETE /subscriptions/:application": { ...ADMIN, action: "managesubscription" },
  // --- machines
  "GET /machineresolver": { ...ADMIN, action: "mresolverread" },
  "POST /machineresolver/test": { ...ADMIN, action: "mresolverwrite" },
  "GET /machineresolver/:name": { ...ADMIN, action: "mresolverread" },
  "POST /machineresolver/:name": { ...ADMIN, action: "mresolverwrite" },
  "DELETE /machineresolver/:name": { ...ADMIN, action: "mresolverdelete" },
  "GET /machine": { ...ADMIN, action: "machinelist" },
  "POST /machine/token": { ...MACHINE_TOKEN },
  "GET /machine/token": { ...ADMIN, action: "manage_machine_tokens" },
  "DELETE /machine/token/:serial/:machineid/:resolver/:application": { ...MACHINE_TOKEN },
  "DELETE /machine/token/:serial/:application/:mtid": { ...MACHINE_TOKEN },
  "POST /machine/tokenoption": { ...MACHINE_TOKEN },
  "GET /machine/authitem": { ...ADMIN, action: "fetch_authentication_items" },
  "GET /machine/authitem/:application": { ...ADMIN, action: "fetch_authentication_items" },
  // --- periodic tasks and their statistics (admins only in privacyIDEA; no realm to scope)
  "GET /periodictask/taskmodules": { ...ADMIN, why: PERIODIC_TASK_LISTS },
  "GET /periodictask/nodes": { ...ADMIN, why: PERIODIC_TASK_LISTS },
  "GET /periodictask/options/:module": { ...ADMIN, why: PERIODIC_TASK_LISTS },
  "GET /periodictask": { ...ADMIN, action: "periodictask_read" },
  "GET /periodictask/:id": { ...ADMIN, action: "periodictask_read" },
  "POST /periodictask": { ...ADMIN, action: "periodictask_write" },
  "POST /periodictask/enable/:id": { ...ADMIN, action: "periodictask_write" },
  "POST /periodictask/disable/:id": { ...ADMIN, action: "periodictask_write" },
  "DELETE /periodictask/:id": { ...ADMIN, action: "periodictask_write" },
  // token groups (spec 14 §12): admins only, as privacyIDEA (admin_required); a group is no
  // realm object, a token's groups are changed under the token's realm rules
  "GET /tokengroup": { ...ADMIN, action: "tokengroup_list" },
  "GET /tokengroup/:name": { ...ADMIN, action: "tokengroup_list" },
  "POST /tokengroup/:name": { ...ADMIN, action: "tokengroup_add" },
  "DELETE /tokengroup/:name": { ...ADMIN, action: "tokengroup_delete" },
  // service IDs (spec 14 §13): admins only, as privacyIDEA (admin_required); no realm objects
  // the clients that authenticated users (from the audit): admins with clienttype
  "GET /client": { ...ADMIN, action: "clienttype" },
  // the web interface's news: any logged-in admin or user, as privacyIDEA; no realm objects,
  // what is fetched and how old it may be come from webui policies only
  "GET /info/rss": { roles: "any", why: "news feeds chosen by webui policies; no realm objects" },
  "GET /serviceid": { ...ADMIN, action: "serviceid_list" },
  "GET /serviceid/:name": { ...ADMIN, action: "serviceid_list" },
  "POST /serviceid/:name": { ...ADMIN, action: "serviceid_add" },
  "DELETE /serviceid/:name": { ...ADMIN, action: "serviceid_delete" },
  "POST /token/group/:serial/:group": { ...ADMIN, objects: "token", action: "tokengroups" },
  "POST /token/group/:serial": { ...ADMIN, objects: "token", action: "tokengroups" },
  "DELETE /token/group/:serial/:group": { ...ADMIN, objects: "token", action: "tokengroups" },
  "GET /monitoring": { ...ADMIN, action: "statistics_read" },
  "GET /monitoring/:key": { ...ADMIN, action: "statistics_read" },
  "GET /monitoring/:key/last": { ...ADMIN, action: "statistics_read" },
  "DELETE /monitoring/:key": { ...ADMIN, action: "statistics_delete" },
  // token containers (spec 13 §2.3-2.5): an admin's right must reach the container's owner or
  // one of its realms (and each token named); a user acts only on their own container
  "GET /container": {
    roles: "any",
    objects: "user",
    isUserFilter: true,
    action: "container_list",
  },
  "GET /container/types": { roles: "any", why: CONTAINER_TYPE_LISTS },
  "GET /container/tokentypes": { roles: "any", why: CONTAINER_TYPE_LISTS },
  "GET /container/statetypes": { roles: "any", why: CONTAINER_TYPE_LISTS },
  "GET /container/template/tokentypes": { roles: "any", why: CONTAINER_TYPE_LISTS },
  "POST /container/init": { ...CONTAINER, createsContainer: true, action: "container_create" },
  "DELETE /container/:container_serial": { ...CONTAINER, action: "container_delete" },
  "POST /container/:container_serial/assign": {
    ...CONTAINER,
    isContainerAssign: true,
    action: "container_assign_user",
  },
  "POST /container/:container_serial/unassign": {
    ...CONTAINER,
    action: "container_unassign_user",
  },
  "POST /container/:container_serial/add": { ...CONTAINER_TOKENS, action: "container_add_token" },
  "POST /container/:container_serial/addall": {
    ...CONTAINER_TOKENS,
    action: "container_add_token",
  },
  "POST /container/:container_serial/remove": {
    ...CONTAINER_TOKENS,
    action: "container_remove_token",
  },
  "POST /container/:container_serial/removeall": {
    ...CONTAINER_TOKENS,
    action: "container_remove_token",
  },
  "POST /container/:container_serial/description": {
    ...CONTAINER,
    action: "container_description",
  },
  "POST /container/:container_serial/states": { ...CONTAINER, action: "container_state" },
  "POST /container/:container_serial/realms": {
    ...ADMIN,
    objects: "container",
    action: "container_realms",
  },
  "POST /container/:container_serial/info/:key": {
    ...ADMIN,
    objects: "container",
    action: "container_info",
  },
  "DELETE /container/:container_serial/info/delete/:key": {
    ...ADMIN,
    objects: "container",
    action: "container_info",
  },
  "GET /container/templates": { roles: "any", action: "container_template_list" },
  "POST /container/:container_type/template/:template_name": {
    roles: "any",
    action: "container_template_create",
  },
  "DELETE /container/template/:template_name": {
    roles: "any",
    action: "container_template_delete",
  },
  "GET /container/template/:template_name/compare": {
    roles: "any",
    objects: "user",
    isUserFilter: true,
    action: "container_template_list",
  },
};

/** The table key of a registered route (`method`, `path` as in `app.routes`). */
export function routeKey(method: string, path: string): string {
  return `${method} ${path.length > 1 ? path.replace(/\/+$/, "") : path}`;
}
