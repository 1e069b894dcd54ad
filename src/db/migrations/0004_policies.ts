import type { Kysely } from "kysely";
import { idColumn } from "./_columns.ts";

/** Policies and the one-row policy version counter that tells every node to reload. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("policy")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("name", "varchar(64)", (c) => c.notNull().unique())
    .addColumn("scope", "varchar(32)", (c) => c.notNull())
    .addColumn("action", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("active", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("priority", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("realm", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("resolver", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("user", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("adminrealm", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("adminuser", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("pinode", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("client", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("time", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("check_all_resolvers", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("user_case_insensitive", "integer", (c) => c.notNull().defaultTo(0))
    // JSON list of 6-element condition tuples
    .addColumn("conditions", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("description", "text")
    .addColumn("user_agents", "text", (c) => c.notNull().defaultTo(""))
    .execute();

  await db.schema.createTable("policy_version")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("version", "bigint", (c) => c.notNull())
    .execute();
  await db.insertInto("policy_version" as never).values({ id: 1, version: 0 } as never).execute();
}

/** Drops the policy tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("policy_version").execute();
  await db.schema.dropTable("policy").execute();
}
