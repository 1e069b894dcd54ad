/**
 * SQL of the CA connectors, their config, the local CAs' key material, serial
 * counter and CRL, and the certificates a local CA issued. Nothing is cached:
 * every read goes to the database, so every node sees a change at once.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** One config entry as stored. */
export interface ConfigEntry {
  value: string;
  type: string;
  description: string;
}

/** A stored connector with its config. */
export interface ConnectorRow {
  id: number;
  name: string;
  catype: string;
  config: Record<string, ConfigEntry>;
}

/** A local CA's stored material. */
export interface LocalCaRow {
  keyEnc: string;
  certificate: string;
  nextSerial: string;
  templates: string;
  crl: string;
  crlNumber: number;
}

/** One certificate of a local CA's index. */
export interface CertificateRow {
  serial: string;
  subject: string;
  notAfter: number;
  status: "V" | "R" | "E";
  revokedAt: number | null;
  reason: string;
  certificate: string;
}

/** Every connector (or the one named `name`), ordered by name. */
export async function listConnectors(db: Db, name?: string): Promise<ConnectorRow[]> {
  let q = db.selectFrom("caconnector").select(["id", "name", "catype"]);
  if (name !== undefined) q = q.where("name", "=", name);
  const rows = await q.orderBy("name").execute();
  const ids = rows.map((r) => Number(r.id));
  const config = ids.length === 0 ? [] : await db.selectFrom("caconnectorconfig")
    .select(["caconnector_id", "key", "value", "type", "description"])
    .where("caconnector_id", "in", ids).orderBy("key").execute();
  return rows.map((r) => ({
    id: Number(r.id),
    name: r.name,
    catype: r.catype,
    config: Object.fromEntries(
      config.filter((c) => Number(c.caconnector_id) === Number(r.id)).map((
        c,
      ) => [c.key, { value: c.value, type: c.type, description: c.description }]),
    ),
  }));
}

/** What one save writes. */
export interface ConnectorSave {
  name: string;
  catype: string;
  /** Upserted; keys not given are kept. */
  config: Record<string, ConfigEntry>;
  /** The local CA's material to store (replacing what was there). */
  localCa?: Omit<LocalCaRow, "crl" | "crlNumber">;
  /** Templates (JSON) to store when the CA material stays. */
  templates?: string;
  /** Index entries to add (an imported CA's `index.txt`); existing serials are kept. */
  certificates?: readonly CertificateRow[];
}

/** Creates or updates a connector in one transaction; returns its id. */
export async function saveConnector(db: Db, save: ConnectorSave): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom("caconnector").select("id")
      .where("name", "=", save.name).executeTakeFirst();
    const id = existing ? Number(existing.id) : Number(
      (await trx.insertInto("caconnector").values({ name: save.name, catype: save.catype })
        .returning("id").executeTakeFirstOrThrow()).id,
    );
    for (const [key, e] of Object.entries(save.config)) {
      await trx.insertInto("caconnectorconfig")
        .values({
          caconnector_id: id,
          key,
          value: e.value,
          type: e.type,
          description: e.description,
        })
        .onConflict((oc) =>
          oc.columns(["caconnector_id", "key"]).doUpdateSet({
            value: e.value,
            type: e.type,
            description: e.description,
          })
        ).execute();
    }
    if (save.localCa) {
      const cols = {
        key_enc: save.localCa.keyEnc,
        certificate: save.localCa.certificate,
        next_serial: save.localCa.nextSerial,
        templates: save.localCa.templates,
      };
      await trx.insertInto("localca").values({
        caconnector_id: id,
        ...cols,
        crl: "",
        crl_number: 0,
      })
        .onConflict((oc) => oc.column("caconnector_id").doUpdateSet({ ...cols, crl: "" }))
        .execute();
    } else if (save.templates !== undefined) {
      await trx.updateTable("localca").set({ templates: save.templates })
        .where("caconnector_id", "=", id).execute();
    }
    for (const c of save.certificates ?? []) {
      await trx.insertInto("cacertificate").values({
        caconnector_id: id,
        serial: c.serial,
        subject: c.subject,
        not_after: c.notAfter,
        status: c.status,
        revoked_at: c.revokedAt,
        reason: c.reason,
        certificate: c.certificate,
      }).onConflict((oc) => oc.columns(["caconnector_id", "serial"]).doNothing()).execute();
    }
    return id;
  });
}

