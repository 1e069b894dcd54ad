/**
 * Effect tests of admin- and user-scope policy actions (spec 15 §2, §6; spec 17 §1) over HTTP:
 * each compares a request without the policy with the same request under it, and checks that
 * a refused request changed nothing.
 *
 * @module
 */
import assert from "node:assert/strict";
import { actionTest } from "./_registry.ts";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { hotp, SEED_HEX } from "../fixtures/tokens.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { findTokenBySerial } from "../../src/domain/token/mod.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { saveResolver, SQL_DEFAULT_MAP } from "../../src/domain/resolver/mod.ts";
import { hotpAt } from "../../src/lib/otp.ts";
import { fromHex } from "../../src/lib/random.ts";

type Res = Awaited<ReturnType<typeof jsonOf>>;
type Role = "admin" | "user";

const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";

/** An app with alice and bob in realm r1 and carol in realm r2. */
async function appWithUsers(): Promise<TestApp & { resolver: string }> {
  const t = await createTestApp();
  const resolver = await createUsers(t.deps, {
    realm: "r1",
    users: [{ login: "alice", password: "alicepw" }, { login: "bob", password: "bobpw" }],
  });
  await createUsers(t.deps, { realm: "r2", users: [{ login: "carol", password: "carolpw" }] });
  return Object.assign(t, { resolver });
}

async function userJwt(t: TestApp, login: string, realm = "r1"): Promise<string> {
  const { token } = await issueJwt(t.deps, {
    username: login,
    realm,
    role: "user",
    resolver: `sql-${realm}`,
    authtype: "password",
    rights: [],
  });
  return token;
}

/** Sends a JSON request as the test admin or as alice. */
async function call(
  t: TestApp,
  role: Role,
  method: string,
  path: string,
  body?: Record<string, unknown>,
): Promise<Res> {
  const opts = body ? { body, json: true } : {};
  if (role === "admin") return await jsonOf(await t.asAdmin(method, path, opts));
  return await jsonOf(await t.request(method, path, { ...opts, token: await userJwt(t, "alice") }));
}

function ok(res: Res): Res {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res;
}

function refused(res: Res, message: string, status = 403, code = 303): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.result.status, false);
  assert.equal(res.body.result.error.code, code);
  assert.equal(res.body.result.error.message, message);
}

/** True if alice authenticates with `pin` + the HOTP at `counter` of the seed. */
async function pinWorks(t: TestApp, serial: string, pin: string, counter: number) {
  const res = await jsonOf(
    await t.post("/validate/check", { serial, pass: `${pin}${hotp(counter)}` }),
  );
  return res.body.result.value === true;
}

/** The rights every PIN test grants in the caller's scope, plus `extra`. */
function pinPolicy(role: Role, extra: string): Record<string, unknown> {
  const rights = "enrollHOTP, enrollSPASS, enrollpin, setpin, setrandompin, assign";
  return { scope: role, action: extra === "" ? rights : `${rights}, ${extra}` };
}

/** Enrols alice's HOTP token `serial` with `pin` as admin (no policies yet). */
async function aliceToken(t: TestApp, serial: string, pin = "oldpin"): Promise<void> {
  ok(
    await call(t, "admin", "POST", "/token/init", {
      serial,
      otpkey: SEED_HEX,
      pin,
      user: "alice",
      realm: "r1",
    }),
  );
}

// ---------------------------------------------------------------------------
// otp_pin_minlength / otp_pin_maxlength / otp_pin_contents, admin and user

interface PinCase {
  action: string;
  value: string;
  /** A PIN the policy refuses, with the message. */
  bad: string;
  message: string;
  /** A PIN the policy accepts. */
  good: string;
}

const PIN_CASES: PinCase[] = [
  {
    action: "otp_pin_minlength",
    value: "6",
    bad: "12ab",
    message: "The minimum OTP PIN length is 6",
    good: "abc12345",
  },
  {
    action: "otp_pin_maxlength",
    value: "4",
    bad: "12345",
    message: "The maximum OTP PIN length is 4",
    good: "1234",
  },
  {
    action: "otp_pin_contents",
    value: "cn",
    bad: "123456",
    message: `Missing character in PIN: ${LETTERS}`,
    good: "abc123",
  },
];

