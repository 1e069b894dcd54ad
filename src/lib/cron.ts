/**
 * Crontab intervals as privacyIDEA's periodic tasks write them (the croniter
 * dialect: 5 fields `minute hour day-of-month month day-of-week`, a 6th field
 * of seconds at the end, or an alias such as `@daily`), evaluated by
 * `cron-parser`.
 *
 * @module
 */
import type { CronExpressionParser } from "cron-parser";

let parserLoading: Promise<typeof CronExpressionParser> | undefined;

// cron-parser (with luxon, about 1.5 MB resident) serves only periodic tasks: loaded on first use
function cronParser(): Promise<typeof CronExpressionParser> {
  return parserLoading ??= import("cron-parser").then((m) => m.CronExpressionParser);
}

// croniter's aliases, written out (cron-parser lacks @midnight)
const ALIASES: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

/** The expression cron-parser reads for a croniter one, or a problem text. */
function toParserExpression(interval: string): { expression: string } | { problem: string } {
  const text = interval.trim();
  if (text === "") return { problem: "the interval is empty" };
  if (text.startsWith("@")) {
    const alias = text.toLowerCase();
    const expression = Object.hasOwn(ALIASES, alias) ? ALIASES[alias] : undefined;
    return expression !== undefined
      ? { expression }
      : { problem: `unknown alias "${text.slice(0, 40)}"` };
  }
  const fields = text.split(/\s+/);
  // cron-parser fills missing fields with "*": croniter refuses fewer than 5, and so do we
  if (fields.length === 5) return { expression: fields.join(" ") };
  // croniter's 6th field is the second and comes last; cron-parser wants it first
  if (fields.length === 6) return { expression: [fields[5], ...fields.slice(0, 5)].join(" ") };
  return {
    problem:
      `expected 5 fields (minute hour day month weekday) or 6 (seconds last), got ${fields.length}`,
  };
}

/** Why `interval` is no crontab expression, or undefined when it is one. */
export async function cronProblem(interval: string): Promise<string | undefined> {
  const parsed = toParserExpression(interval);
  if ("problem" in parsed) return parsed.problem;
  const parser = await cronParser();
  try {
    parser.parse(parsed.expression, { currentDate: new Date(0), strict: false });
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * The first time of `interval` strictly after `afterMs` (ms since the epoch),
 * read in the time zone `tz` (an IANA name; default: this process's local
 * zone). Throws on an expression {@link cronProblem} refuses.
 */
export async function nextCronTime(
  interval: string,
  afterMs: number,
  tz?: string,
): Promise<number> {
  const parsed = toParserExpression(interval);
  if ("problem" in parsed) throw new Error(parsed.problem);
  const parser = await cronParser();
  const it = parser.parse(parsed.expression, {
    currentDate: new Date(afterMs),
    tz,
    strict: false,
  });
  return it.next().getTime();
}
