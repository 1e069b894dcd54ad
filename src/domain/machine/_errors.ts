/**
 * The "generic error" of the machine API: privacyIDEA answers host-resolution
 * problems, bad resolver names/types and similar with HTTP 500 and code -500
 * (spec 07 §6). Kept in one place so the status can be changed in one line.
 *
 * @module
 */
import { HttpError } from "../../errors.ts";

/** HTTP status of the generic machine error (spec 07 §6). */
export const GENERIC_STATUS = 500;

/** A generic machine error with `message` shown to the (admin) caller. */
export function machineError(message: string): HttpError {
  return new HttpError(GENERIC_STATUS, message, -500);
}
