import { type Kysely, PostgresAdapter } from "kysely";

/** Column type of an auto-increment primary key on the connected database. */
export function idColumn(db: Kysely<unknown>): "integer" | "serial" {
  return db.getExecutor().adapter instanceof PostgresAdapter ? "serial" : "integer";
}
