/**
 * LDAP outages over HTTP: failover from a dead first server, a server that
 * accepts and never answers (bounded by TIMEOUT), and other realms serving on.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { freePort, ldapTest, silentListener } from "./_slapd.ts";
import { ldapConfig, listUsers, saveLdapResolver, testConfig } from "./_fixtures.ts";

async function withApp(fn: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await createTestApp();
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

ldapTest(
  "LDAPURI pool: a dead first server (refused) fails over to the live second one",
  async (slapd) => {
    await withApp(async (t) => {
      const dead = `ldap://127.0.0.1:${await freePort()}`;
      await saveLdapResolver(
        t,
        "pool",
        ldapConfig(slapd, { LDAPURI: `${dead}, ${slapd.url}`, SERVERPOOL_STRATEGY: "FIRST" }),
        "ldaprealm",
      );
      const test = await testConfig(
        t,
        ldapConfig(slapd, { LDAPURI: `${dead}, ${slapd.url}`, SERVERPOOL_STRATEGY: "FIRST" }),
      );
      assert.equal(test.value, true, test.description);
      const users = await listUsers(t, { realm: "ldaprealm" });
      assert.equal(Object.keys(users).length, 5);
      const login = await jsonOf(
        await t.post("/auth", { username: "bob@ldaprealm", password: "bob-pw" }),
      );
      assert.equal(login.status, 200, JSON.stringify(login.body));
    });
  },
);

ldapTest(
  "LDAPURI pool: a first server that never answers costs one TIMEOUT, then it is skipped",
  async (slapd) => {
    const silent = await silentListener();
    try {
      await withApp(async (t) => {
        await saveLdapResolver(
          t,
          "pool",
          ldapConfig(slapd, {
            LDAPURI: `${silent.url},${slapd.url}`,
            SERVERPOOL_STRATEGY: "FIRST",
            TIMEOUT: "2",
            SERVERPOOL_SKIP: "30",
          }),
          "ldaprealm",
        );
        const first = await timed(listUsers(t, { realm: "ldaprealm" }));
        assert.equal(Object.keys(first.value).length, 5);
        assert.ok(first.ms >= 1900 && first.ms < 5000, `first request took ${first.ms} ms`);
        assert.equal(silent.connections, 1);
        // the silent server is skipped for SERVERPOOL_SKIP seconds: no more waiting
        const second = await timed(listUsers(t, { realm: "ldaprealm" }));
        assert.equal(Object.keys(second.value).length, 5);
        assert.equal(silent.connections, 1);
        const login = await timed(
          jsonOf(await t.post("/auth", { username: "alice@ldaprealm", password: "alice-pw" })),
        );
        assert.equal(login.value.status, 200);
      });
    } finally {
      await silent.close();
    }
  },
);

ldapTest(
  "An LDAP server that accepts and never answers: /resolver/test and /validate/check fail within TIMEOUT; other realms keep working",
  async () => {
    const silent = await silentListener();
    try {
      await withApp(async (t) => {
        const config = {
          ...ldapConfig({ url: silent.url } as Parameters<typeof ldapConfig>[0]),
          TIMEOUT: "2",
        };
        const test = await testConfig(t, config);
        assert.equal(test.status, 200);
        assert.equal(test.value, false);
        assert.match(test.description, /Cannot reach the LDAP server: .*no answer within 2 s/);
        assert.ok(test.ms < 5000, `/resolver/test took ${test.ms} ms`);

        await saveLdapResolver(t, "hanging", config, "ldaprealm");
        await createUsers(t.deps, { realm: "sqlrealm", users: [{ login: "sue", password: "s" }] });
        const serial = await enrollHotp(t, { user: "sue", realm: "sqlrealm" });
        assert.ok(serial);

        // both at once: the SQL realm answers while the LDAP request waits for its timeout
        let ldapDone = false;
        const ldapCheck = timed(
          t.post("/validate/check", { user: "alice", realm: "ldaprealm", pass: "123456" }).then(
            jsonOf,
          ),
        ).finally(() => ldapDone = true);
        const sqlCheck = await timed(
          t.post("/validate/check", { user: "sue", realm: "sqlrealm", pass: hotp(0) }).then(jsonOf),
        );
        assert.equal(sqlCheck.value.body.result.value, true, JSON.stringify(sqlCheck.value.body));
        assert.equal(ldapDone, false, "the SQL realm waited for the LDAP request");
        const failed = await ldapCheck;
        const connectionsBefore = silent.connections;
        assert.ok(failed.ms >= 1900 && failed.ms < 5000, `/validate/check took ${failed.ms} ms`);
        assert.notEqual(failed.value.status, 500);
        // the answer names no server address; the log does
        assert.equal(
          JSON.stringify(failed.value.body).includes("127.0.0.1"),
          false,
          JSON.stringify(failed.value.body),
        );
        assert.ok(t.log.lines.some((l) => l.includes(silent.url)));
        assert.equal(failed.value.body.result.value ?? false, false);
        assert.match(
          JSON.stringify(failed.value.body),
          /Cannot find a user in LDAP resolver \\"hanging\\": no LDAP server could be used \(no answer within 2 s\)/,
        );
        // the next request does not wait again (the server is skipped for SERVERPOOL_SKIP)
        const again = await timed(
          t.post("/validate/check", { user: "alice", realm: "ldaprealm", pass: "123456" }).then(
            jsonOf,
          ),
        );
        assert.equal(silent.connections, connectionsBefore);
        assert.ok(again.ms < 5000, `second /validate/check took ${again.ms} ms`);
        assert.notEqual(again.value.status, 500);
        // a login of the LDAP realm fails like any failed login, without waiting
        const login = await timed(
          t.post("/auth", { username: "alice@ldaprealm", password: "alice-pw" }).then(jsonOf),
        );
        assert.notEqual(login.value.status, 200);
        assert.notEqual(login.value.status, 500);
        assert.equal(silent.connections, connectionsBefore);
        assert.ok(login.ms < 5000, `/auth took ${login.ms} ms`);
      });
    } finally {
      await silent.close();
    }
  },
);

ldapTest(
  "A refused LDAP server: /validate/check answers at once with the reason, never the server's address",
  async (slapd) => {
    await withApp(async (t) => {
      const port = await freePort();
      await saveLdapResolver(
        t,
        "refused",
        ldapConfig(slapd, { LDAPURI: `ldap://127.0.0.1:${port}` }),
        "ldaprealm",
      );
      const res = await timed(
        t.post("/validate/check", { user: "alice", realm: "ldaprealm", pass: "1" }).then(jsonOf),
      );
      assert.equal(res.value.status, 400);
      assert.match(
        res.value.body.result.error.message,
        /no LDAP server could be used \(connect ECONNREFUSED <server>\)/,
      );
      assert.equal(JSON.stringify(res.value.body).includes(String(port)), false);
      assert.ok(t.log.lines.some((l) => l.includes(`127.0.0.1:${port}`)));
    });
  },
);
