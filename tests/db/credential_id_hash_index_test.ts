/**
 * Migration 0016 on the run's engine (SQLite or PostgreSQL): one
 * `credential_id_hash` per credential across all tokens (the write of a
 * second holder fails on the unique partial index), other tokeninfo keys
 * stay unconstrained, and the store finds a token by the hash.
 */
import assert from "node:assert/strict";
import { openTestDatabase } from "../test_db.ts";
import type { Db } from "../../src/db/schema.ts";
import { findByCredentialIdHash, setInfo } from "../../src/domain/token/token_store.ts";
import { isUniqueViolation } from "../../src/domain/token/mod.ts";

async function insertToken(db: Db, serial: string): Promise<number> {
  const row = await db.insertInto("token").values(
    { serial, tokentype: "passkey", created_at: 0 } as never,
  ).returning("id").executeTakeFirstOrThrow();
  return Number(row.id);
}

const HASH = "be45cb2605bf36bebde684841a28f0fd43c69850a3dce5fedba69928ee3a8991";

Deno.test("migration 0016: a credential_id_hash belongs to one token; lookups by hash find it", async () => {
  const { db, drop } = await openTestDatabase();
  try {
    const a = await insertToken(db, "PIPK0001");
    const b = await insertToken(db, "PIPK0002");
    await setInfo(db, a, { credential_id_hash: { value: HASH, type: "" } });
    assert.equal((await findByCredentialIdHash(db, HASH))?.serial, "PIPK0001");
    assert.equal(await findByCredentialIdHash(db, "00".repeat(32)), undefined);
    await assert.rejects(
      () => setInfo(db, b, { credential_id_hash: { value: HASH, type: "" } }),
      (err) => isUniqueViolation(err),
    );
    // the same value under another key, and the holder writing its own row again, are fine
    await setInfo(db, b, { other_hash: { value: HASH, type: "" } });
    await setInfo(db, a, { credential_id_hash: { value: HASH, type: "" } });
    const rows = await db.selectFrom("tokeninfo").select(["token_id", "key"])
      .where("value", "=", HASH).orderBy("token_id").execute();
    assert.deepEqual(rows.map((r) => [Number(r.token_id), r.key]), [
      [a, "credential_id_hash"],
      [b, "other_hash"],
    ]);
  } finally {
    await drop();
  }
});
