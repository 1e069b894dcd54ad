import assert from "node:assert/strict";
import {
  checkSubscription,
  deleteSubscription,
  meterClientRequest,
  meteredApplication,
  subscriptionStatus,
  uploadSubscription,
} from "../../../src/domain/subscription/mod.ts";
import {
  expiredRefusalProbability,
  randomFraction,
  randomInt,
} from "../../../src/domain/subscription/runtime.ts";
import { SubscriptionError } from "../../../src/errors.ts";
import { createTestApp, type TestApp } from "../../test_app.ts";
import {
  addOwnedTokens,
  fractionDraw,
  installVendorKey,
  scriptedRandom,
  signedFile,
} from "../../fixtures/subscription_keys.ts";

const DAY = 86_400_000;

async function appWithKey(): Promise<TestApp> {
  const t = await createTestApp();
  await installVendorKey(t.deps.config.subscriptions.keyDir);
  return t;
}

async function refusal(t: TestApp, application: string, draws: number[]): Promise<string | null> {
  const random = scriptedRandom(draws);
  t.deps.random = random;
  try {
    await checkSubscription(t.deps, application);
    return null;
  } catch (err) {
    if (err instanceof SubscriptionError) return err.message;
    throw err;
  }
}

Deno.test("meteredApplication maps User-Agents to metered applications", () => {
  const cases: [string | undefined, string | undefined][] = [
    ["privacyidea-cp/2.1 Windows/PC1", "privacyidea-cp"],
    ["privacyIDEA-Keycloak/1.0", "privacyidea-keycloak"],
    ["entraid-via-keycloak/1.0", "privacyidea-keycloak"],
    ["PAM/1.0", "privacyidea-pam"],
    ["pam-passkey", "privacyidea-pam"],
    ["pam-privacyidea/3", "privacyidea-pam"],
    ["FreeRADIUS/3.0", "privacyidea"],
    ["simpleSAMLphp", "simplesamlphp"],
    ["privacyIDEA-App/4.0", undefined],
    ["Mozilla/5.0 (X11; Linux)", undefined],
    ["curl/8.0", undefined],
    ["", undefined],
    [undefined, undefined],
  ];
  for (const [ua, app] of cases) assert.equal(meteredApplication(ua), app, String(ua));
});

Deno.test("randomInt draws 0..max inclusive and rejects biased values", () => {
  assert.equal(randomInt(scriptedRandom([3]), 3), 3);
  assert.equal(randomInt(scriptedRandom([4]), 3), 0);
  // 0xFFFFFFFF lies above the largest multiple of 3 below 2^32: redrawn
  const r = scriptedRandom([0xffffffff, 5]);
  assert.equal(randomInt(r, 2), 2);
  assert.equal(r.remaining(), 0);
  assert.equal(randomFraction(scriptedRandom([fractionDraw(0.5)])), 0.5);
});

Deno.test("expired refusal probability follows the spec's curve", () => {
  assert.equal(expiredRefusalProbability(0), 0);
  assert.ok(Math.abs(expiredRefusalProbability(1) - 0.07) < 1e-9);
  assert.ok(Math.abs(expiredRefusalProbability(14) - 0.2) < 1e-9);
  assert.ok(Math.abs(expiredRefusalProbability(44) - 0.5) < 1e-9);
  assert.ok(expiredRefusalProbability(94) >= 1);
});

Deno.test("no subscription: within the free tier passes, over it refuses when the draw is high", async () => {
  const t = await appWithKey();
  await addOwnedTokens(t.deps.db, ["u1", "u2", "u3"]);
  // privacyidea-cp has 50 free users: 3 users never refuse
  assert.equal(await refusal(t, "privacyidea-cp", [3]), null);
  // demo_application has 0 free users: a draw of 0 passes, anything above refuses
  assert.equal(await refusal(t, "demo_application", [0]), null);
  assert.equal(
    await refusal(t, "demo_application", [2]),
    "SubscriptionError('No subscription for your client.', application=demo_application)",
  );
  // not metered at all
  assert.equal(await refusal(t, "something-else", [3]), null);
  await t.close();
});

Deno.test("exceeded: num_tokens=2 with 3 users refuses on a draw of 3, passes on 2 or 1", async () => {
  const t = await appWithKey();
  await uploadSubscription(t.deps, await signedFile({ num_tokens: 2 }));
  await addOwnedTokens(t.deps.db, ["u1", "u2", "u3"]);
  await addOwnedTokens(t.deps.db, ["u1"], 2); // more tokens of one user do not count twice
  const exceeded =
    "SubscriptionError('Too many users with assigned tokens. Subscription exceeded.', application=demo_application)";
  assert.equal(await refusal(t, "demo_application", [3]), exceeded);
  assert.equal(await refusal(t, "demo_application", [2]), null);
  assert.equal(await refusal(t, "demo_application", [1]), null);
  // lookup ignores case
  assert.equal(
    await refusal(t, "DEMO_APPLICATION", [3]),
    exceeded.replace("=demo_application", "=DEMO_APPLICATION"),
  );
  await t.close();
});

