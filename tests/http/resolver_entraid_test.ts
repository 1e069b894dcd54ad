/**
 * `entraidresolver` over Tessera's HTTP API against a stub of Microsoft Graph
 * and the Microsoft identity platform on loopback: discovery and the
 * client-credentials token request (secret and certificate), its reuse, Graph
 * lookups, `$filter` searches, writes, the password (ROPC) request, Graph's
 * error objects and `/resolver/test`.
 */
import assert from "node:assert/strict";
import { generateKeyPairSync, type KeyObject, verify } from "node:crypto";
import { Buffer } from "node:buffer";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import {
  formOf,
  json,
  type SeenRequest,
  startStoreStub,
  type StoreStub,
} from "./_http_store_stub.ts";

const TENANT = "contoso-tenant";
const ADELE = {
  businessPhones: ["+1 425 555 0109"],
  displayName: "Adele Vance",
  givenName: "Adele",
  jobTitle: "Retail Manager",
  mail: "AdeleV@contoso.com",
  mobilePhone: "+1 425 555 0109",
  officeLocation: "18/2111",
  preferredLanguage: "en-US",
  surname: "Vance",
  userPrincipalName: "AdeleV@contoso.com",
  id: "87d349ed-44d7-43e1-9a83-5f2406dee5bd",
};
const ALEX = {
  businessPhones: [],
  displayName: "Alex Wilber",
  givenName: "Alex",
  mail: null,
  mobilePhone: null,
  surname: "Wilber",
  userPrincipalName: "AlexW@contoso.com",
  id: "b0f7c0a2-0000-4000-8000-000000000001",
};
const NOT_FOUND = (x: string) =>
  json({
    error: {
      code: "Request_ResourceNotFound",
      message:
        `Resource '${x}' does not exist or one of its queried reference-property objects are not present.`,
    },
  }, 404);

/** A stub of Graph (`/v1.0`) and the identity platform (`/<tenant>/…`). */
class Entra {
  users: Json[] = [structuredClone(ADELE), structuredClone(ALEX)];
  passwords: Record<string, string> = { "AdeleV@contoso.com": "Adele&Pass*1" };
  tokens = 0;
  /** Public key that client assertions must verify with (certificate credential). */
  certificateKey?: KeyObject;
  thumbprint = "";
  tokenOrigin?: string;
  stub: StoreStub;

  constructor() {
    this.stub = startStoreStub((req) => this.handle(req));
  }

  get origin(): string {
    return this.stub.origin;
  }

  handle(req: SeenRequest): Response {
    const route = `${req.method} ${req.path}`;
    if (route === `GET /${TENANT}/v2.0/.well-known/openid-configuration`) {
      return json({
        token_endpoint: `${this.tokenOrigin ?? this.origin}/${TENANT}/oauth2/v2.0/token`,
        authorization_endpoint: `${this.origin}/${TENANT}/oauth2/v2.0/authorize`,
      });
    }
    if (route === `POST /${TENANT}/oauth2/v2.0/token`) return this.token(formOf(req.body));
    if (!req.path.startsWith("/v1.0/")) return json({ error: "no route" }, 404);
    if (req.headers.authorization !== `Bearer APP${this.tokens}`) {
      return json({ error: { code: "InvalidAuthenticationToken", message: "expired" } }, 401);
    }
    const one = req.path.match(/^\/v1\.0\/users\/([^/]+)$/);
    if (req.method === "GET" && req.path === "/v1.0/users") {
      const filter = new URLSearchParams(req.query).get("$filter") ?? "";
      const found = filter.includes("'Ade'")
        ? this.users.filter((u) => u.givenName === "Adele")
        : this.users;
      return json({
        "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users",
        value: found,
      });
    }
    if (one) {
      const key = decodeURIComponent(one[1]);
      const i = this.users.findIndex((u) => u.id === key || u.userPrincipalName === key);
      if (req.method === "GET") return i < 0 ? NOT_FOUND(key) : json(this.users[i]);
      if (req.method === "PATCH") {
        if (key === ALEX.id) {
          return json({
            error: { code: "Authorization_RequestDenied", message: "Insufficient privileges" },
          }, 403);
        }
        if (i < 0) return NOT_FOUND(key);
        Object.assign(this.users[i], JSON.parse(req.body));
        return new Response(null, { status: 204 });
      }
      if (req.method === "DELETE") {
        if (i < 0) return NOT_FOUND(key);
        this.users.splice(i, 1);
        return new Response(null, { status: 204 });
      }
    }
    if (route === "POST /v1.0/users") {
      const body = JSON.parse(req.body);
      const missing = ["accountEnabled", "displayName", "mailNickname", "userPrincipalName"]
        .find((k) => body[k] === undefined);
      if (
        missing || !body.passwordProfile?.password ||
        body.passwordProfile.password === "{password}" ||
        (body.businessPhones !== undefined && !Array.isArray(body.businessPhones))
      ) {
        return json({
          error: {
            code: "Request_BadRequest",
            message: `Invalid value for ${missing ?? "passwordProfile"}`,
          },
        }, 400);
      }
      const user = { ...body, id: "new-id-0001" };
      delete user.passwordProfile;
      this.users.push(user);
      return json(user, 201);
    }
    return json({ error: { code: "BadRequest", message: "no route" } }, 400);
  }

