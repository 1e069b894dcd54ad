/**
 * Push challenges delivered by Firebase Cloud Messaging (HTTP v1) to a local stub: the
 * service account's OAuth2 token request (a JWT signed RS256) and the message in
 * privacyIDEA's exact shape; the app double answers from the message's data without
 * polling. Spec 13 §1.7.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { generateKeyPairSync, verify } from "node:crypto";
import { jsonOf, type TestApp } from "../test_app.ts";
import { postForm, PUSH_CONFIG, PushApp } from "./_push_app.ts";
import { appWithAlice } from "./_challenge_types.ts";
import { serveApp } from "./_serve_app.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";

interface Seen {
  path: string;
  headers: Headers;
  body: string;
}

/**
 * A local stub of Google's token endpoint and FCM; `status` is FCM's answer, `expiresIn` the
 * tokens' lifetime in seconds. Each token it hands out is new (`ya29.stub`, then `ya29.stub2`, …).
 */
function fcmStub(status = { value: 200 }, expiresIn = { value: 3600 }) {
  let issued = 0;
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    seen.push({ path: url.pathname, headers: req.headers, body: await req.text() });
    if (url.pathname === "/token") {
      issued++;
      return Response.json({
        access_token: issued === 1 ? "ya29.stub" : `ya29.stub${issued}`,
        expires_in: expiresIn.value,
        token_type: "Bearer",
      });
    }
    return new Response(JSON.stringify({ name: "projects/p/messages/1" }), {
      status: status.value,
    });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, seen, close: () => server.shutdown() };
}

const ACCOUNT_KEYS = generateKeyPairSync("rsa", { modulusLength: 2048 });

/**
 * A forwarding HTTP proxy on loopback: it takes the absolute-form requests a client sends
 * to a proxy, records them and forwards them with a header the stub can see.
 */
function forwardingProxy() {
  const seen: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    seen.push(`${req.method} ${req.url}`);
    const headers = new Headers(req.headers);
    headers.set("x-test-proxy", "passed");
    const res = await fetch(req.url, { method: req.method, headers, body: req.body });
    return new Response(res.body, { status: res.status, headers: res.headers });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, seen, close: () => server.shutdown() };
}

async function setup(stubUrl: string, extra: Record<string, string> = {}) {
  const t = await appWithAlice(`${PUSH_CONFIG}fcm_url = "${stubUrl}"\n`);
  const served = serveApp(t);
  const file = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      type: "service_account",
      project_id: "my-project",
      private_key_id: "kid123",
      private_key: ACCOUNT_KEYS.privateKey.export({ format: "pem", type: "pkcs8" }),
      client_email: "push@my-project.iam.gserviceaccount.com",
      token_uri: `${stubUrl}/token`,
    }),
  );
  const gw = await jsonOf(
    await t.asAdmin("POST", "/smsgateway", {
      body: {
        name: "fb",
        module: "privacyidea.lib.smsprovider.FirebaseProvider.FirebaseProvider",
        "option.JSON config file": file,
        ...extra,
      },
    }),
  );
  assert.equal(gw.status, 200, JSON.stringify(gw.body));
  await savePolicy(t.deps, "push_enrol", {
    scope: "enrollment",
    action: `push_firebase_configuration=fb, push_registration_url=${served.url}/ttype/push`,
  });
  return { t, served, file };
}

async function enrol(t: TestApp, app: PushApp) {
  const init = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: { type: "push", genkey: 1, user: "alice", realm: "realm1", pin: "1234" },
      json: true,
    }),
  );
  assert.equal(init.status, 200, JSON.stringify(init.body));
  assert.match(init.body.detail.pushurl.value, /&poll_only=False$/);
  const reg = await app.enrol(init.body.detail.pushurl.value, { fbtoken: "fcm-device-token" });
  assert.equal(reg.status, 200, JSON.stringify(reg.body));
  return init.body.detail.serial as string;
}

function b64urlJson(part: string) {
  return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
}

