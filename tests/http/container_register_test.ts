/**
 * Smartphone container registration and synchronisation over real HTTP
 * (spec 13 §2.7–§2.11, §4) with the app double of `_container_app.ts`:
 * register, synchronise, authenticate with the token the app received;
 * replayed, forged, late and misdirected signatures are refused and change
 * nothing (read back); client unregister and rollover to a new device.
 */
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { jsonOf } from "../test_app.ts";
import { appWithAlice, check, enrolOk } from "./_challenge_types.ts";
import { ContainerApp } from "./_container_app.ts";
import { createUsers } from "../fixtures/users.ts";
import {
  containerInfoValue,
  createContainer,
  getContainer,
} from "../../src/domain/container/mod.ts";
import { done, info, initialize, keyOf, phoneSetup, register } from "./_container_phone.ts";
import { PUSH_CONFIG } from "./_push_app.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { addTokenToContainer } from "../../src/domain/container/mod.ts";
import { challengesOfSerial } from "../../src/domain/challenge/mod.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";

Deno.test("container registration: register, synchronise, and log in with the token the app received", async () => {
  const p = await phoneSetup();
  try {
    const init = await initialize(p, { passphrase_prompt: "", extra_data: { a: "b c" } });
    assert.equal(init.key_algorithm, "secp384r1");
    assert.equal(init.hash_algorithm, "SHA256");
    assert.equal(init.ssl_verify, "True");
    assert.equal(init.ttl, 10);
    assert.equal(init.server_url, `${p.served.url}/`);
    assert.deepEqual(init.offline_tokens, []);
    assert.match(init.nonce, /^[0-9a-f]{40}$/);
    assert.equal(init.container_url.value.split("?")[0], `pia://container/${p.container.serial}`);
    assert.ok(init.container_url.value.endsWith("&send_passphrase=False&a=b%20c"));
    assert.match(init.container_url.img, /^data:image\/svg\+xml;base64,/);
    assert.equal(await info(p, "registration_state"), "client_wait");

    const fin = await p.app.finalize({ brand: "XY", model: "ABC123" });
    assert.equal(fin.status, 200, JSON.stringify(fin.body));
    assert.deepEqual(fin.body.result.value, {
      success: true,
      policies: {
        container_client_rollover: false,
        initially_add_tokens_to_container: false,
        disable_client_token_deletion: false,
        disable_client_container_unregister: false,
      },
    });
    assert.equal(await info(p, "registration_state"), "registered");
    assert.equal(await info(p, "device"), "XY ABC123");
    assert.equal(await info(p, "public_key_client"), p.app.publicKeyPem());

    const keyBefore = await keyOf(p, p.totp);
    const sync = await p.app.synchronize();
    assert.equal(sync.status, 200, JSON.stringify(sync.body));
    const v = sync.body.result.value;
    assert.equal(v.encryption_algorithm, "AES");
    assert.equal(v.encryption_params.mode, "GCM");
    assert.equal(v.server_url, `${p.served.url}/`);
    assert.equal(p.app.lastSync.container.serial, p.container.serial);
    assert.equal(p.app.lastSync.tokens.add.length, 1);
    assert.match(p.app.lastSync.tokens.add[0], /^otpauth:\/\/totp\//);
    assert.deepEqual(p.app.lastSync.tokens.update, []);
    // the token got a new secret, which only the app knows
    assert.notEqual(await keyOf(p, p.totp), keyBefore);
    assert.ok(p.app.tokens.has(p.totp));
    const login = await check(p.t, { user: "alice", pass: `1234${p.app.otp(p.totp)}` });
    assert.equal(login.body.result.value, true, JSON.stringify(login.body));
    assert.ok((await getContainer(p.t.deps, p.container.serial)).lastUpdated !== null);

    // the next synchronisation: the app holds the token, nothing new
    const again = await p.app.synchronize();
    assert.equal(again.status, 200);
    assert.deepEqual(p.app.lastSync.tokens.add, []);
    const count = (await getTokenBySerial(p.t.deps, p.totp)).count;
    assert.deepEqual(p.app.lastSync.tokens.update, [
      { serial: p.totp, tokentype: "totp", offline: false, counter: count },
    ]);
  } finally {
    await done(p);
  }
});

Deno.test("container registration: a replayed finalize is refused and a second initialize says already registered", async () => {
  const p = await phoneSetup();
  try {
    await initialize(p);
    const fin = await p.app.finalize({ brand: "XY" });
    assert.equal(fin.status, 200);
    const replay = await p.app.post(fin.path, fin.form);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.result.error.code, 3002);
    assert.equal(replay.body.result.error.message, "ERR3002: Could not verify signature!");
    const res = await jsonOf(
      await p.t.asAdmin("POST", "/container/register/initialize", {
        body: { container_serial: p.container.serial },
      }),
    );
    assert.equal(res.status, 400);
    assert.equal(res.body.result.error.message, "ERR3000: Container is already registered.");
  } finally {
    await done(p);
  }
});

