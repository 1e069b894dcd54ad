/**
 * The token list as CSV (`GET /token/?outform=csv`).
 *
 * @module
 */
import type { TokenView } from "./list.ts";

const CSV_COLUMNS = [
  "serial",
  "tokentype",
  "description",
  "active",
  "revoked",
  "locked",
  "failcount",
  "maxfail",
  "count",
  "otplen",
  "rollout_state",
  "username",
  "user_realm",
  "resolver",
  "user_id",
];

/** The token list as CSV (`outform=csv`); values are quoted and formula-safe. */
export function tokensCsv(tokens: TokenView[]): string {
  const cell = (v: unknown) => {
    let s = Array.isArray(v) ? v.join(" ") : String(v ?? "");
    // a leading =, +, - or @ would be run as a formula by spreadsheet programs
    if (/^[=+\-@]/.test(s)) s = `'${s}`;
    return `"${s.replaceAll('"', '""')}"`;
  };
  const lines = [CSV_COLUMNS.join(",")];
  for (const t of tokens) lines.push(CSV_COLUMNS.map((c) => cell(t[c])).join(","));
  return lines.join("\n") + "\n";
}