  token(form: Record<string, string>): Response {
    if (form.client_id !== "cid") return json({ error: "invalid_client" }, 401);
    if (form.grant_type === "client_credentials") {
      if (form.scope !== "https://graph.microsoft.com/.default") {
        return json({ error: "invalid_scope" }, 400);
      }
      const ok = this.certificateKey
        ? this.assertionIsValid(form)
        : form.client_secret === "c$ecret&1";
      if (!ok) return json({ error: "invalid_client", error_description: "AADSTS7000215" }, 401);
      return json({ token_type: "Bearer", expires_in: 3599, access_token: `APP${++this.tokens}` });
    }
    if (form.grant_type === "password") {
      if (
        form.client_secret === "c$ecret&1" &&
        this.passwords[form.username] === form.password
      ) {
        return json({ token_type: "Bearer", expires_in: 3599, access_token: "USER" });
      }
      return json({
        error: "invalid_grant",
        error_description: "AADSTS50126: Error validating credentials",
      }, 400);
    }
    return json({ error: "unsupported_grant_type" }, 400);
  }

  assertionIsValid(form: Record<string, string>): boolean {
    if (form.client_assertion_type !== "urn:ietf:params:oauth:client-assertion-type:jwt-bearer") {
      return false;
    }
    const [h, p, sig] = form.client_assertion.split(".");
    const header = JSON.parse(Buffer.from(h, "base64url").toString());
    const payload = JSON.parse(Buffer.from(p, "base64url").toString());
    return header.alg === "RS256" &&
      Buffer.from(header.x5t, "base64url").toString("hex") === this.thumbprint &&
      payload.iss === "cid" && payload.sub === "cid" &&
      payload.aud === `${this.origin}/${TENANT}/oauth2/v2.0/token` &&
      payload.exp > payload.nbf &&
      verify(
        "RSA-SHA256",
        Buffer.from(`${h}.${p}`),
        this.certificateKey!,
        Buffer.from(sig, "base64url"),
      );
  }

  config(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      type: "entraidresolver",
      client_id: "cid",
      tenant: TENANT,
      client_credential_type: "secret",
      client_secret: "c$ecret&1",
      authority: `${this.origin}/{tenant}`,
      base_url: `${this.origin}/v1.0`,
      Editable: "True",
      timeout: "2",
      config_user_auth: {
        method: "POST",
        headers: '{"Content-Type": "application/x-www-form-urlencoded"}',
        endpoint: `${this.origin}/{tenant}/oauth2/v2.0/token`,
        requestMapping: "client_id={client_id}&scope=https://graph.microsoft.com/.default&" +
          "username={username}&password={password}&grant_type=password&" +
          "client_secret={client_credential}",
      },
      ...overrides,
    };
  }
}

