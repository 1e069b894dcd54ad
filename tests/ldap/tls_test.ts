/**
 * StartTLS and LDAPS for the `ldapresolver` against the private slapd, whose
 * certificate a CA made by the test signed (tests/ldap/_slapd.ts).
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { ldapTest } from "./_slapd.ts";
import { ldapConfig, listUsers, saveLdapResolver, testConfig } from "./_fixtures.ts";

async function withApp(fn: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await createTestApp();
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

ldapTest(
  "StartTLS with TLS_VERIFY and the right TLS_CA_FILE: test, list and login work",
  async (slapd) => {
    await withApp(async (t) => {
      const config = ldapConfig(slapd, {
        START_TLS: "1",
        TLS_VERIFY: "1",
        TLS_CA_FILE: slapd.caFile,
      });
      const test = await testConfig(t, config);
      assert.equal(test.value, true, test.description);
      await saveLdapResolver(t, "tls", config, "tlsrealm");
      assert.equal(Object.keys(await listUsers(t, { realm: "tlsrealm" })).length, 5);
      const login = await jsonOf(
        await t.post("/auth", { username: "alice@tlsrealm", password: "alice-pw" }),
      );
      assert.equal(login.status, 200, JSON.stringify(login.body));
    });
  },
);

ldapTest(
  "LDAPS with TLS_VERIFY and the right CA works; START_TLS is ignored for ldaps://",
  async (slapd) => {
    await withApp(async (t) => {
      const config = ldapConfig(slapd, {
        LDAPURI: slapd.ldapsUrl,
        START_TLS: "1",
        TLS_VERIFY: "1",
        TLS_CA_FILE: slapd.caFile,
      });
      const test = await testConfig(t, config);
      assert.equal(test.value, true, test.description);
      await saveLdapResolver(t, "ldaps", config, "ldapsrealm");
      const login = await jsonOf(
        await t.post("/auth", { username: "jürgen@ldapsrealm", password: "juergen-pw" }),
      );
      assert.equal(login.status, 200, JSON.stringify(login.body));
    });
  },
);

ldapTest(
  "A server certificate from another CA is refused (StartTLS and LDAPS); TLS_VERIFY=0 skips the check",
  async (slapd) => {
    await withApp(async (t) => {
      const variants: Record<string, string>[] = [{ START_TLS: "1" }, { LDAPURI: slapd.ldapsUrl }];
      for (const overrides of variants) {
        const wrong = await testConfig(
          t,
          ldapConfig(slapd, { ...overrides, TLS_VERIFY: "1", TLS_CA_FILE: slapd.wrongCaFile }),
        );
        assert.equal(wrong.status, 200);
        assert.equal(wrong.value, false, JSON.stringify(overrides));
        assert.match(wrong.description, /Cannot reach the LDAP server: .*certificate/);
        // the system store does not know the test CA either
        const system = await testConfig(t, ldapConfig(slapd, { ...overrides, TLS_VERIFY: "1" }));
        assert.equal(system.value, false, JSON.stringify(overrides));
        // without verification the connection is encrypted but any certificate passes
        const unchecked = await testConfig(
          t,
          ldapConfig(slapd, { ...overrides, TLS_VERIFY: "0", TLS_CA_FILE: slapd.wrongCaFile }),
        );
        assert.equal(unchecked.value, true, unchecked.description);
      }
      // a saved resolver with the wrong CA: users cannot be found, the answer is a clear error
      await saveLdapResolver(
        t,
        "wrongca",
        ldapConfig(slapd, { START_TLS: "1", TLS_VERIFY: "1", TLS_CA_FILE: slapd.wrongCaFile }),
        "wrongrealm",
      );
      const check = await jsonOf(
        await t.post("/validate/check", { user: "alice", realm: "wrongrealm", pass: "1" }),
      );
      assert.equal(check.status, 400);
      assert.match(check.body.result.error.message, /no LDAP server could be used \(.*certificate/);
    });
  },
);

ldapTest(
  "TLS_CA_FILE follows the resolver file rules: relative to the data folder, never Tessera's own files, only certificates",
  async (slapd) => {
    await withApp(async (t) => {
      const dataDir = t.deps.config.storage.dataDir;
      await Deno.copyFile(slapd.caFile, `${dataDir}/ldap-ca.pem`);
      const relative = await testConfig(
        t,
        ldapConfig(slapd, { START_TLS: "1", TLS_VERIFY: "1", TLS_CA_FILE: "ldap-ca.pem" }),
      );
      assert.equal(relative.value, true, relative.description);

      const cases: [string, string, RegExp][] = [
        ["own key file", `${dataDir}/encKey`, /one of Tessera's own files/],
        ["climbing", "../ldap-ca.pem", /"\.\." segments are not allowed/],
        ["a private key", `${slapd.dir}/server.key`, /holds no PEM certificate/],
      ];
      for (const [what, path, message] of cases) {
        const config = ldapConfig(slapd, { START_TLS: "1", TLS_VERIFY: "1", TLS_CA_FILE: path });
        const saved = await jsonOf(await t.asAdmin("POST", "/resolver/bad", { body: config }));
        assert.equal(saved.status, 400, what);
        assert.match(saved.body.result.error.message, message, what);
        const tested = await jsonOf(await t.asAdmin("POST", "/resolver/test", { body: config }));
        assert.notEqual(tested.status, 500, what);
        assert.equal(tested.body.result.value ?? false, false, what);
        // the file's content is never echoed
        assert.equal(JSON.stringify(saved.body).includes("PRIVATE KEY"), false, what);
        assert.equal(JSON.stringify(tested.body).includes("PRIVATE KEY"), false, what);
      }
      const list = await jsonOf(await t.asAdmin("GET", "/resolver/"));
      assert.equal("bad" in list.body.result.value, false);
    });
  },
);
