import assert from "node:assert/strict";
import {
  AuthError,
  ConfigAdminError,
  errorCodeOf,
  errorMessageOf,
  httpStatusOf,
  NotImplementedError,
  ParameterError,
  PolicyError,
  ResourceNotFoundError,
  UserError,
} from "../src/errors.ts";

Deno.test("error classes map to privacyIDEA's HTTP status, code and message format", () => {
  const cases: [unknown, number, number, string][] = [
    [
      new ParameterError("Missing parameter: serial"),
      400,
      905,
      "ERR905: Missing parameter: serial",
    ],
    [
      new AuthError("Authentication failure. Wrong credentials", 4031),
      401,
      4031,
      "Authentication failure. Wrong credentials",
    ],
    [
      new PolicyError("Admin actions are defined, but the action x is not allowed!"),
      403,
      303,
      "Admin actions are defined, but the action x is not allowed!",
    ],
    [
      new ResourceNotFoundError("The requested token could not be found."),
      404,
      601,
      "The requested token could not be found.",
    ],
    [new UserError("User a@b does not exist."), 400, 904, "ERR904: User a@b does not exist."],
    [new ConfigAdminError("still in realm"), 400, 302, "ERR302: still in realm"],
    [new NotImplementedError("later"), 501, -501, "later"],
    [new TypeError("boom at /secret/path"), 500, -500, "An internal server error occurred"],
  ];
  for (const [err, status, code, message] of cases) {
    assert.equal(httpStatusOf(err), status);
    assert.equal(errorCodeOf(err), code);
    assert.equal(errorMessageOf(err), message);
  }
});

Deno.test("an AppError is an Error without a captured stack trace", async () => {
  const err = new UserError("User alice@realm1 does not exist.");
  assert.ok(err instanceof Error);
  assert.ok(err instanceof UserError);
  assert.equal(err.name, "UserError");
  assert.equal(err.message, "User alice@realm1 does not exist.");
  assert.equal(err.code, 904);
  // no trace: the name and message only, as String(err) gives them
  assert.equal(err.stack, "UserError: User alice@realm1 does not exist.");
  assert.equal(String(err), "UserError: User alice@realm1 does not exist.");
  assert.throws(() => {
    throw new ParameterError("Missing parameter: pass");
  }, { name: "ParameterError", message: "Missing parameter: pass" });
  await assert.rejects(Promise.reject(new PolicyError("denied")), PolicyError);
});
