/**
 * Shared setup of the `/register` and `/recover` tests: an editable SQL resolver `sql1` in
 * realm `realm1` with alice, a real SMTP sink on loopback behind the definition `mail`, and
 * helpers that read back what a request changed.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { mailBody, startSmtpSink, type SunkMail } from "../domain/event/_helpers.ts";

/** A test app with users, an SMTP sink and its definition `mail`. */
export interface RegisterApp {
  t: TestApp;
  sink: { port: number; mails: SunkMail[]; close: () => void };
  close(): Promise<void>;
}

/** alice of `realm1` (resolver `sql1`). */
export const ALICE = { login: "alice", password: "alice-pass", email: "alice@example.com" };

/** The complete registration of a new user `newbie`. */
export const NEWBIE = {
  username: "newbie",
  givenname: "New",
  surname: "Bie",
  email: "newbie@example.org",
  password: "Newbie-Pass-1",
  mobile: "+49170111",
  phone: "+4930222",
};

/** The app of every register/recover test. */
export async function registerApp(): Promise<RegisterApp> {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "realm1",
    resolver: "sql1",
    users: [{ ...ALICE, givenname: "Alice" }],
  });
  const sink = startSmtpSink();
  const res = await jsonOf(
    await t.asAdmin("POST", "/smtpserver/mail", {
      body: { server: "127.0.0.1", port: String(sink.port), sender: "pi@example.com" },
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return {
    t,
    sink,
    async close() {
      try {
        sink.close();
      } catch { /* a test closed it already */ }
      await t.close();
    },
  };
}

/** Creates a policy; throws unless 200. */
export async function policy(t: TestApp, name: string, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json: true }));
  assert.equal(res.status, 200, `policy ${name}: ${JSON.stringify(res.body)}`);
}

/** The register policy that makes registration work: resolver, realm and SMTP server. */
export async function registerPolicy(t: TestApp, extra = "") {
  await policy(t, "reg", {
    scope: "register",
    action: `resolver=sql1, realm=realm1, smtpconfig=mail${extra}`,
  });
}

/** Sets system config values; throws unless 200. */
export async function setConfig(t: TestApp, values: Record<string, string>) {
  const res = await jsonOf(await t.asAdmin("POST", "/system/setConfig", { body: values }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** What password recovery needs in the system config. */
export async function recoveryConfig(t: TestApp) {
  await setConfig(t, {
    "recovery.identifier": "mail",
    "recovery.url": "https://pi.example.com/",
  });
}

/** An anonymous POST (no JWT). */
export async function anon(t: TestApp, path: string, body: Record<string, unknown>) {
  return await jsonOf(await t.post(path, body));
}

/** The users of realm1 as the admin lists them, by login. */
export async function usersOf(t: TestApp): Promise<Record<string, Json>> {
  const res = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "realm1" } }));
  assert.equal(res.status, 200);
  return Object.fromEntries((res.body.result.value as Json[]).map((u) => [u.username, u]));
}

/** All tokens (serial, type, owner). */
export async function tokens(t: TestApp): Promise<Json[]> {
  const res = await jsonOf(await t.asAdmin("GET", "/token/"));
  assert.equal(res.status, 200);
  return res.body.result.value.tokens as Json[];
}

/** Whether `user@realm1` logs in with `password` at `/auth`. */
export async function logsIn(t: TestApp, user: string, password: string): Promise<boolean> {
  const res = await jsonOf(await t.post("/auth", { username: `${user}@realm1`, password }));
  return res.status === 200 && res.body.result.status === true;
}

/** The decoded body of a sunk mail. */
export function bodyOf(mail: SunkMail): string {
  return mailBody(mail.data);
}

/** The recovery code in a recovery mail's link. */
export function recoveryCodeOf(mail: SunkMail): string {
  const m = bodyOf(mail).match(/#!\/reset\/[^/\s]+\/([A-Za-z0-9]{24})\n/);
  assert.ok(m, `no recovery link in ${bodyOf(mail)}`);
  return m[1];
}

/** The stored password recovery rows (what is kept at rest). */
export async function resetRows(t: TestApp) {
  return await t.deps.db.selectFrom("passwordreset").selectAll().execute();
}
