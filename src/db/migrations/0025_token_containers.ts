import { type Kysely, PostgresAdapter, sql } from "kysely";
import { idColumn } from "./_columns.ts";

/**
 * Tables of this migration that move the cache epoch (see 0013). No process caches them.
 * `tokencontainer` is left out on purpose: a successful `/validate/check` with a token in a
 * container writes its `last_seen`, and that hot write must not move the epoch (which would
 * drop every node's caches on each login).
 */
export const CACHE_EPOCH_TABLES = [
  "tokencontainertemplate",
  "tokencontainertoken",
  "tokencontainerowner",
  "tokencontainerrealm",
  "tokencontainerstates",
  "tokencontainerinfo",
];

/**
 * Token containers (`/container/`) as privacyIDEA keeps them (spec 13 §2.1): the containers,
 * their tokens (a token in at most one container: the token is the key), their owner (at most
 * one: the container is the key), extra realms, states, info and the templates. Deleting a
 * container deletes its rows here but not its tokens; deleting a token takes it out of its
 * container (cascade). Serials are unique without regard to case, as privacyIDEA looks them up.
 * Times are milliseconds since the epoch; null = never.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("tokencontainertemplate")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("name", "varchar(200)", (c) => c.notNull().unique())
    .addColumn("container_type", "varchar(100)", (c) => c.notNull().defaultTo("generic"))
    .addColumn("options", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("is_default", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createTable("tokencontainer")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("serial", "varchar(40)", (c) => c.notNull())
    .addColumn("type", "varchar(100)", (c) => c.notNull())
    .addColumn("description", "varchar(1024)", (c) => c.notNull().defaultTo(""))
    .addColumn("last_seen", "bigint")
    .addColumn("last_updated", "bigint")
    .addColumn(
      "template_id",
      "integer",
      (c) => c.references("tokencontainertemplate.id").onDelete("set null"),
    )
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("tokencontainer_serial").on("tokencontainer").unique()
    .expression(sql`lower(serial)`).execute();
  await db.schema.createIndex("tokencontainer_type").on("tokencontainer").column("type")
    .execute();
  await db.schema.createTable("tokencontainertoken")
    .addColumn(
      "token_id",
      "integer",
      (c) => c.primaryKey().references("token.id").onDelete("cascade"),
    )
    .addColumn(
      "container_id",
      "integer",
      (c) => c.notNull().references("tokencontainer.id").onDelete("cascade"),
    )
    .execute();
  await db.schema.createIndex("tokencontainertoken_container").on("tokencontainertoken")
    .column("container_id").execute();
  await db.schema.createTable("tokencontainerowner")
    .addColumn(
      "container_id",
      "integer",
      (c) => c.primaryKey().references("tokencontainer.id").onDelete("cascade"),
    )
    .addColumn("user_id", "varchar(320)", (c) => c.notNull().defaultTo(""))
    .addColumn("resolver", "varchar(120)", (c) => c.notNull().defaultTo(""))
    .addColumn("realm", "varchar(120)", (c) => c.notNull().defaultTo(""))
    .addColumn("login", "varchar(320)", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema.createIndex("tokencontainerowner_user").on("tokencontainerowner")
    .columns(["realm", "login"]).execute();
  await db.schema.createTable("tokencontainerrealm")
    .addColumn(
      "container_id",
      "integer",
      (c) => c.notNull().references("tokencontainer.id").onDelete("cascade"),
    )
    .addColumn("realm", "varchar(120)", (c) => c.notNull())
    .addPrimaryKeyConstraint("tokencontainerrealm_pk", ["container_id", "realm"])
    .execute();
  await db.schema.createIndex("tokencontainerrealm_realm").on("tokencontainerrealm")
    .column("realm").execute();
  await db.schema.createTable("tokencontainerstates")
    .addColumn(
      "container_id",
      "integer",
      (c) => c.notNull().references("tokencontainer.id").onDelete("cascade"),
    )
    .addColumn("state", "varchar(100)", (c) => c.notNull())
    .addPrimaryKeyConstraint("tokencontainerstates_pk", ["container_id", "state"])
    .execute();
  await db.schema.createTable("tokencontainerinfo")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn(
      "container_id",
      "integer",
      (c) => c.notNull().references("tokencontainer.id").onDelete("cascade"),
    )
    .addColumn("key", "varchar(255)", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("type", "varchar(100)", (c) => c.notNull().defaultTo(""))
    .addColumn("description", "varchar(2000)", (c) => c.notNull().defaultTo(""))
    .addUniqueConstraint("tokencontainerinfo_key", ["container_id", "key"])
    .execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of CACHE_EPOCH_TABLES) {
    await sql`create trigger ${sql.id(`${table}_cache_epoch`)}
      after insert or update or delete or truncate on ${sql.id(table)}
      for each statement execute function tessera_bump_cache_epoch()`.execute(db);
  }
}

/** Drops the container tables (and with them their triggers). */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (
    const table of [
      "tokencontainerinfo",
      "tokencontainerstates",
      "tokencontainerrealm",
      "tokencontainerowner",
      "tokencontainertoken",
      "tokencontainer",
      "tokencontainertemplate",
    ]
  ) {
    await db.schema.dropTable(table).execute();
  }
}
