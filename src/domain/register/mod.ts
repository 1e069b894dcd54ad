/**
 * Self-registration (`/register`) and password recovery by email (`/recover`), as privacyIDEA
 * 3.12 does them (spec 14 §14), on the register-scope policies and the user-scope right
 * `password_reset`. Both are reached without a JWT: the policies decide whether they work at
 * all, and every refusal leaves the user store and the tokens as they were.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  AppError,
  ConfigAdminError,
  HttpError,
  httpStatusOf,
  missingParameter,
  ParameterError,
  RegistrationError,
  UserError,
} from "../../errors.ts";
import { hashPin, verifyPin } from "../../lib/crypto.ts";
import { randomString } from "../../lib/random.ts";
import {
  checkUserRight,
  type ConditionData,
  loadPolicySet,
  type PolicySet,
  unescapeText,
  userAgentName,
} from "../policy/mod.ts";
import { listRealms, realmsOfResolver } from "../realm/mod.ts";
import { getResolver, listResolvers } from "../resolver/mod.ts";
import { sendMail } from "../smtp/mod.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import { deleteTokens, getTokenBySerial, initToken } from "../token/mod.ts";
import {
  createUser,
  deleteUser,
  getDefaultRealm,
  getUserAttributes,
  resolveUser,
  splitUser,
  updateUser,
  type UserRef,
} from "../user/mod.ts";
import * as store from "./password_reset_store.ts";

/** The request facts the register and user policies are matched on (no parameters). */
export interface AnonymousRequest {
  client: string;
  userAgent: string;
  conditions: ConditionData;
}

const REGISTRATION_SUBJECT = "Your privacyIDEA registration";
const DEFAULT_BODY = "\nYour registration token is {regkey}.\n";
const RECOVERY_SUBJECT = "Your password reset";
const RECOVERY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const RECOVERY_CODE_LENGTH = 24;
const RECOVERY_SECONDS = 3600;
/** Outstanding codes kept per user: a new request beyond this drops the oldest. */
const RECOVERY_CODES_KEPT = 5;
const PASSWORD_RESET_DENIED = "User actions are defined, but this action is not allowed!";
const EMAIL_MISMATCH = "The email does not match the users email.";
const MAX_FIELD = 255;
const MAX_PASSWORD = 1024;
// one address, no whitespace or header syntax: it becomes an SMTP recipient
const EMAIL_REGEXP = /^[^\s@<>,;"]+@[^\s@<>,;"]+$/;

