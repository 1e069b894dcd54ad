/**
 * Effect tests of the register-scope actions (`/register`, spec 14 §14.2) and the user right
 * `password_reset` (`/recover`, §14.3-4). Each test makes the request without the action, then
 * with it, over HTTP with a real SMTP sink on loopback.
 *
 * @module
 */
import assert from "node:assert/strict";
import { actionTest } from "./_registry.ts";
import { jsonOf } from "../test_app.ts";
import {
  ALICE,
  anon,
  bodyOf,
  NEWBIE,
  policy,
  recoveryCodeOf,
  recoveryConfig,
  registerApp,
  registerPolicy,
  tokens,
  usersOf,
} from "../http/_register.ts";
import { createUsers } from "../fixtures/users.ts";

actionTest(
  "register",
  "resolver",
  "names the resolver users register in (none: refused)",
  async () => {
    const { t, close } = await registerApp();
    try {
      await createUsers(t.deps, { realm: "realm1", resolver: "sql2", users: [] });
      await policy(t, "reg", { scope: "register", action: "realm=realm1, smtpconfig=mail" });
      const none = await anon(t, "/register", NEWBIE);
      assert.equal(none.body.result.error.message, "ERR402: No resolver specified to register in!");
      assert.equal((await usersOf(t)).newbie, undefined);
      await policy(t, "reg", {
        scope: "register",
        action: "resolver=sql2, realm=realm1, smtpconfig=mail",
      });
      assert.equal((await anon(t, "/register", NEWBIE)).body.result.value, true);
      assert.equal((await usersOf(t)).newbie.resolver, "sql2");
    } finally {
      await close();
    }
  },
);

actionTest(
  "register",
  "realm",
  "names the realm of the registered user (none: the default realm)",
  async () => {
    const { t, close } = await registerApp();
    try {
      await createUsers(t.deps, { realm: "realm2", resolver: "sql2", users: [] });
      await jsonOf(await t.asAdmin("POST", "/defaultrealm/realm2"));
      await policy(t, "reg", { scope: "register", action: "resolver=sql2, smtpconfig=mail" });
      assert.equal((await anon(t, "/register", NEWBIE)).body.result.value, true);
      const inDefault = (await tokens(t)).find((x) => x.username === "newbie");
      assert.equal(inDefault?.user_realm, "realm2");
      // with the realm action: the token's owner is in that realm
      const realm3 = await jsonOf(
        await t.asAdmin("POST", "/realm/realm3", { body: { resolvers: "sql2" } }),
      );
      assert.equal(realm3.status, 200);
      await policy(t, "reg", {
        scope: "register",
        action: "resolver=sql2, realm=realm3, smtpconfig=mail",
      });
      assert.equal(
        (await anon(t, "/register", { ...NEWBIE, username: "newbie2" })).body.result.value,
        true,
      );
      const inRealm3 = (await tokens(t)).find((x) => x.username === "newbie2");
      assert.equal(inRealm3?.user_realm, "realm3");
    } finally {
      await close();
    }
  },
);

actionTest(
  "register",
  "smtpconfig",
  "names the SMTP server of the registration mail (none: refused)",
  async () => {
    const { t, sink, close } = await registerApp();
    try {
      await policy(t, "reg", { scope: "register", action: "resolver=sql1, realm=realm1" });
      const none = await anon(t, "/register", NEWBIE);
      assert.equal(
        none.body.result.error.message,
        "ERR402: No SMTP server configuration specified!",
      );
      assert.equal((await usersOf(t)).newbie, undefined);
      assert.equal(sink.mails.length, 0);
      await registerPolicy(t);
      assert.equal((await anon(t, "/register", NEWBIE)).body.result.value, true);
      assert.equal(sink.mails.length, 1);
      assert.deepEqual(sink.mails[0].to, [NEWBIE.email]);
    } finally {
      await close();
    }
  },
);

actionTest(
  "register",
  "requiredemail",
  "only addresses matching one of its expressions register",
  async () => {
    const { t, close } = await registerApp();
    try {
      await registerPolicy(t);
      assert.equal((await anon(t, "/register", NEWBIE)).body.result.value, true);
      await policy(t, "mails", {
        scope: "register",
        action: "requiredemail=/@example\\.com$/ /@corp\\.example\\.net$/",
      });
      const refused = await anon(t, "/register", { ...NEWBIE, username: "other" });
      assert.equal(refused.status, 400);
      assert.equal(
        refused.body.result.error.message,
        "ERR402: This email address is not allowed to register!",
      );
      assert.equal((await usersOf(t)).other, undefined);
      const second = await anon(t, "/register", {
        ...NEWBIE,
        username: "other",
        email: "other@corp.example.net",
      });
      assert.equal(second.body.result.value, true, JSON.stringify(second.body));
      assert.equal((await usersOf(t)).other.email, "other@corp.example.net");
    } finally {
      await close();
    }
  },
);

