/**
 * Local administrators: created by the CLI (and on first start), checked at
 * `/auth` and on every request with an admin JWT (credential version).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, ResourceNotFoundError, TooManyRequestsError } from "../../errors.ts";
import { BoundedQueue, QueueFullError } from "../../lib/bounded_queue.ts";
import {
  decryptSecretText,
  encryptSecret,
  hashPassword,
  SCRYPT_CONCURRENCY,
  verifyPassword,
} from "../../lib/crypto.ts";
import { verifyPasslibHash } from "../../lib/passlib.ts";
import { randomString } from "../../lib/random.ts";
import * as store from "./admin_store.ts";

export type { AdminRecord } from "./admin_store.ts";

/** A local admin as shown by `admin list` (no hash). */
export interface AdminInfo {
  username: string;
  email: string;
  createdAt: string;
}

const ADMIN_NAME_REGEXP = /^[A-Za-z0-9_.@+-]{1,255}$/;

function checkName(username: string): void {
  if (!ADMIN_NAME_REGEXP.test(username)) {
    throw new ParameterError(
      `Cannot use admin name "${username}": only letters, digits and _ . @ + - are allowed`,
    );
  }
}

function checkPassword(password: string): void {
  if (password.length < 8) {
    throw new ParameterError("Cannot set password: it must have at least 8 characters");
  }
  if (password.length > 1024) {
    throw new ParameterError("Cannot set password: it is longer than 1024 characters");
  }
}

/** Creates a local admin; fails if the name exists. */
export async function addAdmin(
  deps: Deps,
  username: string,
  options: { password: string; email?: string },
): Promise<void> {
  checkName(username);
  checkPassword(options.password);
  const passwordHash = await hashPassword(options.password, deps.random);
  const inserted = await store.insertAdmin(deps.db, {
    username,
    email: options.email ?? "",
    passwordHash,
    createdAt: deps.clock.now(),
    // fresh, so the JWTs of an earlier admin of the same name stay invalid
    credentialVersion: newCredentialVersion(deps),
  });
  if (!inserted) {
    throw new ParameterError(`Cannot add admin "${username}": the admin already exists`);
  }
}

// An admin imported from privacyIDEA keeps its passlib hash and the pepper it was
// made with (PI_PEPPER, spec 12 §3.4), the pepper encrypted under Tessera's key:
// `import:<encrypted pepper>|<passlib hash>`. The first good login re-hashes.
const IMPORTED_PREFIX = "import:";

/** The stored form of a privacyIDEA admin hash made with `pepper`. */
export function importedAdminHash(deps: Deps, pepper: string, piHash: string): string {
  return `${IMPORTED_PREFIX}${encryptSecret(deps.keys.config, pepper, deps.random)}|${piHash}`;
}

async function verifyStoredHash(deps: Deps, stored: string, password: string): Promise<boolean> {
  if (!stored.startsWith(IMPORTED_PREFIX)) return await verifyPassword(stored, password);
  const [pepper, piHash] = stored.slice(IMPORTED_PREFIX.length).split("|");
  if (piHash === undefined) return false;
  const plainPepper = decryptSecretText(deps.keys.config, pepper);
  return await verifyPasslibHash(piHash, plainPepper + password);
}

/**
 * Creates a local admin with a hash made elsewhere (a privacyIDEA import, see
 * {@link importedAdminHash}); false when the name exists.
 */
export async function addImportedAdmin(
  deps: Deps,
  username: string,
  options: { passwordHash: string; email?: string },
): Promise<boolean> {
  checkName(username);
  return await store.insertAdmin(deps.db, {
    username,
    email: options.email ?? "",
    passwordHash: options.passwordHash,
    createdAt: deps.clock.now(),
    credentialVersion: newCredentialVersion(deps),
  });
}

/** Lists local admins without their hashes. */
export async function listAdmins(deps: Deps): Promise<AdminInfo[]> {
  return (await store.listAdmins(deps.db)).map((a) => ({
    username: a.username,
    email: a.email,
    createdAt: new Date(a.createdAt).toISOString(),
  }));
}

/** Deletes a local admin; the admin's JWTs stop working with the next request. */
export async function deleteAdmin(deps: Deps, username: string): Promise<void> {
  if (!(await store.deleteAdmin(deps.db, username))) {
    throw new ResourceNotFoundError(`Cannot delete admin "${username}": no such admin`);
  }
  forgetInitialPassword(deps, username);
}

/** The admin made on first start; its password is written to {@link initialPasswordFile}. */
export const INITIAL_ADMIN = "admin";

/** Where the first start writes the initial admin's password (mode 0600). */
export function initialPasswordFile(deps: Pick<Deps, "config">): string {
  return `${deps.config.storage.dataDir.replace(/\/+$/, "")}/initial-admin-password`;
}

/** Once the initial admin's password is changed or the admin is gone, its file goes too. */
function forgetInitialPassword(deps: Deps, username: string): void {
  if (username !== INITIAL_ADMIN) return;
  try {
    Deno.removeSync(initialPasswordFile(deps));
    deps.log.info("Removed the initial admin password file", { path: initialPasswordFile(deps) });
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) {
      deps.log.warn("Cannot remove the initial admin password file", {
        path: initialPasswordFile(deps),
        error: String(err),
      });
    }
  }
}

