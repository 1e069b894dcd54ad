/**
 * `/event/`: a password inside an option's URL (a WebHook's
 * `http://user:pw@host/`) is shown as `__CENSORED__`; the censored view sent
 * back keeps it (the hook still delivers with Basic auth from the URL) only
 * while the URL's scheme, host, port and path stay the same.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { listEvents } from "../../src/domain/event/event_store.ts";
import { auditRows, startSmsSink } from "./_challenge_types.ts";

const PASSWORD = "hookPw7secret";

async function save(t: TestApp, body: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin("POST", "/event", { body }));
}

async function shown(t: TestApp, id: number) {
  const res = await jsonOf(await t.asAdmin("GET", `/event/${id}`));
  assert.equal(res.status, 200);
  assert.ok(!JSON.stringify(res.body).includes(PASSWORD), "no password in GET");
  return res.body.result.value[0];
}

async function storedUrl(t: TestApp, id: number): Promise<string> {
  return (await listEvents(t.deps.db, id))[0].options.URL;
}

Deno.test("event WebHook URL password: censored in GET, the censored round trip keeps it and the hook delivers with it", async () => {
  const t = await createTestApp();
  const sink = startSmsSink();
  const port = new URL(sink.url).port;
  const url = `http://hookuser:${PASSWORD}@127.0.0.1:${port}/send`;
  const base = {
    name: "hook",
    event: "token_init",
    handlermodule: "WebHook",
    action: "post_webhook",
    "option.content_type": "application/json",
    "option.replace": "false",
    "option.data": '{"x": 1}',
  };
  const created = await save(t, { ...base, "option.URL": url });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const id = created.body.result.value;
  const view = await shown(t, id);
  assert.equal(view.options.URL, `http://hookuser:__CENSORED__@127.0.0.1:${port}/send`);

  // the censored view saved back keeps the stored URL
  const again = await save(t, { ...base, id, "option.URL": view.options.URL });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(await storedUrl(t, id), url);

  const init = await jsonOf(
    await t.asAdmin("POST", "/token/init", { body: { type: "hotp", genkey: "1" } }),
  );
  assert.equal(init.status, 200, JSON.stringify(init.body));
  assert.equal(sink.requests.length, 1, "the hook was sent");
  assert.equal(
    sink.requests[0].headers.get("authorization"),
    `Basic ${btoa(`hookuser:${PASSWORD}`)}`,
  );

  // a moved target with the placeholder is refused; nothing changes
  for (
    const moved of [
      `http://hookuser:__CENSORED__@localhost:${port}/send`,
      `http://hookuser:__CENSORED__@127.0.0.1:${port}/other`,
    ]
  ) {
    const res = await save(t, { ...base, id, "option.URL": moved });
    assert.equal(res.status, 400, moved);
    assert.match(res.body.result.error.message, /Cannot keep the stored "option\.URL password"/);
    assert.equal(await storedUrl(t, id), url, "nothing changed");
  }
  // a new definition has no stored password to keep
  const fresh = await save(t, { ...base, name: "hook2", "option.URL": view.options.URL });
  assert.equal(fresh.status, 400);
  assert.equal((await jsonOf(await t.asAdmin("GET", "/event/"))).body.result.value.length, 1);

  const audit = JSON.stringify([
    ...(await auditRows(t, "POST /event")),
    ...(await auditRows(t, "GET /event/")),
  ]);
  assert.ok(!audit.includes(PASSWORD), "no password in audit");
  assert.ok(!t.log.lines.join("\n").includes(PASSWORD), "no password in logs");
  await sink.close();
  await t.close();
});
