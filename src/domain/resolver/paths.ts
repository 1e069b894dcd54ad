/**
 * File paths in resolver configurations: relative paths live under the data
 * directory and no path may contain a `..` segment.
 *
 * @module
 */
import { isAbsolute, join } from "node:path";
import { ParameterError } from "../../errors.ts";

/** Resolves `path` (relative → under `dataDir`); refuses `..` segments and NUL bytes. */
export function resolveDataPath(dataDir: string, path: string, what: string): string {
  if (path.includes("\0")) {
    throw new ParameterError(`Cannot use ${what} "${path}": it contains a NUL byte`);
  }
  if (path.split(/[\\/]/).includes("..")) {
    throw new ParameterError(`Cannot use ${what} "${path}": ".." segments are not allowed`);
  }
  return isAbsolute(path) ? path : join(dataDir, path);
}
