/**
 * A sqlresolver's SQLite file belongs to one node. On PostgreSQL two nodes
 * share the resolver, not the file: the node that saves an editable
 * resolver creates the file (and warns), the other node never makes an
 * empty one of its own but answers with an error that says what is missing,
 * until it has a copy. On SQLite the file is created on first use, logged.
 *
 * @module
 */
import assert from "node:assert/strict";
import { backup, DatabaseSync } from "node:sqlite";
import { TEST_ENGINE } from "../test_db.ts";
import { serverDatabase, type ServerProcess, startTessera } from "./_server.ts";

const LISTEN_REGEXP = /Tessera listening address=127\.0\.0\.1:(\d+)/;
const MAP = JSON.stringify({ userid: "id", username: "username", password: "password" });

/** The base URL of a started server. */
async function baseOf(server: ServerProcess): Promise<string> {
  return `http://127.0.0.1:${(await server.waitFor(LISTEN_REGEXP))[1]}`;
}

async function call(
  base: string,
  jwt: string,
  method: "GET" | "POST",
  path: string,
  params: Record<string, string> = {},
) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { "PI-Authorization": jwt },
    body: method === "POST" ? new URLSearchParams(params) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

async function adminJwt(base: string, dataDir: string): Promise<string> {
  const password = (await Deno.readTextFile(`${dataDir}/initial-admin-password`)).trim();
  const res = await fetch(`${base}/auth`, {
    method: "POST",
    body: new URLSearchParams({ username: "admin", password }),
  });
  return (await res.json()).result.value.token;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name:
    "PostgreSQL, two nodes: an editable sqlresolver on people.sqlite is created on the saving node only; the other node says the file is missing instead of making an empty one",
  ignore: TEST_ENGINE !== "postgres",
}, async () => {
  const database = await serverDatabase();
  const a = await startTessera(["serve", "--listen", "127.0.0.1:0"], { env: database.env });
  let b: ServerProcess | undefined;
  try {
    const baseA = await baseOf(a);
    // node B: its own data directory with node A's key file, as the README says
    const dirB = `${await Deno.makeTempDir({ prefix: "tessera-cli-" })}/data`;
    await Deno.mkdir(dirB, { mode: 0o700 });
    await Deno.copyFile(`${a.dataDir}/encKey`, `${dirB}/encKey`);
    b = await startTessera(["serve", "--listen", "127.0.0.1:0"], {
      env: database.env,
      dataDir: dirB,
    });
    const baseB = await baseOf(b);
    const jwt = await adminJwt(baseA, a.dataDir);

    // the quick start's resolver, saved through node A
    const saved = await call(baseA, jwt, "POST", "/resolver/people", {
      type: "sqlresolver",
      Database: "people.sqlite",
      Table: "users",
      Editable: "1",
      Map: MAP,
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.ok(exists(`${a.dataDir}/people.sqlite`), "created on the saving node");
    assert.equal((Deno.statSync(`${a.dataDir}/people.sqlite`).mode ?? 0) & 0o777, 0o600);
    assert.equal(exists(`${dirB}/people.sqlite`), false);
    await a.waitFor(
      new RegExp(
        `WARN Created the SQLite file of an editable resolver on this node only ` +
          `resolver=people path=${a.dataDir}/people\\.sqlite`,
      ),
    );
    await a.waitFor(/WARN Database is a relative path: each node reads it under its own data /);
    assert.equal(
      (await call(baseA, jwt, "POST", "/realm/staff", { resolvers: "people" })).status,
      200,
    );
    const alice = await call(baseA, jwt, "POST", "/user/", {
      user: "alice",
      resolver: "people",
      password: "Alice-Pass-1",
    });
    assert.equal(alice.status, 200, JSON.stringify(alice.body));

    // node B: an error naming the missing file, and still no file of its own
    const missing = `Cannot open the database of resolver "people": the file ` +
      `"${dirB}/people.sqlite" does not exist on this node; with PostgreSQL every node needs a ` +
      "copy of the same file (it is created only on the node that saves an editable resolver)";
    const bob = await call(baseB, jwt, "POST", "/user/", {
      user: "bob",
      resolver: "people",
      password: "Bob-Pass-123",
    });
    assert.equal(bob.body.result.status, false, JSON.stringify(bob.body));
    assert.equal(bob.body.result.error.message, `ERR907: ${missing}`);
    // a user list skips a broken user store and logs why
    const listed = await call(baseB, jwt, "GET", "/user/?realm=staff");
    assert.deepEqual(listed.body.result.value, []);
    await b.waitFor(
      /WARN Cannot list users of resolver resolver=people error=.*does not exist on this node/,
    );
    assert.equal(exists(`${dirB}/people.sqlite`), false);
    const tested = await call(baseB, jwt, "POST", "/resolver/test", {
      type: "sqlresolver",
      resolver: "people",
      Database: "people.sqlite",
      Table: "users",
      Editable: "1",
      Map: MAP,
    });
    assert.equal(tested.body.result.value, false);
    assert.equal(
      tested.body.detail.description,
      "The database file does not exist on this node; it is created here, empty, when the " +
        "resolver is created on this node. The nodes share PostgreSQL but not SQLite files: " +
        "every node needs the same " +
        `file at "${dirB}/people.sqlite", or its lookups fail. Database is a relative path: ` +
        "each node reads it under its own data directory; an absolute path says where the " +
        "copies are. Users added or changed through this resolver are written to the file of " +
        "the node that handles the request only; with several nodes keep users you edit in LDAP.",
    );

    // an update saved through node B makes no file there either
    const updated = await call(baseB, jwt, "POST", "/resolver/people", {
      type: "sqlresolver",
      Database: "people.sqlite",
      Table: "users",
      Editable: "1",
      Map: MAP,
    });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(exists(`${dirB}/people.sqlite`), false);

    // with a copy of node A's file (online backup: alice may still be in its WAL) B knows alice
    const source = new DatabaseSync(`${a.dataDir}/people.sqlite`, { readOnly: true });
    await backup(source, `${dirB}/people.sqlite`);
    source.close();
    const again = await call(baseB, jwt, "GET", "/user/?realm=staff");
    assert.deepEqual(
      again.body.result.value.map((u: { username: string }) => u.username),
      ["alice"],
      JSON.stringify(again.body),
    );
  } finally {
    await b?.cleanup();
    await a.cleanup();
    await database.drop();
  }
});

Deno.test({
  name: "SQLite: an editable sqlresolver's missing file is created on first use, and logged",
  ignore: TEST_ENGINE !== "sqlite",
}, async () => {
  const server = await startTessera(["serve", "--listen", "127.0.0.1:0"]);
  try {
    const base = await baseOf(server);
    const jwt = await adminJwt(base, server.dataDir);
    const saved = await call(base, jwt, "POST", "/resolver/people", {
      type: "sqlresolver",
      Database: "people.sqlite",
      Table: "users",
      Editable: "1",
      Map: MAP,
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    // saving creates nothing: the first use does
    assert.equal(exists(`${server.dataDir}/people.sqlite`), false);
    const created = await call(base, jwt, "POST", "/user/", {
      user: "alice",
      resolver: "people",
      password: "Alice-Pass-1",
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.ok(exists(`${server.dataDir}/people.sqlite`));
    await server.waitFor(
      new RegExp(
        `INFO Created the SQLite file of an editable resolver resolver=people ` +
          `path=${server.dataDir}/people\\.sqlite`,
      ),
    );
  } finally {
    await server.cleanup();
  }
});