/** Deletes the connector and everything of it; returns its id, or undefined when unknown. */
export async function deleteConnector(db: Db, name: string): Promise<number | undefined> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.deleteFrom("caconnector").where("name", "=", name).returning("id")
      .executeTakeFirst();
    if (!row) return undefined;
    const id = Number(row.id);
    await trx.deleteFrom("caconnectorconfig").where("caconnector_id", "=", id).execute();
    await trx.deleteFrom("localca").where("caconnector_id", "=", id).execute();
    await trx.deleteFrom("cacertificate").where("caconnector_id", "=", id).execute();
    return id;
  });
}

/** The local CA material of connector `id`, or undefined. */
export async function getLocalCa(db: Db, id: number): Promise<LocalCaRow | undefined> {
  const r = await db.selectFrom("localca").selectAll().where("caconnector_id", "=", id)
    .executeTakeFirst();
  if (!r) return undefined;
  return {
    keyEnc: r.key_enc,
    certificate: r.certificate,
    nextSerial: r.next_serial,
    templates: r.templates,
    crl: r.crl,
    crlNumber: Number(r.crl_number),
  };
}

/**
 * Takes the next serial of CA `id` (compare-and-set, so two nodes never hand
 * out one serial twice) and returns it; `next` computes the following one.
 */
export async function takeSerial(
  db: Db,
  id: number,
  next: (serial: string) => string,
): Promise<string> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const row = await db.selectFrom("localca").select("next_serial")
      .where("caconnector_id", "=", id).executeTakeFirst();
    if (!row) throw new Error(`no local CA ${id}`);
    const res = await db.updateTable("localca").set({ next_serial: next(row.next_serial) })
      .where("caconnector_id", "=", id).where("next_serial", "=", row.next_serial)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1) return row.next_serial;
  }
  throw new Error(`Cannot take a serial of local CA ${id}: too many concurrent requests`);
}

/** Adds an issued certificate to the index. */
export async function addCertificate(db: Db, id: number, c: CertificateRow): Promise<void> {
  await db.insertInto("cacertificate").values({
    caconnector_id: id,
    serial: c.serial,
    subject: c.subject,
    not_after: c.notAfter,
    status: c.status,
    revoked_at: c.revokedAt,
    reason: c.reason,
    certificate: c.certificate,
  }).execute();
}

/** The index entry of `serial`, or undefined. */
export async function getCertificate(
  db: Db,
  id: number,
  serial: string,
): Promise<CertificateRow | undefined> {
  const r = await db.selectFrom("cacertificate").selectAll().where("caconnector_id", "=", id)
    .where("serial", "=", serial).executeTakeFirst();
  return r ? certificateRow(r) : undefined;
}

function certificateRow(r: {
  serial: string;
  subject: string;
  not_after: number;
  status: string;
  revoked_at: number | null;
  reason: string;
  certificate: string;
}): CertificateRow {
  return {
    serial: r.serial,
    subject: r.subject,
    notAfter: Number(r.not_after),
    status: r.status === "R" ? "R" : r.status === "E" ? "E" : "V",
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
    reason: r.reason,
    certificate: r.certificate,
  };
}

/**
 * Marks `serial` revoked (a certificate the index does not know, e.g. one
 * issued before an import without `index.txt`, is added as revoked); a
 * certificate revoked before keeps its first revocation.
 */
export async function revokeCertificate(
  db: Db,
  id: number,
  c: Omit<CertificateRow, "status">,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const res = await trx.updateTable("cacertificate")
      .set({ status: "R", revoked_at: c.revokedAt, reason: c.reason })
      .where("caconnector_id", "=", id).where("serial", "=", c.serial).where("status", "!=", "R")
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) > 0) return;
    await trx.insertInto("cacertificate").values({
      caconnector_id: id,
      serial: c.serial,
      subject: c.subject,
      not_after: c.notAfter,
      status: "R",
      revoked_at: c.revokedAt,
      reason: c.reason,
      certificate: c.certificate,
    }).onConflict((oc) => oc.columns(["caconnector_id", "serial"]).doNothing()).execute();
  });
}

/** The revoked certificates of CA `id`, by serial. */
export async function revokedCertificates(db: Db, id: number): Promise<CertificateRow[]> {
  const rows = await db.selectFrom("cacertificate").selectAll().where("caconnector_id", "=", id)
    .where("status", "=", "R").orderBy("serial").execute();
  return rows.map(certificateRow);
}

/**
 * Stores a new CRL as number `crlNumber` when the stored one is still
 * `crlNumber - 1` (compare-and-set); false when another request stored one first.
 */
export async function saveCrl(
  db: Db,
  id: number,
  crl: string,
  crlNumber: number,
): Promise<boolean> {
  const res = await db.updateTable("localca").set({ crl, crl_number: crlNumber })
    .where("caconnector_id", "=", id).where("crl_number", "=", crlNumber - 1).executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
