/**
 * The migration scenario of `tessera import privacyidea`, run by the tests of
 * each source engine (SQLite, PostgreSQL, MariaDB): see {@link migrationScenario}.
 *
 * @module
 */
import assert from "node:assert/strict";
import { loadSystemConfig } from "../../src/domain/system_config/mod.ts";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { hotp, totp } from "../fixtures/tokens.ts";
import { importPrivacyidea } from "../../src/domain/import/mod.ts";
import { findTokenBySerial, listTokens } from "../../src/domain/token/mod.ts";
import { listAdmins } from "../../src/domain/admin/mod.ts";
import { AppError } from "../../src/errors.ts";
import { ENC_KEY } from "./_pi_fixture.ts";

export async function check(t: TestApp, body: Record<string, string>) {
  const res = await jsonOf(await t.post("/validate/check", body));
  return res.body;
}

/** `GET /policy/`: the policies as a list. */
async function policiesListed(t: TestApp): Promise<Record<string, unknown>[]> {
  const value = (await jsonOf(await t.asAdmin("GET", "/policy/"))).body.result.value;
  return Array.isArray(value) ? value : Object.values(value);
}

async function tokenCount(t: TestApp): Promise<number> {
  return (await listTokens(t.deps, {})).count;
}

/** Builds the fixture's privacyIDEA database in `dir`; returns its URL and how to remove it. */
export type PiSourceMaker = (
  dir: string,
  nowMs: number,
) => Promise<{ url: string; drop(): Promise<void> }>;

/**
 * The migration of the fixture installation from the source `makeSource` builds: wrong key,
 * dry run, import, then over HTTP the PINs of every format with the next OTP, counters,
 * the locked token, policies, realms, servers, config, machine tokens, the admin's login; a
 * second run changes nothing.
 */
