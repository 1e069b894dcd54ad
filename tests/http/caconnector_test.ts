import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createCaConnector, makeCaDir } from "./_local_ca.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { actionTest } from "../policy_actions/_registry.ts";

async function list(t: TestApp, path = "/caconnector/") {
  return await jsonOf(await t.asAdmin("GET", path));
}

Deno.test("POST /caconnector/<name> imports a local CA and GET lists it with its templates", async () => {
  const t = await createTestApp();
  const ca = await makeCaDir();
  try {
    const id = await createCaConnector(t, "localCA", ca);
    assert.equal(typeof id, "number");
    const res = await list(t);
    assert.equal(res.status, 200);
    const [c] = res.body.result.value;
    assert.equal(c.connectorname, "localCA");
    assert.equal(c.type, "local");
    // privacyIDEA stores the URL's name among the config keys
    assert.equal(c.data.name, "localCA");
    assert.equal(c.data.cakey, ca.cakey);
    assert.equal(c.data.CRL_Overlap_Period, "5");
    assert.deepEqual(c.templates, {
      user: { days: 365, extensions: "user" },
      webserver: { days: 750, extensions: "server" },
      template3: { days: 10, extensions: "user" },
    });
    // no key material in the answer
    assert.doesNotMatch(JSON.stringify(res.body), /PRIVATE KEY|BEGIN CERTIFICATE/);
    // by name; an unknown name is an empty list
    assert.equal((await list(t, "/caconnector/localCA")).body.result.value.length, 1);
    assert.deepEqual((await list(t, "/caconnector/other")).body.result.value, []);
    assert.deepEqual((await list(t, "/caconnector/specific/local")).body.result.value, {});
    // an update keeps keys not sent and does not need the files again
    await ca.remove();
    const upd = await jsonOf(
      await t.asAdmin("POST", "/caconnector/localCA", {
        body: { type: "local", CRL_Validity_Period: "60" },
      }),
    );
    assert.equal(upd.status, 200, JSON.stringify(upd.body));
    assert.equal(upd.body.result.value, id);
    const after = (await list(t)).body.result.value[0];
    assert.equal(after.data.CRL_Validity_Period, "60");
    assert.equal(after.data.cakey, ca.cakey);
    // delete; then 404
    const del = await jsonOf(await t.asAdmin("DELETE", "/caconnector/localCA"));
    assert.equal(del.body.result.value, id);
    assert.deepEqual((await list(t)).body.result.value, []);
    const again = await jsonOf(await t.asAdmin("DELETE", "/caconnector/localCA"));
    assert.equal(again.status, 404);
    assert.equal(again.body.result.error.message, "The requested CAConnector could not be found.");
  } finally {
    await ca.remove().catch(() => {});
    await t.close();
  }
});

Deno.test("POST /caconnector refuses bad input with 400 and stores nothing", async () => {
  const t = await createTestApp();
  const ca = await makeCaDir();
  const other = await makeCaDir({ cn: "OtherCA" });
  try {
    const base = { type: "local", cakey: ca.cakey, cacert: ca.cacert };
    const cases: [string, string, Record<string, string>, RegExp][] = [
      ["bad name", "a b", base, /Cannot use CA connector name/],
      ["no type", "c1", { cakey: ca.cakey, cacert: ca.cacert }, /Missing parameter: type/],
      ["microsoft", "c1", { ...base, type: "microsoft" }, /not supported/],
      ["unknown type", "c1", { ...base, type: "foo" }, /Cannot use CA connector type "foo"/],
      ["no cakey", "c1", { type: "local", cacert: ca.cacert }, /'cakey' is missing/],
      ["missing file", "c1", { ...base, cakey: `${ca.dir}/nope.pem` }, /no such file/],
      ["relative path", "c1", { ...base, cakey: "cakey.pem" }, /needs an absolute WorkingDir/],
      [
        "key of another CA",
        "c1",
        { ...base, cakey: other.cakey },
        /the key is not the certificate's/,
      ],
      ["cert file is a key", "c1", { ...base, cacert: ca.cakey }, /holds no PEM certificate/],
      [
        "key file is a cert",
        "c1",
        { ...base, cakey: ca.cacert },
        /not an unencrypted PEM private key/,
      ],
      [
        "bad template file",
        "c1",
        { ...base, templates: ca.cakey },
        /not a mapping of templates|not a YAML/,
      ],
      ["bad CRL period", "c1", { ...base, CRL_Validity_Period: "x" }, /CRL_Validity_Period/],
      ["type without key", "c1", { ...base, "type.foo": "password" }, /no parameter "foo"/],
    ];
    for (const [name, conn, body, message] of cases) {
      const res = await jsonOf(await t.asAdmin("POST", `/caconnector/${conn}`, { body }));
      assert.equal(res.status, 400, `${name}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.result.error.message, message, name);
      // the content of a file named by mistake is never echoed
      assert.doesNotMatch(JSON.stringify(res.body), /MII/, name);
    }
    assert.deepEqual((await list(t)).body.result.value, [], "nothing stored");
    await createCaConnector(t, "c1", ca);
    const retype = await jsonOf(
      await t.asAdmin("POST", "/caconnector/c1", { body: { ...base, type: "microsoft" } }),
    );
    assert.equal(retype.status, 400);
    const keyFile = await jsonOf(
      await t.asAdmin("POST", "/caconnector/c2", {
        body: { ...base, cakey: t.deps.config.storage.keyFile },
      }),
    );
    assert.equal(keyFile.status, 400);
  } finally {
    await ca.remove();
    await other.remove();
    await t.close();
  }
});

for (
  const [action, method, path, body] of [
    ["caconnectorread", "GET", "/caconnector/", undefined],
    ["caconnectorwrite", "POST", "/caconnector/c9", { type: "local" }],
    ["caconnectordelete", "DELETE", "/caconnector/c1", undefined],
  ] as const
) {
  actionTest("admin", action, `an admin policy without ${action} refuses ${method}`, async () => {
    const t = await createTestApp();
    const ca = await makeCaDir();
    try {
      await createCaConnector(t, "c1", ca);
      // admin policies exist, but none grants the action: refused, nothing changed
      await savePolicy(t.deps, "other", { scope: "admin", action: "tokenlist" });
      const refused = await jsonOf(await t.asAdmin(method, path, { body }));
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.body.result.error.code, 303);
      await savePolicy(t.deps, "grant", {
        scope: "admin",
        action: `${action}, caconnectorread`,
      });
      const allowed = await jsonOf(await t.asAdmin(method, path, { body }));
      assert.notEqual(allowed.status, 403, JSON.stringify(allowed.body));
      assert.notEqual(allowed.status, 401);
      // the refused request changed nothing: c1 is still there unless the grant deleted it
      const names = (await list(t)).body.result.value.map((c: { connectorname: string }) =>
        c.connectorname
      );
      assert.deepEqual(names, action === "caconnectordelete" ? [] : ["c1"]);
    } finally {
      await ca.remove();
      await t.close();
    }
  });
}
