/**
 * The MariaDB scenario's user database: the private MariaDB server of the
 * tests (tests/mariadb_server.ts) with a `users` table holding one row per
 * benchmark user, and the `sqlresolver` definition that reads it as a
 * privacyIDEA site stores it (`mysql+pymysql`, a login with a password).
 *
 * @module
 */
import type { MariaDb } from "../../tests/mariadb_server.ts";
import type { OtpUser } from "./enrol.ts";

/** Realm and resolver of the MariaDB users. */
export const MARIADB_REALM = "benchmariadb";
export const MARIADB_RESOLVER = "benchmariadbusers";
/** The database that holds the users. */
export const MARIADB_DATABASE = "benchusers";

/** The table and its rows as SQL statements (one multi-row insert per 500 users); pure. */
export function usersTableSql(users: readonly OtpUser[]): string[] {
  const statements = [
    "create table users (id int auto_increment primary key, username varchar(64) not null unique, " +
    "email varchar(255), givenname varchar(255), surname varchar(255), status varchar(16))",
  ];
  for (let i = 0; i < users.length; i += 500) {
    const rows = users.slice(i, i + 500).map((u) =>
      `('${u.login}', '${u.login}@bench.example', '${u.login}', 'Bench', 'active')`
    );
    statements.push(
      `insert into users (username, email, givenname, surname, status) values ${rows.join(", ")}`,
    );
  }
  return statements;
}

/** The `/resolver/` definition of the bench users on `server`; pure. */
export function mariaDbResolverDefinition(
  server: Pick<MariaDb, "host" | "port" | "user" | "password">,
): Record<string, string> {
  return {
    type: "sqlresolver",
    Driver: "mysql+pymysql",
    Server: server.host,
    Port: String(server.port),
    Database: MARIADB_DATABASE,
    User: server.user,
    // privacyIDEA's URL rules: the password percent-encoded
    Password: encodeURIComponent(server.password),
    conParams: "charset=utf8mb4",
    Table: "users",
    Map: JSON.stringify({
      userid: "id",
      username: "username",
      email: "email",
      givenname: "givenname",
      surname: "surname",
    }),
    Where: "status == active",
    poolSize: "10",
  };
}
