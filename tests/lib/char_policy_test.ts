import assert from "node:assert/strict";
import {
  CHAR_CLASSES,
  charListsOf,
  generatePassword,
  lostTokenPool,
  passwordFromContents,
  randomIndex,
} from "../../src/lib/char_policy.ts";
import { secureRandom, seededRandom } from "../../src/lib/random.ts";

const ALL = CHAR_CLASSES.c + CHAR_CLASSES.n + CHAR_CLASSES.s;

Deno.test("charListsOf follows privacyIDEA's contents grammar", () => {
  assert.deepEqual(charListsOf("cn"), {
    base: ALL,
    requirements: [CHAR_CLASSES.c, CHAR_CLASSES.n],
  });
  assert.deepEqual(charListsOf("+cn"), {
    base: ALL,
    requirements: [CHAR_CLASSES.c + CHAR_CLASSES.n],
  });
  assert.deepEqual(charListsOf("-s"), { base: CHAR_CLASSES.c + CHAR_CLASSES.n, requirements: [] });
  assert.deepEqual(charListsOf("[ab1]"), { base: "ab1", requirements: [] });
  assert.equal(charListsOf("x"), undefined);
  assert.equal(charListsOf("cnx"), undefined);
  assert.equal(charListsOf(""), undefined);
});

Deno.test("generatePassword holds one character of each requirement", () => {
  for (let i = 0; i < 200; i++) {
    const pw = generatePassword(secureRandom, 3, "a", ["0123456789", "!?"]);
    assert.equal(pw.length, 3);
    assert.match(pw, /[0-9]/);
    assert.match(pw, /[!?]/);
    assert.match(pw, /a/);
  }
  // more requirements than characters: one of each all the same
  assert.equal(generatePassword(secureRandom, 1, "a", ["b", "c"]).length, 2);
});

Deno.test("passwordFromContents refuses unknown values and empty sets", () => {
  assert.match(passwordFromContents(secureRandom, "-cs", 12)!, /^[0-9]{12}$/);
  assert.equal(passwordFromContents(secureRandom, "q", 12), undefined);
  assert.equal(passwordFromContents(secureRandom, "[]", 4), undefined);
});

Deno.test("randomIndex is in range for small and large sets", () => {
  const r = seededRandom(7);
  const seen = new Set<number>();
  for (let i = 0; i < 2000; i++) {
    const v = randomIndex(r, 300);
    assert.ok(v >= 0 && v < 300);
    seen.add(v);
  }
  assert.ok(seen.size > 250);
  assert.throws(() => randomIndex(r, 0));
});

Deno.test("lostTokenPool concatenates the named sets", () => {
  assert.equal(lostTokenPool("n"), "0123456789");
  assert.equal(lostTokenPool("nn"), "0123456789");
  assert.equal(lostTokenPool("Cx").length, 26);
  assert.equal(lostTokenPool("xyz"), "");
  assert.equal(lostTokenPool("8").length, 58);
});
