/**
 * `/register` and `/recover` over HTTP (spec 14 §14): self-registration into an editable SQL
 * resolver with the registration code mailed to a real SMTP sink on loopback, and password
 * recovery with a mailed code. No JWT anywhere: the policies decide, and every refusal is read
 * back to show it changed nothing.
 */
import assert from "node:assert/strict";
import { jsonOf } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import {
  ALICE,
  anon,
  bodyOf,
  logsIn,
  NEWBIE,
  policy,
  recoveryCodeOf,
  recoveryConfig,
  registerApp,
  registerPolicy,
  resetRows,
  setConfig,
  tokens,
  usersOf,
} from "./_register.ts";

Deno.test("GET /register answers false without a register policy naming a resolver, true with one", async () => {
  const { t, close } = await registerApp();
  try {
    const none = await jsonOf(await t.get("/register"));
    assert.equal(none.status, 200);
    assert.equal(none.body.result.value, false);
    await policy(t, "other", { scope: "register", action: "smtpconfig=mail" });
    assert.equal((await jsonOf(await t.get("/register"))).body.result.value, false);
    await policy(t, "reg", { scope: "register", action: "resolver=sql1" });
    const yes = await jsonOf(await t.get("/register"));
    assert.equal(yes.status, 200);
    assert.equal(yes.body.result.value, true);
    // a policy for other clients does not count
    await jsonOf(await t.asAdmin("DELETE", "/policy/reg"));
    await policy(t, "reg", { scope: "register", action: "resolver=sql1", client: "10.9.9.0/24" });
    assert.equal((await jsonOf(await t.get("/register"))).body.result.value, false);
  } finally {
    await close();
  }
});

Deno.test("POST /register creates the user, enrols a registration token and mails its code", async () => {
  const { t, sink, close } = await registerApp();
  try {
    await registerPolicy(t);
    const res = await anon(t, "/register", NEWBIE);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result.status, true);
    assert.equal(res.body.result.value, true);
    // the user, with every attribute given, in the policy's resolver and realm
    const user = (await usersOf(t)).newbie;
    assert.equal(user.resolver, "sql1");
    assert.equal(user.realm, "realm1");
    assert.equal(user.email, NEWBIE.email);
    assert.equal(user.givenname, NEWBIE.givenname);
    assert.equal(user.surname, NEWBIE.surname);
    assert.equal(user.mobile, NEWBIE.mobile);
    assert.equal(user.phone, NEWBIE.phone);
    assert.ok(await logsIn(t, "newbie", NEWBIE.password), "the chosen password is the user's");
    // the registration token
    const own = (await tokens(t)).filter((x) => x.username === "newbie");
    assert.equal(own.length, 1);
    assert.equal(own[0].tokentype, "registration");
    assert.equal(own[0].user_realm, "realm1");
    assert.equal(own[0].resolver, "sql1");
    assert.match(own[0].serial, /^REG/);
    // the mail
    assert.equal(sink.mails.length, 1);
    const mail = sink.mails[0];
    assert.deepEqual(mail.to, [NEWBIE.email]);
    assert.equal(mail.from, "pi@example.com");
    assert.match(mail.data, /^Subject: Your privacyIDEA registration$/m);
    const m = bodyOf(mail).match(/^\nYour registration token is ([A-Za-z0-9]{24})\.\n$/);
    assert.ok(m, `default body: ${JSON.stringify(bodyOf(mail))}`);
    // the code authenticates once, then the token is gone
    const ok = await jsonOf(
      await t.post("/validate/check", { user: "newbie", realm: "realm1", pass: m[1] }),
    );
    assert.equal(ok.body.result.value, true);
    assert.equal((await tokens(t)).filter((x) => x.username === "newbie").length, 0);
    const again = await jsonOf(
      await t.post("/validate/check", { user: "newbie", realm: "realm1", pass: m[1] }),
    );
    assert.equal(again.body.result.value, false);
    // nothing secret in the audit log
    const audit = await jsonOf(
      await t.asAdmin("GET", "/audit/", { query: { action: "POST /register" } }),
    );
    const row = audit.body.result.value.auditdata[0];
    assert.equal(row.info, "newbie");
    assert.equal(row.user, "newbie");
    assert.equal(row.realm, "realm1");
    assert.ok(!JSON.stringify(audit.body).includes(m[1]));
    assert.ok(!JSON.stringify(audit.body).includes(NEWBIE.password));
  } finally {
    await close();
  }
});

