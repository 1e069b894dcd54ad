/**
 * One Tessera node in a worker thread: `createApp` on its own connection to a
 * shared SQLite file, served by `Deno.serve` on 127.0.0.1. Several of these on
 * one file are several nodes sharing one database, each answering requests
 * truly in parallel with the others (tests of cross-request races).
 *
 * Messages in: `{ dbPath, keyHex }` to start (answered with `{ port }`), then
 * `"close"` (answered with `"closed"`).
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import type { Deps } from "../../src/deps.ts";
import { openDatabase } from "../../src/db/database.ts";
import { AuditWriter } from "../../src/domain/audit/mod.ts";
import { keysFromKeyFile } from "../../src/domain/keys/mod.ts";
import { FixedClock } from "../../src/lib/clock.ts";
import { memoryLogger } from "../../src/lib/logger.ts";
import { fromHex, secureRandom } from "../../src/lib/random.ts";
import { TEST_EPOCH_MS } from "../test_app.ts";

/** What a node is started with. */
export interface NodeStart {
  dbPath: string;
  /** The key file's bytes (hex), the same for every node of the database. */
  keyHex: string;
}

let server: Deno.HttpServer<Deno.NetAddr> | undefined;
let deps: Deps | undefined;

self.onmessage = async (e: MessageEvent<NodeStart | "close">) => {
  if (e.data === "close") {
    await server?.shutdown();
    await deps?.audit.flush();
    await deps?.db.destroy();
    self.postMessage("closed");
    return;
  }
  const dataDir = await Deno.makeTempDir({ prefix: "tessera-node-" });
  const config = loadConfig({ overrides: { dataDir } });
  config.storage.databaseUrl = `sqlite:${e.data.dbPath}`;
  config.signing.enabled = false;
  const db = openDatabase(config.storage.databaseUrl);
  const log = memoryLogger();
  deps = {
    config,
    db,
    clock: new FixedClock(TEST_EPOCH_MS),
    random: secureRandom,
    keys: keysFromKeyFile(fromHex(e.data.keyHex)),
    log,
    audit: new AuditWriter(db, log),
    nodeName: `node-${dataDir}`,
  };
  const app = createApp(deps);
  server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req, info) => app.fetch(req, info),
  );
  self.postMessage({ port: server.addr.port });
};
