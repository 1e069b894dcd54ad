/**
 * LDAP `AUTHTYPE`: Simple binds; privacyIDEA's other values (SASL Digest-MD5,
 * NTLM, SASL Kerberos) and unknown ones are refused with a message naming
 * what is supported, when a resolver is saved (400, nothing stored) and by
 * `/resolver/test` (a failed test), for the user and the machine resolver.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { BASE, ldapTest, READER_DN, READER_PW } from "./_slapd.ts";
import { ldapConfig, testConfig } from "./_fixtures.ts";

const REFUSED = ["SASL Digest-MD5", "NTLM", "SASL Kerberos", "Kerberos"];

function refusal(authType: string): RegExp {
  return new RegExp(
    `Authtype ${authType} not supported \\(supported: Simple; privacyIDEA's SASL Digest-MD5, ` +
      "NTLM and SASL Kerberos are not available\\)",
  );
}

async function withApp(fn: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await createTestApp();
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

ldapTest(
  "AUTHTYPE other than Simple: refused on save (400, nothing stored) and by /resolver/test, naming Simple",
  async (slapd) => {
    await withApp(async (t) => {
      for (const authType of REFUSED) {
        const saved = await jsonOf(
          await t.asAdmin("POST", "/resolver/ad", {
            body: ldapConfig(slapd, { AUTHTYPE: authType }),
          }),
        );
        assert.equal(saved.status, 400, authType);
        assert.equal(saved.body.result.status, false);
        assert.equal(saved.body.result.error.code, 905);
        assert.match(saved.body.result.error.message, refusal(authType));

        const tested = await testConfig(t, ldapConfig(slapd, { AUTHTYPE: authType }));
        assert.equal(tested.status, 200, authType);
        assert.equal(tested.value, false);
        assert.match(tested.description, refusal(authType));
      }
      const list = await jsonOf(await t.asAdmin("GET", "/resolver/"));
      assert.deepEqual(list.body.result.value, {});

      // Simple (any case, or absent) binds
      for (const authType of ["Simple", "simple", ""]) {
        const ok = await testConfig(t, ldapConfig(slapd, { AUTHTYPE: authType }));
        assert.equal(ok.value, true, `${authType}: ${ok.description}`);
      }
      // a stored Simple resolver cannot be switched to NTLM: it stays as it was
      const stored = await jsonOf(
        await t.asAdmin("POST", "/resolver/ad", { body: ldapConfig(slapd) }),
      );
      assert.equal(stored.status, 200);
      const update = await jsonOf(
        await t.asAdmin("POST", "/resolver/ad", {
          body: { type: "ldapresolver", AUTHTYPE: "NTLM" },
        }),
      );
      assert.equal(update.status, 400);
      const after = await jsonOf(await t.asAdmin("GET", "/resolver/ad"));
      assert.equal(after.body.result.value.ad.data.AUTHTYPE, undefined);
    });
  },
);

ldapTest(
  "AUTHTYPE of the ldap machine resolver: NTLM refused on save and by /machineresolver/test",
  async (slapd) => {
    await withApp(async (t) => {
      const config = {
        type: "ldap",
        LDAPURI: slapd.url,
        LDAPBASE: `ou=machines,${BASE}`,
        BINDDN: READER_DN,
        BINDPW: READER_PW,
        SEARCHFILTER: "(objectClass=device)",
        HOSTNAMEATTRIBUTE: "dNSHostName",
        IDATTRIBUTE: "cn",
        AUTHTYPE: "NTLM",
      };
      const saved = await jsonOf(
        await t.asAdmin("POST", "/machineresolver/hosts", { body: config }),
      );
      assert.equal(saved.status, 400);
      assert.match(saved.body.result.error.message, refusal("NTLM"));
      const tested = await jsonOf(
        await t.asAdmin("POST", "/machineresolver/test", { body: config }),
      );
      assert.match(JSON.stringify(tested.body), refusal("NTLM"));
      const list = await jsonOf(await t.asAdmin("GET", "/machineresolver/"));
      assert.deepEqual(list.body.result.value, {});
    });
  },
);
