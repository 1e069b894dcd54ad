/** Tessera's own version (semver). */
export const VERSION = "0.1.0";
