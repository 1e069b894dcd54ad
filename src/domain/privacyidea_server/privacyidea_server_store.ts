import type { Db } from "../../db/schema.ts";

/** A stored remote privacyIDEA server definition. */
export interface StoredPrivacyideaServer {
  id: number;
  identifier: string;
  url: string;
  /** Verify the server's TLS certificate. */
  isTlsVerified: boolean;
  description: string;
}

const COLUMNS = ["id", "identifier", "url", "tls", "description"] as const;

function fromRow(
  row: { id: number; identifier: string; url: string; tls: number; description: string },
): StoredPrivacyideaServer {
  return {
    id: Number(row.id),
    identifier: row.identifier,
    url: row.url,
    isTlsVerified: Number(row.tls) === 1,
    description: row.description,
  };
}

/** Every definition, ordered by identifier. */
export async function listServers(db: Db): Promise<StoredPrivacyideaServer[]> {
  const rows = await db.selectFrom("privacyideaserver").select(COLUMNS).orderBy("identifier")
    .execute();
  return rows.map(fromRow);
}

/** One definition by identifier. */
export async function findServer(
  db: Db,
  identifier: string,
): Promise<StoredPrivacyideaServer | undefined> {
  const row = await db.selectFrom("privacyideaserver").select(COLUMNS)
    .where("identifier", "=", identifier).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Creates or updates a definition in one statement (two parallel writers cannot collide). */
export async function upsertServer(
  db: Db,
  server: Omit<StoredPrivacyideaServer, "id">,
): Promise<void> {
  const values = {
    identifier: server.identifier,
    url: server.url,
    tls: server.isTlsVerified ? 1 : 0,
    description: server.description,
  };
  const { identifier: _id, ...update } = values;
  await db.insertInto("privacyideaserver").values(values)
    .onConflict((oc) => oc.column("identifier").doUpdateSet(update)).execute();
}

/** Deletes a definition; returns whether it existed. */
export async function deleteServer(db: Db, identifier: string): Promise<boolean> {
  const res = await db.deleteFrom("privacyideaserver").where("identifier", "=", identifier)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** One definition by id (a `remote` token names its server by id, as privacyIDEA). */
export async function findServerById(
  db: Db,
  id: number,
): Promise<StoredPrivacyideaServer | undefined> {
  const row = await db.selectFrom("privacyideaserver").select(COLUMNS)
    .where("id", "=", id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}
