import assert from "node:assert/strict";
import { ADMIN_PASSWORD, createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import {
  addOwnedTokens,
  installVendorKey,
  scriptedRandom,
  signedFile,
  TEST_VENDOR,
} from "../fixtures/subscription_keys.ts";
import { listSubscriptions } from "../../src/domain/subscription/mod.ts";
import { createUsers } from "../fixtures/users.ts";
import { NETKNIGHTS_DEMO_FILE, NETKNIGHTS_PEM } from "../fixtures/netknights_subscription.ts";

const MISMATCH =
  "SubscriptionError('Signature of your subscription does not match.', application=demo_application)";
const VERIFY_FAILED =
  "SubscriptionError('Verifying the signature of your subscription failed.', application=demo_application)";
const EXCEEDED =
  "SubscriptionError('Too many users with assigned tokens. Subscription exceeded.', application=demo_application)";

async function appWithKey(configText?: string): Promise<TestApp> {
  const t = await createTestApp({ configText });
  await installVendorKey(t.deps.config.subscriptions.keyDir);
  return t;
}

/** POST /subscriptions/ with the file as multipart field `file`. */
async function upload(t: TestApp, text: string): Promise<Response> {
  const form = new FormData();
  form.set("file", new File([text], "subscription.yaml", { type: "application/x-yaml" }));
  return await t.app.request("/subscriptions/", {
    method: "POST",
    headers: { "PI-Authorization": await t.adminToken() },
    body: form,
  }, { remoteAddr: { hostname: "127.0.0.1" } });
}

async function storedCount(t: TestApp): Promise<number> {
  const { body } = await jsonOf(await t.asAdmin("GET", "/subscriptions/"));
  return body.result.value.length;
}

Deno.test("POST /subscriptions/ stores a validly signed file and GET lists it", async () => {
  const t = await appWithKey();
  await addOwnedTokens(t.deps.db, ["u1", "u2"]);
  await addOwnedTokens(t.deps.db, ["u1"]);
  const up = await jsonOf(await upload(t, await signedFile()));
  assert.equal(up.status, 200);
  assert.equal(up.body.result.status, true);
  assert.equal(up.body.result.value, 1);

  const { status, body } = await jsonOf(await t.asAdmin("GET", "/subscriptions/"));
  assert.equal(status, 200);
  const [s] = body.result.value;
  assert.equal(body.result.value.length, 1);
  assert.equal(s.id, 1);
  assert.equal(s.application, "demo_application");
  assert.equal(s.for_email, "customer@example.com");
  assert.equal(s.by_name, `${TEST_VENDOR} GmbH`);
  assert.equal(s.date_from, "Wed, 01 Jan 2025 00:00:00 GMT");
  assert.equal(s.date_till, "Thu, 31 Dec 2026 00:00:00 GMT");
  assert.equal(s.num_tokens, 100);
  assert.equal(s.level, "Gold");
  assert.match(s.signature, /^rsa_sha256_pss:[0-9a-f]+$/);
  // test clock: 2026-01-01T00:00Z, 364 days before date_till
  assert.equal(s.timedelta, -364);
  assert.equal(s.active_tokens, 3);
  assert.equal(s.active_users, 2);
  assert.equal(s.active, true);
  assert.equal(s.days_left, 364);
  assert.equal(s.users_in_use, 2);
  assert.equal(s.users_allowed, 100);
  assert.deepEqual(
    Object.keys(s),
    [
      "id",
      "application",
      "for_name",
      "for_address",
      "for_email",
      "for_phone",
      "for_url",
      "for_comment",
      "by_name",
      "by_email",
      "by_address",
      "by_phone",
      "by_url",
      "date_from",
      "date_till",
      "num_users",
      "num_tokens",
      "num_clients",
      "level",
      "signature",
      "timedelta",
      "active_tokens",
      "active_users",
      "active",
      "days_left",
      "users_in_use",
      "users_allowed",
    ],
  );
  await t.close();
});

Deno.test("GET /subscriptions/<application> ignores case; an unknown one gives []", async () => {
  const t = await appWithKey();
  await upload(t, await signedFile());
  await upload(t, await signedFile({ application: "privacyidea-cp" }));
  const one = await jsonOf(await t.asAdmin("GET", "/subscriptions/DEMO_Application"));
  assert.equal(one.status, 200);
  assert.deepEqual(one.body.result.value.map((s: { application: string }) => s.application), [
    "demo_application",
  ]);
  const none = await jsonOf(await t.asAdmin("GET", "/subscriptions/nothing"));
  assert.deepEqual(none.body.result.value, []);
  await t.close();
});

Deno.test("uploading the same application again replaces the row and keeps its id", async () => {
  const t = await appWithKey();
  assert.equal((await jsonOf(await upload(t, await signedFile()))).body.result.value, 1);
  const again = await jsonOf(await upload(t, await signedFile({ level: "Silver" }, "legacy")));
  assert.equal(again.status, 200);
  assert.equal(again.body.result.value, 1);
  const { body } = await jsonOf(await t.asAdmin("GET", "/subscriptions/"));
  assert.equal(body.result.value.length, 1);
  assert.equal(body.result.value[0].level, "Silver");
  assert.match(body.result.value[0].signature, /^\d+$/, "legacy decimal signature");
  await t.close();
});

Deno.test("a file accepted as a plain string parameter works too", async () => {
  const t = await appWithKey();
  const res = await t.asAdmin("POST", "/subscriptions/", {
    body: { file: await signedFile() },
    json: true,
  });
  const { status, body } = await jsonOf(res);
  assert.equal(status, 200);
  assert.equal(body.result.value, 1);
  await t.close();
});

Deno.test("POST /subscriptions/ refuses bad files with clear errors and stores nothing", async () => {
  const t = await appWithKey();
  const good = await signedFile();
  const cases: { name: string; text: string; code: number; message: string | RegExp }[] = [
    {
      name: "tampered value",
      text: good.replace("'num_tokens': 100", "'num_tokens': 1000"),
      code: 101,
      message: MISMATCH,
    },
    {
      name: "tampered signature",
      text: good.replace(/rsa_sha256_pss:[0-9a-f]{4}/, "rsa_sha256_pss:0000"),
      code: 101,
      message: MISMATCH,
    },
    {
      name: "garbage signature",
      text: good.replace(/'rsa_sha256_pss:[0-9a-f]+'/, "'not-a-signature'"),
      code: 101,
      message: VERIFY_FAILED,
    },
    {
      name: "unknown vendor key",
      text: await signedFile({ by_name: "Other Vendor" }),
      code: 101,
      message: VERIFY_FAILED,
    },
    {
      name: "vendor name climbing out of the key dir",
      text: await signedFile({ by_name: "../subscription-keys/TestVendor" }),
      code: 101,
      message: VERIFY_FAILED,
    },
    {
      name: "missing field",
      text: good.replace("'for_phone': '12345', ", ""),
      code: 101,
      message: VERIFY_FAILED,
    },
    {
      name: "expired",
      text: await signedFile({ date_from: "2024-01-01", date_till: "2025-12-31" }),
      code: 101,
      message:
        "SubscriptionError('The subscription expired on 2025-12-31 and cannot be uploaded.', application=demo_application)",
    },
    {
      name: "YAML syntax error",
      text: good.slice(0, 40),
      code: 905,
      message: /^ERR905: Cannot parse subscription file: invalid YAML/,
    },
    {
      name: "unknown key",
      text: good.replace("{", "{'extra': 'x', "),
      code: 905,
      message: 'ERR905: Cannot parse subscription file: unknown field "extra"',
    },
    {
      name: "bad date",
      text: good.replace("'2025-01-01'", "'1234'"),
      code: 905,
      message: "ERR905: Cannot parse subscription file: date_from must be a date YYYY-MM-DD",
    },
  ];
  for (const c of cases) {
    const { status, body } = await jsonOf(await upload(t, c.text));
    assert.equal(status, 400, c.name);
    assert.equal(body.result.status, false, c.name);
    assert.equal(body.result.error.code, c.code, c.name);
    if (typeof c.message === "string") assert.equal(body.result.error.message, c.message, c.name);
    else assert.match(body.result.error.message, c.message, c.name);
  }
  assert.equal(await storedCount(t), 0);
  await t.close();
});

Deno.test("POST /subscriptions/ without a file gives 905 Missing parameter: file", async () => {
  const t = await appWithKey();
  const { status, body } = await jsonOf(await t.asAdmin("POST", "/subscriptions/", { body: {} }));
  assert.equal(status, 400);
  assert.equal(body.result.error.message, "ERR905: Missing parameter: file");
  await t.close();
});

Deno.test("DELETE /subscriptions/<application> matches exactly and answers -1 when none", async () => {
  const t = await appWithKey();
  await upload(t, await signedFile());
  const wrongCase = await jsonOf(await t.asAdmin("DELETE", "/subscriptions/DEMO_APPLICATION"));
  assert.equal(wrongCase.status, 200);
  assert.equal(wrongCase.body.result.value, -1);
  assert.equal(await storedCount(t), 1);
  const del = await jsonOf(await t.asAdmin("DELETE", "/subscriptions/demo_application"));
  assert.equal(del.body.result.value, 1);
  assert.equal(await storedCount(t), 0);
  const again = await jsonOf(await t.asAdmin("DELETE", "/subscriptions/demo_application"));
  assert.equal(again.body.result.value, -1);
  await t.close();
});

Deno.test("/subscriptions/ needs an admin JWT", async () => {
  const t = await appWithKey();
  for (const [method, path] of [["GET", "/subscriptions/"], ["DELETE", "/subscriptions/x"]]) {
    const { status, body } = await jsonOf(await t.request(method, path));
    assert.equal(status, 401, path);
    assert.equal(body.result.error.code, 4033, path);
  }
  await t.close();
});

// ---- runtime check on metered endpoints ----

async function exceededSetup(configText: string): Promise<TestApp> {
  const t = await appWithKey(configText);
  await upload(t, await signedFile({ num_tokens: 2 }));
  await addOwnedTokens(t.deps.db, ["u1", "u2", "u3"]);
  await t.adminToken();
  return t;
}

async function auditInfoOf(t: TestApp, action: string): Promise<string[]> {
  await t.deps.audit.flush();
  const rows = await t.deps.db.selectFrom("audit").select("info").where("action", "=", action)
    .execute();
  return rows.map((r) => r.info);
}

const CP_UA = "demo_application/2.1 Windows/PC1";

Deno.test("enforce mode refuses an exceeded client on /validate/check with 101 and audits it", async () => {
  const t = await exceededSetup('[subscriptions]\nmode = "enforce"\n');
  t.deps.random = scriptedRandom([3]);
  const res = await t.post("/validate/check", { user: "u1", pass: "123456" }, {
    headers: { "user-agent": CP_UA },
  });
  const { status, body } = await jsonOf(res);
  assert.equal(status, 400);
  assert.equal(body.result.error.code, 101);
  assert.equal(body.result.error.message, EXCEEDED);
  const [info] = await auditInfoOf(t, "POST /validate/check");
  assert.match(info, /^subscription check failed \(enforce\): SubscriptionError\('Too many users/);

  // a lucky draw passes the check (whatever the endpoint then answers)
  t.deps.random = scriptedRandom([2]);
  const passed = await jsonOf(
    await t.post("/validate/check", { user: "u1", pass: "1" }, {
      headers: { "user-agent": CP_UA },
    }),
  );
  assert.notEqual(passed.body.result.error?.code, 101);
  await t.close();
});

Deno.test("warn mode lets an exceeded client through and notes it in the audit row", async () => {
  const t = await exceededSetup('[subscriptions]\nmode = "warn"\n');
  t.deps.random = scriptedRandom([3]);
  const { body } = await jsonOf(
    await t.post("/validate/check", { user: "u1", pass: "1" }, {
      headers: { "user-agent": CP_UA },
    }),
  );
  assert.notEqual(body.result.error?.code, 101);
  const [info] = await auditInfoOf(t, "POST /validate/check");
  assert.match(info, /^subscription check failed \(warn\): SubscriptionError\('Too many users/);
  assert.ok(t.log.lines.some((l) => l.includes("warn mode")));
  // repeated refusals are audited every time but logged once a minute
  for (let i = 0; i < 3; i++) {
    t.deps.random = scriptedRandom([3]);
    await t.post("/validate/check", { user: "u1", pass: "1" }, {
      headers: { "user-agent": CP_UA },
    });
  }
  const infos = await auditInfoOf(t, "POST /validate/check");
  assert.equal(infos.filter((i) => i.startsWith("subscription check failed (warn)")).length, 4);
  assert.equal(t.log.lines.filter((l) => l.includes("warn mode")).length, 1);
  await t.close();
});

Deno.test("mode off, unmetered clients and unmetered endpoints are never checked", async () => {
  const off = await exceededSetup('[subscriptions]\nmode = "off"\n');
  off.deps.random = scriptedRandom([3]);
  const r1 = await jsonOf(
    await off.post("/validate/check", { user: "u1", pass: "1" }, {
      headers: { "user-agent": CP_UA },
    }),
  );
  assert.notEqual(r1.body.result.error?.code, 101);
  assert.equal((off.deps.random as ReturnType<typeof scriptedRandom>).remaining(), 1);
  await off.close();

  const t = await exceededSetup('[subscriptions]\nmode = "enforce"\n');
  const random = scriptedRandom([3, 3]);
  t.deps.random = random;
  const browser = await jsonOf(
    await t.post("/validate/check", { user: "u1", pass: "1" }, {
      headers: { "user-agent": "Mozilla/5.0 (X11)" },
    }),
  );
  assert.notEqual(browser.body.result.error?.code, 101);
  const other = await jsonOf(
    await t.asAdmin("GET", "/subscriptions/", {
      headers: { "user-agent": CP_UA },
    }),
  );
  assert.equal(other.status, 200);
  assert.equal(random.remaining(), 2, "no draw was taken");
  await t.close();
});

Deno.test("enforce mode on /token/init answers 401 before revealing subscription state", async () => {
  const t = await exceededSetup('[subscriptions]\nmode = "enforce"\n');
  t.deps.random = scriptedRandom([3, 3]);
  const anon = await jsonOf(
    await t.post("/token/init", { type: "hotp" }, { headers: { "user-agent": CP_UA } }),
  );
  assert.equal(anon.status, 401);
  const admin = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: { type: "hotp" },
      headers: { "user-agent": CP_UA },
    }),
  );
  assert.equal(admin.status, 400);
  assert.equal(admin.body.result.error.message, EXCEEDED);
  await t.close();
});

Deno.test("enforce mode refuses clients of an expired subscription after the expiry day", async () => {
  const t = await appWithKey('[subscriptions]\nmode = "enforce"\n');
  await upload(t, await signedFile({ date_till: "2026-01-05" }));
  t.clock.set(Date.UTC(2026, 3, 1)); // 86 days after: p > 0.9
  t.deps.random = scriptedRandom([0]);
  const { status, body } = await jsonOf(
    await t.post("/validate/check", { user: "u1", pass: "1" }, {
      headers: { "user-agent": CP_UA },
    }),
  );
  assert.equal(status, 400);
  assert.equal(
    body.result.error.message,
    "SubscriptionError('Your subscription expired.', application=demo_application)",
  );
  // (the admin JWT has expired by now: read through the domain)
  const [sub] = await listSubscriptions(t.deps);
  assert.equal(sub.timedelta, 86);
  assert.equal(sub.active, false);
  assert.equal(sub.days_left, -86);
  await t.close();
});

Deno.test("usage counts follow tokens enrolled and disabled through the token API", async () => {
  const t = await appWithKey();
  await createUsers(t.deps, {
    realm: "realm1",
    users: [{ login: "alice", password: "a" }, { login: "bob", password: "b" }],
  });
  await upload(t, await signedFile());
  const enrol = async (user: string, serial: string) => {
    const res = await jsonOf(
      await t.asAdmin("POST", "/token/init", {
        body: { type: "spass", user, realm: "realm1", serial, pin: "1234" },
      }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  await enrol("alice", "SP1");
  await enrol("alice", "SP2");
  await enrol("bob", "SP3");
  // a token without owner does not count
  const free = await jsonOf(await t.asAdmin("POST", "/token/init", { body: { type: "spass" } }));
  assert.equal(free.status, 200);
  let [s] = (await jsonOf(await t.asAdmin("GET", "/subscriptions/"))).body.result.value;
  assert.equal(s.active_tokens, 3);
  assert.equal(s.active_users, 2);
  const dis = await jsonOf(await t.asAdmin("POST", "/token/disable", { body: { serial: "SP3" } }));
  assert.equal(dis.status, 200);
  [s] = (await jsonOf(await t.asAdmin("GET", "/subscriptions/"))).body.result.value;
  assert.equal(s.active_tokens, 2);
  assert.equal(s.active_users, 1);
  await t.close();
});

Deno.test("admin policies gate /subscriptions/ with managesubscription", async () => {
  const t = await appWithKey();
  const pol = await jsonOf(
    await t.asAdmin("POST", "/policy/nosubs", {
      body: { scope: "admin", action: "policyread, policywrite", active: "true" },
    }),
  );
  assert.equal(pol.status, 200, JSON.stringify(pol.body));
  const denied = await jsonOf(await t.asAdmin("GET", "/subscriptions/"));
  assert.equal(denied.status, 403);
  assert.equal(denied.body.result.error.code, 303);
  assert.equal((await jsonOf(await upload(t, await signedFile()))).status, 403);
  const allow = await jsonOf(
    await t.asAdmin("POST", "/policy/subs", {
      body: { scope: "admin", action: "managesubscription", active: "true" },
    }),
  );
  assert.equal(allow.status, 200);
  assert.equal((await jsonOf(await upload(t, await signedFile()))).body.result.value, 1);
  await t.close();
});

Deno.test("POST /auth reports subscription_status 0 within the free tier and 1 over it", async () => {
  const t = await appWithKey();
  const login = async () => {
    await t.adminToken();
    const res = await jsonOf(
      await t.post("/auth", { username: "admin", password: ADMIN_PASSWORD }),
    );
    assert.equal(res.status, 200);
    return res.body.result.value;
  };
  let v = await login();
  assert.equal(v.subscription_status, 0);
  assert.equal(v.subscription_status_push, 0);
  await addOwnedTokens(t.deps.db, Array.from({ length: 51 }, (_, i) => `u${i}`));
  v = await login();
  assert.equal(v.subscription_status, 1);
  assert.equal(v.subscription_status_push, 0, "only push tokens count for the app");
  await upload(t, await signedFile({ application: "privacyidea" }));
  v = await login();
  assert.equal(v.subscription_status, 3);
  await t.close();
});

Deno.test("parallel uploads of one application leave one row with one id", async () => {
  const t = await appWithKey();
  const files = await Promise.all([1, 2, 3, 4, 5].map((n) => signedFile({ num_users: n })));
  await t.adminToken(); // log in once before the parallel requests
  const results = await Promise.all(files.map((f) => upload(t, f).then(jsonOf)));
  for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(new Set(results.map((r) => r.body.result.value)), new Set([1]));
  assert.equal(await storedCount(t), 1);
  await t.close();
});

Deno.test("upload replaces by exact application; other spellings are separate rows", async () => {
  const t = await appWithKey();
  await upload(t, await signedFile());
  const other = await jsonOf(
    await upload(t, await signedFile({ application: "Demo_Application" })),
  );
  assert.equal(other.body.result.value, 2);
  const { body } = await jsonOf(await t.asAdmin("GET", "/subscriptions/demo_application"));
  assert.deepEqual(body.result.value.map((s: { id: number }) => s.id), [1, 2]);
  await t.close();
});

Deno.test("a genuine NetKnights subscription uploads once NetKnights.pem is installed", async () => {
  const t = await createTestApp();
  const refused = await jsonOf(await upload(t, NETKNIGHTS_DEMO_FILE));
  assert.equal(refused.status, 400);
  assert.equal(refused.body.result.error.message, VERIFY_FAILED);
  const dir = t.deps.config.subscriptions.keyDir;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/NetKnights.pem`, NETKNIGHTS_PEM);
  const ok = await jsonOf(await upload(t, NETKNIGHTS_DEMO_FILE));
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.result.value, 1);
  const [s] = (await jsonOf(await t.asAdmin("GET", "/subscriptions/demo_application"))).body
    .result.value;
  assert.equal(s.by_name, "NetKnights GmbH");
  assert.equal(s.date_from, "Mon, 24 Oct 2016 00:00:00 GMT");
  assert.equal(s.date_till, "Thu, 22 Oct 2026 00:00:00 GMT");
  assert.equal(s.timedelta, -294);
  await t.close();
});
