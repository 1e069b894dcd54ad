/**
 * The user domain's plain types, shared by its modules without importing `mod.ts`.
 *
 * @module
 */

/** A resolved user: login in realm, found in resolver with id uid. */
export interface UserRef {
  login: string;
  realm: string;
  resolver: string;
  uid: string;
}
