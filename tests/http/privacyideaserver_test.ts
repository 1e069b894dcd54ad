/**
 * `/privacyideaserver/`: remote privacyIDEA server definitions (list, create
 * or update, delete) and `test_request` against a second Tessera served on
 * loopback; admin-only with `privacyideaserver_read` / `privacyideaserver_write`.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { closedPort, serveApp } from "./_serve_app.ts";

async function userToken(t: TestApp): Promise<string> {
  return (await issueJwt(t.deps, {
    username: "alice",
    realm: "realm1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  }, 60)).token;
}

async function list(t: TestApp) {
  return (await jsonOf(await t.asAdmin("GET", "/privacyideaserver/"))).body.result.value;
}

Deno.test("POST, GET and DELETE /privacyideaserver/ round trip in privacyIDEA's shape", async () => {
  const t = await createTestApp();
  const created = await jsonOf(
    await t.asAdmin("POST", "/privacyideaserver/remote one", {
      body: { url: "https://pi.example.com", description: "child", tls: "0" },
    }),
  );
  assert.equal(created.status, 200);
  assert.equal(created.body.result.value, true);
  const first = await list(t);
  assert.deepEqual(Object.keys(first), ["remote_one"], "spaces become underscores");
  assert.deepEqual(first.remote_one, {
    id: first.remote_one.id,
    url: "https://pi.example.com",
    tls: false,
    description: "child",
  });
  assert.equal(typeof first.remote_one.id, "number");

  // an update is not partial: tls is true again, the description empty
  const updated = await t.asAdmin("POST", "/privacyideaserver/remote_one", {
    json: true,
    body: { url: "http://10.0.0.1:5000/pi/" },
  });
  assert.equal(updated.status, 200);
  assert.deepEqual((await list(t)).remote_one, {
    id: first.remote_one.id,
    url: "http://10.0.0.1:5000/pi/",
    tls: true,
    description: "",
  });

  const del = await jsonOf(await t.asAdmin("DELETE", "/privacyideaserver/remote_one"));
  assert.equal(del.status, 200);
  assert.equal(del.body.result.value, true);
  assert.deepEqual(await list(t), {});
  const again = await jsonOf(await t.asAdmin("DELETE", "/privacyideaserver/remote_one"));
  assert.equal(again.status, 404);
  assert.equal(again.body.result.error.code, 601);
  assert.equal(
    again.body.result.error.message,
    "The requested PrivacyIDEAServer could not be found.",
  );
  await t.close();
});

Deno.test("POST /privacyideaserver/<id> refuses bad input with 400/905 and stores nothing", async () => {
  const t = await createTestApp();
  const cases: [string, Record<string, unknown>][] = [
    ["missing url", { description: "x" }],
    ["empty url", { url: "" }],
    ["not a URL", { url: "pi.example.com" }],
    ["ftp scheme", { url: "ftp://pi.example.com" }],
    ["javascript scheme", { url: "javascript:alert(1)" }],
    ["credentials", { url: "https://user:pw@pi.example.com" }],
    ["query", { url: "https://pi.example.com/?a=1" }],
    ["fragment", { url: "https://pi.example.com/#x" }],
    ["URL too long", { url: `https://pi.example.com/${"a".repeat(250)}` }],
    ["NUL in URL", { url: "https://pi.example.com/\0" }],
    ["tls not a boolean", { url: "https://pi.example.com", tls: "maybe" }],
    ["description too long", { url: "https://pi.example.com", description: "d".repeat(2001) }],
  ];
  for (const [name, body] of cases) {
    const res = await jsonOf(await t.asAdmin("POST", "/privacyideaserver/s1", { body }));
    assert.equal(res.status, 400, name);
    assert.equal(res.body.result.status, false, name);
    assert.equal(res.body.result.error.code, 905, name);
  }
  const long = await jsonOf(
    await t.asAdmin("POST", `/privacyideaserver/${"i".repeat(256)}`, {
      body: { url: "https://pi.example.com" },
    }),
  );
  assert.equal(long.status, 400, "identifier too long");
  assert.deepEqual(await list(t), {});
  await t.close();
});

Deno.test("/privacyideaserver/ refuses a user JWT and an admin without the right; nothing changes", async () => {
  const t = await createTestApp();
  const remote = await createTestApp();
  const served = serveApp(remote);
  try {
    await t.asAdmin("POST", "/privacyideaserver/keep", { body: { url: "https://keep.example" } });
    const before = await list(t);
    const requests: [string, string, Record<string, unknown>?][] = [
      ["GET", "/privacyideaserver/"],
      ["POST", "/privacyideaserver/new", { url: "https://new.example" }],
      ["POST", "/privacyideaserver/keep", { url: "https://changed.example" }],
      ["DELETE", "/privacyideaserver/keep"],
      [
        "POST",
        "/privacyideaserver/test_request",
        { identifier: "x", url: served.url, username: "alice", password: "x" },
      ],
    ];
    const user = await userToken(t);
    for (const [method, path, body] of requests) {
      const res = await jsonOf(await t.request(method, path, { body, token: user }));
      assert.equal(res.status, 401, `user: ${method} ${path}`);
      assert.equal(res.body.result.error.code, 4306, `user: ${method} ${path}`);
      const anonymous = await jsonOf(await t.request(method, path, { body }));
      assert.equal(anonymous.status, 401, `no JWT: ${method} ${path}`);
    }
    // an admin policy that grants other rights only
    await savePolicy(t.deps, "p", { scope: "admin", action: "auditlog, radiusserver_write" });
    for (const [method, path, body] of requests) {
      const res = await jsonOf(await t.asAdmin(method, path, { body }));
      assert.equal(res.status, 403, `admin without right: ${method} ${path}`);
      assert.equal(res.body.result.error.code, 303, `admin without right: ${method} ${path}`);
    }
    // read does not grant write
    await savePolicy(t.deps, "p", { scope: "admin", action: "privacyideaserver_read" });
    assert.deepEqual(await list(t), before, "nothing changed");
    for (const [method, path, body] of requests.slice(1)) {
      const res = await jsonOf(await t.asAdmin(method, path, { body }));
      assert.equal(res.status, 403, `reader: ${method} ${path}`);
    }
    assert.deepEqual(await list(t), before, "nothing changed");
    assert.equal(served.seen.length, 0, "no test request was sent");
  } finally {
    await served.close();
    await remote.close();
    await t.close();
  }
});

Deno.test("POST /privacyideaserver/test_request asks a second Tessera's /validate/check", async () => {
  const a = await createTestApp();
  const b = await createTestApp();
  await createUsers(b.deps, { realm: "realm1", users: [{ login: "alice" }] });
  // a PIN with characters that need quoting on the way
  const pin = "p %+&#ä";
  await enrollHotp(b, { user: "alice", realm: "realm1", pin });
  const served = serveApp(b);
  const test = async (username: string, password: string, extra: Record<string, string> = {}) =>
    await jsonOf(
      await a.asAdmin("POST", "/privacyideaserver/test_request", {
        body: { identifier: "nodeB", url: served.url, username, password, ...extra },
      }),
    );
  try {
    const accepted = await test("alice@realm1", pin + hotp(0));
    assert.equal(accepted.status, 200);
    assert.equal(accepted.body.result.value, true);
    const sent = served.seen.at(-1)!;
    assert.equal(sent.method, "POST");
    assert.equal(sent.path, "/validate/check");
    // quoted once more, like privacyIDEA: the remote decodes twice
    assert.equal(sent.form.get("user"), "alice%40realm1");

    assert.equal((await test("alice@realm1", pin + hotp(0))).body.result.value, false, "reused");
    assert.equal((await test("alice@realm1", pin + "000000")).body.result.value, false, "wrong");
    assert.equal((await test("nobody@realm1", "x")).body.result.value, false, "unknown user");

    const port = closedPort();
    const unreachable = await jsonOf(
      await a.asAdmin("POST", "/privacyideaserver/test_request", {
        body: {
          identifier: "x",
          url: `http://127.0.0.1:${port}`,
          username: "alice",
          password: "x",
        },
      }),
    );
    assert.equal(unreachable.status, 200);
    assert.equal(unreachable.body.result.value, false);

    const missing = await jsonOf(
      await a.asAdmin("POST", "/privacyideaserver/test_request", {
        body: { url: served.url, username: "alice", password: "x" },
      }),
    );
    assert.equal(missing.status, 400);
    assert.match(missing.body.result.error.message, /Missing parameter: identifier/);
  } finally {
    await served.close();
    await a.close();
    await b.close();
  }
});

Deno.test("POST /privacyideaserver/test_request honours tls: a self-signed server only with tls=0", async () => {
  const a = await createTestApp();
  const b = await createTestApp();
  await createUsers(b.deps, { realm: "realm1", users: [{ login: "alice" }] });
  await enrollHotp(b, { user: "alice", realm: "realm1" });
  const served = serveApp(b, { tls: true });
  const test = async (tls: string | undefined, counter: number) =>
    (await jsonOf(
      await a.asAdmin("POST", "/privacyideaserver/test_request", {
        body: {
          identifier: "nodeB",
          url: served.url,
          username: "alice@realm1",
          password: hotp(counter),
          ...(tls === undefined ? {} : { tls }),
        },
      }),
    )).body.result.value;
  try {
    assert.equal(await test(undefined, 0), false, "verified by default: the certificate fails");
    assert.equal(served.seen.length, 0, "nothing was sent over the untrusted connection");
    assert.equal(await test("1", 0), false);
    assert.equal(await test("0", 0), true, "tls=0 skips the verification");
  } finally {
    await served.close();
    await a.close();
    await b.close();
  }
});