Deno.test("container registration: a forged finalize changes nothing and leaves the real one possible", async () => {
  const p = await phoneSetup();
  try {
    await initialize(p);
    const other = generateKeyPairSync("ec", { namedCurve: "secp384r1" }).privateKey;
    const cases: [string, Parameters<ContainerApp["finalize"]>[0]][] = [
      ["signed by another key", { signWith: other }],
      ["not base64", { signature: "!!!" }],
      ["raw bytes, not DER", { signature: btoa("x".repeat(96)) }],
      ["not a PEM key", {
        publicKey: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
      }],
    ];
    for (const [name, options] of cases) {
      const res = await p.app.finalize(options);
      assert.equal(res.status, 400, name);
      assert.equal(res.body.result.error.code, 3002, name);
    }
    // device data the signature does not cover
    const signed = await p.app.finalize({ brand: "XY" });
    assert.equal(signed.status, 200);
    assert.equal(await info(p, "device"), "XY");
  } finally {
    await done(p);
  }
});

Deno.test("container registration: forgeries before the real finalize leave nothing behind", async () => {
  const p = await phoneSetup();
  try {
    await initialize(p);
    const other = generateKeyPairSync("ec", { namedCurve: "secp384r1" }).privateKey;
    const res = await p.app.finalize({ brand: "XY", signWith: other });
    assert.equal(res.status, 400);
    assert.equal(await info(p, "public_key_client"), undefined);
    assert.equal(await info(p, "registration_state"), "client_wait");
    assert.equal(await info(p, "device"), undefined);
    assert.equal((await challengesOfSerial(p.t.deps, p.container.serial)).length, 1);
  } finally {
    await done(p);
  }
});

Deno.test("container registration: a finalize after the registration expired is refused", async () => {
  const p = await phoneSetup("container_registration_ttl=1");
  try {
    const init = await initialize(p);
    assert.equal(init.ttl, 1);
    p.t.clock.advance(61_000);
    const res = await p.app.finalize();
    assert.equal(res.status, 400);
    assert.equal(res.body.result.error.code, 3002);
    assert.equal(await info(p, "public_key_client"), undefined);
  } finally {
    await done(p);
  }
});

Deno.test("container registration: the passphrase the admin set must be what the app signs", async () => {
  const p = await phoneSetup();
  try {
    const init = await initialize(p, {
      passphrase_prompt: "Enter your passphrase",
      passphrase_response: "top_secret",
    });
    assert.equal(init.passphrase_prompt, "Enter your passphrase");
    assert.ok(init.container_url.value.includes("&passphrase=Enter%20your%20passphrase&"));
    const wrong = await p.app.finalize({ passphrase: "guess" });
    assert.equal(wrong.status, 400);
    const none = await p.app.finalize();
    assert.equal(none.status, 400);
    assert.equal(await info(p, "public_key_client"), undefined);
    const right = await p.app.finalize({ passphrase: "top_secret" });
    assert.equal(right.status, 200, JSON.stringify(right.body));
    // the passphrase is stored encrypted in the challenge, never in clear
    assert.equal(await info(p, "registration_state"), "registered");
  } finally {
    await done(p);
  }
});

