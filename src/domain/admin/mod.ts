/**
 * Local administrators: created by the CLI (and on first start), checked at `/auth`.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, ResourceNotFoundError } from "../../errors.ts";
import { hashPassword, verifyPassword } from "../../lib/crypto.ts";
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
  });
  if (!inserted) {
    throw new ParameterError(`Cannot add admin "${username}": the admin already exists`);
  }
}

/** Lists local admins without their hashes. */
export async function listAdmins(deps: Deps): Promise<AdminInfo[]> {
  return (await store.listAdmins(deps.db)).map((a) => ({
    username: a.username,
    email: a.email,
    createdAt: new Date(a.createdAt).toISOString(),
  }));
}

/** Deletes a local admin. */
export async function deleteAdmin(deps: Deps, username: string): Promise<void> {
  if (!(await store.deleteAdmin(deps.db, username))) {
    throw new ResourceNotFoundError(`Cannot delete admin "${username}": no such admin`);
  }
}

/** Sets a new password for a local admin. */
export async function setAdminPassword(
  deps: Deps,
  username: string,
  password: string,
): Promise<void> {
  checkPassword(password);
  const hash = await hashPassword(password, deps.random);
  if (!(await store.updateAdminPassword(deps.db, username, hash))) {
    throw new ResourceNotFoundError(`Cannot set password of admin "${username}": no such admin`);
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Checks a local admin login. Unknown names are verified against a dummy hash
 * so that both failures take about the same time.
 */
export async function verifyAdminLogin(
  deps: Deps,
  username: string,
  password: string,
): Promise<store.AdminRecord | undefined> {
  const admin = await store.findAdmin(deps.db, username);
  if (!admin) {
    dummyHash ??= hashPassword("tessera-dummy-password", deps.random);
    await verifyPassword(await dummyHash, password);
    return undefined;
  }
  return (await verifyPassword(admin.passwordHash, password)) ? admin : undefined;
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
  await addAdmin(deps, "admin", { password });
  return password;
}