Deno.test("push with Firebase: the stub gets the token request and the message, the app answers", async () => {
  const stub = fcmStub();
  const { t, served, file } = await setup(stub.url);
  const app = new PushApp(() => t.clock.now());
  try {
    const serial = await enrol(t, app);
    const first = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    assert.equal(first.body.result.authentication, "CHALLENGE");
    assert.equal(
      first.body.detail.message,
      "Please confirm the authentication on your mobile device!",
    );
    assert.deepEqual(stub.seen.map((s) => s.path), [
      "/token",
      "/v1/projects/my-project/messages:send",
    ]);
    // the OAuth2 token request: a JWT bearer grant signed with the service account's key
    const form = new URLSearchParams(stub.seen[0].body);
    assert.equal(form.get("grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer");
    const [h, c, sig] = form.get("assertion")!.split(".");
    assert.deepEqual(b64urlJson(h), { alg: "RS256", typ: "JWT", kid: "kid123" });
    const now = Math.floor(t.clock.now() / 1000);
    assert.deepEqual(b64urlJson(c), {
      iss: "push@my-project.iam.gserviceaccount.com",
      scope: "https://www.googleapis.com/auth/cloud-platform " +
        "https://www.googleapis.com/auth/datastore " +
        "https://www.googleapis.com/auth/devstorage.read_write " +
        "https://www.googleapis.com/auth/firebase " +
        "https://www.googleapis.com/auth/identitytoolkit " +
        "https://www.googleapis.com/auth/userinfo.email",
      aud: `${stub.url}/token`,
      iat: now,
      exp: now + 3600,
    });
    assert.ok(
      verify(
        "sha256",
        new TextEncoder().encode(`${h}.${c}`),
        ACCOUNT_KEYS.publicKey,
        Buffer.from(sig, "base64url"),
      ),
    );
    // the message, exactly privacyIDEA's shape
    const send = stub.seen[1];
    assert.equal(send.headers.get("authorization"), "Bearer ya29.stub");
    assert.equal(send.headers.get("content-type"), "application/json; UTF-8");
    const msg = JSON.parse(send.body);
    const data = msg.message.data;
    assert.deepEqual(Object.keys(data), [
      "nonce",
      "question",
      "serial",
      "title",
      "sslverify",
      "url",
      "signature",
    ]);
    assert.equal(data.serial, serial);
    assert.equal(data.url, `${served.url}/ttype/push`);
    assert.deepEqual(msg, {
      message: {
        data,
        token: "fcm-device-token",
        notification: { title: "privacyIDEA", body: "Do you want to confirm the login?" },
        android: {
          priority: "HIGH",
          ttl: "120s",
          fcm_options: { analytics_label: "AndroidPushToken" },
        },
        apns: {
          headers: {
            "apns-priority": "10",
            "apns-push-type": "alert",
            "apns-collapse-id": "privacyidea.pushtoken",
            "apns-expiration": String(now + 120),
          },
          payload: {
            aps: {
              alert: { title: "privacyIDEA", body: "Do you want to confirm the login?" },
              sound: "default",
              category: "PUSH_AUTHENTICATION",
            },
          },
          fcm_options: { analytics_label: "iOSPushToken" },
        },
      },
    });
    assert.ok(app.isServerSigned(data), "the server signed the pushed data");
    // the app answers from the notification, no poll
    assert.equal((await app.answer(data)).body.result.value, true);
    const done = await postForm(served, "/validate/check", {
      user: "alice",
      transaction_id: first.body.detail.transaction_id,
      pass: "",
    });
    assert.equal(done.body.result.value, true);
  } finally {
    await served.close();
    await stub.close();
    await t.close();
    await Deno.remove(file);
  }
});

Deno.test("push with Firebase: a refused message says to poll, and polling still finds it", async () => {
  const status = { value: 500 };
  const stub = fcmStub(status);
  const { t, served, file } = await setup(stub.url);
  const app = new PushApp(() => t.clock.now());
  try {
    await enrol(t, app);
    const first = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    assert.equal(
      first.body.detail.message,
      "Please confirm the authentication on your mobile device! Use the polling feature of your " +
        "privacyIDEA Authenticator App to check for a new Login request.",
    );
    assert.equal((await app.poll()).body.result.value.length, 1);
    // with polling denied a challenge that could not be sent is not stored
    await savePolicy(t.deps, "deny", {
      scope: "authentication",
      action: "push_allow_polling=deny",
    });
    const denied = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    assert.equal(denied.body.result.value, false);
    assert.equal(denied.body.detail.transaction_id, undefined);
  } finally {
    await served.close();
    await stub.close();
    await t.close();
    await Deno.remove(file);
  }
});

Deno.test("push with Firebase: the definition needs a service account file, enrolment a definition", async () => {
  const stub = fcmStub();
  const { t, served, file } = await setup(stub.url);
  try {
    const other = await Deno.makeTempFile({ suffix: ".json" });
    await Deno.writeTextFile(other, JSON.stringify({ type: "authorized_user" }));
    const bad = await jsonOf(
      await t.asAdmin("POST", "/smsgateway", {
        body: {
          name: "fb2",
          module: "privacyidea.lib.smsprovider.FirebaseProvider.FirebaseProvider",
          "option.JSON config file": other,
        },
      }),
    );
    assert.equal(bad.status, 400);
    assert.equal(
      bad.body.result.error.message,
      "ERR302: The JSON file is not a valid firebase credentials file.",
    );
    await Deno.remove(other);
    const list = await jsonOf(await t.asAdmin("GET", "/smsgateway/"));
    assert.deepEqual(list.body.result.value.map((g: { name: string }) => g.name), [
      "fb",
    ]);
    await savePolicy(t.deps, "push_enrol", {
      scope: "enrollment",
      action: `push_firebase_configuration=nosuch, push_registration_url=${served.url}/ttype/push`,
    });
    const init = await jsonOf(
      await t.asAdmin("POST", "/token/init", {
        body: { type: "push", genkey: 1, user: "alice", realm: "realm1" },
        json: true,
      }),
    );
    assert.equal(init.body.result.error.message, "ERR905: Unknown Firebase configuration!");
  } finally {
    await served.close();
    await stub.close();
    await t.close();
    await Deno.remove(file);
  }
});

Deno.test("push with Firebase: with httpsproxy the token request and the message go through the proxy", async () => {
  const stub = fcmStub();
  const proxy = forwardingProxy();
  const { t, served, file } = await setup(stub.url, { "option.httpsproxy": proxy.url });
  const app = new PushApp(() => t.clock.now());
  try {
    await enrol(t, app);
    const first = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    assert.equal(
      first.body.detail.message,
      "Please confirm the authentication on your mobile device!",
    );
    assert.deepEqual(proxy.seen, [
      `POST ${stub.url}/token`,
      `POST ${stub.url}/v1/projects/my-project/messages:send`,
    ]);
    assert.deepEqual(stub.seen.map((s) => s.headers.get("x-test-proxy")), ["passed", "passed"]);
    assert.equal(stub.seen[1].headers.get("authorization"), "Bearer ya29.stub");
    // a proxy that does not answer: nothing reaches FCM directly, the app is told to poll
    const closed = forwardingProxy();
    await closed.close();
    const gw = await jsonOf(
      await t.asAdmin("POST", "/smsgateway", {
        body: {
          name: "fb",
          module: "privacyidea.lib.smsprovider.FirebaseProvider.FirebaseProvider",
          "option.JSON config file": file,
          "option.httpsproxy": closed.url,
        },
      }),
    );
    assert.equal(gw.status, 200, JSON.stringify(gw.body));
    const second = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    assert.match(second.body.detail.message, /Use the polling feature/);
    assert.equal(stub.seen.length, 2);
  } finally {
    await served.close();
    await proxy.close();
    await stub.close();
    await t.close();
    await Deno.remove(file);
  }
});

Deno.test("Firebase definition: httpsproxy is listed, a bad proxy URL is refused and nothing is written", async () => {
  const stub = fcmStub();
  const { t, served, file } = await setup(stub.url);
  try {
    const providers = await jsonOf(await t.asAdmin("GET", "/smsgateway/providers"));
    assert.deepEqual(
      providers.body.result.value["privacyidea.lib.smsprovider.FirebaseProvider.FirebaseProvider"]
        .parameters.httpsproxy,
      { required: false, description: "Proxy setting for HTTPS connections to googleapis.com." },
    );
    const before = await jsonOf(await t.asAdmin("GET", "/smsgateway/"));
    for (const bad of ["proxy.example.com:3128", "ftp://proxy.example.com", "http://"]) {
      const res = await jsonOf(
        await t.asAdmin("POST", "/smsgateway", {
          body: {
            name: "fb",
            module: "privacyidea.lib.smsprovider.FirebaseProvider.FirebaseProvider",
            "option.JSON config file": file,
            "option.httpsproxy": bad,
          },
        }),
      );
      assert.equal(res.status, 400, bad);
      assert.equal(
        res.body.result.error.message,
        'ERR905: Cannot parse parameter "option.httpsproxy": expected an http, https or socks5 ' +
          'URL such as "http://proxy.example.com:3128"',
      );
    }
    const after = await jsonOf(await t.asAdmin("GET", "/smsgateway/"));
    assert.deepEqual(after.body.result.value, before.body.result.value);
    assert.deepEqual(after.body.result.value[0].options, { "JSON config file": file });
  } finally {
    await served.close();
    await stub.close();
    await t.close();
    await Deno.remove(file);
  }
});

Deno.test("push with Firebase: the access token is kept until shortly before it expires, per account file", async () => {
  // tokens live 300 s here: kept for 300 - 225 = 75 s (google-auth refreshes 3 min 45 s early)
  const stub = fcmStub({ value: 200 }, { value: 300 });
  const { t, served, file } = await setup(stub.url);
  const app = new PushApp(() => t.clock.now());
  const sends = () => stub.seen.filter((s) => s.path.endsWith("/messages:send"));
  const tokenRequests = () => stub.seen.filter((s) => s.path === "/token").length;
  const challenge = async () => {
    const res = await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    assert.equal(
      res.body.detail.message,
      "Please confirm the authentication on your mobile device!",
    );
    return sends().at(-1)!.headers.get("authorization");
  };
  try {
    await enrol(t, app);
    assert.equal(await challenge(), "Bearer ya29.stub");
    assert.equal(await challenge(), "Bearer ya29.stub");
    assert.equal(tokenRequests(), 1, "two challenges, one token request");
    t.clock.advance(74_000);
    assert.equal(await challenge(), "Bearer ya29.stub");
    assert.equal(tokenRequests(), 1);
    t.clock.advance(1_000);
    assert.equal(await challenge(), "Bearer ya29.stub2", "75 s on, the token is renewed");
    assert.equal(tokenRequests(), 2);
    assert.equal(await challenge(), "Bearer ya29.stub2");
    assert.equal(tokenRequests(), 2);
    // a replaced service account file (another key) takes effect with the next message
    const account = JSON.parse(await Deno.readTextFile(file));
    await Deno.writeTextFile(file, JSON.stringify({ ...account, private_key_id: "kid456" }));
    assert.equal(await challenge(), "Bearer ya29.stub3");
    const assertion = new URLSearchParams(stub.seen.findLast((s) => s.path === "/token")!.body)
      .get("assertion")!;
    assert.equal(b64urlJson(assertion.split(".")[0]).kid, "kid456");
    assert.equal(await challenge(), "Bearer ya29.stub3");
    assert.equal(tokenRequests(), 3);
  } finally {
    await served.close();
    await stub.close();
    await t.close();
    await Deno.remove(file);
  }
});

Deno.test("push with Firebase: a token FCM refuses (401) or one without expires_in is not kept", async () => {
  const status = { value: 401 };
  const expiresIn = { value: 3600 as number | undefined };
  const stub = fcmStub(status, expiresIn as { value: number });
  const { t, served, file } = await setup(stub.url);
  const app = new PushApp(() => t.clock.now());
  const tokenRequests = () => stub.seen.filter((s) => s.path === "/token").length;
  try {
    await enrol(t, app);
    await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    assert.equal(tokenRequests(), 1);
    status.value = 200;
    await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    assert.equal(tokenRequests(), 2, "the refused token was dropped");
    await postForm(served, "/validate/check", { user: "alice", pass: "1234" });
    assert.equal(tokenRequests(), 2);
    // a token of unknown lifetime: used for its message only
    const other = await setup(stub.url);
    expiresIn.value = undefined;
    try {
      await enrol(other.t, new PushApp(() => other.t.clock.now()));
      for (let i = 0; i < 2; i++) {
        await postForm(other.served, "/validate/check", { user: "alice", pass: "1234" });
      }
      assert.equal(tokenRequests(), 4);
    } finally {
      await other.served.close();
      await other.t.close();
      await Deno.remove(other.file);
    }
  } finally {
    await served.close();
    await stub.close();
    await t.close();
    await Deno.remove(file);
  }
});