Deno.test("container registration: passphrase_user: the app sends the owner's user store password", async () => {
  const p = await phoneSetup();
  try {
    const init = await initialize(p, { passphrase_user: true });
    assert.equal(init.passphrase_prompt, "Please enter the passphrase of your user store.");
    assert.equal(init.send_passphrase, true);
    assert.equal(p.app.sendPassphrase, "True");
    const wrong = await p.app.finalize({ passphrase: "wrong" });
    assert.equal(wrong.status, 400);
    assert.equal(await info(p, "public_key_client"), undefined);
    const right = await p.app.finalize({ passphrase: "alicepw" });
    assert.equal(right.status, 200, JSON.stringify(right.body));
    const both = await jsonOf(
      await p.t.asAdmin("POST", "/container/register/initialize", {
        body: {
          container_serial: p.container.serial,
          rollover: 1,
          passphrase_user: true,
          passphrase_response: "x",
        },
        json: true,
      }),
    );
    assert.equal(both.status, 400);
    assert.equal(
      both.body.result.error.message,
      "ERR905: passphrase_response and passphrase_user cannot be set at the same time!",
    );
    assert.equal(await info(p, "registration_state"), "registered");
  } finally {
    await done(p);
  }
});

Deno.test("container registration: a synchronisation replayed, late, tampered or for another endpoint changes nothing", async () => {
  const p = await phoneSetup();
  try {
    await register(p);
    const first = await p.app.synchronize();
    assert.equal(first.status, 200);
    const key = await keyOf(p, p.totp);
    const synced = (await getContainer(p.t.deps, p.container.serial)).lastUpdated;
    p.t.clock.advance(1000);

    // replay of the whole request
    const replay = await p.app.post(first.path, first.form);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.result.error.code, 3002);

    // a man in the middle swaps the encryption key or the token list
    const other = generateKeyPairSync("x25519").publicKey.export({ format: "jwk" }).x as string;
    const swapped = await p.app.synchronize({
      tamper: (f) => {
        f.public_enc_key_client = `${other.replaceAll("-", "+").replaceAll("_", "/")}=`;
      },
    });
    assert.equal(swapped.status, 400);
    assert.equal(swapped.body.result.error.code, 3002);
    const listed = await p.app.synchronize({
      tamper: (f) => {
        f.container_dict_client = JSON.stringify({ serial: p.container.serial, tokens: [] });
      },
    });
    assert.equal(listed.status, 400);
    assert.equal(listed.body.result.error.code, 3002);

    // a signature by another key
    const foreign = await p.app.synchronize({
      signWith: generateKeyPairSync("ec", { namedCurve: "secp384r1" }).privateKey,
    });
    assert.equal(foreign.status, 400);

    // a challenge for another endpoint
    const ch = await p.app.challenge("container/register/terminate/client");
    const { nonce, time_stamp: ts } = ch.body.result.value;
    const text = `${nonce}|${ts}|${p.container.serial}|${
      p.app.endpoint("container/synchronize")
    }|${first.form.public_enc_key_client}|${first.form.container_dict_client}`;
    const misdirected = await p.app.post("container/synchronize", {
      ...first.form,
      signature: p.app.signText(text),
    });
    assert.equal(misdirected.status, 400);

    // a challenge that expired (challenge_ttl 2 minutes)
    const late = await p.app.challenge("container/synchronize");
    const lv = late.body.result.value;
    p.t.clock.advance(121_000);
    const lateText = `${lv.nonce}|${lv.time_stamp}|${p.container.serial}|${
      p.app.endpoint("container/synchronize")
    }|${first.form.public_enc_key_client}|${first.form.container_dict_client}`;
    const tooLate = await p.app.post("container/synchronize", {
      ...first.form,
      signature: p.app.signText(lateText),
    });
    assert.equal(tooLate.status, 400);
    assert.equal(tooLate.body.result.error.code, 3002);

    // nothing changed: same secret, same last synchronisation
    assert.equal(await keyOf(p, p.totp), key);
    assert.equal((await getContainer(p.t.deps, p.container.serial)).lastUpdated, synced);
    const login = await check(p.t, { user: "alice", pass: `1234${p.app.otp(p.totp)}` });
    assert.equal(login.body.result.value, true);
  } finally {
    await done(p);
  }
});