export async function migrationScenario(makeSource: PiSourceMaker): Promise<void> {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir({ prefix: "tessera-pi-" });
  const made = await makeSource(dir, t.clock.now());
  try {
    // a wrong key file is refused before anything is written
    const wrongKey = ENC_KEY.map((b) => b ^ 0x5a);
    await assert.rejects(
      importPrivacyidea(t.deps, made.url, { encKey: wrongKey }),
      (err: unknown) => err instanceof AppError && /does not decrypt/.test(err.message),
    );
    assert.equal(await tokenCount(t), 0);

    const dry = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY, dryRun: true });
    assert.equal(dry.isDryRun, true);
    assert.equal(dry.changed, 0);
    assert.ok(dry.log.includes("would import: token HOTP0001"), dry.log.join("\n"));
    assert.ok(dry.log.includes("would import: policies pol_auth"));
    assert.equal(await tokenCount(t), 0);
    assert.equal((await policiesListed(t)).length, 0);

    const progress: number[] = [];
    const real = await importPrivacyidea(t.deps, made.url, {
      encKey: ENC_KEY,
      onProgress: (done) => progress.push(done),
    });
    const summary = Object.fromEntries(real.summary.map((r) => [r.what, r]));
    assert.deepEqual(
      Object.fromEntries(
        Object.entries(summary).map(([k, r]) => [k, [r.found, r.imported, r.failed]]),
      ),
      {
        "resolvers": [1, 1, 0],
        "realms": [2, 2, 0],
        "system config": [3, 3, 0],
        "policies": [2, 2, 0],
        "event handlers": [1, 1, 0],
        "machine resolvers": [1, 1, 0],
        "RADIUS servers": [1, 1, 0],
        "SMTP servers": [1, 1, 0],
        "admins": [1, 1, 0],
        "token groups": [1, 1, 0],
        "tokens": [6, 6, 0],
        "machine tokens": [1, 1, 0],
      },
      real.log.join("\n"),
    );
    assert.deepEqual(progress, [1, 2, 3, 4, 5, 6]);
    assert.ok(!real.log.some((l) => /token groups \(table/.test(l)), real.log.join("\n"));
    assert.ok(
      real.log.some((l) =>
        l.startsWith(
          "token U2F0001: its U2F registration (key handle, pubKey, appId) is incomplete",
        )
      ),
    );

    // alice: argon2 PIN + the next HOTP (counter 2); the same OTP again is refused
    const ok = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(2) });
    assert.equal(ok.result.value, true, JSON.stringify(ok));
    const again = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(2) });
    assert.equal(again.result.value, false);
    assert.equal(
      (await check(t, { user: "alice", realm: "realm1", pass: "9999" + hotp(3) })).result.value,
      false,
    );
    // the PIN was re-hashed to Tessera's form at its first use
    const alice = await findTokenBySerial(t.deps, "HOTP0001");
    assert.match(alice!.pinHash, /^hmac256\$/);
    assert.equal(alice!.owner?.login, "alice");
    assert.equal(alice!.info.secret_note.type, "password");
    assert.equal(alice!.info.note.value, "Jürgen’s Schlüssel ✓");
    assert.equal(
      (await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(4) })).result.value,
      true,
    );
    // bob: pbkdf2 PIN + TOTP; a step at or before the imported last step is a replay
    const now = t.clock.now();
    assert.equal(
      (await check(t, { user: "bob", realm: "realm1", pass: "1234" + totp(now) })).result.value,
      true,
    );
    assert.equal(
      (await check(t, { user: "bob", realm: "realm1", pass: "1234" + totp(now) })).result.value,
      false,
    );
    // the locked token is still locked
    const locked = await jsonOf(
      await t.post("/validate/check", { serial: "LOCK0001", pass: "1234" + hotp(0) }),
    );
    assert.notEqual(locked.body.result.value, true);
    const enable = await jsonOf(
      await t.asAdmin("POST", "/token/enable", { body: { serial: "LOCK0001" } }),
    );
    assert.equal(enable.status, 400);
    assert.equal(enable.body.result.error.code, 1007);
    // legacy seeded PIN with a legacy-padded secret; an encrypted PIN; fail counter carried
    assert.equal(
      (await check(t, { serial: "LEGA0001", pass: "1234" + hotp(0) })).result.value,
      true,
    );
    assert.equal((await findTokenBySerial(t.deps, "ENCP0001"))!.failcount, 3);
    assert.match((await findTokenBySerial(t.deps, "ENCP0001"))!.pinHash, /^hmac256\$/);
    assert.equal(
      (await check(t, { serial: "ENCP0001", pass: "1234" + hotp(0) })).result.value,
      true,
    );
    assert.equal((await findTokenBySerial(t.deps, "U2F0001"))!.active, false);

    // policies, realms, servers listed
    const policies = await policiesListed(t);
    // deno-lint-ignore no-explicit-any
    const pol: Record<string, any> = Object.fromEntries(policies.map((p) => [p.name, p]));
    assert.deepEqual(Object.keys(pol).sort(), ["pol_admin", "pol_auth"]);
    assert.deepEqual(pol.pol_auth.action, { otppin: "tokenpin" });
    assert.equal(pol.pol_auth.priority, 2);
    assert.equal(pol.pol_auth.description, "PINs of realm1");
    assert.equal(pol.pol_auth.conditions.length, 1);
    assert.equal(pol.pol_admin.active, false);
    const realms = (await jsonOf(await t.asAdmin("GET", "/realm/"))).body.result.value;
    assert.deepEqual(Object.keys(realms).sort(), ["realm1", "realm2"]);
    assert.equal(realms.realm1.default, true);
    const radius = (await jsonOf(await t.asAdmin("GET", "/radiusserver/"))).body.result.value;
    assert.equal(radius.rad1.server, "127.0.0.1");
    // a JSON column, carried as privacyIDEA stored it
    assert.deepEqual(radius.rad1.options, { message_authenticator: true });
    const smtp = (await jsonOf(await t.asAdmin("GET", "/smtpserver/"))).body.result.value;
    assert.equal(smtp.mail1.username, "pi");
    // a password-type config value: decrypted with privacyIDEA's key, encrypted with Tessera's
    const system = (await jsonOf(await t.asAdmin("GET", "/system/"))).body.result.value;
    assert.equal(system["yubico.secret"], "__CENSORED__");
    assert.equal((await loadSystemConfig(t.deps)).get("yubico.secret"), "c2VjcmV0LWtleQ==");
    const stored = await t.deps.db.selectFrom("config").select(["value", "type"])
      .where("key", "=", "yubico.secret").executeTakeFirstOrThrow();
    assert.deepEqual([stored.type, stored.value.startsWith("g1:")], ["password", true]);
    const bindings =
      (await jsonOf(await t.asAdmin("GET", "/machine/token", { query: { serial: "LEGA0001" } })))
        .body.result.value;
    assert.equal(bindings.length, 1, JSON.stringify(bindings));

    // the imported admin logs in with privacyIDEA's password (argon2 + pepper "missing")
    const login = await jsonOf(
      await t.post("/auth", { username: "piadmin", password: "Test123!" }),
    );
    assert.equal(login.status, 200, JSON.stringify(login.body));
    assert.ok((await listAdmins(t.deps)).some((a) => a.username === "piadmin"));
    const wrong = await jsonOf(
      await t.post("/auth", { username: "piadmin", password: "Test1234" }),
    );
    assert.equal(wrong.status, 401);

    // a second run changes nothing
    const second = await importPrivacyidea(t.deps, made.url, { encKey: ENC_KEY });
    assert.equal(second.changed, 0);
    for (const r of second.summary) {
      if (r.what === "machine tokens") continue;
      assert.equal(r.existing, r.found, `${r.what}: ${JSON.stringify(r)}`);
    }
    assert.match((await findTokenBySerial(t.deps, "HOTP0001"))!.pinHash, /^hmac256\$/);
    assert.equal(
      (await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(4) })).result.value,
      false,
    );
  } finally {
    await made.drop();
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
}