actionTest(
  "register",
  "registration_body",
  "is the registration mail's text with {regkey} filled in",
  async () => {
    const { t, sink, close } = await registerApp();
    try {
      await registerPolicy(t);
      assert.equal((await anon(t, "/register", NEWBIE)).body.result.value, true);
      assert.match(bodyOf(sink.mails[0]), /^\nYour registration token is [A-Za-z0-9]{24}\.\n$/);
      await policy(t, "body", {
        scope: "register",
        action: "registration_body=Welcome {{new user}}\\, your code: {regkey}",
      });
      assert.equal(
        (await anon(t, "/register", { ...NEWBIE, username: "n2" })).body.result.value,
        true,
      );
      const body = bodyOf(sink.mails[1]);
      const m = body.match(/^Welcome \{new user\}, your code: ([A-Za-z0-9]{24})$/);
      assert.ok(m, JSON.stringify(body));
      const ok = await jsonOf(
        await t.post("/validate/check", { user: "n2", realm: "realm1", pass: m[1] }),
      );
      assert.equal(ok.body.result.value, true, "the mailed code is the token's");
      // another field than {regkey}: refused before anything is created
      await policy(t, "body", {
        scope: "register",
        action: "registration_body=Hi {user}: {regkey}",
      });
      const bad = await anon(t, "/register", { ...NEWBIE, username: "n3" });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.result.error.code, 402);
      assert.equal((await usersOf(t)).n3, undefined);
      assert.equal(sink.mails.length, 2);
    } finally {
      await close();
    }
  },
);

actionTest(
  "register",
  "hide_specific_error_message",
  "one message for every failed registration",
  async () => {
    const { t, close } = await registerApp();
    try {
      await registerPolicy(t);
      const taken = { ...NEWBIE, username: ALICE.login };
      const plain = await anon(t, "/register", taken);
      assert.equal(plain.body.result.error.message, "ERR402: The username is already registered!");
      await policy(t, "hide", { scope: "register", action: "hide_specific_error_message" });
      const hidden = await anon(t, "/register", taken);
      assert.equal(hidden.status, 400);
      assert.equal(hidden.body.result.error.code, 402);
      assert.equal(hidden.body.result.error.message, "Failed registering new user");
      // a policy of another realm does not hide it
      await createUsers(t.deps, { realm: "elsewhere", resolver: "sql9", users: [] });
      await policy(t, "hide", {
        scope: "register",
        action: "hide_specific_error_message",
        realm: "elsewhere",
      });
      const other = await anon(t, "/register", taken);
      assert.equal(other.body.result.error.message, "ERR402: The username is already registered!");
    } finally {
      await close();
    }
  },
);

actionTest(
  "user",
  "password_reset",
  "with user policies, only users it names may recover a password",
  async () => {
    const { t, sink, close } = await registerApp();
    try {
      await recoveryConfig(t);
      const ask = { user: "alice", realm: "realm1", email: ALICE.email };
      // user policies without password_reset: refused on both routes, nothing stored or sent
      await policy(t, "u", { scope: "user", action: "enable" });
      const denied = await anon(t, "/recover", ask);
      assert.equal(denied.status, 403);
      assert.equal(denied.body.result.error.code, 303);
      assert.equal(
        denied.body.result.error.message,
        "User actions are defined, but this action is not allowed!",
      );
      const deniedReset = await anon(t, "/recover/reset", {
        ...ask,
        recoverycode: "x",
        password: "p",
      });
      assert.equal(deniedReset.status, 403);
      assert.equal(sink.mails.length, 0);
      // granted for realm1
      await policy(t, "pw", { scope: "user", action: "password_reset", realm: "realm1" });
      assert.equal((await anon(t, "/recover", ask)).body.result.value, true);
      const code = recoveryCodeOf(sink.mails[0]);
      const reset = await anon(t, "/recover/reset", { ...ask, recoverycode: code, password: "np" });
      assert.equal(reset.body.result.value, true);
    } finally {
      await close();
    }
  },
);