for (const role of ["admin", "user"] as const) {
  for (const c of PIN_CASES) {
    actionTest(
      role,
      c.action,
      `checks the PIN at /token/init, /token/setpin${role === "admin" ? ", /token/assign" : ""}`,
      async () => {
        const t = await appWithUsers();
        await aliceToken(t, "H1");
        ok(await call(t, "admin", "POST", "/token/init", { serial: "U1", otpkey: SEED_HEX }));
        // baseline: the caller's rights, no PIN rule: any PIN is set
        await savePolicy(t.deps, "rights", pinPolicy(role, ""));
        ok(await call(t, role, "POST", "/token/init", { serial: "B1", genkey: 1, pin: c.bad }));
        ok(await call(t, role, "POST", "/token/setpin", { serial: "H1", otppin: c.bad }));
        assert.ok(await pinWorks(t, "H1", c.bad, 0));

        await savePolicy(t.deps, "rights", pinPolicy(role, `${c.action}=${c.value}`));
        // /token/init: refused before anything is made
        refused(
          await call(t, role, "POST", "/token/init", { serial: "N1", genkey: 1, pin: c.bad }),
          c.message,
        );
        assert.equal(await findTokenBySerial(t.deps, "N1"), undefined);
        ok(await call(t, role, "POST", "/token/init", { serial: "N2", genkey: 1, pin: c.good }));
        // /token/setpin (serial in the path or as a parameter): refused, the PIN stays
        refused(await call(t, role, "POST", "/token/setpin/H1", { otppin: c.bad }), c.message);
        refused(
          await call(t, role, "POST", "/token/setpin", { serial: "H1", otppin: c.bad }),
          c.message,
        );
        assert.ok(await pinWorks(t, "H1", c.bad, 1));
        ok(await call(t, role, "POST", "/token/setpin/H1", { otppin: c.good }));
        assert.ok(await pinWorks(t, "H1", c.good, 2));
        if (role === "admin") {
          // /token/assign: refused, the token stays unassigned
          refused(
            await call(t, role, "POST", "/token/assign", {
              serial: "U1",
              user: "bob",
              realm: "r1",
              pin: c.bad,
            }),
            c.message,
          );
          assert.equal((await findTokenBySerial(t.deps, "U1"))?.owner, undefined);
          ok(
            await call(t, role, "POST", "/token/assign", {
              serial: "U1",
              user: "bob",
              realm: "r1",
              pin: c.good,
            }),
          );
        }
        await t.close();
      },
    );
  }
}

