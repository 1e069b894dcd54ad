import assert from "node:assert/strict";
import { createTestApp } from "../../test_app.ts";
import { savePolicy } from "../../../src/domain/policy/mod.ts";
import {
  checkPinPolicy,
  pinContentsProblem,
  randomPin,
} from "../../../src/domain/token/pin_policy.ts";
import { seededRandom } from "../../../src/lib/random.ts";
import { PolicyError } from "../../../src/errors.ts";

const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";

Deno.test("pinContentsProblem follows privacyIDEA's grammar and messages", () => {
  const cases: [string, string, string | undefined][] = [
    ["123456", "cn", `Missing character in PIN: ${LETTERS}`],
    ["abc123", "cn", undefined],
    [
      "abc",
      "cns",
      `Missing character in PIN: ${DIGITS},Missing character in PIN: !"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}~`,
    ],
    ["!!!", "+cn", `Missing character in PIN: ${LETTERS}${DIGITS}`],
    ["a!!", "+cn", undefined],
    ["abc1", "-n", "Not allowed character in PIN!"],
    ["abc!", "-n", undefined],
    ["1234", "[1234]", undefined],
    ["12a4", "[1234]", "Not allowed character in PIN!"],
    ["b", "[a-f]", "Not allowed character in PIN!"],
    ["-", "[a-f]", undefined],
    ["é1", "cn", `Not allowed character in PIN!,Missing character in PIN: ${LETTERS}`],
  ];
  for (const [pin, contents, want] of cases) {
    assert.equal(pinContentsProblem(pin, contents), want, `${pin} / ${contents}`);
  }
  assert.throws(
    () => pinContentsProblem("x", "o"),
    (e) => e instanceof PolicyError && e.message === "Unknown character specifier in PIN policy.",
  );
});

Deno.test("randomPin meets the contents it was made for", () => {
  const random = seededRandom(7);
  for (const contents of ["cns", "+cn", "-cs", "[ab]", "n"]) {
    for (let i = 0; i < 20; i++) {
      const pin = randomPin(random, 6, contents);
      assert.equal(pin.length, 6);
      assert.equal(pinContentsProblem(pin, contents), undefined, `${pin} / ${contents}`);
    }
  }
  assert.match(randomPin(random, 10), /^[A-Za-z0-9]{10}$/);
});

Deno.test("checkPinPolicy: per-type values override the generic ones per attribute", async () => {
  const t = await createTestApp();
  const admin = { role: "admin" as const, username: "admin", realm: "" };
  // no policy: anything goes, also an absent PIN
  await checkPinPolicy(t.deps, undefined, { caller: admin, type: "hotp" });
  await savePolicy(t.deps, "gen", {
    scope: "admin",
    action: "otp_pin_minlength=4, otp_pin_maxlength=6, otp_pin_contents=n",
  });
  await savePolicy(t.deps, "sp", { scope: "admin", action: "spass_otp_pin_minlength=2" });
  const refuse = async (pin: string | undefined, type: string, message: string) =>
    await assert.rejects(
      () => checkPinPolicy(t.deps, pin, { caller: admin, type }),
      (e) => e instanceof PolicyError && e.message === message,
    );
  await refuse(undefined, "hotp", "The minimum OTP PIN length is 4");
  await refuse("123", "hotp", "The minimum OTP PIN length is 4");
  await refuse("1234567", "hotp", "The maximum OTP PIN length is 6");
  // "n": at least one digit (letters are still allowed)
  await refuse("abcd", "hotp", `Missing character in PIN: ${DIGITS}`);
  await checkPinPolicy(t.deps, "ab1d", { caller: admin, type: "hotp" });
  await checkPinPolicy(t.deps, "1234", { caller: admin, type: "hotp" });
  // spass: minimum 2 of its own, maximum and contents of the generic policy
  await checkPinPolicy(t.deps, "12", { caller: admin, type: "spass" });
  await refuse("1234567", "spass", "The maximum OTP PIN length is 6");
  // sshkey takes no PIN: never checked
  await checkPinPolicy(t.deps, "", { caller: admin, type: "sshkey" });
  // a user is matched in the user scope, where nothing is set
  await checkPinPolicy(t.deps, "1", {
    caller: { role: "user", username: "alice", realm: "r1" },
    type: "hotp",
  });
  await t.close();
});

Deno.test("checkPinPolicy: a length that is no whole number is refused, naming the action", async () => {
  const t = await createTestApp();
  const admin = { role: "admin" as const, username: "admin", realm: "" };
  await savePolicy(t.deps, "sp", { scope: "admin", action: "spass_otp_pin_maxlength=many" });
  await assert.rejects(
    () => checkPinPolicy(t.deps, "1234", { caller: admin, type: "spass" }),
    (e) =>
      e instanceof PolicyError &&
      e.message === 'The policy action "spass_otp_pin_maxlength" needs a whole number, got "many"',
  );
  // other types do not read it
  await checkPinPolicy(t.deps, "1234", { caller: admin, type: "hotp" });
  await t.close();
});
