/**
 * `POST /token/load/<filename>` and existing tokens: a line naming the serial
 * of an existing token acts on that token, so the admin needs `importtokens`
 * on that token's realms (the guard's rule for a token a request names). An
 * admin limited to realm r1 imports a new serial into r1, but a line naming a
 * token of realm r2 is refused, reported as `unauthorized` (answer and audit)
 * and that token is left exactly as it was; in every file format. A
 * superuser and an admin with the right in r1 and r2 may re-initialise it.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp, SEED_HEX } from "../fixtures/tokens.ts";
import { addAdmin } from "../../src/domain/admin/mod.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { findTokenBySerial } from "../../src/domain/token/mod.ts";
import { loadTokenFile } from "../../src/domain/import/mod.ts";
import { AppError } from "../../src/errors.ts";

const ATTACKER_SECRET = "4142434445464748494a4b4c4d4e4f5051525354";
const NEW_SECRET = "6162636465666768696a6b6c6d6e6f7071727374";

interface Line {
  serial: string;
  secret: string;
}

interface Format {
  type: string;
  victim: string;
  fresh: string;
  second: string;
  file(lines: Line[]): string;
}

const b64 = (hex: string) => Buffer.from(hex, "hex").toString("base64");

const FORMATS: Format[] = [
  {
    type: "oathcsv",
    victim: "VICTIM0001",
    fresh: "NEWR10001",
    second: "NEWR10002",
    file: (lines) => lines.map((l) => `${l.serial},${l.secret},hotp,6,0\n`).join(""),
  },
  {
    // Yubico format: device serial, public id, 0 (OATH-HOTP), secret, -, timestamp
    type: "yubikeycsv",
    victim: "UBOM1111_X",
    fresh: "UBOM2222_X",
    second: "UBOM3333_X",
    file: (lines) =>
      lines.map((l) =>
        `${/^UBOM(\d+)_X$/.exec(l.serial)![1]},,0,${l.secret},,2024-01-01T10:00:00,\n`
      ).join(""),
  },
  {
    type: "pskc",
    victim: "PSKCVICTIM1",
    fresh: "PSKCNEW1",
    second: "PSKCNEW2",
    file: (lines) =>
      `<?xml version="1.0" encoding="UTF-8"?>
<KeyContainer Version="1.0" xmlns="urn:ietf:params:xml:ns:keyprov:pskc">
${
        lines.map((l) =>
          `  <KeyPackage>
    <DeviceInfo><Manufacturer>Acme</Manufacturer><SerialNo>${l.serial}</SerialNo></DeviceInfo>
    <Key Id="${l.serial}" Algorithm="urn:ietf:params:xml:ns:keyprov:pskc:hotp">
      <AlgorithmParameters><ResponseFormat Length="6" Encoding="DECIMAL"/></AlgorithmParameters>
      <Data>
        <Secret><PlainValue>${b64(l.secret)}</PlainValue></Secret>
        <Counter><PlainValue>0</PlainValue></Counter>
      </Data>
    </Key>
  </KeyPackage>`
        ).join("\n")
      }
</KeyContainer>
`,
  },
  {
    type: "aladdin-xml",
    victim: "ALADVICTIM1",
    fresh: "ALADNEW1",
    second: "ALADNEW2",
    file: (lines) =>
      `<Tokens>
${
        lines.map((l) =>
          `  <Token serial="${l.serial}"><ProductName>eToken PASS</ProductName>
    <Applications><Application><Seed>${l.secret}</Seed><MovingFactor>0</MovingFactor></Application></Applications>
  </Token>`
        ).join("\n")
      }
</Tokens>
`,
  },
];

async function upload(t: TestApp, token: string, fields: Record<string, string>, file: string) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  form.set("file", new File([file], "tokens.txt"));
  const res = await t.app.request("http://localhost/token/load/tokens.txt", {
    method: "POST",
    body: form,
    headers: { "PI-Authorization": token },
  }, { remoteAddr: { hostname: "127.0.0.1" } });
  return await jsonOf(res);
}

async function login(t: TestApp, username: string, password: string): Promise<string> {
  return (await jsonOf(await t.post("/auth", { username, password }))).body.result.value.token;
}

async function checkOtp(t: TestApp, body: Record<string, string>): Promise<boolean> {
  const res = await jsonOf(await t.post("/validate/check", body));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

/** Users, the victim token (realm r2, owner carol, PIN, counter moved) and the admins. */
async function setup(t: TestApp, victim: string) {
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice" }] });
  await createUsers(t.deps, { realm: "r2", users: [{ login: "carol" }] });
  await savePolicy(t.deps, "super", { scope: "admin", action: "*", adminuser: "admin" });
  await savePolicy(t.deps, "r1only", {
    scope: "admin",
    action: "importtokens, setpin, tokenlist",
    adminuser: "sub",
    realm: "r1",
  });
  await savePolicy(t.deps, "r1r2", {
    scope: "admin",
    action: "importtokens",
    adminuser: "both",
    realm: "r1, r2",
  });
  await enrollHotp(t, { serial: victim, user: "carol", realm: "r2", pin: "carolpin" });
  // the owner logs in twice: the counter is at 2
  assert.equal(await checkOtp(t, { user: "carol", realm: "r2", pass: `carolpin${hotp(0)}` }), true);
  assert.equal(await checkOtp(t, { user: "carol", realm: "r2", pass: `carolpin${hotp(1)}` }), true);
  await addAdmin(t.deps, "sub", { password: "sub-password" });
  await addAdmin(t.deps, "both", { password: "both-password" });
  return {
    sub: await login(t, "sub", "sub-password"),
    both: await login(t, "both", "both-password"),
    superuser: await t.adminToken(),
  };
}

