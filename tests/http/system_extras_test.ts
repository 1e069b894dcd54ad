/**
 * privacyIDEA's `/system/` routes beside the config keys (spec 14 §20): random data, nodes,
 * setDefault, the test of a token type's configuration, the name lists, and the refused
 * routes. None of them may be read as a config key (the old answer was 200 with `null`).
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { readSystemConfig } from "../../src/domain/system_config/mod.ts";
import { base32Decode } from "../../src/lib/otp.ts";
import { startSmtpSink } from "../domain/event/_helpers.ts";
import { createCaConnector, makeCaDir } from "./_local_ca.ts";
import { actionTest } from "../policy_actions/_registry.ts";
import { createUsers } from "../fixtures/users.ts";

async function userToken(t: TestApp): Promise<string> {
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "realm1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  return token;
}

Deno.test("GET /system/random: 20 bytes hex by default, len and encode b64/b32, bad input refused", async () => {
  const t = await createTestApp();
  const hex = await jsonOf(await t.asAdmin("GET", "/system/random"));
  assert.equal(hex.status, 200);
  assert.match(hex.body.result.value, /^[0-9a-f]{40}$/);
  const again = await jsonOf(await t.asAdmin("GET", "/system/random"));
  assert.notEqual(again.body.result.value, hex.body.result.value);
  const b64 = await jsonOf(
    await t.asAdmin("GET", "/system/random", { query: { len: "30", encode: "b64" } }),
  );
  assert.equal(atob(b64.body.result.value).length, 30);
  const b32 = await jsonOf(
    await t.asAdmin("GET", "/system/random", { query: { len: "10", encode: "b32" } }),
  );
  assert.match(b32.body.result.value, /^[A-Z2-7]{16}$/);
  assert.equal(base32Decode(b32.body.result.value).length, 10);
  const hex5 = await jsonOf(await t.asAdmin("GET", "/system/random", { query: { len: "5" } }));
  assert.match(hex5.body.result.value, /^[0-9a-f]{10}$/);
  const bads: Record<string, string>[] = [{ len: "0" }, { len: "abc" }, { len: "1025" }, {
    encode: "b58",
  }];
  for (const query of bads) {
    const bad = await jsonOf(await t.asAdmin("GET", "/system/random", { query }));
    assert.equal(bad.status, 400, JSON.stringify(query));
    assert.equal(bad.body.result.error.code, 905);
  }
  // a user JWT and no JWT: 401
  const user = await t.request("GET", "/system/random", { token: await userToken(t) });
  assert.equal(user.status, 401);
  assert.equal((await t.get("/system/random")).status, 401);
  await t.close();
});

actionTest("admin", "getrandom", "GET /system/random needs the admin right getrandom", async () => {
  const t = await createTestApp();
  await savePolicy(t.deps, "p", { scope: "admin", action: "configread" });
  const denied = await jsonOf(await t.asAdmin("GET", "/system/random"));
  assert.equal(denied.status, 403);
  assert.equal(
    denied.body.result.error.message,
    "Admin actions are defined, but the action getrandom is not allowed!",
  );
  await savePolicy(t.deps, "p", { scope: "admin", action: "configread, getrandom" });
  const allowed = await jsonOf(await t.asAdmin("GET", "/system/random"));
  assert.equal(allowed.status, 200);
  assert.match(allowed.body.result.value, /^[0-9a-f]{40}$/);
  await t.close();
});

Deno.test("GET /system/nodes: this node with a uuid that follows from its name", async () => {
  const t = await createTestApp();
  const res = await jsonOf(await t.asAdmin("GET", "/system/nodes"));
  assert.equal(res.status, 200);
  assert.equal(res.body.result.value.length, 1);
  assert.equal(res.body.result.value[0].name, "test-node");
  const uuid = res.body.result.value[0].uuid;
  assert.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const again = await jsonOf(await t.asAdmin("GET", "/system/nodes"));
  assert.equal(again.body.result.value[0].uuid, uuid);
  // an admin without policy actions may (privacyIDEA: admin_required only); a user may not
  await savePolicy(t.deps, "p", { scope: "admin", action: "auditlog" });
  assert.equal((await t.asAdmin("GET", "/system/nodes")).status, 200);
  assert.equal(
    (await t.request("GET", "/system/nodes", { token: await userToken(t) })).status,
    401,
  );
  await t.close();
});

Deno.test("POST /system/setDefault writes the token defaults; none or a bad value: refused, nothing written", async () => {
  const t = await createTestApp();
  const res = await jsonOf(
    await t.asAdmin("POST", "/system/setDefault", {
      body: { defaultmaxfailcount: "7", DefaultOtpLen: "8", other: "x" },
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.result.value, {
    DefaultMaxFailCount: "insert",
    DefaultOtpLen: "insert",
  });
  assert.equal(await readSystemConfig(t.deps, "DefaultMaxFailCount"), "7");
  assert.equal(await readSystemConfig(t.deps, "DefaultOtpLen"), "8");
  assert.equal(await readSystemConfig(t.deps, "other"), null);
  // the new default applies to a new token
  const init = await jsonOf(
    await t.asAdmin("POST", "/token/init", { body: { type: "hotp", genkey: "1" } }),
  );
  const serial = init.body.detail.serial;
  const tok = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
  assert.equal(tok.body.result.value.tokens[0].otplen, 8);
  assert.equal(tok.body.result.value.tokens[0].maxfail, 7);

  const none = await jsonOf(
    await t.asAdmin("POST", "/system/setDefault", { body: { other: "x" } }),
  );
  assert.equal(none.status, 400);
  assert.equal(none.body.result.error.code, 77);
  assert.equal(
    none.body.result.error.message,
    "ERR77: Usage: parameters are: DefaultMaxFailCount, DefaultSyncWindow, DefaultCountWindow, " +
      "DefaultOtpLen, DefaultResetFailCount",
  );
  const bad = await jsonOf(
    await t.asAdmin("POST", "/system/setDefault", {
      body: { DefaultSyncWindow: "5", DefaultOtpLen: "7" },
    }),
  );
  assert.equal(bad.status, 400);
  assert.equal(await readSystemConfig(t.deps, "DefaultSyncWindow"), "1000", "nothing written");
  const reset = await jsonOf(
    await t.asAdmin("POST", "/system/setDefault", { body: { DefaultResetFailCount: "True" } }),
  );
  assert.equal(reset.status, 400);
  assert.match(reset.body.result.error.message, /DefaultResetFailCount is not supported/);
  // configwrite is needed
  await savePolicy(t.deps, "p", { scope: "admin", action: "configread" });
  const denied = await jsonOf(
    await t.asAdmin("POST", "/system/setDefault", { body: { DefaultCountWindow: "3" } }),
  );
  assert.equal(denied.status, 403);
  assert.equal(await readSystemConfig(t.deps, "DefaultCountWindow"), "10");
  assert.equal(
    (await t.request("POST", "/system/setDefault", {
      token: await userToken(t),
      body: { DefaultCountWindow: "3" },
    })).status,
    401,
  );
  await t.close();
});

Deno.test("POST /system/test/email sends the test mail through the SMTP server given; other types: not implemented", async () => {
  const t = await createTestApp();
  const sink = startSmtpSink();
  let isOpen = true;
  try {
    const res = await jsonOf(
      await t.asAdmin("POST", "/system/test/email", {
        body: {
          "email.mailserver": "127.0.0.1",
          "email.port": String(sink.port),
          "email.mailfrom": "pi@example.com",
          "email.recipient": "admin@example.com",
        },
      }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result.value, true);
    assert.equal(res.body.detail.message, "Successfully sent email. Please check your inbox.");
    assert.equal(sink.mails.length, 1);
    assert.deepEqual(sink.mails[0].to, ["admin@example.com"]);
    assert.match(sink.mails[0].data, /Subject: Your TEST OTP/);
    assert.equal(atob(sink.mails[0].data.split("\r\n\r\n")[1].trim()), "This is a test.");
    // a server that does not answer: false and privacyIDEA's message
    sink.close();
    isOpen = false;
    const failed = await jsonOf(
      await t.asAdmin("POST", "/system/test/email", {
        body: {
          "email.mailserver": "127.0.0.1",
          "email.port": String(sink.port),
          "email.mailfrom": "pi@example.com",
          "email.recipient": "admin@example.com",
        },
      }),
    );
    assert.equal(failed.body.result.value, false);
    assert.equal(failed.body.detail.message, "Could not send email.");
    const missing = await jsonOf(
      await t.asAdmin("POST", "/system/test/email", { body: { "email.mailserver": "x" } }),
    );
    assert.equal(missing.status, 400);
    assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: 'email.mailfrom'");
    const hotp = await jsonOf(await t.asAdmin("POST", "/system/test/hotp"));
    assert.equal(hotp.body.result.value, false);
    assert.equal(hotp.body.detail.message, "Not implemented");
    const unknown = await jsonOf(await t.asAdmin("POST", "/system/test/nosuch"));
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.result.error.code, 1610);
    await savePolicy(t.deps, "p", { scope: "admin", action: "configread" });
    assert.equal((await t.asAdmin("POST", "/system/test/hotp")).status, 403);
    assert.equal(
      (await t.request("POST", "/system/test/hotp", { token: await userToken(t) })).status,
      401,
    );
  } finally {
    if (isOpen) sink.close();
    await t.close();
  }
});

Deno.test("GET /system/names/radius and /names/caconnector: the names for admins and users who may enrol the type", async () => {
  const t = await createTestApp();
  const ca = await makeCaDir();
  try {
    await t.asAdmin("POST", "/radiusserver/server1", {
      body: { secret: "testing123", server: "127.0.0.1" },
    });
    await createCaConnector(t, "localca", ca);
    const radius = await jsonOf(await t.asAdmin("GET", "/system/names/radius"));
    assert.equal(radius.status, 200);
    assert.deepEqual(radius.body.result.value, ["server1"]);
    const cas = await jsonOf(await t.asAdmin("GET", "/system/names/caconnector"));
    assert.equal(cas.status, 200);
    assert.equal(cas.body.result.value.length, 1);
    assert.equal(cas.body.result.value[0].connectorname, "localca");
    assert.deepEqual(cas.body.result.value[0].data, {}, "no configuration data");
    // a user: allowed without user policies, refused when user policies lack the enrol right
    const token = await userToken(t);
    assert.equal((await t.request("GET", "/system/names/radius", { token })).status, 200);
    await savePolicy(t.deps, "u", { scope: "user", action: "enrollHOTP" });
    const refused = await jsonOf(await t.request("GET", "/system/names/radius", { token }));
    assert.equal(refused.status, 403);
    assert.equal((await t.request("GET", "/system/names/caconnector", { token })).status, 403);
    await savePolicy(t.deps, "u", { scope: "user", action: "enrollHOTP, enrollRADIUS" });
    assert.equal((await t.request("GET", "/system/names/radius", { token })).status, 200);
    // an admin without enrollCERTIFICATE is refused
    await savePolicy(t.deps, "a", { scope: "admin", action: "enrollRADIUS" });
    assert.equal((await t.asAdmin("GET", "/system/names/radius")).status, 200);
    assert.equal((await t.asAdmin("GET", "/system/names/caconnector")).status, 403);
    assert.equal((await t.get("/system/names/radius")).status, 401);
  } finally {
    await t.close();
    await Deno.remove(ca.dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("hsm is refused with a 404 and a reason, never read as a config key", async () => {
  const t = await createTestApp();
  // a config key of such a name does not change the answer
  await t.asAdmin("POST", "/system/setConfig", { body: { hsm: "x" } });
  for (
    const [method, path] of [
      ["GET", "/system/hsm"],
      ["POST", "/system/hsm"],
    ]
  ) {
    const res = await jsonOf(await t.asAdmin(method, path));
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.equal(res.body.result.status, false);
    assert.match(res.body.result.error.message, /is not available in Tessera: /);
    assert.equal((await t.request(method, path)).status, 401, `${method} ${path} without JWT`);
  }
  assert.equal(await readSystemConfig(t.deps, "hsm"), "x");
  await t.close();
});

Deno.test("GET /system/documentation: the configuration as a reStructuredText attachment, secrets censored, the database URL not shown", async () => {
  const t = await createTestApp();
  const set = await jsonOf(
    await t.asAdmin("POST", "/system/setConfig", {
      body: {
        "mail.password": "Do-not-show-9",
        "mail.password.type": "password",
        splitAtSign: "1",
      },
    }),
  );
  assert.equal(set.status, 200, JSON.stringify(set.body));
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "alice-pw" }] });
  await savePolicy(t.deps, "pol_doc_", { scope: "authentication", action: "otppin=userstore" });
  const res = await t.asAdmin("GET", "/system/documentation");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
  assert.equal(res.headers.get("content-disposition"), "attachment; filename=documentation.rst");
  const text = await res.text();
  assert.match(text, /^Tessera configuration documentation\n=+\n/);
  assert.match(text, /\* System: test-node\n/);
  for (
    const title of [
      "Local Admins",
      "System Base Configuration",
      "Resolver Configuration",
      "Realm Configuration",
      "Policy Configuration",
    ]
  ) assert.match(text, new RegExp(`\\n${title}\\n-{${title.length}}\\n`), title);
  assert.match(text, /\* \*\*admin\*\*/);
  assert.match(text, /splitAtSign: \*\*True\*\*/);
  assert.match(text, /mail\.password: \*\*\\_\\_CENSORED\\_\\_\*\*/);
  assert.equal(text.includes("Do-not-show-9"), false);
  assert.match(text, /storage\.database\\_url: not shown/);
  assert.equal(text.includes(t.deps.config.storage.databaseUrl), false);
  // the test app's realm with its resolver, and the policy (its underscores escaped for rST)
  assert.match(text, /\* Name of the realm: realm1\n/);
  assert.match(text, /\* Name of the resolver: /);
  assert.match(text, /pol\\_doc\\_\n~+\n/);
  assert.match(text, /action: \*\*\{"otppin":"userstore"\}\*\*/);
  assert.equal(/\n{3,}/.test(text), false, "at most one empty line in a row");
  await t.close();
});

actionTest(
  "admin",
  "system_documentation",
  "GET /system/documentation needs the admin right; a user or no JWT gets nothing",
  async () => {
    const t = await createTestApp();
    await savePolicy(t.deps, "p", { scope: "admin", action: "configread" });
    const denied = await jsonOf(await t.asAdmin("GET", "/system/documentation"));
    assert.equal(denied.status, 403);
    assert.equal(
      denied.body.result.error.message,
      "Admin actions are defined, but the action system_documentation is not allowed!",
    );
    await savePolicy(t.deps, "p", { scope: "admin", action: "configread, system_documentation" });
    const allowed = await t.asAdmin("GET", "/system/documentation");
    assert.equal(allowed.status, 200);
    assert.match(await allowed.text(), /^Tessera configuration documentation/);
    const user = await t.request("GET", "/system/documentation", { token: await userToken(t) });
    assert.equal(user.status, 401);
    await user.body?.cancel();
    const none = await t.request("GET", "/system/documentation");
    assert.equal(none.status, 401);
    await none.body?.cancel();
    await t.close();
  },
);
