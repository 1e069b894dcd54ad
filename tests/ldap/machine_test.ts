/**
 * The `ldap` machine resolver over HTTP against the private slapd: test,
 * machine lookups by host name, address and id, and a token bound to an LDAP
 * machine by host name.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createHostsResolver, initToken, SSH_KEY } from "../domain/machine/fixtures.ts";
import { BASE, freePort, ldapTest, READER_DN, READER_PW, type Slapd } from "./_slapd.ts";

async function withApp(fn: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await createTestApp();
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

function machineConfig(slapd: Slapd, overrides: Record<string, string> = {}) {
  return {
    type: "ldap",
    LDAPURI: slapd.url,
    LDAPBASE: `ou=machines,${BASE}`,
    BINDDN: READER_DN,
    BINDPW: READER_PW,
    SEARCHFILTER: "(objectClass=device)",
    HOSTNAMEATTRIBUTE: "dNSHostName",
    IPATTRIBUTE: "ipHostNumber",
    IDATTRIBUTE: "cn",
    TIMEOUT: "3",
    ...overrides,
  };
}

async function machines(t: TestApp, query: Record<string, string> = {}): Promise<Json[]> {
  const res = await jsonOf(await t.asAdmin("GET", "/machine/", { query }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

ldapTest(
  "POST /machineresolver/test for ldap: ok with the count, wrong password, unreachable",
  async (slapd) => {
    await withApp(async (t) => {
      const test = async (body: Record<string, string>) =>
        await jsonOf(await t.asAdmin("POST", "/machineresolver/test", { body }));
      const ok = await test(machineConfig(slapd));
      assert.equal(ok.status, 200);
      assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
      assert.match(
        ok.body.detail.description,
        /^Your LDAP config seems to be OK, 2 machine objects found in [\d.]+s\.$/,
      );
      const wrong = await test(machineConfig(slapd, { BINDPW: "nope" }));
      assert.equal(wrong.status, 200);
      assert.equal(wrong.body.result.value, false);
      assert.match(wrong.body.detail.description, /invalidCredentials/);
      const dead = await test(
        machineConfig(slapd, { LDAPURI: `ldap://127.0.0.1:${await freePort()}` }),
      );
      assert.equal(dead.status, 200);
      assert.equal(dead.body.result.value, false);
      assert.match(dead.body.detail.description, /ECONNREFUSED/);
    });
  },
);

ldapTest(
  "GET /machine/ answers from the directory: host name, IP, id and any; filter syntax is a value",
  async (slapd) => {
    await withApp(async (t) => {
      const saved = await jsonOf(
        await t.asAdmin("POST", "/machineresolver/ldapm", { body: machineConfig(slapd) }),
      );
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      const all = await machines(t);
      assert.deepEqual(all, [
        { id: "host1", hostname: ["host1.example.org"], ip: "10.0.0.1", resolver_name: "ldapm" },
        { id: "host2", hostname: ["host2.example.org"], ip: "10.0.0.2", resolver_name: "ldapm" },
      ]);
      const ids = async (query: Record<string, string>) =>
        (await machines(t, query)).map((m) => m.id);
      assert.deepEqual(await ids({ hostname: "host1" }), ["host1"]);
      assert.deepEqual(await ids({ ip: "10.0.0.2" }), ["host2"]);
      assert.deepEqual(await ids({ id: "host2" }), ["host2"]);
      assert.deepEqual(await ids({ any: "10.0.0" }), ["host1", "host2"]);
      assert.deepEqual(await ids({ any: "host2.example" }), ["host2"]);
      assert.deepEqual(await ids({ hostname: "*)(cn=*" }), []);
      assert.deepEqual(await ids({ id: "*" }), []);

      // a token bound by host name resolves the LDAP machine
      await initToken(t, { type: "sshkey", serial: "SSH1", sshkey: SSH_KEY });
      const bound = await jsonOf(
        await t.asAdmin("POST", "/machine/token", {
          body: { serial: "SSH1", application: "ssh", hostname: "host2.example.org", user: "root" },
        }),
      );
      assert.equal(bound.status, 200, JSON.stringify(bound.body));
      const view = await jsonOf(
        await t.asAdmin("GET", "/machine/token", { query: { serial: "SSH1" } }),
      );
      assert.equal(view.body.result.value[0].machine_id, "host2");
      assert.equal(view.body.result.value[0].resolver, "ldapm");
    });
  },
);

ldapTest(
  "LDAP machine ids: DN, or objectGUID rendered like privacyIDEA; an unreachable directory hides no other resolver",
  async (slapd) => {
    await withApp(async (t) => {
      await jsonOf(
        await t.asAdmin("POST", "/machineresolver/byguid", {
          body: machineConfig(slapd, { IDATTRIBUTE: "objectGUID" }),
        }),
      );
      // host2 has no objectGUID: it has no id in this resolver
      assert.deepEqual(await machines(t), [{
        id: "6f9619ff-8b86-d011-b42d-00c04fc964ff",
        hostname: ["host1.example.org"],
        ip: "10.0.0.1",
        resolver_name: "byguid",
      }]);
      await jsonOf(await t.asAdmin("DELETE", "/machineresolver/byguid"));
      await jsonOf(
        await t.asAdmin("POST", "/machineresolver/bydn", {
          body: machineConfig(slapd, { IDATTRIBUTE: "DN", IPATTRIBUTE: "" }),
        }),
      );
      const byDn = await machines(t, { hostname: "host1" });
      assert.deepEqual(byDn, [{
        id: `cn=host1,ou=machines,${BASE}`,
        hostname: ["host1.example.org"],
        ip: null,
        resolver_name: "bydn",
      }]);
      assert.deepEqual((await machines(t, { id: "cn=host2" })).map((m) => m.hostname[0]), [
        "host2.example.org",
      ]);

      // an LDAP machine resolver whose server is gone contributes nothing; the hosts file still answers
      await jsonOf(
        await t.asAdmin("POST", "/machineresolver/bydn", {
          // the stored BINDPW goes to a new server only when sent again
          body: {
            type: "ldap",
            LDAPURI: `ldap://127.0.0.1:${await freePort()}`,
            BINDPW: machineConfig(slapd).BINDPW,
          },
        }),
      );
      await createHostsResolver(t, "hosts1");
      const rest = await machines(t);
      assert.equal(rest.length, 5);
      assert.ok(rest.every((m) => m.resolver_name === "hosts1"));
      assert.ok(t.log.lines.some((l) => l.includes("Cannot query LDAP machine resolver")));
    });
  },
);