for (const f of FORMATS) {
  Deno.test(`POST /token/load (${f.type}): a realm-r1 admin cannot take over a token of realm r2`, async () => {
    const t = await createTestApp();
    try {
      const { sub, both, superuser } = await setup(t, f.victim);
      const before = await findTokenBySerial(t.deps, f.victim);
      assert.ok(before);
      assert.deepEqual(before.realms, ["r2"]);
      assert.equal(before.count, 2);

      // baseline: the same admin imports a new serial into r1
      const fresh = await upload(
        t,
        sub,
        { type: f.type, tokenrealms: "r1" },
        f.file([{ serial: f.fresh, secret: NEW_SECRET }]),
      );
      assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
      assert.deepEqual(fresh.body.result.value, { n_imported: 1, n_not_imported: 0 });
      assert.deepEqual((await findTokenBySerial(t.deps, f.fresh))?.realms, ["r1"]);
      assert.equal(await checkOtp(t, { serial: f.fresh, pass: hotp(0, NEW_SECRET) }), true);

      // the attack: a second new serial and the victim's serial with the attacker's secret
      const second = f.second;
      const attack = await upload(
        t,
        sub,
        { type: f.type, tokenrealms: "r1" },
        f.file([
          { serial: second, secret: NEW_SECRET },
          { serial: f.victim, secret: ATTACKER_SECRET },
        ]),
      );
      assert.equal(attack.status, 200, JSON.stringify(attack.body));
      assert.equal(attack.body.result.status, true);
      assert.deepEqual(attack.body.result.value, {
        n_imported: 1,
        n_not_imported: 1,
        unauthorized: [f.victim],
      });
      assert.deepEqual((await findTokenBySerial(t.deps, second))?.realms, ["r1"]);
      // the victim token is exactly as before: secret, owner, PIN, realms, counter, info
      assert.deepEqual(await findTokenBySerial(t.deps, f.victim), before);
      // the admin can still not set its PIN, and the attacker's OTP does not log carol in
      const setpin = await jsonOf(
        await t.post("/token/setpin", { serial: f.victim, otppin: "evil" }, { token: sub }),
      );
      assert.equal(setpin.status, 403);
      assert.equal(
        await checkOtp(t, {
          user: "carol",
          realm: "r2",
          pass: `carolpin${hotp(2, ATTACKER_SECRET)}`,
        }),
        false,
      );
      assert.equal(
        await checkOtp(t, { user: "carol", realm: "r2", pass: `carolpin${hotp(2)}` }),
        true,
      );
      // the refused line is in the audit info
      const audit = await jsonOf(
        await t.asAdmin("GET", "/audit/", { query: { action: "*token/load*", sortorder: "asc" } }),
      );
      const rows = audit.body.result.value.auditdata as Record<string, unknown>[];
      assert.equal(rows.length, 2, JSON.stringify(rows));
      assert.equal(rows[0].info, `${f.type}, tokens.txt (imported: 1)`);
      assert.equal(rows[1].info, `${f.type}, tokens.txt (imported: 1, unauthorized: ${f.victim})`);
      assert.equal(rows[1].serial, second);

      // an admin with importtokens in r1 and r2 may re-initialise it
      const afterCheck = await findTokenBySerial(t.deps, f.victim);
      const byBoth = await upload(
        t,
        both,
        { type: f.type, tokenrealms: "r1" },
        f.file([{ serial: f.victim, secret: ATTACKER_SECRET }]),
      );
      assert.deepEqual(byBoth.body.result.value, { n_imported: 1, n_not_imported: 0 });
      const reinit = await findTokenBySerial(t.deps, f.victim);
      assert.notEqual(reinit?.keyEnc, afterCheck?.keyEnc);
      assert.equal(reinit?.count, 0);
      assert.deepEqual(reinit?.realms, ["r1", "r2"]);
      // privacyIDEA's re-initialisation keeps owner and PIN
      assert.deepEqual(reinit?.owner, afterCheck?.owner);
      assert.equal(reinit?.pinHash, afterCheck?.pinHash);

      // so may a superuser (no realm restriction)
      const bySuper = await upload(
        t,
        superuser,
        { type: f.type },
        f.file([{ serial: f.victim, secret: SEED_HEX }]),
      );
      assert.deepEqual(bySuper.body.result.value, { n_imported: 1, n_not_imported: 0 });
      assert.equal(
        await checkOtp(t, { user: "carol", realm: "r2", pass: `carolpin${hotp(0)}` }),
        true,
      );
    } finally {
      await t.close();
    }
  });
}

