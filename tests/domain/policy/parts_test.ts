import assert from "node:assert/strict";
import {
  actionInputToString,
  parseActionString,
  splitActionValue,
  unescapeText,
} from "../../../src/domain/policy/action.ts";
import { parseTimeRanges, timeMatches } from "../../../src/domain/policy/time.ts";
import { conditionsHold, normaliseConditions } from "../../../src/domain/policy/conditions.ts";
import { parsePyLiteral, pyRepr } from "../../../src/domain/policy/py_literal.ts";

Deno.test("parseActionString: entries, values, escapes and the trimming quirk", () => {
  assert.deepEqual(parseActionString("enable, tokentype=hotp totp, a = b"), {
    enable: true,
    tokentype: "hotp totp",
    "a ": " b",
  });
  assert.deepEqual(parseActionString("challenge_text=Hello\\, world, x"), {
    challenge_text: "Hello\\, world",
    x: true,
  });
  assert.deepEqual(parseActionString("mangle=user/a=b/c/"), { mangle: "user/a=b/c/" });
  assert.deepEqual(parseActionString(""), {});
  assert.deepEqual(parseActionString("*, -disable"), { "*": true, "-disable": true });
});

Deno.test("actionInputToString accepts strings, objects and lists", () => {
  assert.equal(
    actionInputToString({ enable: true, otppin: "none", n: 5, f: false }),
    "enable, otppin=none, n=5, f=False",
  );
  assert.equal(actionInputToString(["enable", "disable"]), "enable, disable");
  assert.equal(actionInputToString("x"), "x");
  assert.throws(() => actionInputToString({ a: [1] }), /Cannot parse parameter "action"/);
});

Deno.test("splitActionValue and unescapeText", () => {
  assert.deepEqual(splitActionValue("hotp  totp"), ["hotp", "totp"]);
  assert.deepEqual(splitActionValue("'a b'"), ["a b"]);
  assert.deepEqual(splitActionValue("a b", true), ["a b"]);
  assert.equal(unescapeText("a\\, b"), "a, b");
});

const TIME_CASES: [string, boolean][] = [
  ["Mon-Fri: 08:00-16:30", true],
  ["Tue-Thu:6-22", true],
  ["Wed: 13:30-18", true],
  ["Sat-Sun: 20-23:59", true],
  ["mon: 8-12, TUE: 9:15-10:45", true],
  ["", true],
  ["Montag: 8-12", false],
  [":8-12", false],
  ["Mon-Fri: 12:26", false],
  ["Mon:", false],
  ["12-08", false],
  ["Mon: 12-08", false],
  ["Mon: 25-26", false],
];
for (const [text, valid] of TIME_CASES) {
  Deno.test(`parseTimeRanges(${JSON.stringify(text)}) is ${valid ? "valid" : "rejected"}`, () => {
    assert.equal(parseTimeRanges(text) !== undefined, valid);
  });
}

Deno.test("timeMatches uses local time, inclusive bounds, no day wrap-around", () => {
  const sat2359 = new Date(2026, 0, 10, 23, 59).getTime(); // Saturday
  assert.equal(timeMatches(parseTimeRanges("Sat-Sun: 20-23:59")!, sat2359), true);
  assert.equal(timeMatches(parseTimeRanges("Mon-Fri: 0-23:59")!, sat2359), false);
  assert.equal(timeMatches(parseTimeRanges("Fri-Mon: 0-23:59")!, sat2359), false);
  const sun0800 = new Date(2026, 0, 11, 8, 0).getTime();
  assert.equal(timeMatches(parseTimeRanges("Sun: 8-9")!, sun0800), true);
  assert.equal(timeMatches(parseTimeRanges("Sun: 8:01-9")!, sun0800), false);
});

