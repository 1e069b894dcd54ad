import type { Db, RadiusServerTable } from "../../db/schema.ts";

/** A stored RADIUS server definition (secret still encrypted, options as JSON text). */
export interface StoredRadiusServer {
  identifier: string;
  server: string;
  port: number;
  secretEnc: string;
  description: string;
  dictionary: string;
  retries: number;
  timeout: number;
  options: string | null;
}

const COLUMNS = [
  "identifier",
  "server",
  "port",
  "secret",
  "description",
  "dictionary",
  "retries",
  "timeout",
  "options",
] as const;

function fromRow(row: Omit<RadiusServerTable, "id">): StoredRadiusServer {
  return {
    identifier: row.identifier,
    server: row.server,
    port: Number(row.port),
    secretEnc: row.secret,
    description: row.description,
    dictionary: row.dictionary,
    retries: Number(row.retries),
    timeout: Number(row.timeout),
    options: row.options,
  };
}

/** Every definition, ordered by identifier. */
export async function listServers(db: Db): Promise<StoredRadiusServer[]> {
  const rows = await db.selectFrom("radiusserver").select(COLUMNS).orderBy("identifier")
    .execute();
  return rows.map(fromRow);
}

/** One definition by identifier. */
export async function findServer(
  db: Db,
  identifier: string,
): Promise<StoredRadiusServer | undefined> {
  const row = await db.selectFrom("radiusserver").select(COLUMNS)
    .where("identifier", "=", identifier).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/**
 * Creates or updates a definition in one statement (no race between two
 * parallel writers). `options` undefined keeps the stored options on update.
 */
export async function upsertServer(
  db: Db,
  server: Omit<StoredRadiusServer, "options"> & { options: string | null | undefined },
): Promise<void> {
  const values = {
    identifier: server.identifier,
    server: server.server,
    port: server.port,
    secret: server.secretEnc,
    description: server.description,
    dictionary: server.dictionary,
    retries: server.retries,
    timeout: server.timeout,
    options: server.options ?? null,
  };
  const { identifier: _id, options, ...update } = values;
  await db.insertInto("radiusserver").values(values)
    .onConflict((oc) =>
      oc.column("identifier").doUpdateSet(
        server.options === undefined ? update : { ...update, options },
      )
    ).execute();
}

/** Deletes a definition; returns whether it existed. */
export async function deleteServer(db: Db, identifier: string): Promise<boolean> {
  const res = await db.deleteFrom("radiusserver").where("identifier", "=", identifier)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
