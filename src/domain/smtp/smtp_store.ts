/**
 * SQL of the SMTP server definitions.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** A stored SMTP server; `password` is encrypted (or ""). */
export interface SmtpRow {
  id: number;
  identifier: string;
  server: string;
  port: number;
  tls: boolean;
  username: string;
  password: string;
  sender: string;
  description: string;
  timeout: number;
  enqueueJob: boolean;
}

function toRow(r: {
  id: number;
  identifier: string;
  server: string;
  port: number;
  tls: number;
  username: string;
  password: string;
  sender: string;
  description: string;
  timeout: number;
  enqueue_job: number;
}): SmtpRow {
  return {
    id: Number(r.id),
    identifier: r.identifier,
    server: r.server,
    port: Number(r.port),
    tls: Number(r.tls) === 1,
    username: r.username,
    password: r.password,
    sender: r.sender,
    description: r.description,
    timeout: Number(r.timeout),
    enqueueJob: Number(r.enqueue_job) === 1,
  };
}

/** All servers (or the one named), ordered by identifier. */
export async function listServers(db: Db, identifier?: string): Promise<SmtpRow[]> {
  let q = db.selectFrom("smtpserver").selectAll();
  if (identifier !== undefined) q = q.where("identifier", "=", identifier);
  return (await q.orderBy("identifier").execute()).map(toRow);
}

/** Inserts or replaces the server `identifier`; returns its id. */
export async function upsertServer(db: Db, row: Omit<SmtpRow, "id">): Promise<number> {
  const cols = {
    identifier: row.identifier,
    server: row.server,
    port: row.port,
    tls: row.tls ? 1 : 0,
    username: row.username,
    password: row.password,
    sender: row.sender,
    description: row.description,
    timeout: row.timeout,
    enqueue_job: row.enqueueJob ? 1 : 0,
  };
  const { identifier: _id, ...update } = cols;
  const res = await db.insertInto("smtpserver").values(cols)
    .onConflict((oc) => oc.column("identifier").doUpdateSet(update))
    .returning("id").executeTakeFirstOrThrow();
  return Number(res.id);
}

/** Deletes the server; returns its id, or undefined when unknown. */
export async function deleteServer(db: Db, identifier: string): Promise<number | undefined> {
  const res = await db.deleteFrom("smtpserver").where("identifier", "=", identifier)
    .returning("id").executeTakeFirst();
  return res ? Number(res.id) : undefined;
}
