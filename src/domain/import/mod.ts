/**
 * Imports from outside: token seed files (`/token/load`) and a whole
 * privacyIDEA database (`tessera import privacyidea`), spec 12.
 *
 * @module
 */
export {
  loadTokenFile,
  parseTokenFile,
  type TokenFileInput,
  type TokenFileResult,
} from "./token_file.ts";
export type { TokenRecord } from "./records.ts";
export { addImportKeys, importPublicKeys } from "./gpg.ts";
export {
  importPrivacyidea,
  type PiImportOptions,
  type PiImportReport,
  type PiSnapshot,
  readPrivacyidea,
  type SummaryRow,
  writePrivacyidea,
} from "./privacyidea.ts";
