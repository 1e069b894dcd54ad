/**
 * The "generic error" of the machine API. privacyIDEA answers host-resolution
 * problems, bad resolver names/types and similar with HTTP 500 and code -500
 * (spec 07 §6); Tessera never answers bad input with a 500 (DESIGN.md), so
 * these are parameter errors: HTTP 400, code 905, the spec's message text.
 *
 * @module
 */
import { ParameterError } from "../../errors.ts";

/** A machine error with `message` shown to the (admin) caller. */
export function machineError(message: string): ParameterError {
  return new ParameterError(message);
}