function str(params: Record<string, unknown>, name: string): string | undefined {
  const v = params[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new ParameterError(`Cannot parse parameter "${name}": expected a string`);
}

function required(params: Record<string, unknown>, name: string, max = MAX_FIELD): string {
  const v = str(params, name);
  if (v === undefined || v === "") throw missingParameter(name);
  return limited(name, v, max);
}

function optional(params: Record<string, unknown>, name: string): string | undefined {
  const v = str(params, name);
  return v === undefined || v === "" ? undefined : limited(name, v, MAX_FIELD);
}

function limited(name: string, value: string, max: number): string {
  if (value.length > max || value.includes("\0")) {
    throw new ParameterError(
      `Cannot parse parameter "${name}": longer than ${max} characters or a NUL byte`,
    );
  }
  return value;
}

/** The register-scope policies of a request, matched as privacyIDEA's `Match.action_only`. */
function registerMatcher(set: PolicySet, req: AnonymousRequest) {
  return set.matcher({
    scope: "register",
    client: req.client || null,
    userAgent: userAgentName(req.userAgent),
    conditions: req.conditions,
  });
}

/** `GET /register`: whether a register policy names the resolver to register in. */
export async function isRegistrationAllowed(deps: Deps, req: AnonymousRequest): Promise<boolean> {
  const set = await loadPolicySet(deps);
  if (!set.hasActivePolicies("register")) return false;
  return (await registerMatcher(set, req).values("resolver", { unique: true })).values.length > 0;
}

/**
 * `requiredemail`: each value is `/<regular expression>/`; the address must match one of them
 * somewhere (Python's `re.findall`, not anchored). A pattern JavaScript cannot compile matches
 * nothing (privacyIDEA answers 500).
 */
function isEmailAllowed(deps: Deps, patterns: readonly string[], email: string): boolean {
  for (const value of patterns) {
    const source = value.replace(/^\/+|\/+$/g, "");
    try {
      if (new RegExp(source).test(email)) return true;
    } catch {
      deps.log.warn("A requiredemail policy value is no regular expression", { value });
    }
  }
  return false;
}

/**
 * The registration mail's body with `{regkey}` filled in, as Python's `str.format` with one
 * field: `{{` and `}}` are braces; any other field is refused before anything is created.
 */
function formatBody(template: string, regkey: string): string {
  let out = "";
  for (let i = 0; i < template.length; i++) {
    const ch = template[i];
    if ((ch === "{" || ch === "}") && template[i + 1] === ch) {
      out += ch;
      i++;
    } else if (ch === "{") {
      const end = template.indexOf("}", i);
      const field = end < 0 ? template.slice(i) : template.slice(i, end + 1);
      if (field !== "{regkey}") {
        throw new RegistrationError(
          `Cannot use the policy "registration_body": unknown field "${field.slice(0, 40)}"`,
        );
      }
      out += regkey;
      i = end;
    } else if (ch === "}") {
      throw new RegistrationError('Cannot use the policy "registration_body": single "}"');
    } else out += ch;
  }
  return out;
}

/** The registration input of `POST /register`. */
export interface Registration {
  username: string;
  surname: string;
  givenname: string;
  email: string;
  password: string;
  mobile?: string;
  phone?: string;
}

/**
 * `POST /register`: creates the user in the register policies' resolver and realm, enrols a
 * `registration` token for it and mails its code through the policies' SMTP server. Returns
 * the user created (login, realm, resolver, uid). A failure after the user was created takes
 * the token and the user away again.
 */
export async function registerUser(
  deps: Deps,
  params: Record<string, unknown>,
  req: AnonymousRequest,
): Promise<UserRef> {
  const set = await loadPolicySet(deps);
  const m = registerMatcher(set, req);
  // privacyIDEA's prepolicy: before the parameters are checked
  const emailParam = str(params, "email");
  const patterns = (await m.values("requiredemail")).values;
  if (emailParam && patterns.length > 0 && !isEmailAllowed(deps, patterns, emailParam)) {
    throw new RegistrationError("This email address is not allowed to register!");
  }
  const input: Registration = {
    username: required(params, "username"),
    surname: required(params, "surname"),
    givenname: required(params, "givenname"),
    email: required(params, "email"),
    password: required(params, "password", MAX_PASSWORD),
    mobile: optional(params, "mobile"),
    phone: optional(params, "phone"),
  };
  if (!EMAIL_REGEXP.test(input.email)) {
    throw new ParameterError(`Cannot parse parameter "email": invalid address`);
  }
  const smtp = (await m.values("smtpconfig", { unique: true })).values[0];
  if (smtp === undefined) throw new RegistrationError("No SMTP server configuration specified!");
  const realm = ((await m.values("realm", { unique: true })).values[0] ??
    await getDefaultRealm(deps) ?? "").toLowerCase();
  const resolver = (await m.values("resolver", { unique: true })).values[0];
  if (resolver === undefined) throw new RegistrationError("No resolver specified to register in!");
  // checked before anything is created: the realm must hold the resolver, which must be editable
  const members = (await listRealms(deps))[realm]?.resolver.map((r) => r.name) ?? [];
  if (!members.includes(resolver)) {
    throw new RegistrationError(
      `Cannot register in realm "${realm}": resolver "${resolver}" is not in it`,
    );
  }
  // a user of a superuser realm logs in as an admin: nobody may make themselves one, in the
  // realm registered in or in another realm that holds the resolver
  for (const r of new Set([realm, ...await realmsOfResolver(deps, resolver)])) {
    if (deps.config.auth.superuserRealms.includes(r.toLowerCase())) {
      throw new RegistrationError(`Cannot register in realm "${r}": it is a superuser realm`);
    }
  }
  const userStore = await getResolver(deps, resolver);
  if (!userStore?.editable) {
    throw new RegistrationError(`Cannot register in resolver "${resolver}": it is not editable`);
  }
  const bodyValue = (await m.values("registration_body", { unique: true, freeText: true }))
    .values[0];
  const template = bodyValue === undefined ? DEFAULT_BODY : unescapeText(bodyValue);
  formatBody(template, ""); // a malformed body is refused before the user exists
  try {
    return await createRegistered(deps, { input, realm, resolver, smtp, template });
  } catch (err) {
    // privacyIDEA 3.13's hide_specific_error_message: one answer for every failure from here
    // on (the username is taken, the mail failed, ...), matched on the realm
    const hide = await set.matcher({
      scope: "register",
      realm,
      client: req.client || null,
      userAgent: userAgentName(req.userAgent),
      conditions: req.conditions,
    }).bool("hide_specific_error_message");
    if (hide.length === 0 || !(err instanceof AppError)) throw err;
    deps.log.info("Registration failed", { reason: err.message });
    throw new HttpError(httpStatusOf(err), "Failed registering new user", 402);
  }
}

async function createRegistered(
  deps: Deps,
  r: { input: Registration; realm: string; resolver: string; smtp: string; template: string },
): Promise<UserRef> {
  const { input } = r;
  // the name must be free in every realm the new user will be part of, not only in its resolver
  // (privacyIDEA's check): a new user in a resolver of higher priority would take over the name
  // of another resolver's user there
  for (const realm of new Set([r.realm, ...await realmsOfResolver(deps, r.resolver)])) {
    if (await resolveUser(deps, input.username, realm)) {
      throw new RegistrationError("The username is already registered!");
    }
  }
  const attributes: Record<string, string> = {
    email: input.email,
    surname: input.surname,
    givenname: input.givenname,
  };
  if (input.phone) attributes.phone = input.phone;
  if (input.mobile) attributes.mobile = input.mobile;
  let uid: string;
  try {
    uid = await createUser(deps, {
      login: input.username,
      resolver: r.resolver,
      password: input.password,
      attributes,
    });
  } catch (err) {
    // a registration of the same name that won the race: the same answer as one before it
    if (err instanceof UserError) {
      throw new RegistrationError("The username is already registered!");
    }
    throw err;
  }
  const user: UserRef = { login: input.username, realm: r.realm, resolver: r.resolver, uid };
  let serial: string | undefined;
  try {
    const token = await initToken(deps, { type: "registration" }, { user });
    serial = token.serial;
    const code = String(token.detail.registrationcode ?? "");
    await sendMail(deps, r.smtp, {
      to: [input.email],
      subject: REGISTRATION_SUBJECT,
      body: formatBody(r.template, code),
    }).catch((err) => {
      deps.log.warn("Failed to send the registration email", {
        smtpconfig: r.smtp,
        error: (err as Error).message,
      });
      throw new RegistrationError("Failed to send email!");
    });
    return user;
  } catch (err) {
    // take back what this request created, so a failed registration leaves nothing behind
    if (serial !== undefined) {
      await deleteTokens(deps, [await getTokenBySerial(deps, serial)]).catch(() => 0);
    }
    await deleteUser(deps, r.resolver, input.username).catch((e) =>
      deps.log.warn("Cannot delete the user of a failed registration", {
        resolver: r.resolver,
        error: (e as Error).message,
      })
    );
    throw err;
  }
}

/**
 * Whether the login page offers password recovery (privacyIDEA's `is_password_reset`): an
 * editable resolver exists and the user right `password_reset` is allowed for the client (no
 * active user policy at all, or one that grants it).
 */
export async function isPasswordResetOffered(
  deps: Deps,
  req: { client?: string | null; userAgent?: string | null; conditions?: ConditionData },
): Promise<boolean> {
  if (Object.keys(await listResolvers(deps, { editable: true })).length === 0) return false;
  const set = await loadPolicySet(deps);
  if (!set.hasActivePolicies("user")) return true;
  const granted = await set.actionBool({
    scope: "user",
    action: "password_reset",
    client: req.client || null,
    userAgent: req.userAgent == null ? null : userAgentName(req.userAgent),
    conditions: req.conditions ?? {},
  });
  return granted.length > 0;
}

/** The user a `/recover` request names, and whether it exists. */
interface NamedUser {
  login: string;
  realm: string;
  ref: UserRef | undefined;
}

/**
 * The gate of both `/recover` routes (privacyIDEA's `check_anonymous_user`): the user-scope
 * right `password_reset` for the user named, matched as if that user were logged in.
 */
async function namedUserWithRight(
  deps: Deps,
  params: Record<string, unknown>,
  req: AnonymousRequest,
): Promise<NamedUser> {
  const user = required(params, "user");
  const { login, realm } = await splitUser(deps, user, str(params, "realm"));
  const ref = await resolveUser(deps, login, realm);
  await checkUserRight(
    deps,
    { role: "user", username: login, realm, resolver: ref?.resolver },
    "password_reset",
    {
      client: req.client,
      userAgent: req.userAgent,
      conditions: ref
        ? { ...req.conditions, userinfo: () => getUserAttributes(deps, ref) }
        : req.conditions,
      message: PASSWORD_RESET_DENIED,
    },
  );
  return { login, realm, ref };
}

/**
 * The link of the recovery mail: privacyIDEA's web interface route `#!/reset/<login>@<realm>/
 * <code>` under the system config `recovery.url`, the address users reach the web interface
 * at. privacyIDEA takes the request's own URL, whose host is whatever the caller sent: a
 * caller could have the mail point a user's code to a host of its own.
 */
function recoveryLink(base: string, user: NamedUser, code: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new ConfigAdminError("Cannot use the system config recovery.url: not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigAdminError("Cannot use the system config recovery.url: not an http(s) URL");
  }
  const root = url.origin + url.pathname.replace(/\/*$/, "/");
  return `${root}#!/reset/${encodeURIComponent(user.login)}@${
    encodeURIComponent(user.realm)
  }/${code}`;
}

/**
 * `POST /recover`: mails a recovery code (24 letters and digits, valid for an hour, kept only
 * as a keyed hash) to the email of the user named, when `email` is that address. An unknown
 * user gets the same answer as a wrong address, so the route tells nobody which users exist.
 */
export async function requestRecoveryCode(
  deps: Deps,
  params: Record<string, unknown>,
  req: AnonymousRequest,
): Promise<{ login: string; realm: string }> {
  const user = await namedUserWithRight(deps, params, req);
  const email = required(params, "email");
  const stored = user.ref ? String((await getUserAttributes(deps, user.ref)).email ?? "") : "";
  if (!user.ref || stored === "" || stored.toLowerCase() !== email.toLowerCase()) {
    throw new UserError(EMAIL_MISMATCH);
  }
  const system = await loadSystemConfig(deps);
  const identifier = system.get("recovery.identifier");
  if (identifier === "") throw new ConfigAdminError("Missing configuration recovery.identifier.");
  const base = system.get("recovery.url");
  if (base === "") throw new ConfigAdminError("Missing configuration recovery.url.");
  const code = randomString(deps.random, RECOVERY_CODE_LENGTH, RECOVERY_ALPHABET);
  const link = recoveryLink(base, user, code);
  const now = deps.clock.now();
  await store.deleteExpired(deps.db, now);
  const id = await store.insertCode(deps.db, {
    codeHash: hashPin(deps.keys.pinPepper, code, deps.random),
    username: user.login,
    realm: user.realm,
    createdAt: now,
    expiresAt: now + RECOVERY_SECONDS * 1000,
  }, RECOVERY_CODES_KEPT);
  try {
    await sendMail(deps, identifier, {
      to: [stored],
      subject: RECOVERY_SUBJECT,
      body: "Someone requested to reset the password within privacyIDEA.\n\n" +
        "To reset your user password please visit the link\n\n" + link + "\n",
    });
  } catch (err) {
    // a code nobody received must not stay usable
    await store.deleteCode(deps.db, id);
    deps.log.warn("Failed to send the recovery email", {
      identifier,
      error: (err as Error).message,
    });
    throw new AppError("Failed to send email. False", 10);
  }
  return { login: user.login, realm: user.realm };
}

/**
 * `POST /recover/reset`: when `recoverycode` is a valid code of the user named, uses it up and
 * sets `password` in the user's (editable) resolver; false otherwise (also for an unknown user).
 */
export async function resetPassword(
  deps: Deps,
  params: Record<string, unknown>,
  req: AnonymousRequest,
): Promise<{ login: string; realm: string; isReset: boolean }> {
  const user = await namedUserWithRight(deps, params, req);
  const code = required(params, "recoverycode");
  const password = required(params, "password", MAX_PASSWORD);
  const now = deps.clock.now();
  await store.deleteExpired(deps.db, now);
  const rows = await store.codesOf(deps.db, { username: user.login, realm: user.realm }, now);
  // every stored code is compared (in constant time each), whichever matches
  let matched: number | undefined;
  for (const row of rows) {
    if (verifyPin(deps.keys.pinPepper, row.codeHash, code) && matched === undefined) {
      matched = row.id;
    }
  }
  const out = { login: user.login, realm: user.realm, isReset: false };
  if (!user.ref || matched === undefined) return out;
  // single use: of two requests with one code, only the one that deleted it goes on
  if (!await store.consumeCode(deps.db, matched)) return out;
  out.isReset = await updateUser(deps, {
    login: user.ref.login,
    resolver: user.ref.resolver,
    password,
  });
  return out;
}