async function withEntra(fn: (t: TestApp, entra: Entra) => Promise<void>): Promise<void> {
  const t = await createTestApp();
  const entra = new Entra();
  try {
    await fn(t, entra);
  } finally {
    await entra.stub.close();
    await t.close();
  }
}

async function save(t: TestApp, name: string, body: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin("POST", `/resolver/${name}`, { body, json: true }));
}

async function saveOk(t: TestApp, body: Record<string, unknown>) {
  const res = await save(t, "entra", body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const r = await jsonOf(
    await t.asAdmin("POST", "/realm/contoso", { body: { resolvers: "entra" } }),
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

async function testConfig(t: TestApp, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", "/resolver/test", { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { value: res.body.result.value, description: res.body.detail?.description as string };
}

Deno.test("entraidresolver: defaults, the client secret encrypted and censored", async () => {
  await withEntra(async (t, entra) => {
    const defaults = (await jsonOf(await t.asAdmin("GET", "/resolver/entraidresolver/default")))
      .body.result.value;
    assert.equal(defaults.type, "entraidresolver");
    assert.equal(defaults.base_url, "https://graph.microsoft.com/v1.0");
    assert.equal(defaults.authority, "https://login.microsoftonline.com/{tenant}");
    assert.equal(defaults.client_credential_type, "secret");
    assert.equal(defaults.advanced, true);
    assert.equal(Object.keys(defaults.attribute_mapping).length, 7);
    assert.deepEqual(defaults.config_get_user_by_id, {
      method: "GET",
      endpoint: "/users/{userid}",
    });

    await saveOk(t, entra.config());
    const listed =
      (await jsonOf(await t.asAdmin("GET", "/resolver/entra"))).body.result.value.entra;
    assert.deepEqual(listed.censor_keys, [
      "password",
      "client_secret",
      "client_certificate.private_key_password",
    ]);
    assert.equal(listed.data.client_secret, "__CENSORED__");
    const row = await t.deps.db.selectFrom("resolver").select("config").executeTakeFirstOrThrow();
    assert.equal(row.config.includes("c$ecret&1"), false);
    // the client secret is not kept for another authority
    const moved = await save(t, "entra", {
      type: "entraidresolver",
      authority: "https://evil/{tenant}",
    });
    assert.equal(moved.status, 400);
    assert.match(moved.body.result.error.message, /Cannot keep the stored "client_secret"/);
    // the application token it buys goes to base_url: moving that needs the secret again
    const graph = await save(t, "entra", {
      type: "entraidresolver",
      base_url: "https://evil/v1.0",
    });
    assert.equal(graph.status, 400);
    assert.match(graph.body.result.error.message, /Cannot keep the stored "client_secret"/);
    assert.equal(entra.stub.requests.length, 0);
  });
});

Deno.test("entraidresolver: token by client credentials (reused), Graph lookups and $filter searches", async () => {
  await withEntra(async (t, entra) => {
    await saveOk(t, entra.config());
    const list = await jsonOf(
      await t.asAdmin("GET", "/user/", {
        query: { realm: "contoso", username: "Ade*", surname: "Vance" },
      }),
    );
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.deepEqual(entra.stub.lines(), [
      `GET /${TENANT}/v2.0/.well-known/openid-configuration`,
      `POST /${TENANT}/oauth2/v2.0/token`,
      "GET /v1.0/users?%24filter=%28startswith%28userPrincipalName%2C+%27Ade%27%29+or+" +
      "endswith%28userPrincipalName%2C+%27Ade%27%29%29+and+surname+eq+%27Vance%27&%24count=true",
    ]);
    const token = entra.stub.requests[1];
    assert.equal(token.headers["content-type"], "application/x-www-form-urlencoded");
    assert.equal(
      token.body,
      "grant_type=client_credentials&client_id=cid&" +
        "scope=https%3A%2F%2Fgraph.microsoft.com%2F.default&client_secret=c%24ecret%261",
    );
    const graph = entra.stub.requests[2];
    assert.equal(graph.headers.authorization, "Bearer APP1");
    assert.equal(graph.headers.consistencylevel, "eventual");
    assert.equal(graph.headers["content-type"], undefined);
    const [adele] = list.body.result.value;
    assert.deepEqual(
      { ...adele, realm: undefined, resolver: undefined, editable: undefined },
      {
        phone: ["+1 425 555 0109"],
        givenname: "Adele",
        email: "AdeleV@contoso.com",
        mobile: "+1 425 555 0109",
        surname: "Vance",
        username: "AdeleV@contoso.com",
        userid: "87d349ed-44d7-43e1-9a83-5f2406dee5bd",
        realm: undefined,
        resolver: undefined,
        editable: undefined,
      },
    );

    // every user: no filter at all; an exact value: eq
    entra.stub.requests.length = 0;
    const all = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "contoso" } }));
    assert.equal(all.body.result.value.length, 2);
    await t.asAdmin("GET", "/user/", { query: { realm: "contoso", email: "o'brien@x" } });
    assert.deepEqual(entra.stub.lines(), [
      "GET /v1.0/users",
      "GET /v1.0/users?%24filter=mail+eq+%27o%27%27brien%40x%27",
    ]);

    // a login is a UPN in the path; the token is reused
    entra.stub.requests.length = 0;
    await enrollHotp(t, { user: "AdeleV@contoso.com", realm: "contoso", pin: "1" });
    const ok = await jsonOf(
      await t.post("/validate/check", {
        user: "AdeleV@contoso.com",
        realm: "contoso",
        pass: "1" + hotp(0),
      }),
    );
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    assert.ok(entra.stub.lines().includes("GET /v1.0/users/AdeleV@contoso.com"));
    assert.equal(entra.tokens, 1);
    // Graph's 404: no such user
    const unknown = await jsonOf(
      await t.post("/validate/check", { user: "nobody@contoso.com", realm: "contoso", pass: "1" }),
    );
    assert.equal(
      unknown.body.result.error.message,
      "ERR904: User <nobody@contoso.com@contoso> does not exist.",
    );
    // 55 minutes later (the token lives 3599 s, reused for nine tenths of it): a new one
    t.clock.advance(3300_000);
    entra.stub.requests.length = 0;
    await t.asAdmin("GET", "/user/", { query: { realm: "contoso" } });
    assert.deepEqual(entra.stub.lines(), [`POST /${TENANT}/oauth2/v2.0/token`, "GET /v1.0/users"]);
  });
});

