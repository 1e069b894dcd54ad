/**
 * Several Tessera nodes started at the same moment on a fresh, empty
 * PostgreSQL database all come up, and the migrations run once (the
 * PostgreSQL run only).
 *
 * @module
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import { MIGRATIONS } from "../../src/db/migrations/mod.ts";
import { TEST_ENGINE } from "../test_db.ts";
import {
  api,
  copyKeys,
  createEmptyPgDatabase,
  login,
  runCli,
  startNode,
  type TesseraNode,
} from "./_node.ts";

const NODES = 4;

Deno.test({
  name: "nodes started at once on an empty PostgreSQL database all come up and migrate once",
  ignore: TEST_ENGINE !== "postgres",
  async fn() {
    const database = await createEmptyPgDatabase();
    const seed = await Deno.makeTempDir({ prefix: "tessera-mn-seed-" });
    const dirs: string[] = [];
    const nodes: TesseraNode[] = [];
    try {
      // the key file every node shares, made by Tessera itself (on a throwaway SQLite file)
      const made = await runCli({ dataDir: seed }, ["migrate"]);
      assert.equal(made.code, 0, made.stderr);
      for (let i = 0; i < NODES; i++) {
        dirs.push(await Deno.makeTempDir({ prefix: "tessera-mn-" }));
        await copyKeys(seed, dirs[i]);
      }
      const started = await Promise.allSettled(
        dirs.map((dataDir) => startNode({ dataDir, databaseUrl: database.url })),
      );
      for (const s of started) if (s.status === "fulfilled") nodes.push(s.value);
      const failures = started.flatMap((s) => s.status === "rejected" ? [String(s.reason)] : []);
      assert.deepEqual(failures, [], `${failures.length} of ${NODES} nodes did not come up`);

      const db = openDatabase(database.url, { poolSize: 1 });
      try {
        const rows = await sql<{ name: string; n: number }>`
          select name, count(*)::int as n from kysely_migration group by name order by name
        `.execute(db);
        assert.deepEqual(
          rows.rows.map((r) => [r.name, r.n]),
          Object.keys(MIGRATIONS).sort().map((name) => [name, 1]),
        );
        const admins = await sql<{ n: number }>`select count(*)::int as n from admin`.execute(db);
        assert.equal(admins.rows[0].n, 1, "one initial admin");
      } finally {
        await db.destroy();
      }
      // exactly one node created the initial admin; its password works on every node
      const written = [];
      for (const dir of dirs) {
        try {
          written.push((await Deno.readTextFile(`${dir}/initial-admin-password`)).split("\n")[0]);
        } catch (err) {
          if (!(err instanceof Deno.errors.NotFound)) throw err;
        }
      }
      assert.equal(written.length, 1, "initial admin password files");
      for (const node of nodes) {
        assert.equal((await api(node, "GET", "/healthz/readyz")).status, 200);
        const jwt = await login(node, "admin", written[0]);
        assert.equal((await api(node, "GET", "/token/", { jwt })).status, 200);
      }
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
      await database.drop();
      for (const dir of [seed, ...dirs]) await Deno.remove(dir, { recursive: true });
    }
  },
});
