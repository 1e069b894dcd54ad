import assert from "node:assert/strict";
import { parseLooseDate } from "../../src/lib/loose_date.ts";

const NOW = Date.UTC(2026, 0, 1);
const parse = (text: string) => parseLooseDate(text, NOW);

Deno.test("parseLooseDate reads ISO dates with a zone as that zone", () => {
  assert.equal(parse("2026-03-02 08:00:01.000000+0000"), Date.UTC(2026, 2, 2, 8, 0, 1));
  assert.equal(parse("2026-03-02T08:00:01.25Z"), Date.UTC(2026, 2, 2, 8, 0, 1, 250));
  assert.equal(parse("2010-01-01 10:00+0200"), Date.UTC(2010, 0, 1, 8, 0));
  assert.equal(parse("2010-01-01 10:00 -05:30"), Date.UTC(2010, 0, 1, 15, 30));
  assert.equal(parse("2010-01-01T10:00+01"), Date.UTC(2010, 0, 1, 9, 0));
  assert.equal(parse("2026-03-02 UTC"), Date.UTC(2026, 2, 2));
});

Deno.test("parseLooseDate reads a date without a zone as local time, DD/ and DD. day-first", () => {
  assert.equal(parse("2026-03-02"), new Date(2026, 2, 2).getTime());
  assert.equal(parse("2026-03-02 08:15"), new Date(2026, 2, 2, 8, 15).getTime());
  assert.equal(parse("02/03/2026 08:15"), new Date(2026, 2, 2, 8, 15).getTime());
  assert.equal(parse("02.03.26"), new Date(2026, 2, 2).getTime());
  // two-digit years: the one within 50 years of now (dateutil's rule)
  assert.equal(parse("31/12/75"), new Date(2075, 11, 31).getTime());
  assert.equal(parse("31/12/76"), new Date(1976, 11, 31).getTime());
  // with a zone privacyIDEA's parser reads it month-first
  assert.equal(parse("01/02/2026 10:00+0000"), Date.UTC(2026, 0, 2, 10, 0));
});

Deno.test("parseLooseDate gives undefined for what is no date", () => {
  for (
    const text of [
      "",
      "yesterday",
      "2026-13-01",
      "2026-02-30",
      "2026-03-02 24:00",
      "2026-03-02 08:60",
      "2026-03-02 08:00+2500",
      "32/01/2026",
      "2026-03-02 08:00 Europe/Berlin",
      "1e3",
    ]
  ) {
    assert.equal(parse(text), undefined, text);
  }
});
