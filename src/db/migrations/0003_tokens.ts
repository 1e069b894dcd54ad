import type { Kysely } from "kysely";
import { idColumn } from "./_columns.ts";

/** Tokens, token info, token realms and challenges (issue 4). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("token")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("serial", "varchar(40)", (c) => c.notNull().unique())
    .addColumn("tokentype", "varchar(30)", (c) => c.notNull())
    .addColumn("description", "varchar(80)", (c) => c.notNull().defaultTo(""))
    .addColumn("key_enc", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("pin_hash", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("active", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("revoked", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("locked", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("failcount", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("maxfail", "integer", (c) => c.notNull().defaultTo(10))
    .addColumn("count", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("count_window", "integer", (c) => c.notNull().defaultTo(10))
    .addColumn("sync_window", "integer", (c) => c.notNull().defaultTo(1000))
    .addColumn("otplen", "integer", (c) => c.notNull().defaultTo(6))
    .addColumn("rollout_state", "varchar(20)", (c) => c.notNull().defaultTo(""))
    .addColumn("user_id", "varchar(320)", (c) => c.notNull().defaultTo(""))
    .addColumn("resolver", "varchar(120)", (c) => c.notNull().defaultTo(""))
    .addColumn("user_realm", "varchar(120)", (c) => c.notNull().defaultTo(""))
    .addColumn("user_login", "varchar(320)", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("token_owner").on("token")
    .columns(["user_realm", "user_login"]).execute();
  await db.schema.createIndex("token_type").on("token").column("tokentype").execute();

  await db.schema.createTable("tokeninfo")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("token_id", "integer", (c) => c.notNull().references("token.id").onDelete("cascade"))
    .addColumn("key", "varchar(255)", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("type", "varchar(100)", (c) => c.notNull().defaultTo(""))
    .addUniqueConstraint("tokeninfo_token_key", ["token_id", "key"])
    .execute();

  await db.schema.createTable("token_realm")
    .addColumn("token_id", "integer", (c) => c.notNull().references("token.id").onDelete("cascade"))
    .addColumn("realm", "varchar(120)", (c) => c.notNull())
    .addPrimaryKeyConstraint("token_realm_pk", ["token_id", "realm"])
    .execute();
  await db.schema.createIndex("token_realm_realm").on("token_realm").column("realm").execute();

  await db.schema.createTable("challenge")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("transaction_id", "varchar(64)", (c) => c.notNull())
    .addColumn("serial", "varchar(40)", (c) => c.notNull())
    .addColumn("data", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("challenge", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("session", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("answered", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("received_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("challenge_tid").on("challenge").column("transaction_id").execute();
  await db.schema.createIndex("challenge_serial").on("challenge").column("serial").execute();
}

/** Drops the token tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("challenge").execute();
  await db.schema.dropTable("token_realm").execute();
  await db.schema.dropTable("tokeninfo").execute();
  await db.schema.dropTable("token").execute();
}
