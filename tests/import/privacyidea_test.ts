/**
 * `tessera import privacyidea` against a privacyIDEA database the test builds
 * (tests/import/_pi_fixture.ts) in the scenario of tests/import/_pi_scenario.ts:
 * dry run, wrong key, the real run, then over HTTP: imported PIN + next OTP
 * accepted, the same OTP refused, the locked token still locked, policies and
 * realms listed, the admin logs in; a second run changes nothing. The source
 * is SQLite, and in the PostgreSQL run also a PostgreSQL database (MariaDB:
 * privacyidea_mariadb_test.ts). Also: database URLs that are refused before
 * any connection.
 */
import assert from "node:assert/strict";
import { createTestApp } from "../test_app.ts";
import { TEST_PG_URL } from "../test_db.ts";
import { importPrivacyidea } from "../../src/domain/import/mod.ts";
import { mysqlTargetOf } from "../../src/domain/import/privacyidea_store.ts";
import { createPiPostgres, createPiSqlite, ENC_KEY } from "./_pi_fixture.ts";
import { migrationScenario } from "./_pi_scenario.ts";

Deno.test("import privacyidea from SQLite: dry run, wrong key, import, HTTP checks, second run", async () => {
  await migrationScenario(async (dir, nowMs) => ({
    ...(await createPiSqlite(dir, nowMs)),
    drop: () => Promise.resolve(),
  }));
});

Deno.test({
  name: "import privacyidea from PostgreSQL: the same scenario",
  ignore: TEST_PG_URL === undefined,
  fn: async () =>
    await migrationScenario((dir, nowMs) => createPiPostgres(TEST_PG_URL!, dir, nowMs)),
});

Deno.test("import privacyidea reads MySQL URLs as pi.cfg holds them; refuses what it cannot honour, never showing the password", async () => {
  for (
    const url of [
      "mysql://pi:s3cr%40t@db.example.org/pi",
      "mariadb://pi:s3cr%40t@db.example.org/pi",
      "mysql+pymysql://pi:s3cr%40t@db.example.org/pi?charset=utf8",
      "mysql+mysqldb://pi:s3cr%40t@db.example.org:3306/pi?charset=utf8mb4",
      "mariadb+mariadbconnector://pi:s3cr%40t@db.example.org/pi",
    ]
  ) {
    const target = await mysqlTargetOf(url);
    assert.deepEqual(target, {
      host: "db.example.org",
      port: 3306,
      user: "pi",
      password: "s3cr@t",
      database: "pi",
      socketPath: undefined,
      connectTimeoutMs: 10_000,
      ssl: undefined,
    }, url);
  }
  const socket = await mysqlTargetOf(
    "mysql+pymysql://pi:pw@localhost:3307/pi?unix_socket=/run/mysqld/mysqld.sock&connect_timeout=3",
  );
  assert.deepEqual(
    [socket.port, socket.socketPath, socket.connectTimeoutMs],
    [3307, "/run/mysqld/mysqld.sock", 3000],
  );

  const t = await createTestApp();
  try {
    const refused: [string, RegExp][] = [
      [
        "mysql+pymysql://pi:topsecret@db/pi?ssl_mode=REQUIRED",
        /^Cannot use the database URL parameters ssl_mode \(supported: charset, unix_socket, connect_timeout, ssl_ca, ssl_cert, ssl_key, ssl_check_hostname\)$/,
      ],
      [
        "mysql://pi:topsecret@db/",
        /^Cannot read the database URL mysql:\/\/pi@db\/: it names no database/,
      ],
      [
        "mysql://pi:topsecret@db/pi?charset=latin1",
        /^Cannot use charset=latin1: Tessera reads the database as utf8mb4/,
      ],
      [
        "mysql://pi:topsecret@db/pi?connect_timeout=0",
        /^Cannot use connect_timeout=0: expected whole seconds from 1 to 600$/,
      ],
      [
        "mysql://pi:topsecret@db/pi?ssl_ca=/nonexistent/ca.pem",
        /^Cannot read ssl_ca "\/nonexistent\/ca.pem": /,
      ],
      [
        "mysql://pi:topsecret@db/pi?ssl_check_hostname=false",
        /^ssl_check_hostname needs ssl_ca/,
      ],
      [
        "oracle://pi:topsecret@db/pi",
        /^Cannot read the database URL "oracle:\/\/pi@db\/pi": expected sqlite:\/\/\/<path>, postgresql:\/\/…, mysql:\/\/… or mariadb:\/\/…$/,
      ],
    ];
    for (const [url, message] of refused) {
      await assert.rejects(importPrivacyidea(t.deps, url, { encKey: ENC_KEY }), (err: Error) => {
        assert.match(err.message, message, url);
        assert.ok(!err.message.includes("topsecret"), err.message);
        return true;
      });
    }
    await assert.rejects(
      importPrivacyidea(t.deps, "sqlite:///nonexistent.db", { encKey: new Uint8Array(10) }),
      /Cannot read the key file: the key file has 10 bytes, expected 96/,
    );
  } finally {
    await t.close();
  }
});
