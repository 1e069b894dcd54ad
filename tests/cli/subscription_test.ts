import assert from "node:assert/strict";
import { runSubscriptionCommand } from "../../src/cli/subscription.ts";
import { parseSubscriptionFile } from "../../src/domain/subscription/file.ts";
import { uploadSubscription } from "../../src/domain/subscription/mod.ts";
import { createTestApp } from "../test_app.ts";

const DRAFT = `application: privacyidea-cp
for_name: customer
for_address: street 1
for_email: c@example.com
for_phone: 12345
for_url: http://customer
for_comment: none
by_name: Acme Inc
by_email: v@example.com
by_address: vendor street
by_phone: "999"
by_url: http://acme
date_from: 2026-01-01
date_till: 2027-12-31
num_users: 10
num_tokens: 10
num_clients: 10
level: Gold
`;

function flags(entries: Record<string, string>): Map<string, string | true> {
  return new Map(Object.entries(entries));
}

async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const { log, error } = console;
  console.log = () => {};
  console.error = () => {};
  try {
    return await fn();
  } finally {
    console.log = log;
    console.error = error;
  }
}

Deno.test("subscription keygen + sign produce files that Tessera accepts", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-subcli-" });
  const t = await createTestApp();
  try {
    const keyDir = `${dir}/keys`;
    assert.equal(
      await quietly(() =>
        runSubscriptionCommand(["keygen"], flags({ vendor: "Acme", out: keyDir, bits: "1024" }))
      ),
      0,
    );
    assert.equal((await Deno.stat(`${keyDir}/Acme-private.pem`)).mode! & 0o777, 0o600);
    assert.match(await Deno.readTextFile(`${keyDir}/Acme.pem`), /BEGIN PUBLIC KEY/);
    // never overwrites an existing key
    assert.equal(
      await quietly(() =>
        runSubscriptionCommand(["keygen"], flags({ vendor: "Acme", out: keyDir }))
      ),
      1,
    );

    await Deno.writeTextFile(`${dir}/draft.yaml`, DRAFT);
    for (const format of ["pss", "legacy"]) {
      const out = `${dir}/signed-${format}.yaml`;
      const code = await quietly(() =>
        runSubscriptionCommand(
          ["sign", `${dir}/draft.yaml`],
          flags({ key: `${keyDir}/Acme-private.pem`, out, format }),
        )
      );
      assert.equal(code, 0, format);
      const parsed = parseSubscriptionFile(await Deno.readTextFile(out));
      assert.ok(parsed.ok, format);
      // install the public key where the server looks for it and upload
      t.deps.config.subscriptions.keyDir = keyDir;
      assert.equal(await uploadSubscription(t.deps, await Deno.readTextFile(out)), 1, format);
    }
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("subscription command usage errors exit with 2", async () => {
  const cases: [string[], Record<string, string>][] = [
    [[], {}],
    [["nope"], {}],
    [["keygen"], {}],
    [["keygen"], { vendor: "../evil" }],
    [["keygen"], { vendor: "Acme", bits: "4096" }],
    [["sign"], { key: "k.pem" }],
    [["sign", "a.yaml"], {}],
    [["sign", "a.yaml"], { key: "k.pem", format: "md5" }],
  ];
  for (const [args, f] of cases) {
    assert.equal(await quietly(() => runSubscriptionCommand(args, flags(f))), 2, args.join(" "));
  }
});
