import { sql } from "kysely";
import type { Db } from "./schema.ts";

/** Runs `SELECT 1`; throws when the database does not answer. */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1 as ok`.execute(db);
}
