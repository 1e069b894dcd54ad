/**
 * `POST /auth` decisions (spec 01 §6): local admins first, then realm users.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  AppError,
  AuthError,
  missingParameter,
  PolicyError,
  ResourceNotFoundError,
  TokenAdminError,
  UserError,
  ValidateError,
} from "../../errors.ts";
import { Stopwatch } from "../../lib/stopwatch.ts";
import {
  adminCredentialVersion,
  verifyAdminLogin,
  verifyDummyAdminPassword,
} from "../admin/mod.ts";
import {
  checkUserPassword,
  getUserAttributes,
  realmExists,
  resolveUser,
  splitUser,
  type UserRef,
} from "../user/mod.ts";
import { type ConditionData, webuiSettings } from "../policy/mod.ts";
import { remoteUserMode } from "../webui/mod.ts";
import {
  authLimitReached,
  checkPasskeyLogin,
  type FidoAnswer,
  loginLimitPolicies,
  validateCheck,
} from "../validate/mod.ts";
import { beginLogin } from "./_login_limits.ts";

/** A successful login, before a JWT is issued. */
export interface LoginResult {
  username: string;
  realm: string;
  resolver: string;
  role: "admin" | "user";
  /**
   * `pi` after a passkey login, `remote_user ` (with privacyIDEA's trailing space) after a
   * login by the web server's REMOTE_USER, else `password`.
   */
  authtype: "password" | "pi" | "remote_user ";
  /** Local admins only: the credential version their JWT carries. */
  credentialVersion?: string;
  /** The passkey a passkey login used (audit). */
  serial?: string;
}

/** Request of {@link login}. */
export interface LoginRequest {
  username: string;
  password: string;
  realm?: string;
  /** Client address and user agent (policy matching, OTP login, login limits). */
  clientIp?: string;
  userAgent?: string;
  /**
   * A passkey login instead of name and password (spec 11 §5.3 point 4):
   * the assertion answering a `/validate/initialize?type=passkey` transaction.
   */
  passkey?: { transactionId?: string; answer: FidoAnswer };
  /**
   * The user a trusted proxy authenticated (privacyIDEA's REMOTE_USER): when it equals
   * `username` and policy `remote_user` allows it, no password is checked.
   */
  remoteUser?: string;
  /** Request headers and environment for the `remote_user` policy's conditions. */
  conditions?: ConditionData;
}

const WRONG_CREDENTIALS = "Authentication failure. Wrong credentials";

/**
 * A failed login answers no sooner than this after it started: an unknown
 * name and a wrong admin password cost one scrypt hash (50-200 ms), a realm
 * user's wrong password only what the user store costs (often < 1 ms), and
 * the floor makes them look alike. It costs no CPU, only the caller's time.
 */
export const FAILED_LOGIN_MIN_MS = 250;

/**
 * Checks a login. Every failure is the same 4031 error so callers cannot tell
 * unknown users from wrong passwords; the log gets the reason. Logins are
 * limited per client address (see _login_limits.ts) and admin password hashes
 * wait in a bounded line: beyond either, a {@link TooManyRequestsError} (429).
 */
export async function login(deps: Deps, req: LoginRequest): Promise<LoginResult> {
  if (!req.passkey && req.username === "") {
    throw new AuthError("Authentication failure. Missing Username", 4032);
  }
  const attempt = beginLogin(deps, req.clientIp ?? "");
  const watch = new Stopwatch();
  let failed = false;
  try {
    // a failed passkey counts against the address's limits as a wrong password does
    if (req.passkey) return await checkPasskey(deps, req, req.passkey);
    const byProxy = await checkRemoteUser(deps, req);
    return byProxy ?? await checkLogin(deps, req);
  } catch (err) {
    if (err instanceof AuthError) {
      failed = true;
      await watch.waitUntil(FAILED_LOGIN_MIN_MS);
    }
    throw err;
  } finally {
    attempt.finish(failed, deps.clock.now());
  }
}

/**
 * The user and realm a password login names, as the login resolves them
 * (`name@realm`, the realm parameter, the default realm): the audit row of a
 * failed login records who was tried.
 */
export async function loginAttemptOf(
  deps: Deps,
  username: string,
  realm?: string,
): Promise<{ user: string; realm: string }> {
  const { login: user, realm: resolved } = await splitUser(deps, username, realm?.trim());
  return { user, realm: resolved };
}

