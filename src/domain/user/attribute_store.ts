/**
 * Custom user attributes (`user_attribute` table).
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** Which user an attribute belongs to. */
export interface AttributeOwner {
  uid: string;
  resolver: string;
  realm: string;
}

/** key → value of one user. */
export async function attributesOf(db: Db, owner: AttributeOwner): Promise<Record<string, string>> {
  const rows = await db.selectFrom("user_attribute").select(["key", "value"])
    .where("user_id", "=", owner.uid).where("resolver", "=", owner.resolver)
    .where("realm", "=", owner.realm).orderBy("key").execute();
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

type Attribute = { key: string; value: string; type: string };

function insertAttribute(db: Db, owner: AttributeOwner, attr: Attribute) {
  return db.insertInto("user_attribute").values({
    user_id: owner.uid,
    resolver: owner.resolver,
    realm: owner.realm,
    key: attr.key,
    value: attr.value,
    type: attr.type,
  });
}

function storedAttribute(db: Db, owner: AttributeOwner, key: string) {
  return db.selectFrom("user_attribute").select(["id", "value"])
    .where("user_id", "=", owner.uid).where("resolver", "=", owner.resolver)
    .where("realm", "=", owner.realm).where("key", "=", key).executeTakeFirstOrThrow();
}

/** Inserts or replaces one attribute; returns the row id. */
export async function upsertAttribute(
  db: Db,
  owner: AttributeOwner,
  attr: Attribute,
): Promise<number> {
  await insertAttribute(db, owner, attr).onConflict((oc) =>
    oc.columns(["user_id", "resolver", "realm", "key"]).doUpdateSet({
      value: attr.value,
      type: attr.type,
    })
  ).execute();
  return Number((await storedAttribute(db, owner, attr.key)).id);
}

/**
 * Inserts one attribute unless the user has it already and returns the
 * stored value: of two requests creating it at once, both get the winner's.
 */
export async function insertAttributeIfAbsent(
  db: Db,
  owner: AttributeOwner,
  attr: Attribute,
): Promise<string> {
  await insertAttribute(db, owner, attr)
    .onConflict((oc) => oc.columns(["user_id", "resolver", "realm", "key"]).doNothing())
    .execute();
  return (await storedAttribute(db, owner, attr.key)).value;
}

/** Deletes one attribute; returns the number of deleted rows. */
export async function deleteAttribute(db: Db, owner: AttributeOwner, key: string): Promise<number> {
  const res = await db.deleteFrom("user_attribute")
    .where("user_id", "=", owner.uid).where("resolver", "=", owner.resolver)
    .where("realm", "=", owner.realm).where("key", "=", key).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Deletes every attribute of one user (e.g. when the user is deleted). */
export async function deleteAllAttributes(db: Db, owner: AttributeOwner): Promise<number> {
  const res = await db.deleteFrom("user_attribute")
    .where("user_id", "=", owner.uid).where("resolver", "=", owner.resolver)
    .where("realm", "=", owner.realm).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Deletes every attribute of `uid` in `resolver`, whatever the realm. */
export async function deleteAttributesOfUid(
  db: Db,
  resolver: string,
  uid: string,
): Promise<number> {
  const res = await db.deleteFrom("user_attribute").where("user_id", "=", uid)
    .where("resolver", "=", resolver).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Sorted distinct custom attribute keys stored for users of `realm`. */
export async function attributeKeysInRealm(db: Db, realm: string): Promise<string[]> {
  const rows = await db.selectFrom("user_attribute").select("key").distinct()
    .where("realm", "=", realm).orderBy("key").execute();
  return rows.map((r) => r.key);
}

/** Deletes every custom attribute of users of `realm`. */
export async function deleteAttributesInRealm(db: Db, realm: string): Promise<number> {
  const res = await db.deleteFrom("user_attribute").where("realm", "=", realm).executeTakeFirst();
  return Number(res.numDeletedRows);
}