Deno.test("container registration: two parallel requests with one signature: only one is answered", async () => {
  const p = await phoneSetup();
  try {
    await initialize(p);
    const form = {
      container_serial: p.container.serial,
      public_client_key: p.app.publicKeyPem(),
      signature: p.app.signText(
        `${p.app.nonce}|${p.app.time}|${p.container.serial}|${
          p.app.endpoint("container/register/finalize")
        }`,
      ),
    };
    const results = await Promise.all([
      p.app.post("container/register/finalize", form),
      p.app.post("container/register/finalize", form),
      p.app.post("container/register/finalize", form),
    ]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 400, 400]);
  } finally {
    await done(p);
  }
});

Deno.test("container registration: bad synchronisation input is a clear error that keeps the challenge", async () => {
  const p = await phoneSetup();
  try {
    await register(p);
    const cases: [string, (f: Record<string, string>) => void, number, string][] = [
      ["no signature", (f) => delete f.signature, 905, "ERR905: Missing parameter: 'signature'"],
      ["no encryption key", (f) => delete f.public_enc_key_client, 905, ""],
      ["a short encryption key", (f) => f.public_enc_key_client = "AAAA", 905, ""],
      ["container dict not JSON", (f) => f.container_dict_client = "{", 905, ""],
      ["tokens not a list", (f) => f.container_dict_client = '{"tokens": 1}', 905, ""],
    ];
    for (const [name, change, code, message] of cases) {
      const res = await p.app.synchronize({ tamper: change });
      assert.equal(res.status, 400, name);
      assert.equal(res.body.result.error.code, code, name);
      if (message) assert.equal(res.body.result.error.message, message);
    }
    // each refused request left its challenge unused: they are all still there
    assert.equal((await challengesOfSerial(p.t.deps, p.container.serial)).length, cases.length);
    const sync = await p.app.synchronize();
    assert.equal(sync.status, 200);
  } finally {
    await done(p);
  }
});

Deno.test("container registration: unknown, unregistered and generic containers", async () => {
  const p = await phoneSetup();
  try {
    p.app.serverUrl = `${p.served.url}/`;
    const unknown = await p.app.post("container/challenge", {
      container_serial: "SMPH9999",
      scope: "x",
    });
    assert.equal(unknown.status, 404);
    assert.equal(
      unknown.body.result.error.message,
      "Unable to find container with serial SMPH9999.",
    );
    p.app.serial = p.container.serial;
    const notYet = await p.app.challenge("container/synchronize");
    assert.equal(notYet.status, 400);
    assert.equal(notYet.body.result.error.message, "ERR3001: Container is not registered.");
    const missing = await p.app.post("container/challenge", {
      container_serial: p.container.serial,
    });
    assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: 'scope'");
    const sync = await p.app.post("container/synchronize", {
      container_serial: p.container.serial,
      signature: "AAAA",
      public_enc_key_client: "AAAA",
    });
    assert.equal(sync.status, 400);
    assert.equal(sync.body.result.error.code, 3001);
    const generic = await createContainer(p.t.deps, { type: "generic" });
    const g = await jsonOf(
      await p.t.asAdmin("POST", "/container/register/initialize", {
        body: { container_serial: generic.serial },
      }),
    );
    assert.equal(g.status, 501);
    assert.equal(
      g.body.result.error.message,
      "Registration is not implemented for this container type.",
    );
  } finally {
    await done(p);
  }
});

Deno.test("container registration: without privacyIDEA_server_url there is no registration", async () => {
  const t = await appWithAlice();
  try {
    const c = await createContainer(t.deps, { type: "smartphone" });
    const res = await jsonOf(
      await t.asAdmin("POST", "/container/register/initialize", {
        body: { container_serial: c.serial },
      }),
    );
    assert.equal(res.status, 403);
    assert.equal(
      res.body.result.error.message,
      "Missing enrollment policy privacyIDEA_server_url. Cannot register container.",
    );
    const after = await getContainer(t.deps, c.serial);
    assert.equal(containerInfoValue(after, "registration_state"), undefined);
    assert.equal((await challengesOfSerial(t.deps, c.serial)).length, 0);
  } finally {
    await t.close();
  }
});