for (const role of ["admin", "user"] as const) {
  actionTest(
    role,
    "otp_pin_minlength",
    "an absent PIN counts as empty; the admin's rule follows the user acted on",
    async () => {
      const t = await appWithUsers();
      await savePolicy(t.deps, "rights", pinPolicy(role, "otp_pin_minlength=4"));
      // privacyIDEA checks an absent PIN as "": a minimum refuses it
      refused(
        await call(t, role, "POST", "/token/init", { serial: "N1", genkey: 1 }),
        "The minimum OTP PIN length is 4",
      );
      assert.equal(await findTokenBySerial(t.deps, "N1"), undefined);
      if (role === "admin") {
        // a rule for realm r2 only: alice (r1) is not bound by it, carol (r2) is
        await savePolicy(t.deps, "rights", pinPolicy(role, ""));
        await savePolicy(t.deps, "r2rule", {
          ...pinPolicy(role, "otp_pin_minlength=4"),
          realm: "r2",
        });
        ok(
          await call(t, role, "POST", "/token/init", {
            serial: "A1",
            genkey: 1,
            user: "alice",
            realm: "r1",
            pin: "1",
          }),
        );
        refused(
          await call(t, role, "POST", "/token/init", {
            serial: "C1",
            genkey: 1,
            user: "carol",
            realm: "r2",
            pin: "1",
          }),
          "The minimum OTP PIN length is 4",
        );
        assert.equal(await findTokenBySerial(t.deps, "C1"), undefined);
        // two values at one priority conflict
        await savePolicy(t.deps, "r2other", {
          ...pinPolicy(role, "otp_pin_minlength=6"),
          realm: "r2",
        });
        refused(
          await call(t, role, "POST", "/token/init", {
            serial: "C2",
            genkey: 1,
            user: "carol",
            realm: "r2",
            pin: "123456",
          }),
          "There are policies with conflicting actions: ['r2rule', 'r2other']",
        );
        assert.equal(await findTokenBySerial(t.deps, "C2"), undefined);
      }
      await t.close();
    },
  );

  actionTest(
    role,
    "otp_pin_contents",
    "the grammar: +, -, [..] and an unknown specifier",
    async () => {
      const t = await appWithUsers();
      await aliceToken(t, "H1");
      const setpin = (otppin: string) => call(t, role, "POST", "/token/setpin/H1", { otppin });
      const rule = async (value: string) =>
        await savePolicy(t.deps, "rights", pinPolicy(role, `otp_pin_contents=${value}`));
      await rule("+cn");
      refused(await setpin("!!!!"), `Missing character in PIN: ${LETTERS}${DIGITS}`);
      ok(await setpin("!!!1"));
      await rule("-s");
      refused(await setpin("ab!1"), "Not allowed character in PIN!");
      ok(await setpin("ab1"));
      await rule("[1234]");
      refused(await setpin("1235"), "Not allowed character in PIN!");
      ok(await setpin("4321"));
      await rule("cns");
      refused(
        await setpin("abc"),
        `Missing character in PIN: ${DIGITS},Missing character in PIN: !"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}~`,
      );
      // "o" (others) is in privacyIDEA's description, not in its grammar
      await rule("co");
      refused(await setpin("abc1"), "Unknown character specifier in PIN policy.");
      assert.ok(await pinWorks(t, "H1", "4321", 0));
      await t.close();
    },
  );

  for (
    const [attr, value, bad, message] of [
      ["minlength", "8", "1234", "The minimum OTP PIN length is 8"],
      ["maxlength", "2", "1234", "The maximum OTP PIN length is 2"],
      ["contents", "c", "1234", `Missing character in PIN: ${LETTERS}`],
    ] as const
  ) {
    actionTest(
      role,
      `spass_otp_pin_${attr}`,
      "applies to spass tokens instead of the generic rule, per attribute",
      async () => {
        const t = await appWithUsers();
        // the generic rules allow the PIN; without the spass rule a spass token takes it
        await savePolicy(
          t.deps,
          "rights",
          pinPolicy(role, "otp_pin_minlength=1, otp_pin_maxlength=10, otp_pin_contents=n"),
        );
        ok(await call(t, role, "POST", "/token/init", { type: "spass", serial: "S0", pin: bad }));
        await savePolicy(t.deps, "spass", {
          scope: role,
          action: `spass_otp_pin_${attr}=${value}`,
        });
        refused(
          await call(t, role, "POST", "/token/init", { type: "spass", serial: "S1", pin: bad }),
          message,
        );
        assert.equal(await findTokenBySerial(t.deps, "S1"), undefined);
        // setpin on an existing spass token: the token's type decides
        refused(await call(t, role, "POST", "/token/setpin/S0", { otppin: bad + "5" }), message);
        // an HOTP token keeps the generic rules
        ok(await call(t, role, "POST", "/token/init", { serial: "H1", genkey: 1, pin: bad }));
        // the other attributes still come from the generic policy
        refused(
          await call(t, role, "POST", "/token/init", {
            type: "spass",
            serial: "S2",
            pin: attr === "maxlength" ? "a" : "12345678901",
          }),
          attr === "maxlength"
            ? `Missing character in PIN: ${DIGITS}`
            : "The maximum OTP PIN length is 10",
        );
        await t.close();
      },
    );
  }
}

