/**
 * SQL of service IDs (`serviceid`). No cache: read by `/serviceid/` and `/application/` only.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** One service ID row. */
export interface ServiceIdRow {
  id: number;
  name: string;
  description: string;
}

/** Every service ID, or the one named. */
export async function listServiceIds(db: Db, name?: string): Promise<ServiceIdRow[]> {
  let q = db.selectFrom("serviceid").select(["id", "name", "description"]);
  if (name !== undefined) q = q.where("name", "=", name);
  return await q.orderBy("name").execute();
}

/** Creates the service ID or sets its description (undefined: kept); its id. */
export async function upsertServiceId(
  db: Db,
  name: string,
  description: string | undefined,
): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("serviceid").select("id").where("name", "=", name)
      .executeTakeFirst();
    if (row) {
      if (description !== undefined) {
        await trx.updateTable("serviceid").set({ description }).where("id", "=", row.id).execute();
      }
      return row.id;
    }
    const created = await trx.insertInto("serviceid")
      .values({ name, description: description ?? "" }).returning("id").executeTakeFirstOrThrow();
    return created.id;
  });
}

/** Deletes the service ID named; false if there was none. */
export async function deleteServiceId(db: Db, name: string): Promise<boolean> {
  const res = await db.deleteFrom("serviceid").where("name", "=", name).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
