import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";

Deno.test("POST /system/setConfig stores typed keys and reports insert/update", async () => {
  const t = await createTestApp();
  const first = await jsonOf(
    await t.asAdmin("POST", "/system/setConfig", {
      body: { PrependPin: "false", DefaultMaxFailCount: "5", custom: "x" },
    }),
  );
  assert.equal(first.status, 200);
  assert.deepEqual(first.body.result.value, {
    PrependPin: "insert",
    DefaultMaxFailCount: "insert",
    custom: "insert",
  });
  const second = await jsonOf(
    await t.asAdmin("POST", "/system/setConfig", { body: { PrependPin: "1" } }),
  );
  assert.deepEqual(second.body.result.value, { PrependPin: "update" });
  const all = await jsonOf(await t.asAdmin("GET", "/system/"));
  assert.deepEqual(all.body.result.value, {
    DefaultMaxFailCount: "5",
    PrependPin: "True",
    custom: "x",
  });
  await t.close();
});

Deno.test("POST /system/setConfig refuses bad values and stores nothing of the request", async () => {
  const t = await createTestApp();
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ DefaultOtpLen: "7" }, /DefaultOtpLen.*must be 6 or 8/],
    [{ PrependPin: "maybe" }, /expected a boolean/],
    [{ DefaultMaxFailCount: "ten" }, /expected an integer/],
    [{ splitAtSign: "true", DefaultSyncWindow: "-1" }, /must not be negative/],
    [{}, /Missing parameter/],
  ];
  for (const [body, message] of cases) {
    const { status, body: res } = await jsonOf(
      await t.asAdmin("POST", "/system/setConfig", { body }),
    );
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(res.result.error.code, 905);
    assert.match(res.result.error.message, message);
  }
  const all = await jsonOf(await t.asAdmin("GET", "/system/"));
  assert.deepEqual(all.body.result.value, {}, "a refused request must not store its valid keys");
  await t.close();
});

Deno.test("GET /system/<key> returns the value or the default", async () => {
  const t = await createTestApp();
  await t.asAdmin("POST", "/system/setConfig", { body: { splitAtSign: "false" } });
  const set = await jsonOf(await t.asAdmin("GET", "/system/splitAtSign"));
  assert.equal(set.body.result.value, "False");
  const dflt = await jsonOf(await t.asAdmin("GET", "/system/DefaultSyncWindow"));
  assert.equal(dflt.body.result.value, "1000");
  const viaParam = await jsonOf(
    await t.asAdmin("GET", "/system/", { query: { key: "PrependPin" } }),
  );
  assert.equal(viaParam.body.result.value, "True");
  const unknown = await jsonOf(await t.asAdmin("GET", "/system/NoSuchKey"));
  assert.equal(unknown.body.result.value, null);
  await t.close();
});

Deno.test("DELETE /system/<key> removes a key", async () => {
  const t = await createTestApp();
  await t.asAdmin("POST", "/system/setConfig", { body: { custom: "1" } });
  const del = await jsonOf(await t.asAdmin("DELETE", "/system/custom"));
  assert.equal(del.status, 200);
  assert.equal(del.body.result.value, true);
  const again = await jsonOf(await t.asAdmin("DELETE", "/system/custom"));
  assert.equal(again.body.result.value, false);
  const noAuth = await jsonOf(await t.delete("/system/custom"));
  assert.equal(noAuth.status, 401);
  await t.close();
});

Deno.test("JSON bodies keep their types and are not decoded twice", async () => {
  const t = await createTestApp();
  const res = await jsonOf(
    await t.asAdmin("POST", "/system/setConfig", {
      body: { custom: "a%41", DefaultOtpLen: 8 },
      json: true,
    }),
  );
  assert.equal(res.status, 200);
  const all = await jsonOf(await t.asAdmin("GET", "/system/"));
  assert.equal(all.body.result.value.custom, "a%41");
  assert.equal(all.body.result.value.DefaultOtpLen, "8");
  await t.close();
});

Deno.test("form values are percent-decoded a second time except for three clients", async () => {
  const t = await createTestApp();
  const token = await t.adminToken();
  const post = async (ua: string | undefined, key: string) => {
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      "PI-Authorization": token,
    };
    if (ua) headers["user-agent"] = ua;
    const res = await t.app.request("/system/setConfig", {
      method: "POST",
      headers,
      body: `${key}=${encodeURIComponent("pw%45#te+st")}`,
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
  };
  await post("some-generic-agent/1.0", "generic");
  await post(undefined, "noagent");
  await post("simpleSAMLphp", "saml");
  await post("privacyIDEA-LDAP-Proxy/1.0", "ldap");
  await post("privacyidea-cp/2.0 Windows/PC", "cp");
  const form = new FormData();
  form.set("multipart", "pw%45");
  const mp = await t.app.request("/system/setConfig", {
    method: "POST",
    headers: { "PI-Authorization": token },
    body: form,
  });
  assert.equal(mp.status, 200);
  await mp.body?.cancel();
  const v = (await jsonOf(await t.asAdmin("GET", "/system/"))).body.result.value;
  assert.equal(v.generic, "pwE#te+st");
  assert.equal(v.noagent, "pwE#te+st");
  assert.equal(v.saml, "pw%45#te+st");
  assert.equal(v.ldap, "pw%45#te+st");
  assert.equal(v.cp, "pw%45#te+st");
  assert.equal(v.multipart, "pwE");
  await t.close();
});
