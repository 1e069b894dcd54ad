/**
 * "Did you mean …?" for the command line: the known word nearest to a
 * mistyped one.
 *
 * @module
 */

/**
 * Edits between `a` and `b`: insertions, deletions, substitutions and swaps
 * of neighbouring letters (optimal string alignment distance).
 */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/**
 * The candidate `word` was most likely meant to be: the only one it begins
 * (at least 3 letters), else the nearest within 1 edit (2 for words of 5 or
 * more letters), case and `_`/`-` ignored; undefined when none is near or two
 * are equally near.
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const norm = (s: string) => s.toLowerCase().replaceAll("_", "-");
  const w = norm(word);
  const list = [...candidates];
  if (w.length >= 3) {
    const prefixed = list.filter((c) => norm(c).startsWith(w));
    if (prefixed.length === 1) return prefixed[0];
  }
  const limit = w.length >= 5 ? 2 : 1;
  let best: string | undefined;
  let bestDistance = Infinity;
  let isTie = false;
  for (const c of list) {
    const distance = editDistance(w, norm(c));
    if (distance < bestDistance) {
      [best, bestDistance, isTie] = [c, distance, false];
    } else if (distance === bestDistance) isTie = true;
  }
  return bestDistance <= limit && !isTie ? best : undefined;
}
