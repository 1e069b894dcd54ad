/**
 * Wildcard search shared by every store: `*` is the only wildcard, `%` and `_`
 * match literally (DESIGN.md, hostile input).
 *
 * @module
 */
import { type Expression, type RawBuilder, sql, type SqlBool } from "kysely";

/** Escapes LIKE metacharacters and turns `*` into `%`. */
export function likePattern(value: string): string {
  return value.replace(/[\\%_]/g, (c) => "\\" + c).replaceAll("*", "%");
}

/** `<column> LIKE <pattern> ESCAPE '\'` for a user-supplied `*` pattern (case-sensitive). */
export function likeStar(column: string, value: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} like ${likePattern(value)} escape '\\'`;
}

/** Exact match, or a LIKE match when the value contains `*`. */
export function matchStar(column: string, value: string): Expression<SqlBool> {
  return value.includes("*")
    ? likeStar(column, value)
    : sql<SqlBool>`${sql.ref(column)} = ${value}`;
}
