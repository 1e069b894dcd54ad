import assert from "node:assert/strict";
import { findMotpStep, motpAt } from "../../src/lib/motp.ts";

Deno.test("motp: spec 14 §2.3 vectors", () => {
  assert.equal(motpAt("0123456789abcdef", "6666", 129612120), "6ed4e4");
  assert.equal(motpAt("0123456789abcdef", "6666", 129612130), "502a59");
  assert.equal(motpAt("0123456789abcdef", "1", 0), "bd94a4");
  assert.equal(motpAt("909a4d4ba980b2c6", "1234", 170000000), "05cdc7");
  assert.equal(motpAt("909a4d4ba980b2c6", "1234", 170000001), "7684c6");
});

Deno.test("motp: the search covers center − w … center + w − 1", () => {
  const key = "0123456789abcdef";
  assert.equal(findMotpStep(key, "6666", "6ed4e4", 129612120 + 20, 20), 129612120);
  assert.equal(findMotpStep(key, "6666", "6ed4e4", 129612120 + 21, 20), -1);
  assert.equal(findMotpStep(key, "6666", "6ed4e4", 129612120 - 19, 20), 129612120);
  assert.equal(findMotpStep(key, "6666", "6ed4e4", 129612120 - 20, 20), -1);
  assert.equal(findMotpStep(key, "6667", "6ed4e4", 129612120, 20), -1);
});
