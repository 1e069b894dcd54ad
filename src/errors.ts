/**
 * The one error hierarchy of Tessera. Every error carries privacyIDEA's numeric
 * code; {@link httpStatusOf} is the only place that maps errors to HTTP statuses
 * and {@link errorMessageOf} the only place that formats the envelope message.
 *
 * @module
 */

/**
 * Base class of every error Tessera raises on purpose.
 *
 * An AppError is an expected outcome (unknown user, bad parameter) answered
 * in the envelope, so it captures no stack trace: its constructor does not
 * run `Error`'s, whose capture costs 1-4 µs per error under Deno whatever
 * `Error.stackTraceLimit` says (measured; V8 honours the limit, Deno's
 * capture does not), more than the rest of such a request's error path.
 * Its prototype chain still passes through `Error.prototype`, so
 * `instanceof Error` holds (Hono's error handler and `node:assert` rely on
 * it), and `stack` is the name and message.
 */
export class AppError {
  /** The class name, as `Error` subclasses have it. */
  readonly name: string;
  readonly message: string;
  /** privacyIDEA error code (`result.error.code`). */
  readonly code: number;
  /** Extra `detail` for the error envelope; `undefined` gives the class default. */
  readonly detail: Record<string, unknown> | undefined;

  constructor(message: string, code = 10, detail?: Record<string, unknown>) {
    this.name = new.target.name;
    this.message = message;
    this.code = code;
    this.detail = detail;
  }

  /** No trace is captured (see the class doc): the name and message. */
  get stack(): string {
    return `${this.name}: ${this.message}`;
  }

  toString(): string {
    return `${this.name}: ${this.message}`;
  }
}
Object.setPrototypeOf(AppError.prototype, Error.prototype);
// TypeScript's view: an AppError is an Error (it is one by its prototype chain)
export interface AppError extends Error {}

/** A missing or malformed request parameter (905 → HTTP 400). */
export class ParameterError extends AppError {
  constructor(message: string, code = 905, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** The shared message for a missing parameter (spec 01 §1). */
export function missingParameter(name: string): ParameterError {
  return new ParameterError(`Missing parameter: ${name}`);
}

/** An authentication failure (4031…4307 → HTTP 401). */
export class AuthError extends AppError {
  constructor(message: string, code = 403, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** A policy denied the action (303 → HTTP 403). */
export class PolicyError extends AppError {
  constructor(message: string, code = 303, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** The addressed object does not exist (601 → HTTP 404). */
export class ResourceNotFoundError extends AppError {
  constructor(message: string, code = 601, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** Token administration error (301 and sub-codes → HTTP 400). */
export class TokenAdminError extends AppError {
  constructor(message: string, code = 301, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** Configuration administration error (302 → HTTP 400). */
export class ConfigAdminError extends AppError {
  constructor(message: string, code = 302, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** Validate error (401 → HTTP 400). */
export class ValidateError extends AppError {
  constructor(message: string, code = 401, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** Enrollment error (404 → HTTP 400). */
export class EnrollmentError extends AppError {
  constructor(message: string, code = 404, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** Unknown user or user-store problem (904 → HTTP 400). */
export class UserError extends AppError {
  constructor(message: string, code = 904, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** Self-registration refused (402 → HTTP 400). */
export class RegistrationError extends AppError {
  constructor(message: string, code = 402, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** Resolver error (907 → HTTP 400). */
export class ResolverError extends AppError {
  constructor(message: string, code = 907, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** Subscription error (101 → HTTP 400). */
export class SubscriptionError extends AppError {
  constructor(message: string, code = 101, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** Database error (902 → HTTP 400), e.g. a unique constraint lost to a parallel request. */
export class DatabaseError extends AppError {
  constructor(message: string, code = 902, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/**
 * Too many requests of one kind, e.g. logins from one client address or a
 * full login queue (429 → HTTP 429). privacyIDEA has no such error; the code
 * repeats the HTTP status and collides with none of its codes.
 */
export class TooManyRequestsError extends AppError {
  constructor(message: string, code = 429, detail?: Record<string, unknown>) {
    super(message, code, detail);
  }
}

/** The message of {@link DatabaseUnavailableError}. */
export const DATABASE_UNAVAILABLE_MESSAGE = "The database is not available, try again later";

/**
 * The database is down, unreachable, restarting or busy beyond its timeout
 * (503 → HTTP 503): nothing is wrong with the request, and the same request
 * may succeed later, on this node or another. privacyIDEA has no such error;
 * the code repeats the HTTP status and collides with none of its codes.
 */
export class DatabaseUnavailableError extends AppError {
  constructor(message = DATABASE_UNAVAILABLE_MESSAGE, code = 503) {
    super(message, code);
  }
}

/** The feature exists in privacyIDEA but not in Tessera (-501 → HTTP 501). */
export class NotImplementedError extends AppError {
  constructor(message: string) {
    super(message, -501);
  }
}

/** An HTTP-level problem with a fixed status (404 route, 405 method, 413 body, 415 …). */
export class HttpError extends AppError {
  readonly status: number;
  constructor(status: number, message: string, code = 905) {
    super(message, code);
    this.status = status;
  }
}

/** The configuration is invalid; carries every problem at once. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/** Maps any thrown value to the HTTP status of its envelope. */
export function httpStatusOf(err: unknown): number {
  if (err instanceof HttpError) return err.status;
  if (err instanceof AuthError) return 401;
  if (err instanceof PolicyError) return 403;
  if (err instanceof ResourceNotFoundError) return 404;
  if (err instanceof NotImplementedError) return 501;
  if (err instanceof TooManyRequestsError) return 429;
  if (err instanceof DatabaseUnavailableError) return 503;
  if (err instanceof AppError) return 400;
  return 500;
}

/** Formats `result.error.message` per spec 01 §3.1. */
export function errorMessageOf(err: unknown): string {
  if (!(err instanceof AppError)) return "An internal server error occurred";
  if (
    err instanceof HttpError || err instanceof AuthError || err instanceof PolicyError ||
    err instanceof ResourceNotFoundError || err instanceof NotImplementedError ||
    // a refusal before any check, like an HTTP-level error: no ERR prefix
    err instanceof TooManyRequestsError ||
    // the database is away: the request itself was fine
    err instanceof DatabaseUnavailableError ||
    // subscription errors carry privacyIDEA's repr form without a prefix (spec 06 §3.3)
    err instanceof SubscriptionError
  ) {
    return err.message;
  }
  return `ERR${err.code}: ${err.message}`;
}

/** Returns the numeric `result.error.code` for any thrown value. */
export function errorCodeOf(err: unknown): number {
  return err instanceof AppError ? err.code : -500;
}
