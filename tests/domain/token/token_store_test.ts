import assert from "node:assert/strict";
import { createTestApp } from "../../test_app.ts";
import * as store from "../../../src/domain/token/token_store.ts";
import { tokenSecret } from "../../../src/domain/token/mod.ts";
import type { Token } from "../../../src/domain/token/model.ts";
import { encryptSecret } from "../../../src/lib/crypto.ts";

Deno.test("findByOwnerWithInfo: one statement returns what findByOwner + withInfo return", async () => {
  const t = await createTestApp();
  try {
    const db = t.deps.db;
    const owner = { realm: "r1", login: "ann", uid: "7", resolver: "res" };
    const row = (serial: string, o = owner) => ({
      serial,
      tokentype: "hotp",
      user_id: o.uid,
      user_login: o.login,
      user_realm: o.realm,
      resolver: o.resolver,
      created_at: 1,
    });
    const a = await store.insertToken(db, row("B-2") as never);
    const b = await store.insertToken(db, row("A-1") as never);
    await store.insertToken(db, row("C-3", { ...owner, uid: "8" }) as never);
    await store.setInfo(db, a, {
      hashlib: { value: "sha256", type: "" },
      note: { value: 'quote " and ümlaut, [json]', type: "" },
      secret: { value: "g1:00:11", type: "password" },
    });
    const expected = await store.withInfo(db, await store.findByOwner(db, owner), false);
    const got = await store.findByOwnerWithInfo(db, owner);
    assert.deepEqual(got, expected);
    assert.deepEqual(got.map((x) => x.serial), ["A-1", "B-2"]);
    assert.deepEqual(got[0].info, {}, "a token without info");
    assert.equal(got[1].info.note.value, 'quote " and ümlaut, [json]');
    assert.equal(got[1].info.secret.type, "password");
    assert.equal(got[0].id, b);
    // matched by login when the uid is unknown, by uid and resolver when both are known
    assert.equal((await store.findByOwnerWithInfo(db, { realm: "r1", login: "ann" })).length, 3);
    assert.equal(
      (await store.findByOwnerWithInfo(db, { ...owner, resolver: "other" })).length,
      0,
    );
  } finally {
    await t.close();
  }
});

Deno.test("tokenSecret: a re-encrypted (new) secret is used at once; a tampered one still fails", async () => {
  const t = await createTestApp();
  try {
    const key = t.deps.keys.token;
    const enc = (s: string) => encryptSecret(key, new TextEncoder().encode(s), t.deps.random);
    const token = (keyEnc: string) => ({ keyEnc }) as Token;
    const first = enc("first secret");
    assert.equal(new TextDecoder().decode(tokenSecret(t.deps, token(first))), "first secret");
    assert.equal(new TextDecoder().decode(tokenSecret(t.deps, token(first))), "first secret");
    assert.equal(
      new TextDecoder().decode(tokenSecret(t.deps, token(enc("second secret")))),
      "second secret",
    );
    const tampered = first.slice(0, -2) + (first.endsWith("00") ? "11" : "00");
    assert.throws(() => tokenSecret(t.deps, token(tampered)));
    assert.equal(tokenSecret(t.deps, token("")).length, 0);
  } finally {
    await t.close();
  }
});