Deno.test("POST /register refusals answer privacyIDEA's errors and create nothing", async () => {
  const { t, sink, close } = await registerApp();
  try {
    const cases: [string, () => Promise<void>, Record<string, unknown>, number, string][] = [
      ["no policy", async () => {}, NEWBIE, 400, "ERR402: No SMTP server configuration specified!"],
      [
        "no resolver",
        () => policy(t, "reg", { scope: "register", action: "smtpconfig=mail, realm=realm1" }),
        NEWBIE,
        400,
        "ERR402: No resolver specified to register in!",
      ],
      [
        "missing surname",
        () => registerPolicy(t),
        { ...NEWBIE, surname: "" },
        400,
        "ERR905: Missing parameter: surname",
      ],
      [
        "existing user",
        () => registerPolicy(t),
        { ...NEWBIE, username: "alice" },
        400,
        "ERR402: The username is already registered!",
      ],
      [
        "bad address",
        () => registerPolicy(t),
        { ...NEWBIE, email: "a@b\r\nBcc: x@y" },
        400,
        'ERR905: Cannot parse parameter "email": invalid address',
      ],
      [
        "resolver not in the realm",
        () =>
          policy(t, "reg", {
            scope: "register",
            action: "resolver=sql1, realm=other, smtpconfig=mail",
          }),
        NEWBIE,
        400,
        'ERR402: Cannot register in realm "other": resolver "sql1" is not in it',
      ],
    ];
    const before = { users: await usersOf(t), tokens: await tokens(t) };
    for (const [name, arrange, body, status, message] of cases) {
      await jsonOf(await t.asAdmin("DELETE", "/policy/reg"));
      await arrange();
      const res = await anon(t, "/register", body);
      assert.equal(res.status, status, `${name}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.result.status, false, name);
      assert.equal(res.body.result.error.message, message, name);
      assert.deepEqual(await usersOf(t), before.users, name);
      assert.deepEqual(await tokens(t), before.tokens, name);
    }
    assert.equal(sink.mails.length, 0);
  } finally {
    await close();
  }
});

Deno.test("POST /register refuses a superuser realm: nobody registers an admin", async () => {
  const { t, sink, close } = await registerApp();
  try {
    await registerPolicy(t);
    t.deps.config.auth.superuserRealms = ["realm1"];
    const res = await anon(t, "/register", NEWBIE);
    assert.equal(res.status, 400);
    assert.equal(
      res.body.result.error.message,
      'ERR402: Cannot register in realm "realm1": it is a superuser realm',
    );
    assert.equal((await usersOf(t)).newbie, undefined);
    assert.deepEqual(await tokens(t), []);
    assert.equal(sink.mails.length, 0);
    assert.equal(await logsIn(t, "newbie", NEWBIE.password), false);
    // nor through another realm that holds the register resolver
    t.deps.config.auth.superuserRealms = ["admins"];
    const admins = await jsonOf(
      await t.asAdmin("POST", "/realm/admins", { body: { resolvers: "sql1" } }),
    );
    assert.equal(admins.status, 200);
    const other = await anon(t, "/register", NEWBIE);
    assert.equal(
      other.body.result.error.message,
      'ERR402: Cannot register in realm "admins": it is a superuser realm',
    );
    assert.equal((await usersOf(t)).newbie, undefined);
  } finally {
    await close();
  }
});

Deno.test("POST /register refuses a name another resolver of the realm has: no user is shadowed", async () => {
  const { t, sink, close } = await registerApp();
  try {
    // sql0 comes after sql1 in realm1 and has bob; registering bob in sql1 would put a new bob
    // first in the realm
    await createUsers(t.deps, {
      realm: "realm1",
      resolver: "sql0",
      users: [{ login: "bob", password: "bob-pass", email: "bob@example.com" }],
    });
    const prio = await jsonOf(
      await t.asAdmin("POST", "/realm/realm1", {
        body: { resolvers: "sql1,sql0", "priority.sql1": "1", "priority.sql0": "2" },
      }),
    );
    assert.equal(prio.status, 200, JSON.stringify(prio.body));
    await registerPolicy(t);
    const before = await usersOf(t);
    assert.equal(before.bob.resolver, "sql0");
    const res = await anon(t, "/register", { ...NEWBIE, username: "bob" });
    assert.equal(res.status, 400);
    assert.equal(res.body.result.error.message, "ERR402: The username is already registered!");
    assert.deepEqual(await usersOf(t), before);
    assert.deepEqual(await tokens(t), []);
    assert.equal(sink.mails.length, 0);
    assert.ok(await logsIn(t, "bob", "bob-pass"), "bob@realm1 is still sql0's bob");
  } finally {
    await close();
  }
});

Deno.test("POST /register of one name twice at once: one user, one token, one mail", async () => {
  const { t, sink, close } = await registerApp();
  try {
    await registerPolicy(t);
    const answers = await Promise.all([1, 2, 3].map(() => anon(t, "/register", NEWBIE)));
    assert.equal(answers.filter((a) => a.status === 200).length, 1);
    for (const a of answers.filter((a) => a.status !== 200)) {
      assert.equal(a.status, 400);
      assert.equal(a.body.result.error.message, "ERR402: The username is already registered!");
    }
    assert.ok((await usersOf(t)).newbie);
    assert.equal((await tokens(t)).filter((x) => x.username === "newbie").length, 1);
    assert.equal(sink.mails.length, 1);
  } finally {
    await close();
  }
});

Deno.test("POST /register takes the user and the token back when the mail cannot be sent", async () => {
  const { t, sink, close } = await registerApp();
  try {
    await registerPolicy(t);
    // the SMTP server goes away
    sink.close();
    const res = await anon(t, "/register", NEWBIE);
    assert.equal(res.status, 400);
    assert.equal(res.body.result.error.code, 402);
    assert.equal(res.body.result.error.message, "ERR402: Failed to send email!");
    assert.equal((await usersOf(t)).newbie, undefined);
    assert.deepEqual(await tokens(t), []);
    assert.equal(await logsIn(t, "newbie", NEWBIE.password), false);
  } finally {
    await close();
  }
});

Deno.test("POST /recover mails a code; /recover/reset sets the password with it once", async () => {
  const { t, sink, close } = await registerApp();
  try {
    await recoveryConfig(t);
    const res = await anon(t, "/recover", {
      user: "alice",
      realm: "realm1",
      email: "ALICE@example.com",
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result.value, true);
    assert.equal(sink.mails.length, 1);
    const mail = sink.mails[0];
    assert.deepEqual(mail.to, [ALICE.email]);
    assert.match(mail.data, /^Subject: Your password reset$/m);
    const code = recoveryCodeOf(mail);
    assert.equal(
      bodyOf(mail),
      "Someone requested to reset the password within privacyIDEA.\n\n" +
        "To reset your user password please visit the link\n\n" +
        `https://pi.example.com/#!/reset/alice@realm1/${code}\n`,
    );
    // kept as a keyed hash only, valid for an hour
    const rows = await resetRows(t);
    assert.equal(rows.length, 1);
    assert.ok(!rows[0].code_hash.includes(code));
    assert.equal(Number(rows[0].expires_at) - Number(rows[0].created_at), 3600_000);
    // a wrong code: false, the password stays
    const wrong = await anon(t, "/recover/reset", {
      user: "alice",
      realm: "realm1",
      recoverycode: code.slice(0, 23) + (code[23] === "a" ? "b" : "a"),
      password: "new-pass",
    });
    assert.equal(wrong.status, 200);
    assert.equal(wrong.body.result.value, false);
    assert.ok(await logsIn(t, "alice", ALICE.password));
    // the right code
    const reset = await anon(t, "/recover/reset", {
      user: "alice",
      realm: "realm1",
      recoverycode: code,
      password: "new-pass",
    });
    assert.equal(reset.status, 200);
    assert.equal(reset.body.result.value, true);
    assert.ok(await logsIn(t, "alice", "new-pass"));
    assert.equal(await logsIn(t, "alice", ALICE.password), false);
    assert.equal((await resetRows(t)).length, 0, "used up");
    // reused: false, the password stays
    const reused = await anon(t, "/recover/reset", {
      user: "alice",
      realm: "realm1",
      recoverycode: code,
      password: "third-pass",
    });
    assert.equal(reused.body.result.value, false);
    assert.ok(await logsIn(t, "alice", "new-pass"));
    const audit = await jsonOf(
      await t.asAdmin("GET", "/audit/", { query: { action: "POST /recover*" } }),
    );
    assert.ok(!JSON.stringify(audit.body).includes(code), "the code is never in the audit log");
  } finally {
    await close();
  }
});

Deno.test("POST /recover/reset refuses an expired code and lets one of two parallel uses through", async () => {
  const { t, sink, close } = await registerApp();
  try {
    await recoveryConfig(t);
    const ask = { user: "alice", realm: "realm1", email: ALICE.email };
    assert.equal((await anon(t, "/recover", ask)).body.result.value, true);
    const expired = recoveryCodeOf(sink.mails[0]);
    t.clock.advance(3600_000 + 1);
    const late = await anon(t, "/recover/reset", { ...ask, recoverycode: expired, password: "x1" });
    assert.equal(late.body.result.value, false);
    assert.ok(await logsIn(t, "alice", ALICE.password));
    assert.equal((await resetRows(t)).length, 0, "expired codes are deleted");

    assert.equal((await anon(t, "/recover", ask)).body.result.value, true);
    const code = recoveryCodeOf(sink.mails[1]);
    const answers = await Promise.all(
      ["p-one", "p-two", "p-three"].map((password) =>
        anon(t, "/recover/reset", { ...ask, recoverycode: code, password })
      ),
    );
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
    assert.equal(answers.filter((a) => a.body.result.value === true).length, 1);
  } finally {
    await close();
  }
});

Deno.test("POST /recover answers an unknown user as a wrong address, and stores and sends nothing", async () => {
  const { t, sink, close } = await registerApp();
  try {
    await recoveryConfig(t);
    const wrongMail = await anon(t, "/recover", {
      user: "alice",
      realm: "realm1",
      email: "x@example.com",
    });
    const unknown = await anon(t, "/recover", {
      user: "nobody",
      realm: "realm1",
      email: "x@example.com",
    });
    for (const res of [wrongMail, unknown]) {
      assert.equal(res.status, 400);
      assert.equal(res.body.result.error.code, 904);
      assert.equal(
        res.body.result.error.message,
        "ERR904: The email does not match the users email.",
      );
    }
    assert.deepEqual(wrongMail.body.result, unknown.body.result);
    // reset for an unknown user: false, like a wrong code
    const reset = await anon(t, "/recover/reset", {
      user: "nobody",
      realm: "realm1",
      recoverycode: "A".repeat(24),
      password: "x",
    });
    assert.equal(reset.status, 200);
    assert.equal(reset.body.result.value, false);
    const missing = await anon(t, "/recover", { user: "alice", realm: "realm1" });
    assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: email");
    assert.equal(sink.mails.length, 0);
    assert.equal((await resetRows(t)).length, 0);
  } finally {
    await close();
  }
});

Deno.test("POST /recover needs recovery.identifier and recovery.url; a failed mail leaves no code", async () => {
  const { t, sink, close } = await registerApp();
  try {
    const ask = { user: "alice", realm: "realm1", email: ALICE.email };
    const noId = await anon(t, "/recover", ask);
    assert.equal(noId.status, 400);
    assert.equal(
      noId.body.result.error.message,
      "ERR302: Missing configuration recovery.identifier.",
    );
    await setConfig(t, { "recovery.identifier": "mail" });
    const noUrl = await anon(t, "/recover", ask);
    assert.equal(noUrl.body.result.error.message, "ERR302: Missing configuration recovery.url.");
    await setConfig(t, { "recovery.url": "https://pi.example.com/" });
    sink.close();
    const failed = await anon(t, "/recover", ask);
    assert.equal(failed.status, 400);
    assert.equal(failed.body.result.error.code, 10);
    assert.equal(failed.body.result.error.message, "ERR10: Failed to send email. False");
    assert.equal((await resetRows(t)).length, 0);
    assert.equal(sink.mails.length, 0);
  } finally {
    await close();
  }
});

Deno.test("GET /config offers password recovery with an editable resolver and the right password_reset", async () => {
  const { t, close } = await registerApp();
  try {
    const offered = async () =>
      (await jsonOf(await t.get("/config"))).body.result.value.password_reset;
    assert.equal(await offered(), true, "no user policy: allowed, and sql1 is editable");
    await policy(t, "u", { scope: "user", action: "enable" });
    assert.equal(await offered(), false);
    await policy(t, "pw", { scope: "user", action: "password_reset" });
    assert.equal(await offered(), true);
  } finally {
    await close();
  }
});

Deno.test("/register and /recover answer without a JWT and the same with one", async () => {
  const { t, close } = await registerApp();
  try {
    await registerPolicy(t);
    const token = await t.adminToken();
    const anonymous = await jsonOf(await t.get("/register"));
    const admin = await jsonOf(await t.get("/register", { token }));
    assert.equal(anonymous.status, 200);
    assert.deepEqual(admin.body.result, anonymous.body.result);
    const a = await anon(t, "/recover", { user: "alice", realm: "realm1", email: "no@x.y" });
    const b = await jsonOf(
      await t.post("/recover", { user: "alice", realm: "realm1", email: "no@x.y" }, { token }),
    );
    assert.equal(a.status, 400);
    assert.deepEqual(b.body.result, a.body.result);
  } finally {
    await close();
  }
});
