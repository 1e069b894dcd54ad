import type { Kysely } from "kysely";
import { idColumn } from "./_columns.ts";

/** RADIUS server definitions (`/radiusserver/`). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("radiusserver")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("identifier", "varchar(255)", (c) => c.notNull().unique())
    .addColumn("server", "varchar(255)", (c) => c.notNull())
    .addColumn("port", "integer", (c) => c.notNull().defaultTo(1812))
    .addColumn("secret", "text", (c) => c.notNull())
    .addColumn("description", "varchar(2000)", (c) => c.notNull().defaultTo(""))
    .addColumn("dictionary", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("retries", "integer", (c) => c.notNull().defaultTo(3))
    .addColumn("timeout", "integer", (c) => c.notNull().defaultTo(5))
    .addColumn("options", "text")
    .execute();
}

/** Drops the RADIUS server definitions. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("radiusserver").execute();
}