Deno.test("normaliseConditions: 5-tuples get raise_error; invalid active ones are rejected", () => {
  assert.deepEqual(normaliseConditions("p", [["userinfo", "email", "equals", "a", true]]), [
    ["userinfo", "email", "equals", "a", true, "raise_error"],
  ]);
  assert.throws(
    () => normaliseConditions("p", [["userinfo", "email", "equals"]]),
    (e: Error) => e.message === "Condition of policy 'p' has 3 values, but should have 5 or 6.",
  );
  assert.throws(
    () => normaliseConditions("p", [["userinfo", "email", "==", "a", true]]),
    /Invalid condition of policy 'p': Unknown comparator '=='\./,
  );
  assert.throws(
    () => normaliseConditions("p", [["nosuch", "k", "equals", "a", true]]),
    /Unknown section/,
  );
  assert.throws(() => normaliseConditions("p", [["userinfo", "", "equals", "a", true]]), /key/);
  assert.throws(() => normaliseConditions("p", [["userinfo", "k", "equals", "", true]]), /value/);
  assert.throws(
    () => normaliseConditions("p", [["userinfo", "k", "equals", "a", "yes"]]),
    /active/,
  );
  assert.throws(
    () => normaliseConditions("p", [["userinfo", "k", "equals", "a", true, "x"]]),
    /handle_missing_data/,
  );
  // an inactive condition may be incomplete
  assert.equal(normaliseConditions("p", [["nosuch", "", "==", "", false]]).length, 1);
});

const NOW = Date.UTC(2026, 0, 10, 12, 0);
type Cmp = [string, unknown, string, boolean | "error"];
const CMP_CASES: Cmp[] = [
  ["equals", "a", "a", true],
  ["equals", 5, "5", false],
  ["!equals", "a", "b", true],
  ["contains", ["g1", "g2"], "g2", true],
  ["!contains", ["g1"], "g2", true],
  ["contains", "g1", "g1", "error"],
  ["in", "b", 'a,b,"c,d"', true],
  ["in", "c,d", 'a,"c,d"', true],
  ["!in", "x", "a,b", true],
  ["matches", "alice@example.com", ".*@example\\.com", true],
  ["matches", "x-alice", "alice", false],
  ["matches", "ALICE", "(?i)alice", true],
  ["!matches", "bob", "alice", true],
  ["<", "3", "5", true],
  ["<", "", "1", true],
  [">", 7, "5", true],
  [">", "x", "5", "error"],
  ["date_before", "2025-01-01", "2026-01-01", true],
  ["date_after", "2025-01-01T10:00:00+01:00", "2025-01-01T08:00:00Z", true],
  ["date_after", "2025-01-01T10:00:00+01:00", "2025-01-01", "error"],
  ["date_within_last", "2026-01-09T12:00:00", "2d", true],
  ["date_within_last", "2026-01-01", "2d", false],
  ["!date_within_last", "2026-01-01", "2d", true],
  ["date_within_last", "2026-01-09", "2 weeks", "error"],
  ["string_contains", "Hello World", "WORLD", true],
  ["!string_contains", "Hello", "x", true],
  ["string_contains", 5, "5", "error"],
];
for (const [cmp, left, right, expected] of CMP_CASES) {
  Deno.test(`condition comparator ${cmp}: ${JSON.stringify(left)} vs ${JSON.stringify(right)}`, async () => {
    const run = () =>
      conditionsHold("p", [["userinfo", "k", cmp, right, true, "raise_error"]], {
        userinfo: { k: left },
      }, {
        nowMs: NOW,
      });
    if (expected === "error") {
      await assert.rejects(run, /Invalid comparison in the userinfo conditions of policy 'p'/);
    } else {
      assert.equal(await run(), expected);
    }
  });
}

Deno.test("Request Data conditions never see pass or password", async () => {
  await assert.rejects(
    () =>
      conditionsHold("p", [["Request Data", "pass", "equals", "x", true, "raise_error"]], {
        "Request Data": { pass: "x" },
      }, { nowMs: NOW }),
    /Unknown Request Data key 'pass'/,
  );
});

Deno.test("pyRepr writes Python literals and parsePyLiteral reads them back", () => {
  const v = { enable: true, s: "it's", n: null, l: ["r1", 2], f: false };
  const text = pyRepr(v);
  assert.equal(text, `{'enable': True, 's': "it's", 'n': None, 'l': ['r1', 2], 'f': False}`);
  assert.deepEqual(parsePyLiteral(text), v);
  assert.deepEqual(parsePyLiteral(`("a", 'b',)`), ["a", "b"]);
  assert.deepEqual(parsePyLiteral(`{"enable": True}`), { enable: true });
  assert.throws(() => parsePyLiteral("__import__('os')"), /Cannot parse Python literal/);
  assert.throws(() => parsePyLiteral("[1, 2"), /Cannot parse Python literal/);
});
