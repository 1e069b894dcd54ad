import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";
import { createHostsResolver, writeHosts } from "../domain/machine/fixtures.ts";

Deno.test("POST /machineresolver/<name> creates, updates and GET shows it", async () => {
  const t = await createTestApp();
  const filename = await writeHosts(t);
  const created = await jsonOf(
    await t.asAdmin("POST", "/machineresolver/machineresolver1", {
      body: { type: "hosts", filename },
    }),
  );
  assert.equal(created.status, 200);
  assert.equal(created.body.result.value, 1);

  // update: same name in other case, same type; keys not given stay
  const updated = await jsonOf(
    await t.asAdmin("POST", "/machineresolver/MachineResolver1", {
      body: { type: "hosts", extra: "x", "desc.extra": "an extra key" },
    }),
  );
  assert.equal(updated.status, 200);
  assert.equal(updated.body.result.value, 1);

  const list = await jsonOf(await t.asAdmin("GET", "/machineresolver/"));
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.result.value, {
    machineresolver1: {
      resolvername: "machineresolver1",
      type: "hosts",
      data: { filename, extra: "x" },
    },
  });
  const one = await jsonOf(await t.asAdmin("GET", "/machineresolver/MACHINERESOLVER1"));
  assert.deepEqual(Object.keys(one.body.result.value), ["machineresolver1"]);
  const unknown = await jsonOf(await t.asAdmin("GET", "/machineresolver/nothere"));
  assert.equal(unknown.status, 200);
  assert.deepEqual(unknown.body.result.value, {});
  await t.close();
});

Deno.test("GET /machineresolver/?type= filters by type; ldap secrets are censored", async () => {
  const t = await createTestApp();
  await createHostsResolver(t, "h1");
  const ldap = await jsonOf(
    await t.asAdmin("POST", "/machineresolver/ldap_mr", {
      body: {
        type: "ldap",
        LDAPURI: "ldap://ldap.example.com",
        BINDDN: "cn=admin,dc=example,dc=com",
        BINDPW: "s3cret",
        HOSTNAMEATTRIBUTE: "cn",
        IDATTRIBUTE: "cn",
      },
    }),
  );
  assert.equal(ldap.body.result.value, 2);
  const onlyLdap = await jsonOf(
    await t.asAdmin("GET", "/machineresolver/", { query: { type: "ldap" } }),
  );
  assert.deepEqual(onlyLdap.body.result.value, {
    ldap_mr: {
      resolvername: "ldap_mr",
      type: "ldap",
      data: {
        LDAPURI: "ldap://ldap.example.com",
        BINDDN: "cn=admin,dc=example,dc=com",
        BINDPW: "__CENSORED__",
        HOSTNAMEATTRIBUTE: "cn",
        IDATTRIBUTE: "cn",
      },
    },
  });
  // the secret is stored encrypted, and __CENSORED__ on update keeps it
  const row = await t.deps.db.selectFrom("machineresolverconfig").select(["value", "type"])
    .where("key", "=", "BINDPW").executeTakeFirstOrThrow();
  assert.equal(row.type, "password");
  assert.notEqual(row.value, "s3cret");
  await t.asAdmin("POST", "/machineresolver/ldap_mr", {
    body: { type: "ldap", BINDPW: "__CENSORED__" },
  });
  const after = await t.deps.db.selectFrom("machineresolverconfig").select("value")
    .where("key", "=", "BINDPW").executeTakeFirstOrThrow();
  assert.equal(after.value, row.value);
  const hosts = await jsonOf(
    await t.asAdmin("GET", "/machineresolver/", { query: { type: "hosts" } }),
  );
  assert.deepEqual(Object.keys(hosts.body.result.value), ["h1"]);
  await t.close();
});

Deno.test("POST /machineresolver/<name> errors", async () => {
  const t = await createTestApp();
  await createHostsResolver(t, "mr");
  const cases: [string, string, Record<string, string>, number, number, RegExp][] = [
    ["missing type", "mr2", { filename: "x" }, 400, 905, /^ERR905: Missing parameter: type$/],
    ["unknown type", "mr2", { type: "nis" }, 400, 905, /not in \['hosts', 'ldap'\]/],
    ["bad name", "bad name!", { type: "hosts" }, 400, 905, /non conformant characters/],
    [
      "type mismatch",
      "MR",
      { type: "ldap" },
      400,
      905,
      /^ERR905: machine resolver with similar name and other type already exists: MR$/,
    ],
    [
      "path climbing",
      "mr3",
      { type: "hosts", filename: "../etc/passwd" },
      400,
      905,
      /"\.\." is not allowed/,
    ],
    ["desc without key", "mr4", { type: "hosts", "desc.x": "d" }, 400, 905, /without "x"/],
  ];
  for (const [what, name, body, status, code, message] of cases) {
    const res = await jsonOf(
      await t.asAdmin("POST", `/machineresolver/${encodeURIComponent(name)}`, { body }),
    );
    assert.equal(res.status, status, what);
    assert.equal(res.body.result.status, false, what);
    assert.equal(res.body.result.error.code, code, what);
    assert.match(res.body.result.error.message, message, what);
  }
  // nothing of the refused requests was stored
  const list = await jsonOf(await t.asAdmin("GET", "/machineresolver/"));
  assert.deepEqual(Object.keys(list.body.result.value), ["mr"]);
  assert.equal(list.body.result.value.mr.type, "hosts");
  await t.close();
});

