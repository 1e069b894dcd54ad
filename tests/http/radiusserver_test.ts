import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createTestApp, jsonOf } from "../test_app.ts";
import { startResponder } from "../domain/radius_server/responder.ts";
import { CENSORED } from "../../src/lib/crypto.ts";
import { issueJwt } from "../../src/http/jwt.ts";

const SERVER1 = { secret: "testing123", port: "1812", server: "1.2.3.4", description: "myServer" };

Deno.test("POST /radiusserver/<id> needs an admin JWT", async () => {
  const t = await createTestApp();
  const res = await jsonOf(await t.post("/radiusserver/server1", SERVER1));
  assert.equal(res.status, 401);
  assert.equal(res.body.result.status, false);
  await t.close();
});

Deno.test("POST, GET and DELETE /radiusserver/ round trip with a censored secret", async () => {
  const t = await createTestApp();
  const created = await jsonOf(await t.asAdmin("POST", "/radiusserver/server1", { body: SERVER1 }));
  assert.equal(created.status, 200);
  assert.equal(created.body.result.value, true);

  const list = await jsonOf(await t.asAdmin("GET", "/radiusserver/"));
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.result.value, {
    server1: {
      server: "1.2.3.4",
      port: 1812,
      dictionary: "/etc/privacyidea/dictionary",
      description: "myServer",
      secret: "__CENSORED__",
      timeout: 5,
      retries: 3,
      options: null,
    },
  });
  const row = await t.deps.db.selectFrom("radiusserver").select("secret").executeTakeFirstOrThrow();
  assert.ok(!row.secret.includes("testing123"), "secret is encrypted at rest");

  const del = await jsonOf(await t.asAdmin("DELETE", "/radiusserver/server1"));
  assert.equal(del.status, 200);
  assert.equal(del.body.result.value, true);
  const empty = await jsonOf(await t.asAdmin("GET", "/radiusserver/"));
  assert.deepEqual(empty.body.result.value, {});
  await t.close();
});

Deno.test("DELETE /radiusserver/<unknown> answers 404 with code 601", async () => {
  const t = await createTestApp();
  const res = await jsonOf(await t.asAdmin("DELETE", "/radiusserver/nope"));
  assert.equal(res.status, 404);
  assert.equal(res.body.result.error.code, 601);
  assert.equal(res.body.result.error.message, "The requested RADIUSServer could not be found.");
  await t.close();
});

Deno.test("GET /radiusserver/ refuses a user JWT", async () => {
  const t = await createTestApp();
  // a user-role JWT: sign one with the app's own key through the JWT helper
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "r1",
    role: "user",
    resolver: "res",
    authtype: "password",
    rights: [],
  }, 60);
  const res = await jsonOf(await t.get("/radiusserver/", { token }));
  assert.equal(res.status, 401);
  assert.match(res.body.result.error.message, /do not have the necessary role/);
  await t.close();
});

Deno.test("POST /radiusserver/<id> update resets omitted fields and keeps a censored secret", async () => {
  const t = await createTestApp();
  const first = await t.asAdmin("POST", "/radiusserver/my server", {
    json: true,
    body: {
      server: "10.0.0.1",
      secret: "s1",
      port: 1645,
      retries: 2,
      timeout: 1,
      description: "d",
      dictionary: "/tmp/dict",
      options: { message_authenticator: true },
    },
  });
  assert.equal(first.status, 200);
  // the stored secret is kept only for the same server and port (see secret_targets_test.ts)
  const second = await t.asAdmin("POST", "/radiusserver/my_server", {
    body: { server: "10.0.0.1", port: "1645", secret: CENSORED },
  });
  assert.equal(second.status, 200);
  const list = (await jsonOf(await t.asAdmin("GET", "/radiusserver/"))).body.result.value;
  assert.deepEqual(Object.keys(list), ["my_server"], "spaces become underscores");
  assert.deepEqual(list.my_server, {
    server: "10.0.0.1",
    port: 1645,
    dictionary: "/etc/privacyidea/dictionary",
    description: "",
    secret: CENSORED,
    timeout: 5,
    retries: 3,
    options: { message_authenticator: true },
  });
  const { radiusTarget } = await import("../../src/domain/radius_server/mod.ts");
  assert.equal((await radiusTarget(t.deps, "my_server")).secret, "s1");
  await t.close();
});