async function checkLogin(deps: Deps, req: LoginRequest): Promise<LoginResult> {
  const explicitRealm = (req.realm ?? "").trim();
  if (explicitRealm !== "" && !(await realmExists(deps, explicitRealm))) {
    throw new AuthError(`Authentication failure. Unknown realm: ${explicitRealm}.`, 4031);
  }
  // a local admin wins over a realm user of the same name (spec 01 §6.1 step 4)
  const adminCheck = await verifyAdminLogin(deps, req.username, req.password);
  if (adminCheck.outcome === "ok") {
    return {
      username: adminCheck.admin.username,
      realm: "",
      resolver: "",
      role: "admin",
      authtype: "password",
      credentialVersion: adminCheck.admin.credentialVersion,
    };
  }
  // realm user under policy login_mode (spec 01 §6.1 step 5)
  const { login: userLogin, realm } = await splitUser(deps, req.username, req.realm);
  const ref = await resolveUser(deps, userLogin, realm);
  if (ref) await requireWithinLoginLimits(deps, ref, req);
  const mode = ref
    ? (await webuiSettings(
      deps,
      { username: ref.login, realm: ref.realm, resolver: ref.resolver },
      {
        client: req.clientIp,
        userAgent: req.userAgent,
        conditions: loginConditions(deps, ref, req),
      },
    )).loginMode
    : "userstore";
  if (mode === "disable") throw new PolicyError("The login for this user is disabled.");
  if (ref && await checkLoginPassword(deps, ref, req, mode)) return realmUserLogin(deps, ref);
  // nobody of that name: spend the hash a wrong admin password costs, in the
  // same line, so unknown names and admin names look alike (also under load)
  if (!ref && adminCheck.outcome === "no-such-admin") {
    await verifyDummyAdminPassword(deps, req.password);
  }
  deps.log.info("Login failed", {
    username: req.username,
    realm,
    reason: ref
      ? "wrong password"
      : adminCheck.outcome === "wrong-password"
      ? "wrong local admin password"
      : "no local admin or realm user of that name",
  });
  throw new AuthError(WRONG_CREDENTIALS, 4031);
}

/**
 * A login by the web server in front (privacyIDEA's REMOTE_USER): when the user a trusted proxy
 * authenticated is the `username` of the request and policy `remote_user` is `allowed` or
 * `force`, the name is all it takes: a local admin of that name, else the realm user it names
 * (who must exist). Undefined when this is no such login (the password is checked then).
 * Unlike privacyIDEA, `login_mode=disable` refuses such a realm user too.
 */
async function checkRemoteUser(
  deps: Deps,
  req: LoginRequest,
): Promise<LoginResult | undefined> {
  if (req.remoteUser === undefined || req.remoteUser !== req.username) return undefined;
  const ctx = { client: req.clientIp, userAgent: req.userAgent, conditions: req.conditions };
  if (await remoteUserMode(deps, req.remoteUser, ctx) === "disable") return undefined;
  const credentialVersion = await adminCredentialVersion(deps, req.username);
  if (credentialVersion !== undefined) {
    return {
      username: req.username,
      realm: "",
      resolver: "",
      role: "admin",
      authtype: "remote_user ",
      credentialVersion,
    };
  }
  const explicitRealm = (req.realm ?? "").trim();
  if (explicitRealm !== "" && !(await realmExists(deps, explicitRealm))) {
    throw new AuthError(`Authentication failure. Unknown realm: ${explicitRealm}.`, 4031);
  }
  const { login: userLogin, realm } = await splitUser(deps, req.username, req.realm);
  const ref = await resolveUser(deps, userLogin, realm);
  if (!ref) {
    deps.log.info("Login failed", {
      username: req.username,
      realm,
      reason: "the proxy's REMOTE_USER is no local admin and no realm user",
    });
    throw new AuthError(WRONG_CREDENTIALS, 4031);
  }
  const { loginMode } = await webuiSettings(
    deps,
    { username: ref.login, realm: ref.realm, resolver: ref.resolver },
    { client: req.clientIp, userAgent: req.userAgent, conditions: loginConditions(deps, ref, req) },
  );
  if (loginMode === "disable") throw new PolicyError("The login for this user is disabled.");
  return { ...realmUserLogin(deps, ref), authtype: "remote_user " };
}

/**
 * `auth_max_fail` / `auth_max_success` (authorization) before a realm user's
 * password is looked at: failed or successful `/validate/check` and `/auth`
 * requests of the user in the period (audit log) reach the limit → 401,
 * whatever the password. Local admins are not limited.
 */
async function requireWithinLoginLimits(
  deps: Deps,
  ref: NonNullable<Awaited<ReturnType<typeof resolveUser>>>,
  req: LoginRequest,
): Promise<void> {
  const ctx = { user: ref, clientIp: req.clientIp ?? "", userAgent: req.userAgent ?? "" };
  const message = await authLimitReached(deps, ref, await loginLimitPolicies(deps, ctx));
  if (message === undefined) return;
  deps.log.info("Login refused: authentication limit reached", { username: ref.login, message });
  throw new AuthError(
    "Authentication failure. The account has exceeded the authentication time limit!",
    403,
    { message },
  );
}

const PASSKEY_NOT_REGISTERED = "Authentication failure. The passkey is not registered.";
const PASSKEY_FAILED = "Authentication failure using passkey.";

