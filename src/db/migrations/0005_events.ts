import type { Kysely } from "kysely";
import { idColumn } from "./_columns.ts";

/** Event handler definitions, event counters, the event config version and SMTP servers. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("eventhandler")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("name", "varchar(64)", (c) => c.notNull().defaultTo(""))
    .addColumn("active", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("ordering", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("position", "varchar(10)", (c) => c.notNull().defaultTo("post"))
    .addColumn("abort_on_error", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("handlermodule", "varchar(50)", (c) => c.notNull())
    .addColumn("action", "varchar(50)", (c) => c.notNull())
    .addColumn("options", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("conditions", "text", (c) => c.notNull().defaultTo("{}"))
    .execute();

  // one row (id 1); every write to eventhandler bumps it so every node reloads its cache
  await db.schema.createTable("eventconfig_version")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("version", "bigint", (c) => c.notNull())
    .execute();
  await db.insertInto("eventconfig_version" as never).values({ id: 1, version: 0 } as never)
    .execute();

  await db.schema.createTable("eventcounter")
    .addColumn("counter_name", "varchar(80)", (c) => c.primaryKey())
    .addColumn("counter_value", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema.createTable("smtpserver")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("identifier", "varchar(255)", (c) => c.notNull().unique())
    .addColumn("server", "varchar(255)", (c) => c.notNull())
    .addColumn("port", "integer", (c) => c.notNull().defaultTo(25))
    .addColumn("tls", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("username", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("password", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("sender", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("description", "varchar(2000)", (c) => c.notNull().defaultTo(""))
    .addColumn("timeout", "integer", (c) => c.notNull().defaultTo(10))
    .addColumn("enqueue_job", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}

/** Drops the event and SMTP tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("smtpserver").execute();
  await db.schema.dropTable("eventcounter").execute();
  await db.schema.dropTable("eventconfig_version").execute();
  await db.schema.dropTable("eventhandler").execute();
}
