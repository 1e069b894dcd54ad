/**
 * `/smsgateway/` (spec 11 §3): create, list, update, delete; secrets censored
 * in responses and encrypted at rest; admin-only with smsgateway_read /
 * smsgateway_write; refused requests change nothing.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { HTTP_PROVIDER, SCRIPT_PROVIDER } from "../../src/domain/smsgateway/mod.ts";

const GATEWAY = {
  name: "gw1",
  module: HTTP_PROVIDER,
  description: "test gateway",
  "option.URL": "https://sms.example.com/send",
  "option.HTTP_METHOD": "POST",
  "option.to": "{phone}",
  "option.text": "{otp}",
  "option.PASSWORD": "gateway-password",
  "header.Authorization": "Bearer secret-token",
  "header.X-Client": "tessera",
};

async function save(t: TestApp, body: Record<string, unknown>, token?: string) {
  return await jsonOf(
    token
      ? await t.post("/smsgateway", body, { token })
      : await t.asAdmin("POST", "/smsgateway", { body }),
  );
}

async function list(t: TestApp, path = "/smsgateway/") {
  return await jsonOf(await t.asAdmin("GET", path));
}

Deno.test("POST /smsgateway creates; GET lists with secrets censored; they are encrypted at rest", async () => {
  const t = await createTestApp();
  const created = await save(t, GATEWAY);
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const id = created.body.result.value;
  assert.equal(typeof id, "number");
  const res = await list(t);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.result.value, [{
    id,
    name: "gw1",
    providermodule: HTTP_PROVIDER,
    description: "test gateway",
    options: {
      URL: "https://sms.example.com/send",
      HTTP_METHOD: "POST",
      to: "{phone}",
      text: "{otp}",
      PASSWORD: "__CENSORED__",
    },
    headers: { Authorization: "__CENSORED__", "X-Client": "tessera" },
  }]);
  assert.ok(!JSON.stringify(res.body).includes("gateway-password"));
  const rows = await t.deps.db.selectFrom("smsgatewayoption").select(["key", "value", "is_secret"])
    .execute();
  const secret = rows.find((r) => r.key === "Authorization")!;
  assert.equal(Number(secret.is_secret), 1);
  assert.match(secret.value, /^g1:/);
  assert.ok(!JSON.stringify(rows).includes("secret-token"));
  assert.ok(!JSON.stringify(rows).includes("gateway-password"));
  // the trailing slash is the same endpoint
  assert.equal(
    (await jsonOf(await t.asAdmin("POST", "/smsgateway/", { body: GATEWAY }))).status,
    200,
  );
  await t.close();
});

Deno.test("GET /smsgateway/<id>: a numeric id filters, anything else lists all; providers", async () => {
  const t = await createTestApp();
  const id1 = (await save(t, GATEWAY)).body.result.value;
  await save(t, { ...GATEWAY, name: "gw2" });
  const one = await list(t, `/smsgateway/${id1}`);
  assert.deepEqual(one.body.result.value.map((g: { name: string }) => g.name), ["gw1"]);
  assert.deepEqual((await list(t, "/smsgateway/999")).body.result.value, []);
  assert.equal((await list(t, "/smsgateway/gw1")).body.result.value.length, 2, "spec quirk");
  const providers = (await list(t, "/smsgateway/providers")).body.result.value;
  assert.equal(providers[HTTP_PROVIDER].options_allowed, true);
  assert.equal(providers[HTTP_PROVIDER].headers_allowed, true);
  assert.equal(providers[HTTP_PROVIDER].parameters.URL.required, true);
  assert.deepEqual(providers[SCRIPT_PROVIDER].parameters.background.values, ["wait", "background"]);
  await t.close();
});

Deno.test("POST /smsgateway with the same name updates: unsent options go, __CENSORED__ keeps a secret", async () => {
  const t = await createTestApp();
  const id = (await save(t, GATEWAY)).body.result.value;
  const before = await t.deps.db.selectFrom("smsgatewayoption").select(["key", "value"])
    .where("key", "=", "Authorization").executeTakeFirstOrThrow();
  const again = await save(t, {
    name: "gw1",
    module: HTTP_PROVIDER,
    // the same URL: a kept secret goes nowhere else (smsgateway_providers_test.ts)
    "option.URL": "https://sms.example.com/send",
    "header.Authorization": "__CENSORED__",
  });
  assert.equal(again.body.result.value, id, "same gateway");
  const gw = (await list(t)).body.result.value[0];
  assert.deepEqual(gw.options, { URL: "https://sms.example.com/send" });
  assert.deepEqual(gw.headers, { Authorization: "__CENSORED__" });
  assert.equal(gw.description, "");
  const after = await t.deps.db.selectFrom("smsgatewayoption").select(["key", "value"])
    .where("key", "=", "Authorization").executeTakeFirstOrThrow();
  assert.equal(
    after.value,
    before.value,
    "the stored secret was kept, not replaced by the placeholder",
  );
  await t.close();
});

Deno.test("POST /smsgateway refuses to keep a stored secret when the URL or a proxy changes; nothing changes", async () => {
  const t = await createTestApp();
  await save(t, GATEWAY);
  const rows = await t.deps.db.selectFrom("smsgatewayoption").select(["key", "value"])
    .orderBy("key").execute();
  const cases: [Record<string, unknown>, string, string][] = [
    [
      { "option.URL": "https://evil.example.com/send", "header.Authorization": "__CENSORED__" },
      "header.Authorization",
      "option.URL",
    ],
    [
      { "option.HTTPS_PROXY": "http://proxy.evil.example.com", "option.PASSWORD": "__CENSORED__" },
      "option.PASSWORD",
      "option.HTTPS_PROXY",
    ],
  ];
  for (const [change, secret, target] of cases) {
    const res = await save(t, { ...GATEWAY, ...change });
    assert.equal(res.status, 400, JSON.stringify(change));
    assert.equal(res.body.result.error.code, 905);
    assert.equal(
      res.body.result.error.message,
      `ERR905: Cannot keep the stored "${secret}": "${target}" changed, which decides where it ` +
        `is sent. Send "${secret}" again`,
    );
  }
  assert.deepEqual(
    await t.deps.db.selectFrom("smsgatewayoption").select(["key", "value"]).orderBy("key")
      .execute(),
    rows,
  );
  // the secret sent again may go to the new URL
  const moved = await save(t, { ...GATEWAY, "option.URL": "https://sms2.example.com/send" });
  assert.equal(moved.status, 200, JSON.stringify(moved.body));
  await t.close();
});

Deno.test("DELETE /smsgateway/<name> and /smsgateway/option/<id>/<key>; unknown → 404", async () => {
  const t = await createTestApp();
  const id = (await save(t, GATEWAY)).body.result.value;
  const delOption = await jsonOf(await t.asAdmin("DELETE", `/smsgateway/option/${id}/option.to`));
  assert.equal(delOption.body.result.value, true);
  const delHeader = await jsonOf(
    await t.asAdmin("DELETE", `/smsgateway/option/${id}/header.X-Client`),
  );
  assert.equal(delHeader.body.result.value, true);
  assert.equal(
    (await jsonOf(await t.asAdmin("DELETE", `/smsgateway/option/${id}/text`))).status,
    200,
  );
  const gw = (await list(t)).body.result.value[0];
  assert.deepEqual(Object.keys(gw.options).sort(), ["HTTP_METHOD", "PASSWORD", "URL"]);
  assert.deepEqual(Object.keys(gw.headers), ["Authorization"]);
  const noOption = await jsonOf(await t.asAdmin("DELETE", `/smsgateway/option/${id}/nope`));
  assert.equal(noOption.status, 404);
  assert.equal(noOption.body.result.error.code, 601);
  const del = await jsonOf(await t.asAdmin("DELETE", "/smsgateway/gw1"));
  assert.equal(del.body.result.value, id);
  assert.deepEqual((await list(t)).body.result.value, []);
  assert.equal((await t.deps.db.selectFrom("smsgatewayoption").selectAll().execute()).length, 0);
  const again = await jsonOf(await t.asAdmin("DELETE", "/smsgateway/gw1"));
  assert.equal(again.status, 404);
  assert.equal(again.body.result.error.code, 601);
  await t.close();
});

Deno.test("POST /smsgateway refuses bad input with 400 and stores nothing", async () => {
  const t = await createTestApp();
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ module: HTTP_PROVIDER, "option.URL": "https://x" }, /Missing parameter: name/],
    [{ name: "gw", "option.URL": "https://x" }, /Missing parameter: module/],
    [{ name: "gw", module: "my.own.Provider" }, /unknown SMS provider module/],
    [{ name: "gw", module: HTTP_PROVIDER }, /option\.URL/],
    [{ name: "gw", module: HTTP_PROVIDER, "option.URL": "file:///etc/passwd" }, /http\(s\) URL/],
    [{ ...GATEWAY, name: "gw", "option.HTTP_METHOD": "PUT" }, /GET or POST/],
    [{ ...GATEWAY, name: "gw", "option.TIMEOUT": "0" }, /TIMEOUT/],
    [{ ...GATEWAY, name: "gw", "header.X-Evil": "a\r\nInjected: 1" }, /invalid value/],
    [{ ...GATEWAY, name: "gw", "header.Bad Name": "x" }, /header name/],
    [{ ...GATEWAY, name: "a/b" }, /Cannot use SMS gateway name/],
    [{ name: "gw", module: SCRIPT_PROVIDER, "option.script": "../../bin/sh" }, /option\.script/],
    [
      { name: "gw", module: SCRIPT_PROVIDER, "option.script": "s.sh", "option.background": "x" },
      /wait or background/,
    ],
    [
      { name: "gw", module: SCRIPT_PROVIDER, "option.script": "s.sh", "header.A": "b" },
      /no headers/,
    ],
  ];
  for (const [body, message] of cases) {
    const res = await save(t, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.result.error.code, 905, JSON.stringify(body));
    assert.match(res.body.result.error.message, message);
  }
  assert.deepEqual((await list(t)).body.result.value, []);
  await t.close();
});

Deno.test("/smsgateway/ is admin-only: a user JWT and an admin without the right are refused, nothing changes", async () => {
  const t = await createTestApp();
  await save(t, GATEWAY);
  const { token: userToken } = await issueJwt(t.deps, {
    username: "alice",
    realm: "realm1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  const asUser = [
    await jsonOf(await t.get("/smsgateway/", { token: userToken })),
    await jsonOf(await t.get("/smsgateway/providers", { token: userToken })),
    await save(t, { ...GATEWAY, "option.URL": "https://evil.example.com" }, userToken),
    await jsonOf(await t.delete("/smsgateway/gw1", { token: userToken })),
  ];
  for (const res of asUser) {
    assert.equal(res.status, 401);
    assert.equal(res.body.result.error.code, 4306);
  }
  assert.equal((await jsonOf(await t.get("/smsgateway/"))).status, 401, "no JWT");
  // an admin policy that grants reading but not writing
  const pol = await jsonOf(
    await t.asAdmin("POST", "/policy/readonly", {
      body: { scope: "admin", action: "smsgateway_read, policyread, policywrite" },
    }),
  );
  assert.equal(pol.status, 200, JSON.stringify(pol.body));
  assert.equal((await list(t)).status, 200);
  const write = await save(t, { ...GATEWAY, "option.URL": "https://evil.example.com" });
  assert.equal(write.status, 403);
  assert.equal(write.body.result.error.code, 303);
  assert.equal((await jsonOf(await t.asAdmin("DELETE", "/smsgateway/gw1"))).status, 403);
  const id = (await list(t)).body.result.value[0].id;
  assert.equal(
    (await jsonOf(await t.asAdmin("DELETE", `/smsgateway/option/${id}/option.to`))).status,
    403,
  );
  const gw = (await list(t)).body.result.value[0];
  assert.equal(gw.options.URL, "https://sms.example.com/send", "nothing changed");
  assert.equal(gw.options.to, "{phone}");
  // without smsgateway_read the list is refused too
  const update = await jsonOf(
    await t.asAdmin("POST", "/policy/readonly", {
      body: { scope: "admin", action: "policyread, policywrite" },
    }),
  );
  assert.equal(update.status, 200);
  assert.equal((await list(t)).status, 403);
  assert.equal((await list(t, "/smsgateway/providers")).status, 403);
  await t.close();
});