// ---------------------------------------------------------------------------
// enrollpin (privacyIDEA 3.13: a PIN sent without the right is refused, not dropped)

for (const role of ["admin", "user"] as const) {
  actionTest(role, "enrollpin", "a PIN at /token/init needs the right", async () => {
    const t = await appWithUsers();
    // no policy in the scope: allowed
    ok(await call(t, role, "POST", "/token/init", { serial: "A0", otpkey: SEED_HEX, pin: "p0" }));
    assert.ok(await pinWorks(t, "A0", "p0", 0));
    await savePolicy(t.deps, "rights", { scope: role, action: "enrollHOTP, enrollpin" });
    ok(await call(t, role, "POST", "/token/init", { serial: "A1", otpkey: SEED_HEX, pin: "p1" }));
    assert.ok(await pinWorks(t, "A1", "p1", 0));
    // without it: refused, nothing made; without a PIN the enrolment goes on
    await savePolicy(t.deps, "rights", { scope: role, action: "enrollHOTP" });
    refused(
      await call(t, role, "POST", "/token/init", { serial: "A2", otpkey: SEED_HEX, pin: "p2" }),
      "Setting a PIN is not allowed due to missing 'enrollpin' right.",
    );
    assert.equal(await findTokenBySerial(t.deps, "A2"), undefined);
    ok(await call(t, role, "POST", "/token/init", { serial: "A3", otpkey: SEED_HEX }));
    assert.ok(await pinWorks(t, "A3", "", 0));
    // setpin is governed by setpin, not by enrollpin
    await savePolicy(t.deps, "rights", { scope: role, action: "enrollHOTP, setpin" });
    ok(await call(t, role, "POST", "/token/setpin/A3", { otppin: "p3" }));
    assert.ok(await pinWorks(t, "A3", "p3", 1));
    await t.close();
  });
}

// ---------------------------------------------------------------------------
// the audit log: auditlog (user), auditlog_age, hide_audit_columns

const DAY = 86_400_000;

/** Failed checks of alice (now − 3 days and now) and of bob (now); returns the JWT to read. */
async function auditWorld(
  role: Role,
): Promise<{ t: TestApp; read: (q?: Record<string, string>) => Promise<Res> }> {
  const t = await appWithUsers();
  const check = async (user: string) =>
    await (await t.post("/validate/check", { user, realm: "r1", pass: "wrong" })).body?.cancel();
  await check("alice");
  t.clock.advance(3 * DAY);
  await check("alice");
  await check("bob");
  const token = role === "admin" ? await t.adminToken() : await userJwt(t, "alice");
  const read = async (query: Record<string, string> = {}) =>
    await jsonOf(await t.get("/audit/", { token, query: { page_size: "1000", ...query } }));
  return { t, read };
}

function checkRows(res: Res): Json[] {
  ok(res);
  return res.body.result.value.auditdata.filter((r: Json) => r.action.includes("/validate/check"));
}

actionTest("user", "auditlog", "a user reads the audit rows about themselves", async () => {
  const { t, read } = await auditWorld("user");
  // no user policy: allowed, and only alice's rows, whatever the filters ask for
  const rows = checkRows(await read({ user: "bob" }));
  assert.equal(rows.length, 2);
  assert.ok(rows.every((r) => r.user === "alice" && r.realm === "r1"));
  // a user policy without auditlog: refused
  await savePolicy(t.deps, "u", { scope: "user", action: "enable" });
  refused(await read(), "User actions are defined, but the action auditlog is not allowed!");
  await savePolicy(t.deps, "u", { scope: "user", action: "enable, auditlog" });
  assert.equal(checkRows(await read()).length, 2);
  await t.close();
});

