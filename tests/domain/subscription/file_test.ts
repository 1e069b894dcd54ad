import assert from "node:assert/strict";
import {
  parseDay,
  parseSubscriptionFile,
  renderSubscriptionFile,
  signedValuesOf,
  subscriptionError,
} from "../../../src/domain/subscription/file.ts";
import { ParameterError } from "../../../src/errors.ts";
import { demoValues } from "../../fixtures/subscription_keys.ts";

const SPEC_FIXTURE =
  `{'application': 'demo_application', 'for_name': 'customer', 'for_address': 'customer-address',
 'for_email': 'customer@example.com', 'for_phone': '12345', 'for_url': 'http://customer',
 'for_comment': 'comment', 'by_name': 'NetKnights GmbH', 'by_email': 'provider@example.com',
 'by_address': 'provider-address', 'by_phone': '12345', 'by_url': 'http://provider',
 'date_from': '2016-10-24', 'date_till': '2026-10-22', 'num_users': 100, 'num_tokens': 100,
 'num_clients': 100, 'level': 'Gold', 'signature': '24287419543315'}`;

Deno.test("parses the spec's flow-style fixture", () => {
  const parsed = parseSubscriptionFile(SPEC_FIXTURE);
  assert.ok(parsed.ok);
  const d = parsed.data;
  assert.equal(d.application, "demo_application");
  assert.equal(d.by_name, "NetKnights GmbH");
  assert.equal(d.date_from, Date.UTC(2016, 9, 24));
  assert.equal(d.date_till, Date.UTC(2026, 9, 22));
  assert.equal(d.num_tokens, 100);
  assert.equal(d.signature, "24287419543315");
});

Deno.test("block style, unquoted dates, numeric phone and a long unquoted signature", () => {
  const big = "9".repeat(600);
  const text = Object.entries(demoValues({ for_phone: "12345" }))
    .map(([k, v]) => k === "for_phone" ? `${k}: 12345` : `${k}: ${v}`)
    .join("\n") + `\nsignature: ${big}\n`;
  const parsed = parseSubscriptionFile(text);
  assert.ok(parsed.ok);
  assert.equal(parsed.data.for_phone, "12345");
  assert.equal(parsed.data.signature, big, "big integers keep every digit");
  assert.equal(parsed.data.date_from, Date.UTC(2025, 0, 1));
});

Deno.test("missing or null signed fields and wrong types are a failed verification", () => {
  const base = demoValues();
  const cases: [string, string][] = [
    ["missing for_email", SPEC_FIXTURE.replace("'for_email': 'customer@example.com', ", "")],
    ["null level", SPEC_FIXTURE.replace("'level': 'Gold'", "'level': null")],
    ["string num_tokens", SPEC_FIXTURE.replace("'num_tokens': 100", "'num_tokens': 'many'")],
    ["negative num_users", SPEC_FIXTURE.replace("'num_users': 100", "'num_users': -1")],
    ["missing signature", SPEC_FIXTURE.replace(", 'signature': '24287419543315'", "")],
  ];
  for (const [name, text] of cases) {
    const parsed = parseSubscriptionFile(text);
    assert.equal(parsed.ok, false, name);
    if (!parsed.ok) assert.equal(parsed.application, base.application, name);
  }
});

Deno.test("malformed files are refused with 905 (no 500s)", () => {
  const cases: [string, string][] = [
    ["yaml syntax", "{'application': 'x'"],
    ["not a mapping", "- a\n- b\n"],
    ["scalar", "hello"],
    ["empty", ""],
    ["unknown key", SPEC_FIXTURE.replace("{", "{'extra': 1, ")],
    ["bad date", SPEC_FIXTURE.replace("'2016-10-24'", "'1234'")],
    ["impossible date", SPEC_FIXTURE.replace("'2016-10-24'", "'2016-02-30'")],
    ["from after till", SPEC_FIXTURE.replace("'2016-10-24'", "'2027-01-01'")],
    ["too long", SPEC_FIXTURE.replace("'customer'", `'${"x".repeat(81)}'`)],
    ["duplicate key", SPEC_FIXTURE.replace("{", "{'level': 'x', ")],
    ["too big", `# ${"x".repeat(70_000)}\n${SPEC_FIXTURE}`],
  ];
  for (const [name, text] of cases) {
    assert.throws(() => parseSubscriptionFile(text), (err) => {
      assert.ok(err instanceof ParameterError, name);
      assert.equal(err.code, 905, name);
      assert.match(err.message, /^Cannot parse subscription file: /, name);
      return true;
    });
  }
});

Deno.test("renderSubscriptionFile round-trips through the parser", () => {
  const values = demoValues({ for_comment: "it's a 'quote'" });
  const parsed = parseSubscriptionFile(renderSubscriptionFile(values, "rsa_sha256_pss:00ff"));
  assert.ok(parsed.ok);
  assert.deepEqual(signedValuesOf(parsed.data), values);
  assert.equal(parsed.data.signature, "rsa_sha256_pss:00ff");
});

Deno.test("unsigned drafts parse without a signature", () => {
  const draft = SPEC_FIXTURE.replace(", 'signature': '24287419543315'", "");
  const parsed = parseSubscriptionFile(draft, { unsigned: true });
  assert.ok(parsed.ok);
});

Deno.test("parseDay accepts only real YYYY-MM-DD dates", () => {
  assert.equal(parseDay("2024-02-29"), Date.UTC(2024, 1, 29));
  for (const bad of ["2023-02-29", "2024-13-01", "24-01-01", "2024-1-1", "1234", ""]) {
    assert.equal(parseDay(bad), undefined, bad);
  }
});

Deno.test("subscriptionError uses privacyIDEA's repr form with code 101", () => {
  const err = subscriptionError("Your subscription expired.", "demo_application");
  assert.equal(err.code, 101);
  assert.equal(
    err.message,
    "SubscriptionError('Your subscription expired.', application=demo_application)",
  );
  assert.equal(
    subscriptionError("x", undefined).message,
    "SubscriptionError('x', application=None)",
  );
});
