/**
 * In-process dependencies for the small overhead benchmarks: a fresh file
 * database in a temporary directory, migrated, real clock and randomness.
 *
 * @module
 */
import { loadConfig } from "../../src/config.ts";
import { migrateToLatest, openDatabase } from "../../src/db/database.ts";
import { AuditWriter } from "../../src/domain/audit/mod.ts";
import { keysFromKeyFile } from "../../src/domain/keys/mod.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { secureRandom } from "../../src/lib/random.ts";
import type { Deps } from "../../src/deps.ts";

/** Deps on a new migrated SQLite file under a temporary directory (returned for clean-up). */
export async function benchDeps(): Promise<{ deps: Deps; dir: string }> {
  const dir = await Deno.makeTempDir();
  const config = loadConfig({ overrides: { dataDir: dir } });
  const db = openDatabase(config.storage.databaseUrl);
  await migrateToLatest(db);
  const log = createLogger("error");
  return {
    dir,
    deps: {
      config,
      db,
      clock: systemClock,
      random: secureRandom,
      keys: keysFromKeyFile(secureRandom.bytes(96)),
      log,
      audit: new AuditWriter(db, log),
      nodeName: "bench",
    },
  };
}