Deno.test("entraidresolver: password check by the resource-owner flow (otppin=userstore)", async () => {
  await withEntra(async (t, entra) => {
    await saveOk(t, entra.config());
    await enrollHotp(t, { user: "AdeleV@contoso.com", realm: "contoso", pin: "1" });
    const policy = await jsonOf(
      await t.asAdmin("POST", "/policy/pin", {
        body: { scope: "authentication", action: "otppin=userstore" },
        json: true,
      }),
    );
    assert.equal(policy.status, 200);
    entra.stub.requests.length = 0;
    const check = (pass: string) =>
      t.post("/validate/check", { user: "AdeleV@contoso.com", realm: "contoso", pass }).then(
        jsonOf,
      );
    assert.equal((await check("Adele&Pass*1" + hotp(0))).body.result.value, true);
    const ropc = entra.stub.requests.filter((r) => formOf(r.body).grant_type === "password");
    assert.equal(ropc.length, 1);
    // values encoded for the form; "*" stays in the password; the template's scope as written
    assert.equal(
      ropc[0].body,
      "client_id=cid&scope=https://graph.microsoft.com/.default&" +
        "username=AdeleV%40contoso.com&password=Adele%26Pass%2A1&grant_type=password&" +
        "client_secret=c%24ecret%261",
    );
    assert.equal(ropc[0].headers["content-type"], "application/x-www-form-urlencoded");
    const wrong = await check("wrong" + hotp(1));
    assert.equal(wrong.status, 200);
    assert.equal(wrong.body.result.value, false);

    // the user logs in with the Entra password and sees their own attributes: lists stay lists
    const login = await jsonOf(
      await t.post("/auth", {
        username: "AdeleV@contoso.com",
        realm: "contoso",
        password: "Adele&Pass*1",
      }),
    );
    assert.equal(login.status, 200, JSON.stringify(login.body));
    assert.equal(login.body.result.value.role, "user");
    const me = await jsonOf(await t.get("/user/", { token: login.body.result.value.token }));
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.deepEqual(me.body.result.value[0].phone, ["+1 425 555 0109"]);
    assert.equal(me.body.result.value[0].username, "AdeleV@contoso.com");
  });
});

