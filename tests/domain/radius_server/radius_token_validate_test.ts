/** The radius token inside validateCheck (spec 08 §3.2, §7). */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createTestApp, jsonOf, type TestApp } from "../../test_app.ts";
import { createUsers } from "../../fixtures/users.ts";
import { type Responder, startResponder } from "./responder.ts";
import { setRadiusServer } from "../../../src/domain/radius_server/mod.ts";
import { challengesOfTransaction } from "../../../src/domain/challenge/mod.ts";
import { savePolicy } from "../../../src/domain/policy/mod.ts";
import { validateCheck } from "../../../src/domain/validate/mod.ts";

const REQ = { user: "alice", realm: "r1", clientIp: "127.0.0.1", userAgent: "test" };

async function setup(tokenParams: Record<string, string>): Promise<{ t: TestApp; up: Responder }> {
  const t = await createTestApp();
  const up = await startResponder("up-secret", (req) => {
    const a = req.attributes;
    const state = a.State ? Buffer.from(a.State as Uint8Array).toString() : undefined;
    if (a["User-Name"] !== "remote-alice") return { code: "Access-Reject" };
    if (!state && (a["User-Password"] === "287082" || a["User-Password"] === "mypin287082")) {
      return { code: "Access-Accept" };
    }
    return { code: "Access-Reject" };
  });
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "x" }] });
  await setRadiusServer(t.deps, "up", {
    server: "127.0.0.1",
    port: up.port,
    secret: "up-secret",
    timeout: 1,
    retries: 1,
  });
  const init = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: {
        type: "radius",
        "radius.identifier": "up",
        "radius.user": "remote-alice",
        user: "alice",
        realm: "r1",
        ...tokenParams,
      },
    }),
  );
  assert.equal(init.status, 200, JSON.stringify(init.body));
  return { t, up };
}

Deno.test("radius token, remote PIN: the whole pass goes upstream", async () => {
  const { t, up } = await setup({});
  try {
    const ok = await validateCheck(t.deps, { ...REQ, pass: "mypin287082" });
    assert.equal(ok.value, true, JSON.stringify(ok.detail));
    assert.equal(up.seen.at(-1)!.attributes["User-Password"], "mypin287082");
    const no = await validateCheck(t.deps, { ...REQ, pass: "mypin000000" });
    assert.equal(no.value, false);
  } finally {
    await up.close();
    await t.close();
  }
});

Deno.test("radius token, local PIN: wrong PIN sends nothing, right PIN sends only the OTP", async () => {
  const { t, up } = await setup({ "radius.local_checkpin": "1", pin: "localpin" });
  try {
    const wrong = await validateCheck(t.deps, { ...REQ, pass: "badpin287082" });
    assert.equal(wrong.value, false);
    assert.equal(up.seen.length, 0, "no upstream request for a wrong local PIN");
    const ok = await validateCheck(t.deps, { ...REQ, pass: "localpin287082" });
    assert.equal(ok.value, true, JSON.stringify(ok.detail));
    assert.equal(up.seen.at(-1)!.attributes["User-Password"], "287082");
  } finally {
    await up.close();
    await t.close();
  }
});

Deno.test("radius token, local PIN: the PIN alone triggers 'Enter your RADIUS tokencode:'", async () => {
  const { t, up } = await setup({ "radius.local_checkpin": "1", pin: "localpin" });
  try {
    await savePolicy(t.deps, "cr", {
      scope: "authentication",
      action: "challenge_response=radius",
    });
    const first = await validateCheck(t.deps, { ...REQ, pass: "localpin" });
    assert.equal(first.value, false);
    assert.equal(first.detail.message, "Enter your RADIUS tokencode:");
    assert.equal(up.seen.length, 0, "the local challenge needs no upstream request");
    const tx = first.detail.transaction_id as string;
    assert.ok(tx);
    const second = await validateCheck(t.deps, { ...REQ, pass: "287082", transactionId: tx });
    assert.equal(second.value, true, JSON.stringify(second.detail));
    assert.equal(up.seen.at(-1)!.attributes.State, undefined, "answer sent without State");
  } finally {
    await up.close();
    await t.close();
  }
});

Deno.test("radius token: an upstream challenge in answer to a challenge replaces it (multi-round)", async () => {
  const t = await createTestApp();
  const up = await startResponder("up-secret", (req) => {
    const a = req.attributes;
    const state = a.State ? Buffer.from(a.State as Uint8Array).toString() : "";
    const pass = a["User-Password"];
    const challenge = (message: string, next: string) => ({
      code: "Access-Challenge" as const,
      attributes: [["Reply-Message", message], ["State", Buffer.from(next)]],
    });
    if (state === "" && pass === "1234") return challenge("first factor", "A");
    if (state === "A" && pass === "step2") return challenge("second factor", "B");
    if (state === "B" && pass === "final") return { code: "Access-Accept" };
    return { code: "Access-Reject" };
  });
  try {
    await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "x" }] });
    await setRadiusServer(t.deps, "up", {
      server: "127.0.0.1",
      port: up.port,
      secret: "up-secret",
      timeout: 1,
      retries: 1,
    });
    const init = await jsonOf(
      await t.asAdmin("POST", "/token/init", {
        body: {
          type: "radius",
          "radius.identifier": "up",
          "radius.user": "remote-alice",
          user: "alice",
          realm: "r1",
        },
      }),
    );
    assert.equal(init.status, 200, JSON.stringify(init.body));
    await savePolicy(t.deps, "cr", {
      scope: "authentication",
      action: "challenge_response=radius",
    });
    const first = await validateCheck(t.deps, { ...REQ, pass: "1234" });
    assert.equal(first.detail.message, "first factor");
    const tx1 = first.detail.transaction_id as string;
    const second = await validateCheck(t.deps, { ...REQ, pass: "step2", transactionId: tx1 });
    assert.equal(second.value, false);
    assert.equal(second.detail.message, "second factor");
    const tx2 = second.detail.transaction_id as string;
    assert.ok(tx2 && tx2 !== tx1, JSON.stringify(second.detail));
    const serial = init.body.detail.serial as string;
    assert.equal((await challengesOfTransaction(t.deps, tx1, [serial])).length, 0, "old one gone");
    const third = await validateCheck(t.deps, { ...REQ, pass: "final", transactionId: tx2 });
    assert.equal(third.value, true, JSON.stringify(third.detail));
    assert.equal(Buffer.from(up.seen.at(-1)!.attributes.State as Uint8Array).toString(), "B");
  } finally {
    await up.close();
    await t.close();
  }
});
