import type { Kysely } from "kysely";
import { idColumn } from "./_columns.ts";

/** Machine resolvers, their config, machine-token bindings and binding options (issue 6). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("machineresolver")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("name", "varchar(255)", (c) => c.notNull())
    // lower-cased name: lookups are case-insensitive, and the unique constraint makes
    // two parallel creates of "Hosts" and "hosts" end in one row
    .addColumn("name_key", "varchar(255)", (c) => c.notNull().unique())
    .addColumn("rtype", "varchar(255)", (c) => c.notNull())
    .execute();

  await db.schema.createTable("machineresolverconfig")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn(
      "resolver_id",
      "integer",
      (c) => c.notNull().references("machineresolver.id").onDelete("cascade"),
    )
    .addColumn("key", "varchar(255)", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("type", "varchar(2000)", (c) => c.notNull().defaultTo(""))
    .addColumn("description", "varchar(2000)", (c) => c.notNull().defaultTo(""))
    .addUniqueConstraint("machineresolverconfig_resolver_key", ["resolver_id", "key"])
    .execute();

  await db.schema.createTable("machinetoken")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("token_id", "integer", (c) => c.notNull().references("token.id").onDelete("cascade"))
    // no foreign key: deleting a machine resolver keeps its bindings (spec 07 §2.4)
    .addColumn("machineresolver_id", "integer")
    .addColumn("machine_id", "varchar(255)")
    .addColumn("application", "varchar(64)", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("machinetoken_token").on("machinetoken").column("token_id")
    .execute();
  await db.schema.createIndex("machinetoken_machine").on("machinetoken")
    .columns(["machineresolver_id", "machine_id"]).execute();

  await db.schema.createTable("machinetokenoption")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn(
      "machinetoken_id",
      "integer",
      (c) => c.notNull().references("machinetoken.id").onDelete("cascade"),
    )
    .addColumn("key", "varchar(64)", (c) => c.notNull())
    .addColumn("value", "varchar(64)", (c) => c.notNull())
    .addUniqueConstraint("machinetokenoption_binding_key", ["machinetoken_id", "key"])
    .execute();
}

/** Drops the machine tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("machinetokenoption").execute();
  await db.schema.dropTable("machinetoken").execute();
  await db.schema.dropTable("machineresolverconfig").execute();
  await db.schema.dropTable("machineresolver").execute();
}