Deno.test("entraidresolver: POST, PUT and DELETE /user/ as Graph writes; Graph's refusals", async () => {
  await withEntra(async (t, entra) => {
    await saveOk(t, entra.config());
    entra.stub.requests.length = 0;
    const created = await jsonOf(
      await t.asAdmin("POST", "/user/", {
        body: {
          user: "new@contoso.com",
          resolver: "entra",
          givenname: "New",
          surname: "User",
          password: "P@ssw0rd!",
          phone: "123",
          mobile: "456",
          email: "n@c",
        },
      }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.result.value, "new-id-0001");
    const post = entra.stub.requests.find((r) => r.method === "POST" && r.path === "/v1.0/users")!;
    assert.equal(post.headers["content-type"], "application/json");
    assert.deepEqual(JSON.parse(post.body), {
      accountEnabled: true,
      displayName: "New User",
      mailNickname: "New",
      passwordProfile: { password: "P@ssw0rd!" },
      userPrincipalName: "new@contoso.com",
      givenName: "New",
      surname: "User",
      businessPhones: ["123"],
      mobilePhone: "456",
      mail: "n@c",
    });
    // without a password Graph refuses: its error object is the message
    const noPassword = await jsonOf(
      await t.asAdmin("POST", "/user/", { body: { user: "x@contoso.com", resolver: "entra" } }),
    );
    assert.equal(noPassword.status, 400);
    assert.equal(
      noPassword.body.result.error.message,
      "ERR907: Failed to create user: Request_BadRequest - Invalid value for passwordProfile",
    );

    entra.stub.requests.length = 0;
    const updated = await jsonOf(
      await t.asAdmin("PUT", "/user/", {
        body: { user: "AdeleV@contoso.com", resolver: "entra", surname: "Smith", phone: "1" },
      }),
    );
    assert.equal(updated.body.result.value, true, JSON.stringify(updated.body));
    const patch = entra.stub.requests.find((r) => r.method === "PATCH")!;
    assert.equal(patch.path, `/v1.0/users/${ADELE.id}`);
    assert.deepEqual(JSON.parse(patch.body), { surname: "Smith", businessPhones: ["1"] });
    // Graph's 403: a clear error (privacyIDEA answers false)
    const denied = await jsonOf(
      await t.asAdmin("PUT", "/user/", {
        body: { user: "AlexW@contoso.com", resolver: "entra", surname: "X" },
      }),
    );
    assert.equal(denied.status, 400);
    assert.match(
      denied.body.result.error.message,
      /answered 403 \(Authorization_RequestDenied - Insufficient privileges\)/,
    );
    const deleted = await jsonOf(await t.asAdmin("DELETE", "/user/entra/AdeleV@contoso.com"));
    assert.equal(deleted.body.result.value, true);
    assert.ok(entra.stub.lines().includes(`DELETE /v1.0/users/${ADELE.id}`));
  });
});

Deno.test("entraidresolver: a certificate credential signs a client assertion; passwords are refused", async () => {
  await withEntra(async (t, entra) => {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const dir = t.deps.config.storage.dataDir;
    await Deno.writeTextFile(
      `${dir}/entra.key`,
      privateKey.export({
        type: "pkcs8",
        format: "pem",
        cipher: "aes-256-cbc",
        passphrase: "key-pass",
      }) as string,
    );
    entra.certificateKey = publicKey;
    entra.thumbprint = "0123456789abcdef0123456789abcdef01234567";
    const cert = {
      private_key_file: "entra.key",
      certificate_fingerprint: "01:23:45:67:89:AB:CD:EF:01:23:45:67:89:ab:cd:ef:01:23:45:67",
      private_key_password: "key-pass",
    };
    await saveOk(
      t,
      entra.config({
        client_credential_type: "certificate",
        client_secret: "",
        client_certificate: cert,
      }),
    );
    const listed =
      (await jsonOf(await t.asAdmin("GET", "/resolver/entra"))).body.result.value.entra;
    assert.deepEqual(listed.data.client_certificate, {
      ...cert,
      private_key_password: "__CENSORED__",
    });
    const row = await t.deps.db.selectFrom("resolver").select("config").executeTakeFirstOrThrow();
    assert.equal(row.config.includes("key-pass"), false);
    // an update sending the censored passphrase keeps it
    const again = await save(t, "entra", {
      type: "entraidresolver",
      client_certificate: { ...cert, private_key_password: "__CENSORED__" },
    });
    assert.equal(again.status, 200, JSON.stringify(again.body));

    const users = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "contoso" } }));
    assert.equal(users.body.result.value.length, 2, JSON.stringify(users.body));
    assert.equal(entra.tokens, 1);
    const test = await testConfig(t, {
      ...entra.config({ client_credential_type: "certificate", client_secret: "" }),
      resolver: "entra",
      client_certificate: { ...cert, private_key_password: "__CENSORED__" },
      test_username: "AdeleV@contoso.com",
    });
    assert.equal(test.value, true, test.description);

    await enrollHotp(t, { user: "AdeleV@contoso.com", realm: "contoso", pin: "1" });
    await t.asAdmin("POST", "/policy/pin", {
      body: { scope: "authentication", action: "otppin=userstore" },
      json: true,
    });
    const check = await jsonOf(
      await t.post("/validate/check", {
        user: "AdeleV@contoso.com",
        realm: "contoso",
        pass: "Adele&Pass*1" + hotp(0),
      }),
    );
    assert.equal(check.status, 400);
    assert.equal(
      check.body.result.error.message,
      "ERR907: User authentication with password is not supported when using a certificate " +
        "for the client!",
    );
    // Tessera's own key file is never a client key
    const own = await save(t, "entra2", {
      ...entra.config({ client_credential_type: "certificate", client_secret: "" }),
      client_certificate: { ...cert, private_key_file: t.deps.config.storage.keyFile },
    });
    assert.equal(own.status, 400);
    assert.match(own.body.result.error.message, /one of Tessera's own files/);
  });
});