Deno.test("container registration: the app unregisters; afterwards it can neither synchronise nor ask for challenges", async () => {
  const p = await phoneSetup();
  try {
    await register(p);
    const res = await p.app.terminate();
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.result.value, { success: true });
    for (const key of ["public_key_client", "registration_state", "server_url", "device"]) {
      assert.equal(await info(p, key), undefined, key);
    }
    // the tokens stay in the container
    assert.deepEqual(
      (await getContainer(p.t.deps, p.container.serial)).tokens.map((x) => x.serial),
      [
        p.totp,
      ],
    );
    const sync = await p.app.synchronize();
    assert.equal(sync.status, 400);
    assert.equal(sync.body.result.error.code, 3001);
  } finally {
    await done(p);
  }
});

Deno.test("container registration: disable_client_container_unregister keeps the registration", async () => {
  const p = await phoneSetup("disable_client_container_unregister");
  try {
    await register(p);
    assert.equal(p.app.policies.disable_client_container_unregister, true);
    const res = await p.app.terminate();
    assert.equal(res.status, 403);
    assert.equal(
      res.body.result.error.message,
      "The action is not allowed! Policy disable_client_container_unregister is set.",
    );
    assert.equal(await info(p, "registration_state"), "registered");
    assert.equal((await p.app.synchronize()).status, 200);
  } finally {
    await done(p);
  }
});

Deno.test("container registration: an admin unregisters; the app's signature no longer counts", async () => {
  const p = await phoneSetup();
  try {
    await register(p);
    const res = await jsonOf(
      await p.t.asAdmin("POST", `/container/register/${p.container.serial}/terminate`),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.result.value, { success: true });
    assert.equal(await info(p, "public_key_client"), undefined);
    assert.equal((await p.app.synchronize()).status, 400);
    // a new registration is possible
    const app2 = new ContainerApp(() => p.t.clock.now());
    await initialize(p, {}, app2);
    assert.equal((await app2.finalize()).status, 200);
  } finally {
    await done(p);
  }
});

Deno.test("container registration: the old device moves the container to a new one, whose first sync gets every token anew", async () => {
  const p = await phoneSetup("container_client_rollover");
  try {
    await register(p);
    assert.equal((await p.app.synchronize()).status, 200);
    const oldKey = await keyOf(p, p.totp);
    const roll = await p.app.rollover(`${p.served.url}/`, { brand: "XY" });
    assert.equal(roll.status, 200, JSON.stringify(roll.body));
    assert.equal(await info(p, "registration_state"), "rollover");
    // until the new device finalizes, the old one keeps working
    assert.equal(await info(p, "public_key_client"), p.app.publicKeyPem());

    const phone2 = new ContainerApp(() => p.t.clock.now());
    phone2.scan(roll.body.result.value.container_url.value);
    const fin = await phone2.finalize({ brand: "New" });
    assert.equal(fin.status, 200, JSON.stringify(fin.body));
    assert.equal(await info(p, "registration_state"), "rollover_completed");
    assert.equal(await info(p, "public_key_client"), phone2.publicKeyPem());
    assert.notEqual(await keyOf(p, p.totp), oldKey);

    // the old device is out
    assert.equal((await p.app.synchronize()).status, 400);
    // the new one holds nothing yet and gets every token
    const sync = await phone2.synchronize();
    assert.equal(sync.status, 200, JSON.stringify(sync.body));
    assert.equal(phone2.lastSync.tokens.add.length, 1);
    assert.equal(await info(p, "registration_state"), "registered");
    p.t.clock.advance(30_000);
    const login = await check(p.t, { user: "alice", pass: `1234${phone2.otp(p.totp)}` });
    assert.equal(login.body.result.value, true);
  } finally {
    await done(p);
  }
});

Deno.test("container registration: a client rollover without container_client_rollover is refused", async () => {
  const p = await phoneSetup();
  try {
    await register(p);
    const res = await p.app.rollover(`${p.served.url}/`);
    assert.equal(res.status, 403);
    assert.equal(
      res.body.result.error.message,
      "Container actions are defined, but the action container_client_rollover is not allowed!",
    );
    assert.equal(await info(p, "registration_state"), "registered");
  } finally {
    await done(p);
  }
});