Deno.test("DELETE /machineresolver/<name> is exact and 404s for unknown names", async () => {
  const t = await createTestApp();
  const id = await createHostsResolver(t, "mr");
  const wrongCase = await jsonOf(await t.asAdmin("DELETE", "/machineresolver/MR"));
  assert.equal(wrongCase.status, 404);
  assert.equal(wrongCase.body.result.error.code, 601);
  assert.equal(
    wrongCase.body.result.error.message,
    "The requested MachineResolver could not be found.",
  );
  const del = await jsonOf(await t.asAdmin("DELETE", "/machineresolver/mr"));
  assert.equal(del.status, 200);
  assert.equal(del.body.result.value, id);
  const list = await jsonOf(await t.asAdmin("GET", "/machineresolver/"));
  assert.deepEqual(list.body.result.value, {});
  const rows = await t.deps.db.selectFrom("machineresolverconfig").selectAll().execute();
  assert.equal(rows.length, 0);
  await t.close();
});

Deno.test("POST /machineresolver/test: hosts answers Not Implemented, nothing is stored", async () => {
  const t = await createTestApp();
  const res = await jsonOf(
    await t.asAdmin("POST", "/machineresolver/test", { body: { type: "hosts", filename: "x" } }),
  );
  assert.equal(res.status, 200);
  assert.equal(res.body.result.value, false);
  assert.equal(res.body.detail.description, "Not Implemented");
  const missing = await jsonOf(await t.asAdmin("POST", "/machineresolver/test", { body: {} }));
  assert.equal(missing.status, 400);
  assert.equal(missing.body.result.error.code, 905);
  const list = await jsonOf(await t.asAdmin("GET", "/machineresolver/"));
  assert.deepEqual(list.body.result.value, {});
  await t.close();
});

Deno.test("/machineresolver/ needs an admin JWT", async () => {
  const t = await createTestApp();
  const res = await jsonOf(await t.get("/machineresolver/"));
  assert.equal(res.status, 401);
  assert.equal(res.body.result.error.code, 4033);
  const post = await jsonOf(await t.post("/machineresolver/x", { type: "hosts" }));
  assert.equal(post.status, 401);
  await t.close();
});

Deno.test("machine resolver: a password inside LDAPURI is censored; the censored round trip keeps it only for the same target", async () => {
  const t = await createTestApp();
  const uri = "ldaps://binder:uriPw4secret@ldap.example.com:636/";
  const censored = "ldaps://binder:__CENSORED__@ldap.example.com:636/";
  const body = {
    type: "ldap",
    LDAPURI: uri,
    BINDDN: "cn=admin,dc=example,dc=com",
    HOSTNAMEATTRIBUTE: "cn",
    IDATTRIBUTE: "cn",
  };
  const post = async (b: Record<string, unknown>) =>
    await jsonOf(await t.asAdmin("POST", "/machineresolver/ldap_mr", { body: b }));
  assert.equal((await post(body)).status, 200);
  const shown = await jsonOf(await t.asAdmin("GET", "/machineresolver/"));
  assert.equal(shown.body.result.value.ldap_mr.data.LDAPURI, censored);
  assert.equal(JSON.stringify(shown.body).includes("uriPw4secret"), false);
  const stored = async () =>
    (await t.deps.db.selectFrom("machineresolverconfig").select("value")
      .where("key", "=", "LDAPURI").executeTakeFirstOrThrow()).value;
  assert.equal((await post({ ...body, LDAPURI: censored })).status, 200);
  assert.equal(await stored(), uri, "the censored round trip keeps the password");
  for (
    const moved of [
      "ldaps://binder:__CENSORED__@evil.example.com:636/",
      "ldap://binder:__CENSORED__@ldap.example.com:636/",
    ]
  ) {
    const res = await post({ ...body, LDAPURI: moved });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(res.body.result.error.message, /Cannot keep the stored "LDAPURI password"/);
    assert.equal(await stored(), uri, "nothing changed");
  }
  // a new definition has nothing to keep
  const fresh = await jsonOf(
    await t.asAdmin("POST", "/machineresolver/other", { body: { ...body, LDAPURI: censored } }),
  );
  assert.equal(fresh.status, 400);
  const audit = await jsonOf(await t.asAdmin("GET", "/audit/"));
  assert.equal(JSON.stringify(audit.body).includes("uriPw4secret"), false, "not in audit");
  assert.equal(t.log.lines.join("\n").includes("uriPw4secret"), false, "not in logs");
  await t.close();
});
