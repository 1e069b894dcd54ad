import type { Kysely } from "kysely";
import { idColumn } from "./_columns.ts";

/** Resolvers, realms, realm membership and custom user attributes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("resolver")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("name", "varchar(255)", (c) => c.notNull().unique())
    .addColumn("type", "varchar(255)", (c) => c.notNull())
    // JSON object key → value; secret values are encrypted (g1:…)
    .addColumn("config", "text", (c) => c.notNull().defaultTo("{}"))
    // JSON object key → {type, description} metadata (type.<key> / desc.<key>)
    .addColumn("meta", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema.createTable("realm")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("name", "varchar(255)", (c) => c.notNull().unique())
    .addColumn("is_default", "integer", (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema.createTable("realm_resolver")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("realm_id", "integer", (c) => c.notNull().references("realm.id").onDelete("cascade"))
    .addColumn(
      "resolver_id",
      "integer",
      (c) => c.notNull().references("resolver.id").onDelete("cascade"),
    )
    .addColumn("priority", "integer")
    .addColumn("node", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addUniqueConstraint("realm_resolver_unique", ["realm_id", "resolver_id", "node"])
    .execute();

  await db.schema.createTable("user_attribute")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("user_id", "varchar(320)", (c) => c.notNull())
    .addColumn("resolver", "varchar(255)", (c) => c.notNull())
    .addColumn("realm", "varchar(255)", (c) => c.notNull())
    .addColumn("key", "varchar(255)", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("type", "varchar(100)", (c) => c.notNull().defaultTo(""))
    .addUniqueConstraint("user_attribute_unique", ["user_id", "resolver", "realm", "key"])
    .execute();
  await db.schema.createIndex("user_attribute_realm").on("user_attribute").column("realm")
    .execute();
}

/** Drops the user tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("user_attribute").execute();
  await db.schema.dropTable("realm_resolver").execute();
  await db.schema.dropTable("realm").execute();
  await db.schema.dropTable("resolver").execute();
}
