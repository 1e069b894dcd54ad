/**
 * Fixtures of `enroll_via_multichallenge=smartphone` (spec 13 §2.12, §4 step 7): alice (and bob)
 * with an spass token, the app served on loopback, the authentication policy, and the steps
 * of the login over real HTTP with the Authenticator app double.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { ALICE, check, enrolOk } from "./_challenge_types.ts";
import { serveApp, type ServedApp } from "./_serve_app.ts";
import { ContainerApp } from "./_container_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { listContainers } from "../../src/domain/container/mod.ts";

/** The PIN of alice's and bob's spass tokens. */
export const PIN = "pin-1234";

/** A served app with alice and bob (spass tokens) and the app double. */
export interface Login {
  t: TestApp;
  served: ServedApp;
  app: ContainerApp;
}

/**
 * alice and bob with spass tokens; `auth`: the authentication policy's actions (null: no
 * policy); `container`: the container policy's actions (default: the server URL).
 */
export async function loginSetup(
  auth: string | null = "enroll_via_multichallenge=smartphone",
  container?: string,
): Promise<Login> {
  const t = await createTestApp();
  const bob = { ...ALICE, login: "bob", password: "bobpw", email: "bob@example.com" };
  await createUsers(t.deps, { realm: "realm1", users: [ALICE, bob] });
  const served = serveApp(t);
  const phone = container ?? `privacyIDEA_server_url=${served.url}/`;
  if (phone !== "") await savePolicy(t.deps, "phone", { scope: "container", action: phone });
  if (auth !== null) await savePolicy(t.deps, "evm", { scope: "authentication", action: auth });
  for (const user of ["alice", "bob"]) {
    await enrolOk(t, { type: "spass", user, realm: "realm1", pin: PIN });
  }
  return { t, served, app: new ContainerApp(() => t.clock.now()) };
}

/** Stops the served app and closes the test app. */
export async function loginDone(l: Login): Promise<void> {
  await l.served.close();
  await l.t.close();
}

/** `POST /validate/check` of `user` with their PIN (or `extra`). */
export async function login(l: Login, user = "alice", extra: Record<string, unknown> = {}) {
  return await check(l.t, { user, realm: "realm1", pass: PIN, ...extra });
}

/** The last check of the login: `transaction_id` and an empty pass. */
export async function lastCheck(l: Login, transactionId: string, user = "alice") {
  return await check(l.t, { user, realm: "realm1", pass: "", transaction_id: transactionId });
}

/** `GET /validate/polltransaction` → its value. */
export async function poll(l: Login, transactionId: string): Promise<boolean> {
  const res = await jsonOf(
    await l.t.get("/validate/polltransaction", { query: { transaction_id: transactionId } }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

/** The smartphone containers of a user, as stored. */
export async function phonesOf(l: Login, login = "alice") {
  const { containers } = await listContainers(l.t.deps, { type: "smartphone" });
  return containers.filter((c) => c.owner?.login === login);
}

/** The registration challenge of a login's answer: asserts its shape, returns the entry. */
export function enrolmentEntry(body: Json): Json {
  assert.equal(body.result.value, false, JSON.stringify(body));
  assert.equal(body.result.authentication, "CHALLENGE");
  const multi = body.detail.multi_challenge;
  assert.equal(multi.length, 1);
  return multi[0];
}