for (const role of ["admin", "user"] as const) {
  actionTest(
    role,
    "auditlog_age",
    "only rows younger than the age; it replaces timelimit",
    async () => {
      const { t, read } = await auditWorld(role);
      const all = role === "admin" ? 3 : 2;
      assert.equal(checkRows(await read()).length, all);
      assert.equal(checkRows(await read({ timelimit: "1d" })).length, all - 1);
      await savePolicy(t.deps, "age", { scope: role, action: "auditlog, auditlog_age=2d" });
      // the client's timelimit cannot widen it
      assert.equal(checkRows(await read({ timelimit: "1y" })).length, all - 1);
      // m is minutes, as in privacyIDEA: 3 days and a minute later nothing is left
      await savePolicy(t.deps, "age", { scope: role, action: "auditlog, auditlog_age=5m" });
      t.clock.advance(6 * 60_000);
      assert.equal(checkRows(await read()).length, 0);
      // a value that is no time span is refused (privacyIDEA: 500)
      await savePolicy(t.deps, "age", { scope: role, action: "auditlog, auditlog_age=soon" });
      refused(
        await read(),
        'The policy action "auditlog_age" needs a time like 10d, 4h or 30m, got "soon"',
      );
      await t.close();
    },
  );

  actionTest(
    role,
    "hide_audit_columns",
    "the columns leave the rows and auditcolumns",
    async () => {
      const { t, read } = await auditWorld(role);
      const before = ok(await read()).body.result.value;
      assert.ok(before.auditcolumns.includes("serial") && before.auditcolumns.includes("info"));
      assert.ok("info" in before.auditdata[0] && "client" in before.auditdata[0]);
      // two policies: their columns add up; an unknown name is ignored
      await savePolicy(t.deps, "h1", {
        scope: role,
        action: "auditlog, hide_audit_columns=serial info",
      });
      await savePolicy(t.deps, "h2", {
        scope: role,
        action: "hide_audit_columns=client nosuchcolumn",
      });
      const after = ok(await read()).body.result.value;
      for (const col of ["serial", "info", "client"]) {
        assert.ok(!after.auditcolumns.includes(col), col);
        assert.ok(after.auditdata.every((r: Json) => !(col in r)), col);
      }
      assert.deepEqual(
        after.auditcolumns,
        before.auditcolumns.filter((c: string) => !["serial", "info", "client"].includes(c)),
      );
      assert.equal(after.count, before.count + 1);
      assert.ok(after.auditdata.every((r: Json) => "action" in r && "user" in r));
      await t.close();
    },
  );
}

// ---------------------------------------------------------------------------
// <type>_hashlib, <type>_otplen, <type>_force_server_generate, <type>_timestep

const OATH_TYPES = ["hotp", "totp", "daypassword"] as const;

/** Enrols `serial` of `type` as `role` with the client's own values; returns the stored token. */
async function enrolOath(
  t: TestApp,
  role: Role,
  type: string,
  serial: string,
  extra: Record<string, unknown> = {},
) {
  ok(await call(t, role, "POST", "/token/init", { type, serial, otpkey: SEED_HEX, ...extra }));
  return (await findTokenBySerial(t.deps, serial))!;
}

