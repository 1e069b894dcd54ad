import assert from "node:assert/strict";
import { pythonJson } from "../../src/lib/py_json.ts";

Deno.test("pythonJson matches json.dumps(sort_keys=True)", () => {
  // expected strings produced by CPython 3.11 json.dumps(value, sort_keys=True)
  const cases: [unknown, string][] = [
    [{ b: 1, a: [true, null, "x"] }, '{"a": [true, null, "x"], "b": 1}'],
    [{ s: 'ä€\n"\\' }, '{"s": "\\u00e4\\u20ac\\n\\"\\\\"}'],
    [{ t: 1700000000.5, n: -3, e: 1e21 }, '{"e": 1e+21, "n": -3, "t": 1700000000.5}'],
    [{ z: { y: {}, x: [] } }, '{"z": {"x": [], "y": {}}}'],
    [{ emoji: "😀" }, '{"emoji": "\\ud83d\\ude00"}'],
  ];
  for (const [value, expected] of cases) assert.equal(pythonJson(value), expected);
});
