import assert from "node:assert/strict";
import {
  decodeFormComponent,
  needsSecondDecoding,
  parseUserAgent,
  unquoteAgain,
} from "../../src/lib/percent.ts";

Deno.test("unquoteAgain decodes %XX once more like Python's unquote", () => {
  const cases: [string, string][] = [
    ["pw%45#test", "pwE#test"],
    ["a+b", "a+b"],
    ["%zz%4", "%zz%4"],
    ["%C3%A4", "ä"],
    ["%C3", "\ufffd"],
    ["plain", "plain"],
  ];
  for (const [input, expected] of cases) assert.equal(unquoteAgain(input), expected, input);
});

Deno.test("decodeFormComponent is strict", () => {
  assert.equal(decodeFormComponent("a+b%20c"), "a b c");
  assert.equal(decodeFormComponent("%zz"), undefined);
  assert.equal(decodeFormComponent("%C3%28"), undefined);
});

Deno.test("parseUserAgent splits product, version and comment", () => {
  assert.deepEqual(parseUserAgent("privacyidea-cp/2.0.1 Windows/HOST"), {
    product: "privacyidea-cp",
    version: "2.0.1",
    comment: "Windows/HOST",
  });
  assert.deepEqual(parseUserAgent("FreeRADIUS"), {
    product: "FreeRADIUS",
    version: "",
    comment: "",
  });
  assert.deepEqual(parseUserAgent(""), { product: "", version: "", comment: "" });
  assert.equal(parseUserAgent("ownCloud Plugin").product, "ownCloud");
});

Deno.test("only three user agents skip the second decoding", () => {
  assert.equal(needsSecondDecoding("simpleSAMLphp"), false);
  assert.equal(needsSecondDecoding("privacyIDEA-LDAP-Proxy/1.0"), false);
  assert.equal(needsSecondDecoding("privacyidea-cp/3.0 Windows/PC"), false);
  assert.equal(needsSecondDecoding("PAM/1.1.0"), true);
  assert.equal(needsSecondDecoding(undefined), true);
});
