/**
 * The interface every user store implements (passwd, SQL, LDAP).
 *
 * @module
 */

/** User attributes every resolver reports (missing ones are ""). */
export const USER_FIELDS = [
  "username",
  "userid",
  "givenname",
  "surname",
  "email",
  "phone",
  "mobile",
  "description",
] as const;

/** Attributes of one user as strings; never contains a password. */
export type UserInfo = Record<string, string>;

/**
 * One user of a user list: like {@link UserInfo}, but a field an LDAP resolver
 * lists in `MULTIVALUEATTRIBUTES` stays a list when the user has several values.
 */
export type UserListEntry = Record<string, string | string[]>;

/** Result of a resolver self-test. */
export interface ResolverTestResult {
  success: boolean;
  description: string;
  /** privacyIDEA's answer where it is no boolean (sqlresolver: users found, -1 on failure). */
  value?: number;
}

/** A user store. `uid`s are always strings. */
export interface UserResolver {
  readonly name: string;
  readonly type: string;
  readonly editable: boolean;
  /** uid of `login`, undefined when the store does not know it. */
  getUserId(login: string): Promise<string | undefined>;
  /** Attributes of the user with `uid`, undefined when unknown. */
  getUserInfo(uid: string): Promise<UserInfo | undefined>;
  /**
   * The attributes as privacyIDEA's user info has them, for policy conditions
   * and answers: multi-valued fields and LDAP groups stay lists. A store
   * without lists leaves it out ({@link getUserInfo} serves).
   */
  getUserAttributes?(uid: string): Promise<UserListEntry | undefined>;
  /** Users matching every search field (`*` wildcard); unknown fields give []. */
  getUserList(search: Record<string, string>): Promise<UserListEntry[]>;
  /**
   * Checks a password; false for unknown users and unusable hashes. `login` is
   * the name the user logged in with (HTTP-family stores send it).
   */
  checkPass(uid: string, password: string, login?: string): Promise<boolean>;
  /** Creates a user (editable stores only); returns the new uid. */
  addUser(attributes: Record<string, string>, password?: string): Promise<string>;
  /** Updates a user (editable stores only); returns whether a row changed. */
  updateUser(uid: string, attributes: Record<string, string>, password?: string): Promise<boolean>;
  /** Deletes a user (editable stores only); returns whether it existed. */
  deleteUser(uid: string): Promise<boolean>;
  /** Checks that the store can be reached and read. */
  test(): Promise<ResolverTestResult>;
}

/** A full attribute record with every {@link USER_FIELDS} key present. */
export function emptyUserInfo(): UserInfo {
  return Object.fromEntries(USER_FIELDS.map((f) => [f, ""]));
}