Deno.test("entraidresolver: /resolver/test messages and refusals", async () => {
  await withEntra(async (t, entra) => {
    const ok = await testConfig(
      t,
      entra.config({ test_userid: ADELE.id, test_username: ADELE.mail }),
    );
    assert.deepEqual(ok, {
      value: true,
      description: "Resolver config seems to be OK. Tested configurations: Authorization, " +
        "Get user by ID, Get user by name, User List.",
    });
    const badClient = await testConfig(t, entra.config({ client_secret: "nope" }));
    assert.deepEqual(badClient, {
      value: false,
      description: "Failed to get authorization header: ERR907: Failed to get access token to " +
        "resolve users from EntraID: invalid_client",
    });
    const noType = await testConfig(t, entra.config({ client_credential_type: "" }));
    assert.deepEqual(noType, {
      value: false,
      description: "Failed: ERR905: Missing parameter: client_credential_type",
    });
    const badType = await testConfig(t, entra.config({ client_credential_type: "token" }));
    assert.deepEqual(badType, {
      value: false,
      description: "Failed: 'token' is not a valid ClientCredentialType",
    });
    // a discovery document that names a token endpoint elsewhere: the secret is not sent
    entra.tokenOrigin = "http://127.0.0.1:9";
    entra.stub.requests.length = 0;
    const elsewhere = await testConfig(t, entra.config());
    assert.equal(elsewhere.value, false);
    assert.match(elsewhere.description, /the token endpoint is not on the authority's server/);
    assert.deepEqual(entra.stub.lines(), [`GET /${TENANT}/v2.0/.well-known/openid-configuration`]);
    const saved = await save(t, "x", entra.config({ client_credential_type: "token" }));
    assert.equal(saved.status, 400);
  });
});
