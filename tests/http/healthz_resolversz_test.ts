/**
 * `GET /healthz/resolversz` probes the HTTP-family resolvers (httpresolver,
 * entraidresolver, keycloakresolver, scimresolver) beside LDAP and SQL: each
 * type listed for an admin, a resolver that does not answer fails the status,
 * and a result is reused for 10 s.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { json, type SeenRequest, startStoreStub } from "./_http_store_stub.ts";
import { closedPort } from "./_serve_app.ts";

function userApi(req: SeenRequest): Response {
  if (req.method === "GET" && req.path === "/api/users") return json([{ id: 1, login: "ann" }]);
  if (req.method === "GET" && req.path === "/oauth/token") return json({ access_token: "T" });
  if (req.method === "GET" && req.path === "/scim/Users") {
    return json({ totalResults: 0, schemas: ["urn:scim:schemas:core:1.0"], Resources: [] });
  }
  return json({ error: "no route" }, 404);
}

async function save(t: TestApp, name: string, body: Json): Promise<void> {
  const res = await jsonOf(await t.asAdmin("POST", `/resolver/${name}`, { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

Deno.test("GET /healthz/resolversz probes the HTTP-family resolvers with the same shape and 10 s reuse", async () => {
  const t = await createTestApp();
  const stub = startStoreStub(userApi);
  const dead = `http://127.0.0.1:${closedPort()}`;
  try {
    await save(t, "api", {
      type: "httpresolver",
      base_url: `${stub.origin}/api`,
      timeout: "2",
      attribute_mapping: { username: "login", userid: "id" },
      config_get_user_by_id: { method: "GET", endpoint: "/users/{userid}" },
      config_get_user_by_name: { method: "GET", endpoint: "/users/by-name/{username}" },
      config_get_user_list: { method: "GET", endpoint: "/users" },
    });
    await save(t, "scim", {
      type: "scimresolver",
      Authserver: stub.origin,
      Resourceserver: `${stub.origin}/scim`,
      Client: "tessera",
      Secret: "s",
      Mapping: "{}",
      timeout: "2",
    });
    const admin = await t.adminToken();
    const probe = async (token?: string) => {
      const res = await jsonOf(await t.get("/healthz/resolversz", token ? { token } : {}));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.result.value;
    };
    const empty = {
      ldapresolver: {},
      sqlresolver: {},
      httpresolver: {},
      entraidresolver: {},
      keycloakresolver: {},
      scimresolver: {},
    };
    assert.deepEqual(await probe(admin), {
      status: "OK",
      ...empty,
      httpresolver: { api: "OK" },
      scimresolver: { scim: "OK" },
    });
    assert.ok(stub.lines().includes("GET /api/users"), stub.lines().join("\n"));
    assert.ok(stub.lines().includes("GET /scim/Users"), stub.lines().join("\n"));

    // a Keycloak and an Entra ID resolver whose servers do not answer
    await save(t, "kc", {
      type: "keycloakresolver",
      base_url: dead,
      realm: "pi",
      username: "svc",
      password: "pw",
      timeout: "2",
    });
    await save(t, "entra", {
      type: "entraidresolver",
      client_id: "cid",
      tenant: "t1",
      client_credential_type: "secret",
      client_secret: "cs",
      authority: `${dead}/{tenant}`,
      base_url: `${dead}/v1.0`,
      timeout: "2",
    });
    // within 10 s the earlier result stands: nothing is asked again
    const asked = stub.requests.length;
    assert.deepEqual(await probe(), { status: "OK" });
    assert.equal((await probe(admin)).keycloakresolver.kc, undefined);
    assert.equal(stub.requests.length, asked);

    t.clock.advance(10_000);
    assert.deepEqual(await probe(), { status: "fail" });
    assert.deepEqual(await probe(admin), {
      status: "fail",
      ...empty,
      httpresolver: { api: "OK" },
      entraidresolver: { entra: "fail" },
      keycloakresolver: { kc: "fail" },
      scimresolver: { scim: "OK" },
    });

    // the user API goes away: its resolvers fail at the next probe
    await stub.close();
    t.clock.advance(10_000);
    const gone = await probe(admin);
    assert.equal(gone.status, "fail");
    assert.deepEqual(gone.httpresolver, { api: "fail" });
    assert.deepEqual(gone.scimresolver, { scim: "fail" });
  } finally {
    await stub.close().catch(() => {});
    await t.close();
  }
});