Deno.test("POST /token/load: a realm-limited admin cannot re-initialise a token in no realm", async () => {
  const t = await createTestApp();
  try {
    const { sub } = await setup(t, "VICTIM0001");
    await enrollHotp(t, { serial: "NOREALM1" });
    const before = await findTokenBySerial(t.deps, "NOREALM1");
    assert.deepEqual(before?.realms, []);
    const res = await upload(
      t,
      sub,
      { type: "oathcsv", tokenrealms: "r1" },
      `NOREALM1,${ATTACKER_SECRET},hotp,6,0\n`,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.result.value, {
      n_imported: 0,
      n_not_imported: 1,
      unauthorized: ["NOREALM1"],
    });
    assert.deepEqual(await findTokenBySerial(t.deps, "NOREALM1"), before);
  } finally {
    await t.close();
  }
});

Deno.test("loadTokenFile refuses the file when a token appears between the rights check and the write", async () => {
  const t = await createTestApp();
  try {
    await enrollHotp(t, { serial: "CHECKED1" });
    const checked = await findTokenBySerial(t.deps, "CHECKED1");
    const file = `LATE0001,${ATTACKER_SECRET},hotp,6,0\nCHECKED1,${ATTACKER_SECRET},hotp,6,0\n`;
    await assert.rejects(
      loadTokenFile(t.deps, {
        type: "oathcsv",
        content: new TextEncoder().encode(file),
        // LATE0001 was read as absent; while CHECKED1 is decided, someone enrols it
        mayReinit: async () => {
          await enrollHotp(t, { serial: "LATE0001" });
          return true;
        },
      }),
      (err: unknown) =>
        err instanceof AppError &&
        err.message ===
          'Cannot import the token "LATE0001": it was created or changed during the upload; upload the file again',
    );
    assert.deepEqual(await findTokenBySerial(t.deps, "CHECKED1"), checked);
    assert.equal(await checkOtp(t, { serial: "LATE0001", pass: hotp(0) }), true);
  } finally {
    await t.close();
  }
});
