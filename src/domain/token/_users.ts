/**
 * The token domain's view of users: the user domain's resolution API.
 *
 * @module
 */
export {
  checkUserPassword,
  currentUser,
  customAttributeOrCreate,
  getDefaultRealm,
  getUserAttributes,
  getUserInfo,
  realmExists,
  resolveUser,
  splitUser,
} from "../user/mod.ts";
