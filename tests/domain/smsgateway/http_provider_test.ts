/**
 * The HTTP SMS provider against a local server: parameters with tags, basic
 * auth (options or URL), form and JSON bodies, success and failure markers,
 * statuses, redirects and the timeout.
 */
import assert from "node:assert/strict";
import { sendHttpSms, SmsDeliveryError } from "../../../src/domain/smsgateway/http_provider.ts";

interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

function server(answer: (url: URL) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const s = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    seen.push({
      method: req.method,
      url: new URL(req.url),
      headers: req.headers,
      body: await req.text(),
    });
    return await answer(new URL(req.url));
  });
  return { url: `http://127.0.0.1:${s.addr.port}/sms`, seen, close: () => s.shutdown() };
}

Deno.test("HTTP provider: GET with tags, headers and basic auth from the URL", async () => {
  const s = server(() => new Response("OK"));
  const url = s.url.replace("http://", "http://user%40x:p%3Ass@");
  await sendHttpSms(
    {
      options: { URL: url, to: "{phone}", text: "Code: {otp}", TIMEOUT: "2" },
      headers: { "X-Api": "abc" },
    },
    "+49170",
    "123456",
  );
  const req = s.seen[0];
  assert.equal(req.method, "GET");
  assert.equal(req.url.searchParams.get("to"), "+49170");
  assert.equal(req.url.searchParams.get("text"), "Code: 123456");
  assert.equal(req.url.searchParams.has("TIMEOUT"), false, "settings are not parameters");
  assert.equal(req.headers.get("x-api"), "abc");
  assert.equal(req.headers.get("authorization"), `Basic ${btoa("user@x:p:ss")}`);
  await s.close();
});

Deno.test("HTTP provider: POST form and JSON; USERNAME/PASSWORD win over the URL", async () => {
  const s = server(() => new Response("queued", { status: 202 }));
  const base = { URL: s.url, HTTP_METHOD: "POST", to: "{phone}", msg: "{otp}", n: "5" };
  await sendHttpSms(
    { options: { ...base, USERNAME: "u", PASSWORD: "p" }, headers: {} },
    "49",
    "012345",
  );
  assert.equal(s.seen[0].headers.get("content-type"), "application/x-www-form-urlencoded");
  assert.deepEqual(Object.fromEntries(new URLSearchParams(s.seen[0].body)), {
    to: "49",
    msg: "012345",
    n: "5",
  });
  assert.equal(s.seen[0].headers.get("authorization"), `Basic ${btoa("u:p")}`);
  await sendHttpSms(
    { options: { ...base, SEND_DATA_AS_JSON: "yes" }, headers: {} },
    "49",
    "012345",
  );
  // a value that parses as JSON is sent as that value (spec): "5" → 5, "012345" stays text
  assert.deepEqual(JSON.parse(s.seen[1].body), { to: 49, msg: "012345", n: 5 });
  await s.close();
});

Deno.test("HTTP provider: statuses, RETURN_SUCCESS, RETURN_FAIL, redirects and the timeout fail the send", async () => {
  const s = server(async (url) => {
    const path = url.searchParams.get("case");
    if (path === "slow") await new Promise((r) => setTimeout(r, 2500));
    if (path === "500") return new Response("oops", { status: 500 });
    if (path === "redirect") return Response.redirect("http://127.0.0.1:1/elsewhere", 302);
    return new Response(path === "fail" ? "ERROR: no credit" : "OK: sent");
  });
  const send = (c: string, more: Record<string, string> = {}) =>
    sendHttpSms(
      { options: { URL: `${s.url}?case=${c}`, TIMEOUT: "1", ...more }, headers: {} },
      "1",
      "x",
    );
  await send("ok", { RETURN_SUCCESS: "sent" });
  await send("ok", { RETURN_FAIL: "ERROR" });
  await assert.rejects(send("ok", { RETURN_SUCCESS: "DELIVERED" }), SmsDeliveryError);
  await assert.rejects(send("fail", { RETURN_FAIL: "ERROR" }), SmsDeliveryError);
  await assert.rejects(send("500"), SmsDeliveryError);
  await assert.rejects(send("redirect"), SmsDeliveryError);
  await assert.rejects(send("slow"), SmsDeliveryError);
  await assert.rejects(
    sendHttpSms({ options: { URL: "not a url" }, headers: {} }, "1", "x"),
    SmsDeliveryError,
  );
  await s.close();
});