Deno.test("a token disabled or deleted no longer counts for the very next metered check", async () => {
  const t = await appWithKey();
  await uploadSubscription(t.deps, await signedFile({ num_tokens: 2 }));
  await addOwnedTokens(t.deps.db, ["u1", "u2", "u3"]);
  const exceeded =
    "SubscriptionError('Too many users with assigned tokens. Subscription exceeded.', application=demo_application)";
  assert.equal(await refusal(t, "demo_application", [3]), exceeded);
  await t.deps.db.updateTable("token").set({ active: 0 }).where("user_id", "=", "u3").execute();
  assert.equal(await refusal(t, "demo_application", [3]), null, "u3's token was disabled");
  await t.deps.db.updateTable("token").set({ active: 1 }).where("user_id", "=", "u3").execute();
  assert.equal(await refusal(t, "demo_application", [3]), exceeded, "and enabled again");
  await t.deps.db.deleteFrom("token").where("user_id", "=", "u2").execute();
  assert.equal(await refusal(t, "demo_application", [3]), null, "u2's token was deleted");
  await t.close();
});

Deno.test("a subscription uploaded or deleted counts for the very next metered check", async () => {
  const t = await appWithKey();
  await addOwnedTokens(t.deps.db, ["u1", "u2", "u3"]);
  const none =
    "SubscriptionError('No subscription for your client.', application=demo_application)";
  const exceeded =
    "SubscriptionError('Too many users with assigned tokens. Subscription exceeded.', application=demo_application)";
  // the meter has looked (and keeps what it read) before each change
  assert.equal(await refusal(t, "demo_application", [3]), none);
  await uploadSubscription(t.deps, await signedFile({ num_tokens: 2 }));
  assert.equal(await refusal(t, "demo_application", [3]), exceeded, "the upload counts");
  assert.equal(await refusal(t, "demo_application", [2]), null);
  await uploadSubscription(t.deps, await signedFile({ num_tokens: 5 }));
  assert.equal(await refusal(t, "demo_application", [3]), null, "the replacement counts");
  await deleteSubscription(t.deps, "demo_application");
  assert.equal(await refusal(t, "demo_application", [3]), none, "the deletion counts");
  await t.close();
});

Deno.test("inactive and unassigned tokens do not count as users", async () => {
  const t = await appWithKey();
  await uploadSubscription(t.deps, await signedFile({ num_tokens: 2 }));
  await addOwnedTokens(t.deps.db, ["u1", "u2", "u3", ""]);
  await t.deps.db.updateTable("token").set({ active: 0 }).where("user_id", "=", "u3").execute();
  assert.equal(await refusal(t, "demo_application", [3]), null);
  await t.close();
});

Deno.test("expired: passes on the expiry day, refuses with the day-based probability after", async () => {
  const t = await appWithKey();
  await uploadSubscription(t.deps, await signedFile({ date_till: "2026-01-10" }));
  t.clock.set(Date.UTC(2026, 0, 10, 12)); // the expiry day itself
  assert.equal(await refusal(t, "demo_application", [0]), null);
  t.clock.set(Date.UTC(2026, 0, 11, 1)); // one whole day after: p = 0.07
  const expired = "SubscriptionError('Your subscription expired.', application=demo_application)";
  assert.equal(await refusal(t, "demo_application", [fractionDraw(0.06)]), expired);
  assert.equal(await refusal(t, "demo_application", [fractionDraw(0.08)]), null);
  t.clock.set(Date.UTC(2026, 0, 10) + 100 * DAY);
  assert.equal(await refusal(t, "demo_application", [fractionDraw(0.999)]), expired);
  await t.close();
});

Deno.test("a stored row changed after upload or a removed key fails the runtime check", async () => {
  const t = await appWithKey();
  await uploadSubscription(t.deps, await signedFile());
  await t.deps.db.updateTable("subscription").set({ num_tokens: 100000 }).execute();
  assert.match(
    (await refusal(t, "demo_application", []))!,
    /^SubscriptionError\('Signature of your subscription does not match\.'/,
  );
  await t.deps.db.updateTable("subscription").set({ by_name: "Unknown Vendor" }).execute();
  assert.match(
    (await refusal(t, "demo_application", []))!,
    /^SubscriptionError\('Verifying the signature of your subscription failed\.'/,
  );
  await t.close();
});

Deno.test("meterClientRequest is silent in mode off and for unmetered clients", async () => {
  const t = await appWithKey();
  await addOwnedTokens(t.deps.db, ["u1"]);
  t.deps.random = scriptedRandom([1, 1]);
  assert.equal(await meterClientRequest(t.deps, "Mozilla/5.0"), undefined);
  const warn = await meterClientRequest(t.deps, "demo_application/1.0");
  assert.equal(warn?.application, "demo_application");
  assert.ok(warn?.refusal instanceof SubscriptionError);
  t.deps.config.subscriptions.mode = "off";
  assert.equal(await meterClientRequest(t.deps, "demo_application/1.0"), undefined);
  await t.close();
});

Deno.test("subscriptionStatus gives 0 within the free tier, 1 without, 2 failing, 3 OK", async () => {
  const t = await appWithKey();
  await addOwnedTokens(t.deps.db, ["a"], 50);
  assert.equal(await subscriptionStatus(t.deps), 0);
  await addOwnedTokens(t.deps.db, ["b"], 1);
  assert.equal(await subscriptionStatus(t.deps), 1);
  assert.equal(await subscriptionStatus(t.deps, "privacyidea", { tokenType: "push" }), 0);
  await uploadSubscription(t.deps, await signedFile({ application: "privacyidea" }));
  assert.equal(await subscriptionStatus(t.deps), 3);
  await t.deps.db.updateTable("subscription").set({ level: "Platinum" }).execute();
  assert.equal(await subscriptionStatus(t.deps), 2);
  await t.close();
});