/**
 * A passkey login: the assertion goes through the FIDO branch of
 * `/validate/check` (consumed once, sign count moved by compare-and-set)
 * with user verification required, and the token's owner logs in as the
 * realm user a password login would make of them.
 */
async function checkPasskey(
  deps: Deps,
  req: LoginRequest,
  passkey: NonNullable<LoginRequest["passkey"]>,
): Promise<LoginResult> {
  if (!passkey.transactionId) throw missingParameter("transaction_id");
  let result;
  try {
    result = await checkPasskeyLogin(deps, {
      transactionId: passkey.transactionId,
      answer: passkey.answer,
      clientIp: req.clientIp ?? "",
      userAgent: req.userAgent ?? "",
    });
  } catch (err) {
    // unknown or expired transaction, disabled type, authorization policy: one
    // answer for all, as for a wrong password; the log gets the reason
    if (!isCheckRefusal(err)) throw err;
    deps.log.info("Passkey login failed", { reason: (err as Error).message });
    throw new AuthError(PASSKEY_FAILED, 4031);
  }
  if (result === undefined) {
    deps.log.info("Passkey login failed", { reason: "no passkey holds the credential" });
    throw new AuthError(PASSKEY_NOT_REGISTERED, 4031);
  }
  const owner = result.user;
  if (!result.value || !owner) {
    deps.log.info("Passkey login failed", {
      serial: result.serial,
      reason: String(result.detail.message ?? "the assertion was refused"),
    });
    throw new AuthError(PASSKEY_FAILED, 4031);
  }
  // decided after the assertion: only the passkey's holder learns that the login is disabled
  const { loginMode } = await webuiSettings(
    deps,
    { username: owner.login, realm: owner.realm, resolver: owner.resolver },
    {
      client: req.clientIp,
      userAgent: req.userAgent,
      conditions: loginConditions(deps, owner, req),
    },
  );
  if (loginMode === "disable") throw new PolicyError("The login for this user is disabled.");
  return {
    ...realmUserLogin(deps, owner),
    authtype: "pi",
    serial: result.serial,
  };
}

/** Errors of the FIDO branch that are refusals of this login, not faults. */
function isCheckRefusal(err: unknown): boolean {
  return err instanceof ResourceNotFoundError || err instanceof ValidateError ||
    err instanceof PolicyError || err instanceof UserError || err instanceof TokenAdminError;
}

/** The login result of an authenticated realm user: role admin in a superuser realm. */
/** The condition data of a login policy match: the request's, and the user's info. */
function loginConditions(deps: Deps, user: UserRef, req: LoginRequest): ConditionData {
  return { ...req.conditions, userinfo: () => getUserAttributes(deps, user) };
}

function realmUserLogin(
  deps: Deps,
  ref: { login: string; realm: string; resolver: string },
): LoginResult {
  const isSuperuser = deps.config.auth.superuserRealms.includes(ref.realm.toLowerCase());
  return {
    username: ref.login,
    realm: ref.realm,
    resolver: ref.resolver,
    role: isSuperuser ? "admin" : "user",
    authtype: "password",
  };
}

/**
 * The password check of a realm user: the user store, or with login_mode
 * `privacyIDEA` a full `/validate/check` (PIN+OTP). A triggered challenge
 * counts as a failure here (challenge logins are not supported yet).
 */
async function checkLoginPassword(
  deps: Deps,
  ref: NonNullable<Awaited<ReturnType<typeof resolveUser>>>,
  req: LoginRequest,
  mode: "userstore" | "privacyIDEA",
): Promise<boolean> {
  if (mode === "userstore") return await checkUserPassword(deps, ref, req.password);
  try {
    const result = await validateCheck(deps, {
      user: ref.login,
      realm: ref.realm,
      resolver: ref.resolver,
      pass: req.password,
      clientIp: req.clientIp ?? "",
      userAgent: req.userAgent ?? "",
      isWebuiLogin: true,
    });
    return result.value === true;
  } catch (err) {
    // as privacyIDEA: an error of the check (a PIN rule of a PIN change, a policy conflict,
    // a locked token) is a failed login, answered as a wrong password
    if (!(err instanceof AppError)) throw err;
    deps.log.info("The OTP check of a login failed", { username: ref.login, reason: err.message });
    return false;
  }
}

/** Menus of the WebUI per role. */
export function menusOf(role: "admin" | "user"): string[] {
  return role === "admin"
    ? ["tokens", "users", "machines", "config", "audit", "components"]
    : ["tokens", "audit"];
}

/** privacyIDEA's numeric log level (PI_LOGLEVEL) for our level name. */
export function piLogLevel(level: string): number {
  return ({ debug: 10, info: 20, warn: 30, error: 40 } as Record<string, number>)[level] ?? 30;
}
