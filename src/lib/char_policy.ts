/**
 * privacyIDEA's character-contents grammar of PINs and generated passwords
 * (`otp_pin_contents`, `pw.contents`, `registration.contents`) and the
 * generator that follows it: `c` letters, `n` digits, `s` punctuation;
 * `cn` = at least one of each named class, the rest from all classes;
 * `+cn` = at least one character of the named classes together; `-s` = every
 * class but the named ones; `[abc]` = only these characters.
 *
 * @module
 */
import type { Random } from "./random.ts";

const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";
// Python's string.punctuation
const PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/** The classes a contents value names (Python's ascii_letters, digits, punctuation). */
export const CHAR_CLASSES: Readonly<Record<"c" | "n" | "s", string>> = Object.freeze({
  c: LOWER + UPPER,
  n: DIGITS,
  s: PUNCTUATION,
});

/** Base58 (no 0, O, I, l). */
export const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

const VALID_CONTENTS_REGEXP = /^[+-]*[cns]+$|^\[.*\]+$/;

/** Character sets of a contents value: the base set and the sets each needing one character. */
export interface CharLists {
  base: string;
  requirements: string[];
}

/**
 * The character sets of a contents value (privacyIDEA's
 * `generate_charlists_from_pin_policy`); undefined for a value the grammar
 * does not know.
 */
export function charListsOf(contents: string): CharLists | undefined {
  if (!VALID_CONTENTS_REGEXP.test(contents)) return undefined;
  const all = CHAR_CLASSES.c + CHAR_CLASSES.n + CHAR_CLASSES.s;
  const classOf = (ch: string) => CHAR_CLASSES[ch as "c" | "n" | "s"] as string | undefined;
  if (contents[0] === "+") {
    const group = [...contents.slice(1)].map(classOf).filter((s) => s !== undefined).join("");
    return { base: all, requirements: [group] };
  }
  if (contents[0] === "-") {
    const excluded = contents.slice(1);
    const base = (["c", "n", "s"] as const).filter((k) => !excluded.includes(k))
      .map((k) => CHAR_CLASSES[k]).join("");
    return { base, requirements: [] };
  }
  if (contents[0] === "[" && contents.endsWith("]")) {
    return { base: contents.slice(1, -1), requirements: [] };
  }
  const requirements = [...contents].map(classOf).filter((s) => s !== undefined);
  return { base: all, requirements };
}

/** A uniform random integer in [0, n) (rejection-sampled; n ≤ 65536). */
export function randomIndex(random: Random, n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > 65536) throw new RangeError(`bad range ${n}`);
  if (n === 1) return 0;
  const bytes = n <= 256 ? 1 : 2;
  const span = bytes === 1 ? 256 : 65536;
  const limit = span - (span % n);
  for (;;) {
    const b = random.bytes(bytes);
    const v = bytes === 1 ? b[0] : (b[0] << 8) | b[1];
    if (v < limit) return v % n;
  }
}

/**
 * A random password of `size` characters from `base`, holding at least one
 * character of each `requirements` set (privacyIDEA's `generate_password`:
 * one pick per requirement, the rest from `base`, shuffled). More
 * requirements than `size` make it longer, as there.
 */
export function generatePassword(
  random: Random,
  size: number,
  base: string,
  requirements: readonly string[] = [],
): string {
  const chars = [...base];
  const picks: string[] = [];
  for (const req of requirements) {
    const set = [...req];
    if (set.length === 0) throw new RangeError("an empty character requirement");
    picks.push(set[randomIndex(random, set.length)]);
  }
  const rest = size - picks.length;
  if (rest > 0 && chars.length === 0) throw new RangeError("an empty character set");
  for (let i = 0; i < rest; i++) picks.push(chars[randomIndex(random, chars.length)]);
  // Fisher-Yates: the required characters land anywhere
  for (let i = picks.length - 1; i > 0; i--) {
    const j = randomIndex(random, i + 1);
    [picks[i], picks[j]] = [picks[j], picks[i]];
  }
  return picks.join("");
}

/**
 * A random password of `size` characters following a contents value;
 * undefined for a value the grammar does not know or that leaves no character.
 */
export function passwordFromContents(
  random: Random,
  contents: string,
  size: number,
): string | undefined {
  const lists = charListsOf(contents);
  if (!lists) return undefined;
  if (lists.requirements.some((r) => r === "")) return undefined;
  if (size > lists.requirements.length && lists.base === "") return undefined;
  if ([...lists.base].length > 65536) return undefined;
  return generatePassword(random, size, lists.base, lists.requirements);
}

/**
 * The character pool of a lost-token password (`losttoken_PW_contents`): the
 * sets named by `c` (a-z), `C` (A-Z), `n` (digits), `s` (privacyIDEA's
 * specials) and `8` (Base58), concatenated; other letters are ignored.
 */
export function lostTokenPool(contents: string): string {
  let pool = "";
  if (contents.includes("c")) pool += LOWER;
  if (contents.includes("C")) pool += UPPER;
  if (contents.includes("n")) pool += DIGITS;
  if (contents.includes("s")) pool += "!#$%&()*+,-./:;<=>?@[]^_";
  if (contents.includes("8")) pool += BASE58;
  return pool;
}
