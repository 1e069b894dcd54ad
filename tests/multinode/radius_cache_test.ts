/**
 * Two real Tessera processes on one database (PostgreSQL: two nodes with copies
 * of the key file; SQLite: two processes on one file), the second answering
 * only RADIUS: a policy changed through the first node's HTTP API is in effect
 * for the very next RADIUS request on the second, which gets no HTTP request
 * at all (so nothing but the RADIUS request itself can make it read the cache
 * epoch afresh).
 *
 * @module
 */
import assert from "node:assert/strict";
import { openTestDatabase, TEST_ENGINE } from "../test_db.ts";
import { HAS_RADCLIENT, radclient } from "../radius_listener/radclient.ts";
import {
  api,
  type ApiResult,
  copyKeys,
  hotp,
  HOTP_KEY_HEX,
  initialAdminPassword,
  login,
  startNode,
  type TesseraNode,
} from "./_node.ts";

const SECRET = "multinode-radius-secret";

// deno-lint-ignore no-explicit-any
function valueOf(res: ApiResult): any {
  assert.equal(res.status, 200, `HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.result.value;
}

async function radiusCheck(port: number, user: string, pass: string): Promise<string> {
  const { out } = await radclient(
    port,
    SECRET,
    `User-Name = "${user}", User-Password = "${pass}"`,
    { timeout: 5 },
  );
  const m = out.match(/Received (Access-\w+)/);
  assert.ok(m, `no RADIUS answer:\n${out}`);
  return m[1];
}

Deno.test({
  name:
    "a policy changed through node 1 is in effect for the next RADIUS request on node 2 (no HTTP there)",
  ignore: !HAS_RADCLIENT,
  async fn() {
    const dirs = [await Deno.makeTempDir({ prefix: "tessera-mnr-" })];
    const database = TEST_ENGINE === "postgres" ? await openTestDatabase() : undefined;
    const nodes: TesseraNode[] = [];
    try {
      const httpNode = await startNode({ dataDir: dirs[0], databaseUrl: database?.url });
      nodes.push(httpNode);
      let radiusDir = dirs[0];
      if (database) {
        radiusDir = await Deno.makeTempDir({ prefix: "tessera-mnr-" });
        dirs.push(radiusDir);
        await copyKeys(dirs[0], radiusDir);
      }
      const radiusNode = await startNode({
        dataDir: radiusDir,
        databaseUrl: database?.url,
        env: {
          TESSERA_RADIUS_ENABLED: "true",
          TESSERA_RADIUS_HOST: "127.0.0.1",
          TESSERA_RADIUS_PORT: "0",
          TESSERA_RADIUS_CLIENTS: JSON.stringify([{ address: "127.0.0.1", secret: SECRET }]),
        },
      });
      nodes.push(radiusNode);
      const port = Number(
        radiusNode.output().match(/RADIUS listener started address=127\.0\.0\.1:(\d+)/)?.[1],
      );
      assert.ok(port > 0, `no RADIUS listener:\n${radiusNode.output()}`);

      const jwt = await login(httpNode, "admin", await initialAdminPassword(dirs[0]));
      const passwd = `${dirs[0]}/passwd`;
      await Deno.writeTextFile(passwd, "alice:x:1000:1000:Alice:/home/alice:/bin/sh\n");
      const admin = (method: string, path: string, params: Record<string, string>) =>
        api(httpNode, method, path, { jwt, params });
      valueOf(
        await admin("POST", "/resolver/files", { type: "passwdresolver", fileName: passwd }),
      );
      valueOf(await admin("POST", "/realm/r1", { resolvers: "files" }));
      valueOf(
        await admin("POST", "/token/init", {
          type: "hotp",
          otpkey: HOTP_KEY_HEX,
          genkey: "0",
          serial: "MNRADIUS1",
          user: "alice",
          realm: "r1",
        }),
      );

      // the RADIUS node has read policies, realm and config: its caches are warm
      assert.equal(await radiusCheck(port, "alice@r1", hotp(HOTP_KEY_HEX, 0)), "Access-Accept");
      valueOf(
        await admin("POST", "/policy/only_totp", {
          scope: "authorization",
          action: "tokentype=totp",
        }),
      );
      assert.equal(
        await radiusCheck(port, "alice@r1", hotp(HOTP_KEY_HEX, 1)),
        "Access-Reject",
        "the policy set on node 1 leaves HOTP out",
      );
      valueOf(await admin("DELETE", "/policy/only_totp", {}));
      assert.equal(
        await radiusCheck(port, "alice@r1", hotp(HOTP_KEY_HEX, 2)),
        "Access-Accept",
        "the policy was deleted on node 1",
      );
      // the realm's resolver list is cached too: with another resolver alice is no user of r1
      const others = `${dirs[0]}/passwd-others`;
      await Deno.writeTextFile(others, "bob:x:1001:1001:Bob:/home/bob:/bin/sh\n");
      valueOf(
        await admin("POST", "/resolver/others", { type: "passwdresolver", fileName: others }),
      );
      valueOf(await admin("POST", "/realm/r1", { resolvers: "others" }));
      assert.equal(
        await radiusCheck(port, "alice@r1", hotp(HOTP_KEY_HEX, 3)),
        "Access-Reject",
        "realm r1 has another resolver since node 1 changed it",
      );
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
      await database?.drop();
      for (const dir of dirs) await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
