/**
 * Serial numbers (spec 02 §1.1): `<PREFIX><4-digit count><random uppercase hex>`.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, TokenAdminError } from "../../errors.ts";
import { toHex } from "../../lib/random.ts";
import * as store from "./token_store.ts";

/** Allowed serial characters. */
export const SERIAL_REGEXP = /^[0-9a-zA-Z\-_]+$/;

/** Longest serial. */
export const MAX_SERIAL = 40;

/** Throws 905 unless `serial` is a valid serial number. */
export function checkSerial(serial: string): void {
  if (!SERIAL_REGEXP.test(serial) || serial.length > MAX_SERIAL) {
    throw new ParameterError("Invalid serial number. Must comply to ^[0-9a-zA-Z\\-_]+$");
  }
}

/** Generates an unused serial for a new token of `type` with `prefix`. */
export async function generateSerial(
  deps: Deps,
  type: string,
  prefix: string,
  serialLength: number,
): Promise<string> {
  const count = await store.countOfType(deps.db, type);
  const randomLength = Math.max(1, serialLength - 4);
  for (let attempt = 0; attempt < 50; attempt++) {
    const random = toHex(deps.random.bytes(Math.ceil(randomLength / 2)))
      .slice(0, randomLength).toUpperCase();
    const serial = `${prefix}${String(count + attempt).padStart(4, "0")}${random}`;
    if (!(await store.serialExists(deps.db, serial))) return serial;
  }
  throw new TokenAdminError(`Cannot generate a serial number for type "${type}"`);
}
