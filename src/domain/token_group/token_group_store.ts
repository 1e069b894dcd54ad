/**
 * SQL of token groups (`tokengroup`, `tokentokengroup`). No cache: groups are read by the
 * token list and the group routes only.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** One token group row. */
export interface GroupRow {
  id: number;
  name: string;
  description: string;
}

/** Every group, or the one named (by name). */
export async function listGroups(db: Db, name?: string): Promise<GroupRow[]> {
  let q = db.selectFrom("tokengroup").select(["id", "name", "description"]);
  if (name !== undefined) q = q.where("name", "=", name);
  return await q.orderBy("name").execute();
}

/**
 * Creates the group or sets the description of the existing one (`description` undefined:
 * kept); its id.
 */
export async function upsertGroup(
  db: Db,
  name: string,
  description: string | undefined,
): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("tokengroup").select("id").where("name", "=", name)
      .executeTakeFirst();
    if (row) {
      if (description !== undefined) {
        await trx.updateTable("tokengroup").set({ description }).where("id", "=", row.id)
          .execute();
      }
      return row.id;
    }
    const created = await trx.insertInto("tokengroup")
      .values({ name, description: description ?? "" }).returning("id").executeTakeFirstOrThrow();
    return created.id;
  });
}

/** How many tokens are in group `id`. */
export async function countMembers(db: Db, id: number): Promise<number> {
  const row = await db.selectFrom("tokentokengroup").select((eb) =>
    eb.fn.countAll<number>().as("n")
  )
    .where("tokengroup_id", "=", id).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Deletes group `name` unless tokens are in it: `deleted`, `unknown`, or the number of
 * tokens still in it (checked in the transaction that deletes).
 */
export async function deleteGroup(
  db: Db,
  name: string,
): Promise<{ deleted: true } | { deleted: false; members?: number }> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("tokengroup").select("id").where("name", "=", name)
      .executeTakeFirst();
    if (!row) return { deleted: false };
    const members = await countMembers(trx, row.id);
    if (members > 0) return { deleted: false, members };
    await trx.deleteFrom("tokengroup").where("id", "=", row.id).execute();
    return { deleted: true };
  });
}

/** Adds token `tokenId` to group `groupId` (already in it: nothing to do). */
export async function addMember(db: Db, tokenId: number, groupId: number): Promise<void> {
  await db.insertInto("tokentokengroup").values({ token_id: tokenId, tokengroup_id: groupId })
    .onConflict((oc) => oc.columns(["token_id", "tokengroup_id"]).doNothing()).execute();
}

/** Takes token `tokenId` out of group `groupId`. */
export async function removeMember(db: Db, tokenId: number, groupId: number): Promise<void> {
  await db.deleteFrom("tokentokengroup").where("token_id", "=", tokenId)
    .where("tokengroup_id", "=", groupId).execute();
}

/** Makes `groupIds` the groups of token `tokenId`, in one transaction. */
export async function replaceMembership(
  db: Db,
  tokenId: number,
  groupIds: number[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("tokentokengroup").where("token_id", "=", tokenId).execute();
    if (groupIds.length === 0) return;
    await trx.insertInto("tokentokengroup")
      .values(groupIds.map((id) => ({ token_id: tokenId, tokengroup_id: id }))).execute();
  });
}
