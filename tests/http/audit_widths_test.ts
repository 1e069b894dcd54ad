/**
 * Audit values longer than their columns are cut to the column's width when
 * the row is written, so a request never loses its row to a value PostgreSQL's
 * varchar refuses; the table of widths matches the migrated schema.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { createTestApp, jsonOf } from "../test_app.ts";
import { TEST_ENGINE } from "../test_db.ts";
import { AUDIT_COLUMN_WIDTHS } from "../../src/domain/audit/model.ts";

Deno.test("/validate/check with a 300-character user and a 100-character serial writes exactly one audit row each, cut to the columns", async () => {
  const t = await createTestApp();
  try {
    // a character outside the BMP right at the cut: counted as one, never split
    const user = "a".repeat(254) + "\u{1F600}" + "b".repeat(45);
    const agent = "agent/".repeat(60);
    const byUser = await jsonOf(
      await t.post("/validate/check", { user, pass: "x" }, {
        headers: { "user-agent": agent },
      }),
    );
    assert.equal(byUser.body.result.status, false, JSON.stringify(byUser.body));
    const serial = "S".repeat(100);
    const bySerial = await jsonOf(await t.post("/validate/check", { serial, pass: "x" }));
    assert.equal(bySerial.body.result.status, false, JSON.stringify(bySerial.body));

    const rows = await t.deps.db.selectFrom("audit").select([
      "user",
      "realm",
      "serial",
      "user_agent",
    ])
      .where("action", "=", "POST /validate/check").orderBy("id").execute();
    assert.equal(rows.length, 2, JSON.stringify(rows));
    assert.equal(rows[0].user, "a".repeat(254) + "\u{1F600}");
    assert.equal(rows[0].user_agent, agent.slice(0, 255));
    assert.equal(rows[1].serial, "S".repeat(40));
    // nothing was skipped as a bad row
    assert.ok(!t.log.lines.some((l) => l.includes("audit")), t.log.lines.join("\n"));
  } finally {
    await t.close();
  }
});

Deno.test("a request whose path holds a NUL character still writes its audit row", async () => {
  const t = await createTestApp();
  try {
    const res = await t.get("/healthz/x%00y");
    assert.equal(res.status, 404);
    await res.body?.cancel();
    const rows = await t.deps.db.selectFrom("audit").select("action").execute();
    assert.deepEqual(rows.map((r) => r.action), ["GET /healthz/x\uFFFDy"]);
    assert.ok(!t.log.lines.some((l) => l.includes("audit")), t.log.lines.join("\n"));
  } finally {
    await t.close();
  }
});

Deno.test("the audit column widths are the migrated schema's", async () => {
  const t = await createTestApp();
  try {
    const columns = TEST_ENGINE === "postgres"
      ? (await sql<{ name: string; width: number | null }>`
          select column_name as name, character_maximum_length as width
          from information_schema.columns
          where table_name = 'audit' and table_schema = current_schema()`.execute(t.deps.db)).rows
      : (await sql<{ name: string; type: string }>`
          select name, type from pragma_table_info('audit')`.execute(t.deps.db)).rows.map((r) => ({
        name: r.name,
        width: Number(r.type.match(/^varchar\((\d+)\)$/i)?.[1] ?? NaN) || null,
      }));
    const schema = Object.fromEntries(
      columns.filter((c) => c.width !== null).map((c) => [c.name, Number(c.width)]),
    );
    const table = Object.fromEntries(
      Object.entries(AUDIT_COLUMN_WIDTHS).map((
        [k, w],
      ) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), w]),
    );
    assert.deepEqual(table, schema);
  } finally {
    await t.close();
  }
});
