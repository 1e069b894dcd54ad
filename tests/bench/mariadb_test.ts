import assert from "node:assert/strict";
import {
  MARIADB_DATABASE,
  mariaDbResolverDefinition,
  usersTableSql,
} from "../../bench/lib/mariadb.ts";
import { planUsers } from "../../bench/lib/enrol.ts";

Deno.test("bench MariaDB users: the table and one row per user, 500 rows per insert", () => {
  const statements = usersTableSql(planUsers("m", 1001));
  assert.match(statements[0], /^create table users \(id int auto_increment primary key/);
  assert.equal(statements.length, 1 + 3);
  assert.equal(statements[1].match(/\('m\d{5}'/g)?.length, 500);
  assert.equal(statements[3].match(/\('m\d{5}'/g)?.length, 1);
  assert.match(statements[1], /^insert into users .* values \('m00001', 'm00001@bench\.example'/);
});

Deno.test("bench MariaDB resolver: privacyIDEA's keys, the password percent-encoded", () => {
  const def = mariaDbResolverDefinition({
    host: "127.0.0.1",
    port: 3307,
    user: "tessera",
    password: "pw-a/b@c",
  });
  assert.equal(def.type, "sqlresolver");
  assert.equal(def.Driver, "mysql+pymysql");
  assert.equal(def.Port, "3307");
  assert.equal(def.Database, MARIADB_DATABASE);
  assert.equal(def.Password, "pw-a%2Fb%40c");
  assert.equal(def.Where, "status == active");
  assert.deepEqual(Object.keys(JSON.parse(def.Map)), [
    "userid",
    "username",
    "email",
    "givenname",
    "surname",
  ]);
});
