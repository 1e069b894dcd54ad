/**
 * The Federation event handler (spec 05 §5.3) against a second Tessera
 * served on loopback: node A forwards requests to node B, B's answer (with
 * `detail.origin`) and status replace A's; a failing remote follows
 * `abort_on_error`.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { closedPort, serveApp, type ServedApp, silentServer } from "./_serve_app.ts";

const PIN = "pin";

interface Nodes {
  a: TestApp;
  b: TestApp;
  served: ServedApp;
  /** alice's token on node B. */
  serial: string;
  close(): Promise<void>;
}

/**
 * Node A knows alice (realm1) but has no token for her; node B has alice in
 * `remoteRealm` with an HOTP token. A has B as definition `nodeB`.
 */
async function nodes(options: { remoteRealm?: string; tls?: boolean } = {}): Promise<Nodes> {
  const remoteRealm = options.remoteRealm ?? "realm1";
  const a = await createTestApp();
  const b = await createTestApp();
  await createUsers(a.deps, { realm: "realm1", users: [{ login: "alice" }] });
  await createUsers(b.deps, { realm: remoteRealm, users: [{ login: "alice" }] });
  const serial = await enrollHotp(b, { user: "alice", realm: remoteRealm, pin: PIN });
  const served = serveApp(b, { tls: options.tls });
  const def = await a.asAdmin("POST", "/privacyideaserver/nodeB", {
    body: { url: served.url, tls: options.tls ? "0" : "1" },
  });
  assert.equal(def.status, 200);
  return {
    a,
    b,
    served,
    serial,
    async close() {
      await served.close();
      await a.close();
      await b.close();
    },
  };
}