for (const role of ["admin", "user"] as const) {
  const rights = (extra: string) => ({
    scope: role,
    action: `enrollHOTP, enrollTOTP, enrollDAYPASSWORD, ${extra}`,
  });
  actionTest(
    role,
    "{type}_hashlib",
    "the policy's hash replaces the client's",
    async () => {
      const t = await appWithUsers();
      for (const type of OATH_TYPES) {
        await savePolicy(t.deps, "rights", rights(`${type}_otplen=6`));
        const before = await enrolOath(t, role, type, `${type}0`, { hashlib: "sha1" });
        assert.equal(before.info.hashlib?.value, "sha1", type);
        await savePolicy(t.deps, "rights", rights(`${type}_hashlib=sha256`));
        const after = await enrolOath(t, role, type, `${type}1`, { hashlib: "sha1" });
        assert.equal(after.info.hashlib?.value, "sha256", type);
      }
      // the token computes with it: the RFC 4226 seed's first HOTP under SHA-256
      const check = await jsonOf(
        await t.post("/validate/check", {
          serial: "hotp1",
          pass: hotpAt(fromHex(SEED_HEX), 0, 6, "sha256"),
        }),
      );
      assert.equal(check.body.result.value, true);
      await t.close();
    },
    { types: OATH_TYPES },
  );

  actionTest(
    role,
    "{type}_otplen",
    "the policy's OTP length replaces the client's",
    async () => {
      const t = await appWithUsers();
      for (const type of OATH_TYPES) {
        await savePolicy(t.deps, "rights", rights(`${type}_hashlib=sha1`));
        assert.equal((await enrolOath(t, role, type, `${type}0`, { otplen: 6 })).otplen, 6);
        await savePolicy(t.deps, "rights", rights(`${type}_otplen=8`));
        assert.equal((await enrolOath(t, role, type, `${type}1`, { otplen: 6 })).otplen, 8, type);
      }
      await t.close();
    },
    { types: OATH_TYPES },
  );

  actionTest(
    role,
    "{type}_force_server_generate",
    "the server makes the key; the client's otpkey is ignored",
    async () => {
      const t = await appWithUsers();
      for (const type of OATH_TYPES) {
        await savePolicy(t.deps, "rights", rights(`${type}_otplen=6`));
        const given = await call(t, role, "POST", "/token/init", {
          type,
          serial: `${type}0`,
          otpkey: SEED_HEX,
        });
        ok(given);
        assert.equal(given.body.detail.otpkey?.value, `seed://${SEED_HEX}`, type);
        // a policy granting every right ("*") turns on no restriction: the client's key stays
        await savePolicy(t.deps, "rights", { scope: role, action: "*" });
        const star = ok(
          await call(t, role, "POST", "/token/init", {
            type,
            serial: `${type}s`,
            otpkey: SEED_HEX,
          }),
        );
        assert.equal(star.body.detail.otpkey?.value, `seed://${SEED_HEX}`, type);
        await savePolicy(t.deps, "rights", rights(`${type}_force_server_generate`));
        const forced = ok(
          await call(t, role, "POST", "/token/init", {
            type,
            serial: `${type}1`,
            otpkey: SEED_HEX,
          }),
        );
        // a generated key, handed out in the enrolment answer
        assert.match(String(forced.body.detail.otpkey?.value), /^seed:\/\/[0-9a-f]{40}$/, type);
        assert.notEqual(forced.body.detail.otpkey.value, `seed://${SEED_HEX}`);
      }
      // the client's key does not work, the generated one does
      assert.ok(await pinWorks(t, "hotp0", "", 0));
      assert.ok(!(await pinWorks(t, "hotp1", "", 0)));
      await t.close();
    },
    { types: OATH_TYPES },
  );

  for (const [type, value, client] of [["totp", "60", "30"], ["daypassword", "12h", "1d"]]) {
    actionTest(
      role,
      `${type}_timestep`,
      "the policy's time step replaces the client's",
      async () => {
        const t = await appWithUsers();
        await savePolicy(t.deps, "rights", rights(`${type}_otplen=6`));
        const before = await enrolOath(t, role, type, `${type}0`, { timeStep: client });
        assert.equal(before.info.timeStep?.value, client);
        await savePolicy(t.deps, "rights", rights(`${type}_timestep=${value}`));
        const after = await enrolOath(t, role, type, `${type}1`, { timeStep: client });
        assert.equal(after.info.timeStep?.value, value);
        await t.close();
      },
    );
  }
}

// ---------------------------------------------------------------------------
// token: require_description_on_edit

