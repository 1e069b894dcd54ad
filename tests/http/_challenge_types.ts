/**
 * Helpers of the token-type tests (email, sms, tan, indexedsecret, question,
 * daypassword): a realm with a user, policies, checks, a local HTTP sink for
 * SMS gateways, and parallel answers.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";

/** The test user's attributes. */
export const ALICE = {
  login: "alice",
  password: "alicepw",
  email: "alice@example.com",
  mobile: "+49 170 1234567",
  givenname: "Alice",
  surname: "Anders",
};

/** A test app with realm `realm1` (the default realm) holding {@link ALICE}. */
export async function appWithAlice(configText?: string): Promise<TestApp> {
  const t = await createTestApp({ configText });
  await createUsers(t.deps, { realm: "realm1", users: [ALICE] });
  return t;
}

/** `POST /validate/check` → `{status, body}`. */
export async function check(t: TestApp, body: Record<string, unknown>) {
  return await jsonOf(await t.post("/validate/check", body));
}

/** `POST /token/init` as admin (JSON) → `{status, body}`. */
export async function init(t: TestApp, body: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin("POST", "/token/init", { body, json: true }));
}

/** Enrols as admin and returns the response body; throws unless 200. */
export async function enrolOk(t: TestApp, body: Record<string, unknown>): Promise<Json> {
  const res = await init(t, body);
  if (res.status !== 200) throw new Error(`init failed: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates a policy (JSON body); throws unless 200. */
export async function addPolicy(t: TestApp, name: string, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json: true }));
  if (res.status !== 200) throw new Error(`policy ${name} failed: ${JSON.stringify(res.body)}`);
}

/** Sets system config values; throws unless 200. */
export async function setConfig(t: TestApp, values: Record<string, string>) {
  const res = await jsonOf(await t.asAdmin("POST", "/system/setConfig", { body: values }));
  if (res.status !== 200) throw new Error(`setConfig failed: ${JSON.stringify(res.body)}`);
}

/** The token as `GET /token/?serial=` shows it. */
export async function listed(t: TestApp, serial: string): Promise<Json> {
  const res = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
  assert.equal(res.status, 200);
  return res.body.result.value.tokens[0];
}

/** The fail counter of a token. */
export async function failcount(t: TestApp, serial: string): Promise<number> {
  return (await getTokenBySerial(t.deps, serial)).failcount;
}

/** Asserts a challenge response and returns its transaction id and first entry. */
export function challengeOf(body: Json): { tid: string; entry: Json } {
  assert.equal(body.result.value, false, JSON.stringify(body));
  assert.equal(body.result.authentication, "CHALLENGE", JSON.stringify(body));
  const entry = body.detail.multi_challenge[0];
  assert.match(body.detail.transaction_id, /^\d{20}$/);
  assert.equal(entry.transaction_id, body.detail.transaction_id);
  return { tid: body.detail.transaction_id, entry };
}

/**
 * Sends the same answer `n` times at once; returns how many were accepted
 * (`result.value` true).
 */
export async function acceptedOfParallel(
  t: TestApp,
  body: Record<string, unknown>,
  n = 10,
): Promise<number> {
  const results = await Promise.all(
    Array.from({ length: n }, async () => (await check(t, body)).body.result.value),
  );
  return results.filter((v) => v === true).length;
}

/** The audit rows of `action` (newest first). */
export async function auditRows(t: TestApp, action: string): Promise<Json[]> {
  const res = await jsonOf(await t.asAdmin("GET", "/audit/", { query: { action } }));
  assert.equal(res.status, 200);
  return res.body.result.value.auditdata;
}

/** A request an HTTP sink received. */
export interface SunkRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

/** A local HTTP server standing in for an SMS gateway; answers `status` with `reply`. */
export function startSmsSink(options: { status?: number; reply?: string } = {}): {
  url: string;
  requests: SunkRequest[];
  close: () => Promise<void>;
} {
  const requests: SunkRequest[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    requests.push({
      method: req.method,
      url: new URL(req.url),
      headers: req.headers,
      body: await req.text(),
    });
    return new Response(options.reply ?? "STATUS: SENT", { status: options.status ?? 200 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/send`,
    requests,
    close: () => server.shutdown(),
  };
}
