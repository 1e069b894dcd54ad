import assert from "node:assert/strict";
import { loadConfig } from "../../../src/config.ts";
import { closeRuntime, openRuntime } from "../../../src/runtime.ts";
import { KeyMismatchError, openKeyFile } from "../../../src/domain/keys/mod.ts";
import { secureRandom } from "../../../src/lib/random.ts";
import { memoryLogger } from "../../../src/lib/logger.ts";
import { dropTestDatabase, openTestDatabase } from "../../test_db.ts";

/** A node's config: its own data dir (key file) on the shared database `url`. */
async function nodeConfig(url: string) {
  const dataDir = await Deno.makeTempDir({ prefix: "tessera-node-" });
  const config = loadConfig({ overrides: { dataDir } });
  config.storage.databaseUrl = url;
  config.signing.enabled = false;
  return config;
}

Deno.test("a node started with another key file than the database's refuses to start", async () => {
  const shared = await openTestDatabase();
  await shared.db.destroy();
  // SQLite in memory is one connection: use a file, shared by both "nodes"
  const fileDir = shared.url === ":memory:"
    ? await Deno.makeTempDir({ prefix: "tessera-shared-" })
    : undefined;
  const url = fileDir ? `sqlite:${fileDir}/db.sqlite` : shared.url;
  const first = await nodeConfig(url);
  const a = await openRuntime(first, memoryLogger());
  await closeRuntime(a);
  // the same key file again (another node with a copy of it) starts
  const copy = await nodeConfig(url);
  await Deno.copyFile(first.storage.keyFile, copy.storage.keyFile);
  await closeRuntime(await openRuntime(copy, memoryLogger()));
  // a node with a key file of its own refuses, and says why
  const other = await nodeConfig(url);
  await Deno.writeFile(other.storage.keyFile, crypto.getRandomValues(new Uint8Array(96)));
  await assert.rejects(
    () => openRuntime(other, memoryLogger()),
    (err: Error) => {
      assert.ok(err instanceof KeyMismatchError);
      assert.match(err.message, /every node sharing a database needs the same key file/);
      // the message names no key material beyond a short fingerprint prefix
      assert.ok(
        !err.message.includes(new TextDecoder().decode(Deno.readFileSync(other.storage.keyFile))),
      );
      return true;
    },
  );
  // a node without a key file refuses too, and makes none
  const none = await nodeConfig(url);
  await assert.rejects(() => openRuntime(none, memoryLogger()), KeyMismatchError);
  assert.deepEqual([...Deno.readDirSync(none.storage.dataDir)], []);
  // and the first key still works afterwards
  await closeRuntime(await openRuntime(first, memoryLogger()));
  for (const c of [first, copy, other, none]) {
    await Deno.remove(c.storage.dataDir, { recursive: true });
  }
  // a fresh handle to drop the database
  if (fileDir) await Deno.remove(fileDir, { recursive: true });
  await dropTestDatabase(shared.url);
});

Deno.test("two nodes without key files starting at once: one key is recorded and kept, the other node leaves nothing", async () => {
  const t = await openTestDatabase();
  const dir = await Deno.makeTempDir({ prefix: "tessera-race-" });
  try {
    const paths = [`${dir}/a/keys/encKey`, `${dir}/b/keys/encKey`];
    const results = await Promise.allSettled(
      paths.map((path) => openKeyFile(t.db, path, { random: secureRandom, now: 1 })),
    );
    const won = results.findIndex((r) => r.status === "fulfilled");
    const lost = 1 - won;
    assert.ok(won >= 0, "one node starts");
    const rejected = results[lost] as PromiseRejectedResult;
    assert.ok(rejected.reason instanceof KeyMismatchError, String(rejected.reason));
    const kept = (results[won] as PromiseFulfilledResult<{ bytes: Uint8Array; isCreated: boolean }>)
      .value;
    assert.equal(kept.isCreated, true);
    assert.deepEqual(await Deno.readFile(paths[won]), kept.bytes);
    assert.equal((await Deno.stat(paths[won])).mode! & 0o777, 0o600);
    assert.deepEqual([...Deno.readDirSync(`${dir}/${"ab"[won]}/keys`)].map((e) => e.name), [
      "encKey",
    ]);
    // the loser's folders, made for its key file, are gone again
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["ab"[won]]);
    // a later start with the winner's file is accepted, without a new key
    const again = await openKeyFile(t.db, paths[won], { random: secureRandom, now: 2 });
    assert.deepEqual(again, { bytes: kept.bytes, isCreated: false });
  } finally {
    await t.drop();
    await Deno.remove(dir, { recursive: true });
  }
});
