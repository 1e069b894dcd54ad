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

Deno.test("secret system config values: stored encrypted, answered censored, kept by the placeholder", async () => {
  const t = await createTestApp();
  const set = await jsonOf(
    await t.asAdmin("POST", "/system/setConfig", {
      body: {
        "yubico.secret": "c2VjcmV0LWtleQ==",
        "yubikey.apiid.42": "YXBpLWtleQ==",
        "my.password": "hunter2-hunter2",
        "my.password.type": "password",
        "my.password.desc": "the relay's password",
        plain: "visible",
      },
    }),
  );
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.deepEqual(set.body.result.value, {
    "yubico.secret": "insert",
    "yubikey.apiid.42": "insert",
    "my.password": "insert",
    plain: "insert",
  });
  // at rest: ciphertext, type password; the description from <key>.desc
  const rows = await t.deps.db.selectFrom("config").selectAll().orderBy("key").execute();
  const byKey = Object.fromEntries(rows.map((r) => [r.key, r]));
  for (const key of ["yubico.secret", "yubikey.apiid.42", "my.password"]) {
    assert.equal(byKey[key].type, "password", key);
    assert.match(byKey[key].value, /^g1:/, key);
  }
  assert.equal(byKey["my.password"].description, "the relay's password");
  assert.equal(byKey.plain.value, "visible");
  assert.equal(byKey["my.password.type"], undefined, "the attribute is not a key of its own");

  const all = await jsonOf(await t.asAdmin("GET", "/system/"));
  assert.deepEqual(all.body.result.value, {
    "my.password": "__CENSORED__",
    plain: "visible",
    "yubico.secret": "__CENSORED__",
    "yubikey.apiid.42": "__CENSORED__",
  });
  const one = await jsonOf(await t.asAdmin("GET", "/system/yubico.secret"));
  assert.equal(one.body.result.value, "__CENSORED__");
  assert.ok(!JSON.stringify(all.body).includes("hunter2"));

  // what the server itself reads is the secret
  const { loadSystemConfig } = await import("../../src/domain/system_config/mod.ts");
  assert.equal((await loadSystemConfig(t.deps)).get("my.password"), "hunter2-hunter2");
  assert.equal((await loadSystemConfig(t.deps)).get("yubico.secret"), "c2VjcmV0LWtleQ==");

  // sending the placeholder back keeps the secret; a new value replaces it
  const kept = await jsonOf(
    await t.asAdmin("POST", "/system/setConfig", {
      body: { "yubico.secret": "__CENSORED__", plain: "changed" },
    }),
  );
  assert.deepEqual(kept.body.result.value, { plain: "update", "yubico.secret": "update" });
  assert.equal((await loadSystemConfig(t.deps)).get("yubico.secret"), "c2VjcmV0LWtleQ==");
  await t.asAdmin("POST", "/system/setConfig", { body: { "yubico.secret": "bmV3LWtleQ==" } });
  assert.equal((await loadSystemConfig(t.deps)).get("yubico.secret"), "bmV3LWtleQ==");

  // the placeholder for a secret that was never stored is refused, nothing written
  const nothing = await jsonOf(
    await t.asAdmin("POST", "/system/setConfig", {
      body: { "yubikey.apiid.7": "__CENSORED__", other: "x" },
    }),
  );
  assert.equal(nothing.status, 400);
  assert.match(nothing.body.result.error.message, /yubikey\.apiid\.7.*no secret stored to keep/);
  const after = await jsonOf(await t.asAdmin("GET", "/system/"));
  assert.equal(after.body.result.value.other, undefined);
  await t.close();
});
