import type { Kysely } from "kysely";
import { idColumn } from "./_columns.ts";

/** Local admins, system config and the audit log. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("admin")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("username", "varchar(255)", (c) => c.notNull().unique())
    .addColumn("email", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("password_hash", "varchar(255)", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema.createTable("config")
    .addColumn("key", "varchar(255)", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("type", "varchar(100)", (c) => c.notNull().defaultTo(""))
    .addColumn("description", "varchar(2000)", (c) => c.notNull().defaultTo(""))
    .execute();

  await db.schema.createTable("audit")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("ts", "bigint", (c) => c.notNull())
    .addColumn("action", "varchar(200)", (c) => c.notNull())
    .addColumn("success", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("serial", "varchar(40)", (c) => c.notNull().defaultTo(""))
    .addColumn("token_type", "varchar(40)", (c) => c.notNull().defaultTo(""))
    .addColumn("user", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("realm", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("resolver", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("administrator", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("client", "varchar(100)", (c) => c.notNull().defaultTo(""))
    .addColumn("user_agent", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("info", "varchar(1000)", (c) => c.notNull().defaultTo(""))
    .addColumn("policies", "varchar(1000)", (c) => c.notNull().defaultTo(""))
    .addColumn("duration_ms", "real", (c) => c.notNull().defaultTo(0))
    .addColumn("node", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema.createIndex("audit_ts").on("audit").column("ts").execute();
  await db.schema.createIndex("audit_serial").on("audit").column("serial").execute();
  await db.schema.createIndex("audit_user").on("audit").columns(["user", "realm"]).execute();
}

/** Drops the foundation tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("audit").execute();
  await db.schema.dropTable("config").execute();
  await db.schema.dropTable("admin").execute();
}
