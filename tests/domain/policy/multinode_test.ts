import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../../src/config.ts";
import { migrateToLatest, openDatabase } from "../../../src/db/database.ts";
import { EXTERNAL_CHECK_MS } from "../../../src/db/sqlite_adapter.ts";
import { AuditWriter } from "../../../src/domain/audit/mod.ts";
import { keysFromKeyFile } from "../../../src/domain/keys/mod.ts";
import { FixedClock } from "../../../src/lib/clock.ts";
import { memoryLogger } from "../../../src/lib/logger.ts";
import { secureRandom } from "../../../src/lib/random.ts";
import type { Deps } from "../../../src/deps.ts";
import {
  checkRight,
  loadPolicySet,
  savePolicy,
  setPolicyActive,
} from "../../../src/domain/policy/mod.ts";

function node(file: string, dir: string, name: string): Deps {
  const config = loadConfig({ overrides: { dataDir: dir } });
  const db = openDatabase(`sqlite:${file}`);
  const log = memoryLogger();
  return {
    config,
    db,
    clock: new FixedClock(Date.UTC(2026, 0, 1)),
    random: secureRandom,
    keys: keysFromKeyFile(secureRandom.bytes(96)),
    log,
    audit: new AuditWriter(db, log),
    nodeName: name,
  };
}

// another process's commit is noticed within EXTERNAL_CHECK_MS (src/db/direct.ts)
const settle = () => new Promise((r) => setTimeout(r, EXTERNAL_CHECK_MS + 1));

Deno.test("a policy change on one node is seen by another node on its next request", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-multinode-" });
  const file = join(dir, "shared.sqlite");
  const a = node(file, dir, "node-a");
  await migrateToLatest(a.db);
  const b = node(file, dir, "node-b");
  const admin = { role: "admin" as const, username: "admin", realm: "" };
  try {
    // node b compiles its set first, so a stale cache would show up below
    assert.equal((await loadPolicySet(b)).hasActivePolicies("admin"), false);
    assert.deepEqual(await checkRight(b, admin, "delete"), []);
    await savePolicy(a, "p", { scope: "admin", action: "enable" });
    await settle();
    await assert.rejects(() => checkRight(b, admin, "delete"), /action delete is not allowed/);
    await setPolicyActive(a, "p", false);
    await settle();
    assert.deepEqual(await checkRight(b, admin, "delete"), []);
  } finally {
    await a.db.destroy();
    await b.db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
});