for (const role of ["admin", "user"] as const) {
  actionTest(
    "token",
    "require_description_on_edit",
    `an empty description of a listed type is refused at /token/description (${role})`,
    async () => {
      const t = await appWithUsers();
      await aliceToken(t, "H1");
      ok(
        await call(t, "admin", "POST", "/token/init", {
          type: "spass",
          serial: "S1",
          user: "alice",
          realm: "r1",
          description: "kept",
        }),
      );
      await call(t, "admin", "POST", "/token/description/H1", { description: "old" });
      // baseline: an empty description is taken
      ok(await call(t, role, "POST", "/token/description/H1", { description: "  " }));
      assert.equal((await findTokenBySerial(t.deps, "H1"))?.description, "  ");
      ok(await call(t, role, "POST", "/token/description/H1", { description: "old" }));
      await savePolicy(t.deps, "desc", {
        scope: "token",
        action: "require_description_on_edit=hotp totp",
      });
      for (const body of [{ description: "  " }, { description: "" }]) {
        refused(
          await call(t, role, "POST", "/token/description/H1", body),
          "Description required for hotp token.",
        );
        refused(
          await call(t, role, "POST", "/token/description", { serial: "H1", ...body }),
          "Description required for hotp token.",
        );
      }
      assert.equal((await findTokenBySerial(t.deps, "H1"))?.description, "old");
      ok(await call(t, role, "POST", "/token/description/H1", { description: "new" }));
      // a type the policy does not name, and /token/set (privacyIDEA checks only here)
      ok(await call(t, role, "POST", "/token/description/S1", { description: "" }));
      assert.equal((await findTokenBySerial(t.deps, "S1"))?.description, "");
      if (role === "admin") {
        ok(await call(t, role, "POST", "/token/set/H1", { description: "" }));
        assert.equal((await findTokenBySerial(t.deps, "H1"))?.description, "");
      }
      // a policy for another realm does not apply
      await savePolicy(t.deps, "desc", {
        scope: "token",
        action: "require_description_on_edit=hotp",
        realm: "r2",
      });
      ok(await call(t, role, "POST", "/token/description/H1", { description: " " }));
      await t.close();
    },
  );
}

// ---------------------------------------------------------------------------
// privacyIDEA 3.13's read rights on policy and event metadata

for (
  const [action, other, paths] of [
    ["policyread", "policywrite", [
      "/policy/defs",
      "/policy/defs/admin",
      "/policy/defs/conditions",
      "/policy/check?user=alice&realm=r1&scope=admin&action=enable&client=127.0.0.1",
    ]],
    ["eventhandling_read", "eventhandling_write", [
      "/event/positions/UserNotification",
      "/event/actions/UserNotification",
      "/event/conditions/UserNotification",
      "/event/handlermodules",
    ]],
  ] as const
) {
  actionTest("admin", action, "needed for the metadata endpoints (privacyIDEA 3.13)", async () => {
    const t = await appWithUsers();
    // no admin policy: allowed
    for (const path of paths) ok(await call(t, "admin", "GET", path));
    await savePolicy(t.deps, "p", { scope: "admin", action: other });
    for (const path of paths) {
      refused(
        await call(t, "admin", "GET", path),
        `Admin actions are defined, but the action ${action} is not allowed!`,
      );
    }
    await savePolicy(t.deps, "p", { scope: "admin", action: `${other}, ${action}` });
    for (const path of paths) ok(await call(t, "admin", "GET", path));
    await t.close();
  });
}

// ---------------------------------------------------------------------------
// authorization: require_auth_for_resolver_details (/healthz/resolversz, privacyIDEA 3.13)

