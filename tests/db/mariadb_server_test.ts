/**
 * The private MariaDB server of the tests (tests/mariadb_server.ts): it
 * starts on a loopback port, its user logs in with the password and only with
 * it, `sql()` answers rows, and `stop()` ends the process by its id and
 * removes the folder. Without MariaDB installed this test fails (never skips).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import mysql from "mysql2/promise";
import { startMariaDb } from "../mariadb_server.ts";

Deno.test({
  name: "private MariaDB: password login, sql(), a second database, stopped by pid",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const server = await startMariaDb();
    const pid = server.pid;
    try {
      assert.ok(pid > 0);
      assert.equal(server.host, "127.0.0.1");
      const url = new URL(server.url);
      assert.equal(url.protocol, "mysql:");
      assert.equal(Number(url.port), server.port);
      assert.equal(decodeURIComponent(url.password), server.password);
      assert.equal(url.pathname, `/${server.database}`);

      const rows = await server.sql(
        "create table t (id int primary key, name varchar(20)); " +
          "insert into t values (1, 'a'), (2, 'b'); select name from t order by id",
      );
      assert.deepEqual(rows.map((r) => r.name), ["a", "b"]);
      assert.deepEqual(
        (await server.sql("select id from t where name = ?", { values: ["b"] })).map((r) => r.id),
        [2],
      );
      const other = await server.createDatabase("second");
      assert.equal(other, server.urlOf("second"));
      assert.deepEqual(await server.sql("select database() as d", { database: "second" }), [
        { d: "second" },
      ]);

      // the password is checked (no skip-grant-tables)
      await assert.rejects(
        mysql.createConnection({
          host: server.host,
          port: server.port,
          user: server.user,
          password: "wrong",
        }),
        (err: { code?: string }) => err.code === "ER_ACCESS_DENIED_ERROR",
      );
    } finally {
      await server.stop();
    }
    assert.equal(server.pid, 0);
    assert.equal(existsSync(server.dir), false);
    // the process is gone
    assert.equal(existsSync(`/proc/${pid}`), false);
  },
});
