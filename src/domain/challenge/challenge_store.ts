/**
 * SQL of challenges (challenge-response state lives in the database so every
 * node can answer the second step).
 *
 * @module
 */
import type { ChallengeTable, Db } from "../../db/schema.ts";
import { runCached } from "../../db/compiled.ts";
import type { PendingCommits } from "../../db/direct.ts";

/** A stored challenge. */
export interface ChallengeRow {
  id: number;
  transactionId: string;
  serial: string;
  data: string;
  challenge: string;
  session: string;
  isAnswered: boolean;
  receivedCount: number;
  createdAt: number;
  expiresAt: number;
}

function toRow(r: ChallengeTable & { id: number }): ChallengeRow {
  return {
    id: Number(r.id),
    transactionId: r.transaction_id,
    serial: r.serial,
    data: r.data,
    challenge: r.challenge,
    session: r.session,
    isAnswered: Number(r.answered) === 1,
    receivedCount: Number(r.received_count),
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
  };
}

/** Inserts challenges (one statement). */
export async function insertChallenges(
  db: Db,
  rows: Omit<ChallengeTable, "id" | "answered" | "received_count">[],
): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto("challenge")
    .values(rows.map((r) => ({ ...r, answered: 0, received_count: 0 }))).execute();
}

/** Challenges of a transaction id (optionally only those of some serials). */
export async function findByTransaction(
  db: Db,
  transactionId: string,
  serials?: string[],
): Promise<ChallengeRow[]> {
  let q = db.selectFrom("challenge").selectAll().where("transaction_id", "=", transactionId);
  if (serials) q = q.where("serial", "in", serials.length ? serials : [""]);
  const rows = await q.orderBy("id").execute();
  return rows.map((r) => toRow(r as ChallengeTable & { id: number }));
}

/**
 * Challenges of a serial (or all when undefined), newest first; with
 * `realms`, only those of tokens in one of them (token realm or owner realm).
 */
export async function findBySerial(
  db: Db,
  serial: string | undefined,
  page: { offset: number; limit: number; realms?: string[] },
): Promise<{ rows: ChallengeRow[]; total: number }> {
  let base = db.selectFrom("challenge");
  if (serial !== undefined) base = base.where("serial", "=", serial);
  if (page.realms) {
    const realms = page.realms.length ? page.realms : [""];
    base = base.where((eb) =>
      eb.exists(
        eb.selectFrom("token").select("token.id")
          .whereRef("token.serial", "=", "challenge.serial")
          .where((e2) =>
            e2.or([
              e2("token.user_realm", "in", realms),
              e2.exists(
                e2.selectFrom("token_realm").select("token_realm.token_id")
                  .whereRef("token_realm.token_id", "=", "token.id")
                  .where("token_realm.realm", "in", realms),
              ),
            ])
          ),
      )
    );
  }
  const total = await base.select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  const rows = await base.selectAll().orderBy("id", "desc").limit(page.limit)
    .offset(page.offset).execute();
  return {
    rows: rows.map((r) => toRow(r as ChallengeTable & { id: number })),
    total: Number(total.n),
  };
}

/**
 * Deletes the challenges of a transaction id in one statement and returns
 * the serial and expiry of each row it removed (none when a parallel call
 * removed them first). With `pending`, the write's commit is added there.
 */
export async function deleteTransaction(
  db: Db,
  transactionId: string,
  pending?: PendingCommits,
): Promise<{ serial: string; expiresAt: number }[]> {
  const { rows } = await runCached<{ serial: string; expires_at: number }>(
    db,
    "deleteTransaction",
    (tid) =>
      db.deleteFrom("challenge").where("transaction_id", "=", tid as string)
        .returning(["serial", "expires_at"]),
    [transactionId],
    pending,
  );
  return rows.map((r) => ({ serial: r.serial, expiresAt: Number(r.expires_at) }));
}

/** Deletes the challenges of some serials. */
export async function deleteBySerials(db: Db, serials: string[]): Promise<void> {
  if (serials.length === 0) return;
  await db.deleteFrom("challenge").where("serial", "in", serials).execute();
}

/** Deletes challenges that expired before `now` (only those of `serials` when given). */
export async function deleteExpired(db: Db, now: number, serials?: string[]): Promise<number> {
  let q = db.deleteFrom("challenge").where("expires_at", "<", now);
  if (serials) q = q.where("serial", "in", serials.length ? serials : [""]);
  const res = await q.executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Marks the challenges of a transaction (optionally one serial) as answered. */
export async function markAnswered(
  db: Db,
  transactionId: string,
  serial?: string,
): Promise<number> {
  let q = db.updateTable("challenge").set({ answered: 1 })
    .where("transaction_id", "=", transactionId);
  if (serial !== undefined) q = q.where("serial", "=", serial);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Every challenge of a serial (expired ones included), oldest first. */
export async function findAllOfSerial(db: Db, serial: string): Promise<ChallengeRow[]> {
  const rows = await db.selectFrom("challenge").selectAll().where("serial", "=", serial)
    .orderBy("id").execute();
  return rows.map((r) => toRow(r as ChallengeTable & { id: number }));
}

/**
 * Settles one open challenge: answered, or its session set (declined). Only a
 * challenge neither answered nor declined changes; returns whether it did.
 */
export async function settleOpenChallenge(
  db: Db,
  id: number,
  change: { answered: true } | { session: string },
  declinedSession: string,
): Promise<boolean> {
  const res = await db.updateTable("challenge")
    .set("answered" in change ? { answered: 1 } : { session: change.session })
    .where("id", "=", id).where("answered", "=", 0).where("session", "!=", declinedSession)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** True if a challenge of `serial` with this challenge value is answered and not expired. */
export async function isAnsweredChallenge(
  db: Db,
  serial: string,
  challenge: string,
  now: number,
): Promise<boolean> {
  const row = await db.selectFrom("challenge").select("id").where("serial", "=", serial)
    .where("challenge", "=", challenge).where("answered", "=", 1)
    .where("expires_at", ">=", now).executeTakeFirst();
  return row !== undefined;
}

/**
 * Replaces the data of an open challenge if it still holds `oldData` (one
 * conditional statement: of parallel confirmations only one changes it).
 */
export async function replaceOpenChallengeData(
  db: Db,
  id: number,
  oldData: string,
  newData: string,
  declinedSession: string,
): Promise<boolean> {
  const res = await db.updateTable("challenge").set({ data: newData })
    .where("id", "=", id).where("data", "=", oldData).where("answered", "=", 0)
    .where("session", "!=", declinedSession).executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
