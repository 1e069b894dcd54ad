/**
 * SQL of the SMS gateway definitions and their options and headers.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** One option or header of a gateway; a secret `value` is encrypted. */
export interface GatewayOptionRow {
  key: string;
  value: string;
  type: "option" | "header";
  isSecret: boolean;
}

/** A stored gateway with its options and headers. */
export interface GatewayRow {
  id: number;
  identifier: string;
  description: string;
  providerModule: string;
  options: GatewayOptionRow[];
}

async function withOptions(
  db: Db,
  rows: { id: number; identifier: string; description: string; providermodule: string }[],
): Promise<GatewayRow[]> {
  const ids = rows.map((r) => Number(r.id));
  const options = ids.length === 0 ? [] : await db.selectFrom("smsgatewayoption")
    .select(["gateway_id", "key", "value", "type", "is_secret"])
    .where("gateway_id", "in", ids).orderBy("key").execute();
  return rows.map((r) => ({
    id: Number(r.id),
    identifier: r.identifier,
    description: r.description,
    providerModule: r.providermodule,
    options: options.filter((o) => Number(o.gateway_id) === Number(r.id)).map((o) => ({
      key: o.key,
      value: o.value,
      type: o.type === "header" ? "header" : "option",
      isSecret: Number(o.is_secret) === 1,
    })),
  }));
}

/** Every gateway (or the one with `filter.id` / `filter.identifier`), ordered by id. */
export async function listGateways(
  db: Db,
  filter: { id?: number; identifier?: string } = {},
): Promise<GatewayRow[]> {
  let q = db.selectFrom("smsgateway").select(["id", "identifier", "description", "providermodule"]);
  if (filter.id !== undefined) q = q.where("id", "=", filter.id);
  if (filter.identifier !== undefined) q = q.where("identifier", "=", filter.identifier);
  return await withOptions(db, await q.orderBy("id").execute());
}

/**
 * Creates or replaces the gateway `identifier` with exactly these options
 * (those not given are deleted), in one transaction; returns its id.
 */
export async function saveGateway(
  db: Db,
  gateway: Omit<GatewayRow, "id">,
): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    const cols = {
      identifier: gateway.identifier,
      description: gateway.description,
      providermodule: gateway.providerModule,
    };
    const { id } = await trx.insertInto("smsgateway").values(cols)
      .onConflict((oc) =>
        oc.column("identifier").doUpdateSet({
          description: cols.description,
          providermodule: cols.providermodule,
        })
      )
      .returning("id").executeTakeFirstOrThrow();
    const gatewayId = Number(id);
    await trx.deleteFrom("smsgatewayoption").where("gateway_id", "=", gatewayId).execute();
    if (gateway.options.length > 0) {
      await trx.insertInto("smsgatewayoption").values(gateway.options.map((o) => ({
        gateway_id: gatewayId,
        key: o.key,
        value: o.value,
        type: o.type,
        is_secret: o.isSecret ? 1 : 0,
      }))).execute();
    }
    return gatewayId;
  });
}

/** Deletes the gateway `identifier` and its options; returns its id, or undefined when unknown. */
export async function deleteGateway(db: Db, identifier: string): Promise<number | undefined> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.deleteFrom("smsgateway").where("identifier", "=", identifier)
      .returning("id").executeTakeFirst();
    if (!row) return undefined;
    await trx.deleteFrom("smsgatewayoption").where("gateway_id", "=", Number(row.id)).execute();
    return Number(row.id);
  });
}

/** Deletes one option or header of gateway `id`; true when it existed. */
export async function deleteGatewayOption(
  db: Db,
  id: number,
  key: string,
  type: "option" | "header",
): Promise<boolean> {
  const res = await db.deleteFrom("smsgatewayoption").where("gateway_id", "=", id)
    .where("key", "=", key).where("type", "=", type).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