/**
 * Sets a new password for a local admin and a new credential version: the
 * admin's earlier JWTs stop working with the next request.
 */
export async function setAdminPassword(
  deps: Deps,
  username: string,
  password: string,
): Promise<void> {
  checkPassword(password);
  const passwordHash = await hashPassword(password, deps.random);
  const changed = await store.updateAdminPassword(deps.db, username, {
    passwordHash,
    credentialVersion: newCredentialVersion(deps),
  });
  if (!changed) {
    throw new ResourceNotFoundError(`Cannot set password of admin "${username}": no such admin`);
  }
  forgetInitialPassword(deps, username);
}

const HEX = "0123456789abcdef";

// 128 random bits: never repeats, also not across a deleted and re-created admin
function newCredentialVersion(deps: Deps): string {
  return randomString(deps.random, 32, HEX);
}

/**
 * True when `credentialVersion` (from a JWT) is the current one of the local
 * admin `username`; false when the admin was deleted or changed the password
 * since. Cheap: see the cache rule in admin_store.ts.
 */
export async function isAdminCredentialCurrent(
  deps: Deps,
  username: string,
  credentialVersion: string,
): Promise<boolean> {
  const current = await store.findCredentialVersion(deps.db, username);
  return current !== undefined && current === credentialVersion;
}

/** The current credential version of a local admin; undefined when there is none. */
export async function adminCredentialVersion(
  deps: Deps,
  username: string,
): Promise<string | undefined> {
  return await store.findCredentialVersion(deps.db, username);
}

// Admin password hashes at login: one at a time (the scrypt memory guard of
// lib/crypto.ts), and a bounded line in front so that a login flood is turned
// away at once (429) instead of queueing for minutes. Realm users never wait
// here: their passwords are checked by their user store.
const adminHashes = new BoundedQueue(SCRYPT_CONCURRENCY);

async function verifyInLine(deps: Deps, hash: string, password: string): Promise<boolean> {
  try {
    return await adminHashes.run(
      () => verifyStoredHash(deps, hash, password),
      deps.config.auth.loginQueue,
    );
  } catch (err) {
    if (!(err instanceof QueueFullError)) throw err;
    deps.log.warn("Login refused: the admin password queue is full", {
      waiting: adminHashes.waiting,
    });
    throw new TooManyRequestsError(
      "Cannot log in: the server is busy with other logins, try again in a few seconds",
    );
  }
}

/** Admin password hashes running and waiting now (tests, metrics). */
export function adminHashLoad(): { running: number; waiting: number } {
  return { running: adminHashes.running, waiting: adminHashes.waiting };
}

/** Outcome of {@link verifyAdminLogin}. */
export type AdminLoginCheck =
  | { outcome: "ok"; admin: store.AdminRecord }
  | { outcome: "wrong-password" }
  | { outcome: "no-such-admin" };

/**
 * Checks a local admin login. A name that is no admin costs no hash here
 * (the caller may still find a realm user of that name); the caller spends
 * {@link verifyDummyAdminPassword} when the name turns out to be nobody's.
 * Throws {@link TooManyRequestsError} when the admin password queue is full.
 */
export async function verifyAdminLogin(
  deps: Deps,
  username: string,
  password: string,
): Promise<AdminLoginCheck> {
  const admin = await store.findAdmin(deps.db, username);
  if (!admin) return { outcome: "no-such-admin" };
  if (!(await verifyInLine(deps, admin.passwordHash, password))) {
    return { outcome: "wrong-password" };
  }
  if (admin.passwordHash.startsWith(IMPORTED_PREFIX)) {
    // verified once with privacyIDEA's scheme: from now on Tessera's own hash
    const hash = await hashPassword(password, deps.random);
    await store.replacePasswordHash(deps.db, username, admin.passwordHash, hash);
  }
  return { outcome: "ok", admin };
}

let dummyHash: Promise<string> | undefined;

/**
 * Verifies `password` against a dummy hash in the admin password queue, so
 * that an unknown name costs and waits what a wrong admin password does.
 * Throws {@link TooManyRequestsError} when the queue is full, as a real admin would.
 */
export async function verifyDummyAdminPassword(deps: Deps, password: string): Promise<void> {
  dummyHash ??= hashPassword("tessera-dummy-password", deps.random);
  await verifyInLine(deps, await dummyHash, password);
}

/** True when a local admin of that name exists. */
export async function adminExists(deps: Deps, username: string): Promise<boolean> {
  return (await store.findAdmin(deps.db, username)) !== undefined;
}

const PASSWORD_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";

/**
 * On first start (no admin at all), creates `admin` with a random password and
 * returns that password so the caller can write it to a 0600 file.
 */
export async function ensureInitialAdmin(deps: Deps): Promise<string | undefined> {
  if ((await store.countAdmins(deps.db)) > 0) return undefined;
  const password = randomString(deps.random, 24, PASSWORD_ALPHABET);
  try {
    await addAdmin(deps, INITIAL_ADMIN, { password });
  } catch (err) {
    // several nodes starting at once on an empty database: one of them made the admin
    if (err instanceof ParameterError && (await store.countAdmins(deps.db)) > 0) return undefined;
    throw err;
  }
  return password;
}