Deno.test("POST /radiusserver/<id> refuses bad input with 400", async () => {
  const t = await createTestApp();
  const cases: [string, Record<string, unknown>, number][] = [
    ["missing server", { secret: "s" }, 905],
    ["missing secret", { server: "1.2.3.4" }, 905],
    ["port not a number", { server: "1.2.3.4", secret: "s", port: "abc" }, 905],
    ["port out of range", { server: "1.2.3.4", secret: "s", port: "70000" }, 905],
    ["timeout zero", { server: "1.2.3.4", secret: "s", timeout: "0" }, 905],
    ["options not JSON", { server: "1.2.3.4", secret: "s", options: "{" }, 905],
    ["secret of 96 bytes", { server: "1.2.3.4", secret: "x".repeat(96) }, 2234],
  ];
  for (const [name, body, code] of cases) {
    const res = await jsonOf(await t.asAdmin("POST", "/radiusserver/s1", { body }));
    assert.equal(res.status, 400, name);
    assert.equal(res.body.result.error.code, code, name);
  }
  const ok95 = await t.asAdmin("POST", "/radiusserver/s1", {
    body: { server: "1.2.3.4", secret: "x".repeat(95) },
  });
  assert.equal(ok95.status, 200);
  await t.close();
});

Deno.test("POST /radiusserver/test_request: accept, reject, challenge and timeout", async () => {
  const t = await createTestApp();
  const responder = await startResponder("testing123", (req) => {
    const user = req.attributes["User-Name"];
    const pass = req.attributes["User-Password"];
    if (user === "nönäscii" && pass === "passwörd") return { code: "Access-Accept" };
    if (user === "challenge") {
      return {
        code: "Access-Challenge",
        attributes: [["Reply-Message", "Please enter OTP"], ["State", Buffer.from("123456")]],
      };
    }
    if (user === "silent") return undefined;
    return { code: "Access-Reject" };
  });
  const ask = async (username: string, password: string, extra: Record<string, string> = {}) => {
    const res = await jsonOf(
      await t.asAdmin("POST", "/radiusserver/test_request", {
        body: {
          identifier: "test",
          server: "127.0.0.1",
          port: String(responder.port),
          secret: "testing123",
          username,
          password,
          timeout: "1",
          retries: "2",
          ...extra,
        },
      }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.result.value;
  };
  try {
    assert.equal(await ask("nönäscii", "passwörd"), true);
    assert.equal(responder.seen[0].attributes["NAS-Identifier"], "privacyIDEA");
    assert.equal(responder.seen[0].hasMessageAuthenticator, false);
    assert.equal(await ask("nönäscii", "wrong"), false);
    assert.equal(await ask("challenge", "x"), false);
    const before = responder.seen.length;
    const started = performance.now();
    assert.equal(await ask("silent", "x"), false);
    const took = performance.now() - started;
    assert.equal(responder.seen.length - before, 2, "retries = total transmissions");
    assert.ok(took >= 1900 && took < 4000, `timeout took ${took} ms`);
    // nothing was persisted
    const list = await jsonOf(await t.asAdmin("GET", "/radiusserver/"));
    assert.deepEqual(list.body.result.value, {});
  } finally {
    await responder.close();
    await t.close();
  }
});

Deno.test("POST /radiusserver/test_request uses the stored secret for __CENSORED__", async () => {
  const t = await createTestApp();
  const responder = await startResponder(
    "stored-secret",
    (req) => req.attributes["User-Password"] === "pw" ? { code: "Access-Accept" } : undefined,
  );
  try {
    await t.asAdmin("POST", "/radiusserver/srv", {
      body: { server: "127.0.0.1", secret: "stored-secret", port: String(responder.port) },
    });
    const res = await jsonOf(
      await t.asAdmin("POST", "/radiusserver/test_request", {
        body: {
          identifier: "srv",
          server: "127.0.0.1",
          port: String(responder.port),
          secret: CENSORED,
          username: "u",
          password: "pw",
          timeout: "1",
          retries: "1",
        },
      }),
    );
    assert.equal(res.body.result.value, true);
  } finally {
    await responder.close();
    await t.close();
  }
});

Deno.test("POST /radiusserver/test_request with message_authenticator sends and requires it", async () => {
  const t = await createTestApp();
  const responder = await startResponder("s3", () => ({ code: "Access-Accept" }));
  try {
    const res = await jsonOf(
      await t.asAdmin("POST", "/radiusserver/test_request", {
        json: true,
        body: {
          identifier: "x",
          server: "127.0.0.1",
          port: responder.port,
          secret: "s3",
          username: "u",
          password: "p",
          timeout: 1,
          retries: 1,
          options: { message_authenticator: true },
        },
      }),
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.result.value, true);
    assert.equal(responder.seen[0].hasMessageAuthenticator, true);
  } finally {
    await responder.close();
    await t.close();
  }
});

Deno.test("POST /radiusserver/test_request needs all required parameters", async () => {
  const t = await createTestApp();
  const res = await jsonOf(
    await t.asAdmin("POST", "/radiusserver/test_request", {
      body: { identifier: "x", server: "127.0.0.1", secret: "s", username: "u" },
    }),
  );
  assert.equal(res.status, 400);
  assert.equal(res.body.result.error.message, "ERR905: Missing parameter: password");
  await t.close();
});

Deno.test("admin policies gate /radiusserver/ with radiusserver_read and radiusserver_write", async () => {
  const t = await createTestApp();
  const pol = await jsonOf(
    await t.asAdmin("POST", "/policy/readonly", {
      body: {
        scope: "admin",
        action: "radiusserver_read, policywrite, policyread",
        active: "true",
      },
    }),
  );
  assert.equal(pol.status, 200, JSON.stringify(pol.body));
  const list = await jsonOf(await t.asAdmin("GET", "/radiusserver/"));
  assert.equal(list.status, 200);
  const create = await jsonOf(await t.asAdmin("POST", "/radiusserver/s1", { body: SERVER1 }));
  assert.equal(create.status, 403);
  assert.equal(create.body.result.error.code, 303);
  const del = await jsonOf(await t.asAdmin("DELETE", "/radiusserver/s1"));
  assert.equal(del.status, 403);
  await t.close();
});

Deno.test("POST /radiusserver/test_request: a required but missing Message-Authenticator is a 400", async () => {
  const t = await createTestApp();
  const responder = await startResponder("s4", () => ({
    code: "Access-Accept",
    withoutMessageAuthenticator: true,
  }));
  try {
    const res = await jsonOf(
      await t.asAdmin("POST", "/radiusserver/test_request", {
        json: true,
        body: {
          identifier: "x",
          server: "127.0.0.1",
          port: responder.port,
          secret: "s4",
          username: "u",
          password: "p",
          timeout: 1,
          retries: 1,
          options: { message_authenticator: true },
        },
      }),
    );
    assert.equal(res.status, 400);
    assert.equal(res.body.result.status, false);
    assert.match(res.body.result.error.message, /Message-Authenticator/);
  } finally {
    await responder.close();
    await t.close();
  }
});

Deno.test("test_request sends system config radius.nas_identifier as NAS-Identifier", async () => {
  const t = await createTestApp();
  const responder = await startResponder("s5", () => ({ code: "Access-Accept" }));
  try {
    const set = await t.asAdmin("POST", "/system/setConfig", {
      body: { "radius.nas_identifier": "tessera-node-1" },
    });
    assert.equal(set.status, 200);
    const res = await jsonOf(
      await t.asAdmin("POST", "/radiusserver/test_request", {
        body: {
          identifier: "x",
          server: "127.0.0.1",
          port: String(responder.port),
          secret: "s5",
          username: "u",
          password: "p",
          timeout: "1",
          retries: "1",
        },
      }),
    );
    assert.equal(res.body.result.value, true);
    assert.equal(responder.seen[0].attributes["NAS-Identifier"], "tessera-node-1");
  } finally {
    await responder.close();
    await t.close();
  }
});
