import assert from "node:assert/strict";
import {
  compareInt,
  compareValues,
  parseDuration,
  parseKeyComparison,
  replaceNow,
} from "../../../src/domain/event/compare.ts";
import { formatTemplate, TemplateError } from "../../../src/domain/event/tags.ts";
import { AVAILABLE_EVENTS, eventOf } from "../../../src/domain/event/catalog.ts";

Deno.test("compareInt accepts the spec's forms and rejects garbage", () => {
  const cases: [number, string, boolean][] = [
    [101, ">100", true],
    [100, ">100", false],
    [98, "<99", true],
    [100, "==100", true],
    [100, "=100", true],
    [5, "!=5", false],
    [4, "!=5", true],
    [100, "100", true],
    [101, "'>'100", true],
    [100, "'=='100", true],
    [100, "abc", false],
    [100, "", false],
    [100, ">>100", false],
  ];
  for (const [value, cond, expected] of cases) {
    assert.equal(compareInt(value, cond), expected, `${value} ${cond}`);
  }
});

Deno.test("parseKeyComparison and compareValues coerce like privacyIDEA", () => {
  assert.deepEqual(parseKeyComparison("count == 5"), { key: "count", cmp: "==", value: "5" });
  assert.deepEqual(parseKeyComparison("email 'matches' .*@example.com"), {
    key: "email",
    cmp: "matches",
    value: ".*@example.com",
  });
  assert.equal(parseKeyComparison("nothing"), undefined);
  const now = Date.UTC(2026, 0, 10);
  assert.equal(compareValues("10", ">", "9", now), true); // integers, not strings
  assert.equal(compareValues("abc", "==", "abc", now), true);
  assert.equal(compareValues("2026-01-05", "<", "2026-01-06", now), true);
  assert.equal(compareValues("a@example.com", "matches", ".*@example\\.com", now), true);
  assert.equal(compareValues("a@example.org", "!matches", ".*@example\\.com", now), true);
  assert.equal(compareValues("b", "in", "a, b, c", now), true);
  assert.equal(compareValues("2026-01-09", "date_within_last", "2d", now), true);
  assert.equal(compareValues("2026-01-01", "date_within_last", "2d", now), false);
  assert.equal(compareValues("x", "matches", "(", now), false); // errors → false
});

Deno.test("durations and {now}", () => {
  assert.equal(parseDuration("7h"), 7 * 3600_000);
  assert.equal(parseDuration("1y"), 365 * 86400_000);
  assert.equal(parseDuration("7x"), undefined);
  const now = Date.UTC(2026, 0, 10);
  assert.equal(replaceNow("{now}-7d", now), "2026-01-03T00:00:00.000Z");
  assert.equal(replaceNow("x {now}", now), "x 2026-01-10T00:00:00.000Z");
});

Deno.test("formatTemplate replaces tags, keeps {{ }}, refuses unknown tags", () => {
  assert.equal(formatTemplate("{a}-{b}", { a: "1", b: undefined }), "1-None");
  assert.equal(formatTemplate("{a}-{b}", { a: "1", b: null }, { none: "" }), "1-");
  assert.equal(formatTemplate("{{a}} {a}", { a: "x" }), "{a} x");
  assert.throws(() => formatTemplate("{nope}", {}), TemplateError);
  assert.throws(() => formatTemplate("{", {}), TemplateError);
  assert.equal(
    formatTemplate("<{a}>", { a: "<b>" }, { escape: (s) => s.replace("<", "&lt;") }),
    "<&lt;b>>",
  );
});

Deno.test("eventOf maps endpoints to the event names of spec 05 §4", () => {
  const cases: [string, string, string | undefined][] = [
    ["POST", "/validate/check", "validate_check"],
    ["GET", "/validate/radiuscheck", "validate_check"],
    ["GET", "/validate/polltransaction/123", "validate_poll_transaction"],
    ["POST", "/token/init", "token_init"],
    ["GET", "/token/", "token_list"],
    ["POST", "/token/disable/OATH1", "token_disable"],
    ["POST", "/token/description/OATH1", "token_set"],
    ["DELETE", "/token/OATH1", "token_delete"],
    ["DELETE", "/token/challenges/transaction/99", "token_cancelchallenge"],
    ["POST", "/token/info/S/key", "token_info"],
    ["DELETE", "/user/resolver1/alice", "user_delete"],
    ["POST", "/user/", "user_add"],
    ["GET", "/subscriptions/status", "subscription_status"],
    ["GET", "/subscriptions/privacyidea", "subscription_get"],
    ["POST", "/auth", "auth"],
    ["POST", "/policy/pol1", undefined],
    ["GET", "/event/", undefined],
    ["GET", "/smtpserver/", undefined],
  ];
  for (const [method, path, name] of cases) {
    assert.equal(eventOf(method, path)?.name, name, `${method} ${path}`);
  }
  assert.equal(eventOf("POST", "/token/disable/OATH%201")?.pathSerial, "OATH 1");
  assert.equal(eventOf("POST", "/token/info/S9/key")?.pathSerial, "S9");
  assert.equal(eventOf("POST", "/token/disable")?.pathSerial, undefined);
  assert.equal(eventOf("POST", "/auth")?.needsAuth, false);
  assert.equal(eventOf("POST", "/token/init")?.needsAuth, true);
  assert.ok(AVAILABLE_EVENTS.includes("api_client_add"));
});