actionTest(
  "authorization",
  "require_auth_for_resolver_details",
  "a JWT that is bad or no admin's is refused at /healthz/resolversz instead of answered",
  async () => {
    const t = await appWithUsers();
    const probe = async (token?: string) =>
      await jsonOf(await t.get("/healthz/resolversz", token ? { token } : {}));
    const admin = await t.adminToken();
    const alice = await userJwt(t, "alice");
    // the overall status for anyone, the names for an admin
    assert.deepEqual(ok(await probe()).body.result.value, { status: "OK" });
    assert.deepEqual(ok(await probe(admin)).body.result.value, {
      status: "OK",
      ldapresolver: {},
      sqlresolver: { "sql-r1": "OK", "sql-r2": "OK" },
      httpresolver: {},
      entraidresolver: {},
      keycloakresolver: {},
      scimresolver: {},
    });
    // baseline: a bad token and a user's JWT are answered as anonymous
    assert.deepEqual(ok(await probe("not-a-jwt")).body.result.value, { status: "OK" });
    assert.deepEqual(ok(await probe(alice)).body.result.value, { status: "OK" });
    await savePolicy(t.deps, "strict", {
      scope: "authorization",
      action: "require_auth_for_resolver_details",
    });
    const bad = await probe("not-a-jwt");
    assert.equal(bad.status, 401);
    assert.equal(bad.body.result.status, false);
    refused(
      await probe(alice),
      "Authentication failure. You do not have the necessary role ('admin') to access this resource!",
      401,
      4306,
    );
    // no Authorization header: still the status; an admin: still the names
    assert.deepEqual(ok(await probe()).body.result.value, { status: "OK" });
    assert.equal(ok(await probe(admin)).body.result.value.sqlresolver["sql-r1"], "OK");
    await t.close();
  },
);

Deno.test("GET /healthz/resolversz: a resolver that cannot be reached fails the status; results are reused for 10 s", async () => {
  const t = await appWithUsers();
  const admin = await t.adminToken();
  const probe = async () =>
    ok(await jsonOf(await t.get("/healthz/resolversz", { token: admin }))).body.result.value;
  assert.equal((await probe()).status, "OK");
  await saveResolver(t.deps, "gone", {
    type: "sqlresolver",
    params: {
      Driver: "sqlite",
      Database: "gone.sqlite",
      Table: "users",
      Map: JSON.stringify(SQL_DEFAULT_MAP),
    },
  });
  // within 10 s the earlier result stands
  assert.equal((await probe()).sqlresolver.gone, undefined);
  t.clock.advance(10_000);
  const after = await probe();
  assert.equal(after.status, "fail");
  assert.equal(after.sqlresolver.gone, "fail");
  assert.equal(after.sqlresolver["sql-r1"], "OK");
  await t.close();
});

// ---------------------------------------------------------------------------
// otp_pin_set_random: the scope in the refusal, the PIN's contents

for (const role of ["admin", "user"] as const) {
  actionTest(
    role,
    "otp_pin_set_random",
    "the random PIN has the policy's length and the caller's otp_pin_contents",
    async () => {
      const t = await appWithUsers();
      await aliceToken(t, "H1");
      ok(
        await call(t, "admin", "POST", "/token/init", {
          type: "spass",
          serial: "S1",
          user: "alice",
          realm: "r1",
        }),
      );
      await savePolicy(t.deps, "rights", { scope: role, action: "setrandompin" });
      refused(
        await call(t, role, "POST", "/token/setrandompin/H1", {}),
        `ERR301: You need to specify a policy 'otp_pin_set_random' in scope ${role}.`,
        400,
        301,
      );
      await savePolicy(t.deps, "rights", {
        scope: role,
        action: "setrandompin, otp_pin_set_random=12, otp_pin_contents=-cs, " +
          "spass_otp_pin_contents=[ab]",
      });
      const res = ok(await call(t, role, "POST", "/token/setrandompin/H1", {}));
      const pin = res.body.detail.pin as string;
      assert.match(pin, /^[0-9]{12}$/);
      assert.ok(await pinWorks(t, "H1", pin, 0));
      // the spass token follows its own contents
      const spass = ok(await call(t, role, "POST", "/token/setrandompin/S1", {})).body.detail.pin;
      assert.match(spass, /^[ab]{12}$/);
      // a length that is no whole number is refused, the PIN stays
      await savePolicy(t.deps, "rights", {
        scope: role,
        action: "setrandompin, otp_pin_set_random=x",
      });
      refused(
        await call(t, role, "POST", "/token/setrandompin/H1", {}),
        'The policy action "otp_pin_set_random" needs an integer from 1 to 128, got "x"',
      );
      assert.ok(await pinWorks(t, "H1", pin, 1));
      await t.close();
    },
  );
}