Deno.test("container registration: initially_add_tokens_to_container takes only the owner's own tokens", async () => {
  const p = await phoneSetup("initially_add_tokens_to_container");
  try {
    await createUsers(p.t.deps, { realm: "realm2", users: [{ login: "bob", password: "bobpw" }] });
    const own = (await enrolOk(p.t, { type: "hotp", genkey: 1, user: "alice", realm: "realm1" }))
      .detail.serial as string;
    const bobs = (await enrolOk(p.t, { type: "hotp", genkey: 1, user: "bob", realm: "realm2" }))
      .detail.serial as string;
    await register(p);
    assert.equal(await info(p, "initially_synchronized"), "False");
    const dict = JSON.stringify({
      serial: p.container.serial,
      type: "smartphone",
      tokens: [{ serial: own, tokentype: "HOTP" }, { serial: bobs, tokentype: "HOTP" }, {
        serial: "NOSUCH",
      }],
    });
    const sync = await p.app.synchronize({ containerDict: dict });
    assert.equal(sync.status, 200, JSON.stringify(sync.body));
    assert.equal(await info(p, "initially_synchronized"), "True");
    const serials = (await getContainer(p.t.deps, p.container.serial)).tokens.map((x) => x.serial);
    assert.ok(serials.includes(own));
    assert.ok(!serials.includes(bobs), "bob's token must not be taken");
    assert.deepEqual(p.app.lastSync.tokens.update.map((u: { serial: string }) => u.serial), [own]);
  } finally {
    await done(p);
  }
});

Deno.test("container registration: a push token in the container reaches the app, which registers it and confirms a login", async () => {
  const p = await phoneSetup("", true, PUSH_CONFIG);
  try {
    await savePolicy(p.t.deps, "push_enrol", {
      scope: "enrollment",
      action:
        `push_firebase_configuration=poll only, push_registration_url=${p.served.url}/ttype/push`,
    });
    const push = (await enrolOk(p.t, {
      type: "push",
      genkey: 1,
      user: "alice",
      realm: "realm1",
      pin: "5678",
    })).detail.serial as string;
    await addTokenToContainer(p.t.deps, p.container, await getTokenBySerial(p.t.deps, push));
    await register(p);
    const sync = await p.app.synchronize();
    assert.equal(sync.status, 200, JSON.stringify(sync.body));
    assert.equal(p.app.lastSync.tokens.add.length, 2);
    const phone = p.app.tokens.get(push)?.push;
    assert.ok(phone, "the app enrolled the push token");
    assert.equal((await getTokenBySerial(p.t.deps, push)).rolloutState, "enrolled");
    const start = await check(p.t, { user: "alice", pass: "5678" });
    const tid = start.body.detail.transaction_id;
    assert.ok(tid, JSON.stringify(start.body));
    const poll = await phone.poll();
    assert.equal(poll.status, 200);
    const [challenge] = poll.body.result.value;
    assert.ok(phone.isServerSigned(challenge));
    assert.equal((await phone.answer(challenge)).body.result.value, true);
    const done2 = await check(p.t, { user: "alice", transaction_id: tid, pass: "" });
    assert.equal(done2.body.result.value, true, JSON.stringify(done2.body));
  } finally {
    await done(p);
  }
});

Deno.test("container registration: challenges asked without a login stay bounded and never push out a registration", async () => {
  const p = await phoneSetup("container_client_rollover");
  try {
    await register(p);
    const roll = await p.app.rollover(`${p.served.url}/`);
    assert.equal(roll.status, 200);
    for (let i = 0; i < 25; i++) {
      assert.equal((await p.app.challenge("container/synchronize")).status, 200);
    }
    const open = await challengesOfSerial(p.t.deps, p.container.serial);
    assert.equal(open.length, 21);
    // the new device's registration challenge survived the flood
    const phone2 = new ContainerApp(() => p.t.clock.now());
    phone2.scan(roll.body.result.value.container_url.value);
    assert.equal((await phone2.finalize()).status, 200);
  } finally {
    await done(p);
  }
});