/** Adds a Federation definition on `t` for `event`. */
async function forward(
  t: TestApp,
  options: Record<string, string> = {},
  extra: Record<string, string> = {},
): Promise<void> {
  const res = await jsonOf(
    await t.asAdmin("POST", "/event", {
      body: {
        name: "fwd",
        event: "validate_check",
        handlermodule: "Federation",
        action: "forward",
        "option.privacyIDEA": "nodeB",
        ...Object.fromEntries(Object.entries(options).map(([k, v]) => [`option.${k}`, v])),
        ...extra,
      },
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function check(t: TestApp, body: Record<string, string>, remoteAddr?: string) {
  return await jsonOf(await t.post("/validate/check", body, { remoteAddr }));
}

async function eventAudit(t: TestApp) {
  await t.deps.audit.flush();
  return await t.deps.db.selectFrom("audit").select(["action", "success", "info"])
    .where("action", "like", "POST-EVENT%").execute();
}

Deno.test("Federation forwards /validate/check to a second Tessera: B's answer with detail.origin replaces A's", async () => {
  const n = await nodes();
  try {
    const local = await check(n.a, { user: "alice", realm: "realm1", pass: PIN + hotp(0) });
    assert.equal(local.body.result.value, false, "A alone has no token for alice");
    assert.equal(local.body.detail.message, "The user has no tokens assigned");

    await forward(n.a);
    const res = await check(n.a, { user: "alice", realm: "realm1", pass: PIN + hotp(0) });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.result, { status: true, value: true, authentication: "ACCEPT" });
    assert.equal(res.body.detail.serial, n.serial);
    assert.equal(res.body.detail.message, "matching 1 tokens");
    assert.equal(res.body.detail.origin, `${n.served.url}/validate/check`);

    const sent = n.served.seen.at(-1)!;
    assert.equal(sent.method, "POST");
    assert.equal(sent.path, "/validate/check");
    assert.equal(sent.form.get("user"), "alice");
    assert.equal(sent.form.get("realm"), "realm1");
    assert.equal(sent.form.get("pass"), PIN + hotp(0));
    assert.equal(sent.form.has("client"), false, "no client without forward_client_ip");
    assert.equal(sent.headers.has("PI-Authorization"), false, "no JWT without the option");

    // B counted the OTP: the same one again is refused there
    const again = await check(n.a, { user: "alice", realm: "realm1", pass: PIN + hotp(0) });
    assert.equal(again.body.result.value, false);
    assert.equal(again.body.detail.origin, `${n.served.url}/validate/check`);

    const audit = await eventAudit(n.a);
    assert.deepEqual(
      audit.map((r) => [r.action, Number(r.success)]),
      [
        ["POST-EVENT validate_check>>Federation:forward", 1],
        ["POST-EVENT validate_check>>Federation:forward", 1],
      ],
    );
  } finally {
    await n.close();
  }
});

Deno.test("Federation: a wrong OTP forwarded is rejected with B's answer", async () => {
  const n = await nodes();
  try {
    await forward(n.a);
    const res = await check(n.a, { user: "alice", realm: "realm1", pass: `${PIN}000000` });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.result, { status: true, value: false, authentication: "REJECT" });
    assert.equal(res.body.detail.message, "wrong otp value");
    assert.equal(res.body.detail.serial, n.serial);
    assert.equal(res.body.detail.origin, `${n.served.url}/validate/check`);
  } finally {
    await n.close();
  }
});

Deno.test("Federation forwards a GET with the parameters as query", async () => {
  const n = await nodes();
  try {
    await forward(n.a);
    const res = await jsonOf(
      await n.a.get("/validate/check", {
        query: { user: "alice", realm: "realm1", pass: PIN + hotp(0) },
      }),
    );
    assert.equal(res.body.result.value, true);
    const sent = n.served.seen.at(-1)!;
    assert.equal(sent.method, "GET");
    assert.equal(sent.path, "/validate/check");
    assert.equal(sent.query.get("user"), "alice");
    assert.equal(sent.query.get("pass"), PIN + hotp(0));
    assert.equal(res.body.detail.origin, `${n.served.url}/validate/check`, "origin has no query");
  } finally {
    await n.close();
  }
});

Deno.test("Federation forward_client_ip sends client=<the caller's address>", async () => {
  const n = await nodes();
  try {
    await forward(n.a, { forward_client_ip: "True" });
    const res = await check(
      n.a,
      { user: "alice", realm: "realm1", pass: PIN + hotp(0) },
      "10.1.2.3",
    );
    assert.equal(res.body.result.value, true);
    const sent = n.served.seen.at(-1)!;
    assert.equal(sent.form.get("client"), "10.1.2.3");
    assert.equal(sent.peer, "127.0.0.1", "the connection itself comes from node A");
  } finally {
    await n.close();
  }
});

Deno.test("Federation realm and resolver options override those parameters", async () => {
  // on B alice lives in realm "remote" only
  const n = await nodes({ remoteRealm: "remote" });
  try {
    await forward(n.a);
    const plain = await check(n.a, { user: "alice", realm: "realm1", pass: PIN + hotp(0) });
    // B does not know alice in realm1: its 400 error becomes A's answer
    assert.equal(plain.status, 400);
    assert.equal(plain.body.result.status, false);
    assert.equal(plain.body.result.error.code, 904);
    assert.equal(plain.body.detail.origin, `${n.served.url}/validate/check`);

    await n.a.asAdmin("DELETE", "/event/1");
    await forward(n.a, { realm: "remote", resolver: "sql-remote" });
    const res = await check(n.a, { user: "alice", realm: "realm1", pass: PIN + hotp(0) });
    assert.equal(res.body.result.value, true, JSON.stringify(res.body));
    assert.equal(res.body.detail.serial, n.serial);
    const sent = n.served.seen.at(-1)!;
    assert.equal(sent.form.get("realm"), "remote");
    assert.equal(sent.form.get("resolver"), "sql-remote");
    assert.equal(sent.form.getAll("realm").length, 1, "replaced, not added");
  } finally {
    await n.close();
  }
});

Deno.test("Federation forward_authorization_token sends the caller's JWT; B's status and error become the answer", async () => {
  const n = await nodes();
  try {
    await forward(n.a, { forward_authorization_token: "1" }, { event: "token_list, token_delete" });
    const adminJwt = await n.a.adminToken();
    // B does not trust A's JWTs: its 401 replaces A's 200
    const list = await jsonOf(await n.a.asAdmin("GET", "/token/", { query: { realm: "realm1" } }));
    assert.equal(list.status, 401);
    assert.equal(list.body.result.status, false);
    assert.equal(list.body.detail.origin, `${n.served.url}/token/`);
    const sent = n.served.seen.at(-1)!;
    assert.equal(sent.method, "GET");
    assert.equal(sent.path, "/token/");
    assert.equal(sent.query.get("realm"), "realm1");
    assert.equal(sent.headers.get("PI-Authorization"), adminJwt);

    // DELETE keeps its method (A deletes its own token, then B answers)
    const serial = await enrollHotp(n.a, {});
    const del = await jsonOf(await n.a.asAdmin("DELETE", `/token/${serial}`));
    assert.equal(del.status, 401);
    const sentDelete = n.served.seen.at(-1)!;
    assert.equal(sentDelete.method, "DELETE");
    assert.equal(sentDelete.path, `/token/${serial}`);
    assert.equal(sentDelete.headers.get("PI-Authorization"), adminJwt);
  } finally {
    await n.close();
  }
});

Deno.test("Federation with an unreachable remote: abort_on_error (default) fails the request, else A's answer stays", async () => {
  const n = await nodes();
  try {
    const port = closedPort();
    await n.a.asAdmin("POST", "/privacyideaserver/dead", {
      body: { url: `http://127.0.0.1:${port}` },
    });
    await forward(n.a, { privacyIDEA: "dead" });
    const def = (await jsonOf(await n.a.asAdmin("GET", "/event/"))).body.result.value[0];
    assert.equal(def.abort_on_error, true, "Federation aborts by default");
    const aborted = await check(n.a, { user: "alice", realm: "realm1", pass: PIN + hotp(0) });
    assert.equal(aborted.status, 500);
    assert.equal(aborted.body.result.status, false);
    assert.equal(aborted.body.result.error.code, -500);
    assert.ok(!JSON.stringify(aborted.body).includes(String(port)), "no remote detail leaks");

    await n.a.asAdmin("POST", "/event", {
      body: {
        id: def.id,
        name: "fwd",
        event: "validate_check",
        handlermodule: "Federation",
        action: "forward",
        "option.privacyIDEA": "dead",
        abort_on_error: "0",
      },
    });
    const kept = await check(n.a, { user: "alice", realm: "realm1", pass: PIN + hotp(0) });
    assert.equal(kept.status, 200);
    assert.equal(kept.body.result.value, false);
    assert.equal(kept.body.detail.message, "The user has no tokens assigned");
    assert.equal(kept.body.detail.origin, undefined);

    const audit = await eventAudit(n.a);
    assert.deepEqual(
      audit.map((r) => [Number(r.success), r.info]),
      [[0, "fwd (RemoteServerError)"], [0, "fwd (RemoteServerError)"]],
    );
  } finally {
    await n.close();
  }
});

Deno.test("Federation gives up on a silent remote after the timeout option; no JSON counts as a failure", async () => {
  const n = await nodes();
  const silent = silentServer();
  const text = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("<html>proxy error</html>", { status: 502 }),
  );
  try {
    await n.a.asAdmin("POST", "/privacyideaserver/silent", { body: { url: silent.url } });
    await n.a.asAdmin("POST", "/privacyideaserver/html", {
      body: { url: `http://127.0.0.1:${text.addr.port}` },
    });
    await forward(n.a, { privacyIDEA: "silent", timeout: "1" }, { abort_on_error: "0" });
    const started = performance.now();
    const res = await check(n.a, { user: "alice", realm: "realm1", pass: PIN + hotp(0) });
    const ms = performance.now() - started;
    assert.equal(res.status, 200);
    assert.equal(res.body.detail.message, "The user has no tokens assigned");
    assert.ok(ms >= 900 && ms < 5000, `gave up after ${Math.round(ms)} ms`);

    await n.a.asAdmin("DELETE", "/event/1");
    await forward(n.a, { privacyIDEA: "html" });
    const html = await check(n.a, { user: "alice", realm: "realm1", pass: PIN + hotp(0) });
    assert.equal(html.status, 500);
    assert.equal(html.body.result.status, false);
  } finally {
    silent.close();
    await text.shutdown();
    await n.close();
  }
});

Deno.test("Federation honours the definition's tls flag against an HTTPS remote with a self-signed certificate", async () => {
  const n = await nodes({ tls: true });
  try {
    await forward(n.a);
    const res = await check(n.a, { user: "alice", realm: "realm1", pass: PIN + hotp(0) });
    assert.equal(res.body.result.value, true, "tls=0: not verified");
    assert.equal(res.body.detail.origin, `${n.served.url}/validate/check`);

    await n.a.asAdmin("POST", "/privacyideaserver/nodeB", { body: { url: n.served.url } });
    const seen = n.served.seen.length;
    const refused = await check(n.a, { user: "alice", realm: "realm1", pass: PIN + hotp(1) });
    assert.equal(refused.status, 500, "tls=1: the certificate is refused");
    assert.equal(n.served.seen.length, seen, "nothing reached B");
  } finally {
    await n.close();
  }
});

Deno.test("GET /event/actions/Federation offers the configured privacyIDEA servers", async () => {
  const t = await createTestApp();
  await t.asAdmin("POST", "/privacyideaserver/one", { body: { url: "https://one.example" } });
  await t.asAdmin("POST", "/privacyideaserver/two", { body: { url: "https://two.example" } });
  const { body } = await jsonOf(await t.asAdmin("GET", "/event/actions/Federation"));
  const forwardAction = body.result.value.forward;
  assert.deepEqual(forwardAction.privacyIDEA.value, ["one", "two"]);
  assert.equal(forwardAction.privacyIDEA.required, true);
  assert.deepEqual(
    Object.keys(forwardAction),
    [
      "privacyIDEA",
      "realm",
      "resolver",
      "forward_client_ip",
      "forward_authorization_token",
      "timeout",
    ],
  );
  assert.equal(forwardAction.forward_client_ip.type, "bool");
  await t.close();
});
