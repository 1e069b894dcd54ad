import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";
import { startSmtpSink } from "../domain/event/_helpers.ts";

Deno.test("/smtpserver/ needs an admin JWT", async () => {
  const t = await createTestApp();
  const { status, body } = await jsonOf(await t.get("/smtpserver/"));
  assert.equal(status, 401);
  assert.equal(body.result.error.code, 4033);
  await t.close();
});

Deno.test("POST /smtpserver/<id> creates and updates (answer true, as privacyIDEA's send_result(r > 0)); GET censors the password", async () => {
  const t = await createTestApp();
  const created = await jsonOf(
    await t.asAdmin("POST", "/smtpserver/mail1", {
      body: {
        server: "smtp.example.com",
        port: "587",
        tls: "1",
        username: "u",
        password: "topsecret",
        sender: "pi@example.com",
        description: "main",
      },
    }),
  );
  assert.equal(created.status, 200);
  assert.equal(created.body.result.value, true);
  const id = (await t.deps.db.selectFrom("smtpserver").select("id").executeTakeFirstOrThrow()).id;
  const list = await jsonOf(await t.asAdmin("GET", "/smtpserver/"));
  assert.deepEqual(list.body.result.value, {
    mail1: {
      id,
      identifier: "mail1",
      server: "smtp.example.com",
      port: 587,
      tls: true,
      username: "u",
      password: "__CENSORED__",
      sender: "pi@example.com",
      description: "main",
      timeout: 10,
      enqueue_job: false,
    },
  });
  assert.equal(JSON.stringify(list.body).includes("topsecret"), false);
  const stored = await t.deps.db.selectFrom("smtpserver").select("password").executeTakeFirst();
  assert.equal(stored?.password.includes("topsecret"), false);
  // update keeps the id; the censored placeholder keeps the stored password (for the same
  // server and port: see secret_targets_test.ts); omitted fields take their defaults
  const upd = await jsonOf(
    await t.asAdmin("POST", "/smtpserver/mail1", {
      body: { server: "smtp.example.com", port: "587", password: "__CENSORED__" },
    }),
  );
  assert.equal(upd.body.result.value, true);
  const one = await jsonOf(await t.asAdmin("GET", "/smtpserver/mail1"));
  assert.equal(one.body.result.value.mail1.server, "smtp.example.com");
  assert.equal(one.body.result.value.mail1.port, 587);
  assert.equal(one.body.result.value.mail1.tls, false);
  assert.equal(one.body.result.value.mail1.sender, "");
  assert.equal(one.body.result.value.mail1.password, "__CENSORED__");
  const after = await t.deps.db.selectFrom("smtpserver").select("password").executeTakeFirst();
  assert.equal(after?.password, stored?.password);
  const none = await jsonOf(await t.asAdmin("GET", "/smtpserver/nope"));
  assert.deepEqual(none.body.result.value, {});
  await t.close();
});

Deno.test("POST /smtpserver/<id> refuses bad input with 400/905", async () => {
  const t = await createTestApp();
  const cases: [string, Record<string, string>, RegExp][] = [
    ["no server", {}, /Missing parameter: server/],
    ["bad port", { server: "h", port: "70000" }, /port/],
    ["bad tls", { server: "h", tls: "perhaps" }, /tls/],
    ["bad sender", { server: "h", sender: "not an address" }, /sender/],
    ["bad host", { server: "h/../x" }, /server/],
  ];
  for (const [label, body, message] of cases) {
    const res = await jsonOf(await t.asAdmin("POST", "/smtpserver/m", { body }));
    assert.equal(res.status, 400, label);
    assert.equal(res.body.result.error.code, 905, label);
    assert.match(res.body.result.error.message, message, label);
  }
  assert.deepEqual((await jsonOf(await t.asAdmin("GET", "/smtpserver/"))).body.result.value, {});
  await t.close();
});

Deno.test("DELETE /smtpserver/<id> deletes (answer true); unknown → 404/601", async () => {
  const t = await createTestApp();
  const saved = await jsonOf(await t.asAdmin("POST", "/smtpserver/m", { body: { server: "h" } }));
  assert.equal(saved.body.result.value, true);
  const del = await jsonOf(await t.asAdmin("DELETE", "/smtpserver/m"));
  assert.equal(del.status, 200);
  assert.equal(del.body.result.value, true);
  assert.deepEqual((await jsonOf(await t.asAdmin("GET", "/smtpserver/"))).body.result.value, {});
  const again = await jsonOf(await t.asAdmin("DELETE", "/smtpserver/m"));
  assert.equal(again.status, 404);
  assert.equal(again.body.result.error.code, 601);
  await t.close();
});

Deno.test("POST /smtpserver/send_test_email sends through a local SMTP sink", async () => {
  const t = await createTestApp();
  const sink = startSmtpSink();
  const ok = await jsonOf(
    await t.asAdmin("POST", "/smtpserver/send_test_email", {
      body: {
        identifier: "sink",
        server: "127.0.0.1",
        port: String(sink.port),
        sender: "pi@example.com",
        recipient: "admin@example.com",
      },
    }),
  );
  assert.equal(ok.status, 200);
  assert.equal(ok.body.result.value, true);
  assert.equal(sink.mails.length, 1);
  assert.deepEqual(sink.mails[0].to, ["admin@example.com"]);
  assert.match(sink.mails[0].data, /^Subject: Your TEST email from Tessera \(sink\)$/m);
  const port = sink.port;
  sink.close();
  const failed = await jsonOf(
    await t.asAdmin("POST", "/smtpserver/send_test_email", {
      body: {
        identifier: "sink",
        server: "127.0.0.1",
        port: String(port),
        recipient: "a@b.example",
      },
    }),
  );
  assert.equal(failed.status, 200);
  assert.equal(failed.body.result.value, false);
  const missing = await jsonOf(
    await t.asAdmin("POST", "/smtpserver/send_test_email", {
      body: { identifier: "sink", server: "127.0.0.1" },
    }),
  );
  assert.equal(missing.status, 400);
  assert.match(missing.body.result.error.message, /Missing parameter: recipient/);
  await t.close();
});
