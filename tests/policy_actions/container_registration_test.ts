/**
 * The container-scope policy actions of smartphone registration and synchronisation
 * (spec 13 §2.13): each against its baseline, with the Authenticator app double over real
 * HTTP.
 */
import assert from "node:assert/strict";
import { jsonOf } from "../test_app.ts";
import { enrolOk } from "../http/_challenge_types.ts";
import {
  done,
  info,
  initialize,
  type Phone,
  phoneSetup,
  register,
} from "../http/_container_phone.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { getContainer } from "../../src/domain/container/mod.ts";
import { actionTest } from "./_registry.ts";

async function initRaw(p: Phone) {
  return await jsonOf(
    await p.t.asAdmin("POST", "/container/register/initialize", {
      body: { container_serial: p.container.serial },
      json: true,
    }),
  );
}

/** Adds container-scope actions in a second policy (the first holds the server URL). */
async function containerPolicy(p: Phone, action: string): Promise<void> {
  await savePolicy(p.t.deps, "phone2", { scope: "container", action });
}

actionTest(
  "container",
  "privacyIDEA_server_url",
  "a registration needs it; its value is the QR code's url and the app's base URL",
  async () => {
    const p = await phoneSetup("container_registration_ttl=5", false);
    try {
      const refused = await initRaw(p);
      assert.equal(refused.status, 403);
      assert.equal(
        refused.body.result.error.message,
        "Missing enrollment policy privacyIDEA_server_url. Cannot register container.",
      );
      assert.equal(await info(p, "registration_state"), undefined);
      await containerPolicy(p, `privacyIDEA_server_url=${p.served.url}/`);
      const init = await initialize(p);
      assert.equal(init.server_url, `${p.served.url}/`);
      assert.ok(init.container_url.value.includes(`&url=${p.served.url.replaceAll(":", "%3A")}/&`));
      assert.equal(await info(p, "server_url"), `${p.served.url}/`);
      assert.equal((await p.app.finalize()).status, 200);
    } finally {
      await done(p);
    }
  },
);

actionTest(
  "container",
  "container_registration_ttl",
  "the registration QR code is valid that many minutes (default 10)",
  async () => {
    const p = await phoneSetup();
    try {
      const base = await initialize(p);
      assert.equal(base.ttl, 10);
      assert.ok(base.container_url.value.includes("&ttl=10&"));
      p.t.clock.advance(3 * 60_000);
      // 3 minutes are within the default
      assert.equal((await p.app.finalize()).status, 200);

      const q = await phoneSetup("container_registration_ttl=2");
      try {
        const init = await initialize(q);
        assert.equal(init.ttl, 2);
        assert.ok(init.container_url.value.includes("&ttl=2&"));
        q.t.clock.advance(3 * 60_000);
        const late = await q.app.finalize();
        assert.equal(late.status, 400);
        assert.equal(late.body.result.error.code, 3002);
        assert.equal(await info(q, "public_key_client"), undefined);
      } finally {
        await done(q);
      }
    } finally {
      await done(p);
    }
  },
);

actionTest(
  "container",
  "container_challenge_ttl",
  "the app's challenges are valid that many minutes (default 2)",
  async () => {
    for (const [actions, isValid] of [["", false], ["container_challenge_ttl=5", true]] as const) {
      const p = await phoneSetup(actions);
      try {
        await register(p);
        assert.equal(await info(p, "challenge_ttl"), isValid ? "5" : "2");
        const ch = await p.app.challenge("container/register/terminate/client");
        p.t.clock.advance(3 * 60_000);
        const { nonce, time_stamp: ts } = ch.body.result.value;
        const res = await p.app.post("container/register/terminate/client", {
          container_serial: p.container.serial,
          signature: p.app.signText(
            `${nonce}|${ts}|${p.container.serial}|${
              p.app.endpoint("container/register/terminate/client")
            }`,
          ),
        });
        assert.equal(res.status, isValid ? 200 : 400, actions);
        assert.equal(await info(p, "registration_state"), isValid ? undefined : "registered");
      } finally {
        await done(p);
      }
    }
  },
);

actionTest(
  "container",
  "container_ssl_verify",
  "the QR code tells the app whether to verify the server certificate (default True)",
  async () => {
    const p = await phoneSetup();
    try {
      const base = await initialize(p);
      assert.equal(base.ssl_verify, "True");
      assert.ok(base.container_url.value.includes("&ssl_verify=True&"));
      await containerPolicy(p, "container_ssl_verify=False");
      const off = await initialize(p);
      assert.equal(off.ssl_verify, "False");
      assert.ok(off.container_url.value.includes("&ssl_verify=False&"));
      assert.equal(p.app.sslVerify, "False");
    } finally {
      await done(p);
    }
  },
);

actionTest(
  "container",
  "container_client_rollover",
  "the registered app may move the container to a new device; reported to the app",
  async () => {
    const p = await phoneSetup();
    try {
      await register(p);
      assert.equal(p.app.policies.container_client_rollover, false);
      const refused = await p.app.rollover(`${p.served.url}/`);
      assert.equal(refused.status, 403);
      assert.equal(
        refused.body.result.error.message,
        "Container actions are defined, but the action container_client_rollover is not allowed!",
      );
      assert.equal(await info(p, "registration_state"), "registered");
      await containerPolicy(p, "container_client_rollover");
      const roll = await p.app.rollover(`${p.served.url}/`);
      assert.equal(roll.status, 200, JSON.stringify(roll.body));
      assert.equal(await info(p, "registration_state"), "rollover");
      assert.match(roll.body.result.value.container_url.value, /^pia:\/\/container\//);
    } finally {
      await done(p);
    }
  },
);

actionTest(
  "container",
  "initially_add_tokens_to_container",
  "the first synchronisation takes the owner's tokens the app already holds into the container",
  async () => {
    for (const isOn of [false, true]) {
      const p = await phoneSetup(isOn ? "initially_add_tokens_to_container" : "");
      try {
        const own = (await enrolOk(p.t, {
          type: "hotp",
          genkey: 1,
          user: "alice",
          realm: "realm1",
        })).detail.serial as string;
        await register(p);
        assert.equal(p.app.policies.initially_add_tokens_to_container, isOn);
        const dict = JSON.stringify({
          serial: p.container.serial,
          type: "smartphone",
          tokens: [{ serial: own, tokentype: "HOTP" }],
        });
        assert.equal((await p.app.synchronize({ containerDict: dict })).status, 200);
        const serials = (await getContainer(p.t.deps, p.container.serial)).tokens.map((x) =>
          x.serial
        );
        assert.equal(serials.includes(own), isOn);
      } finally {
        await done(p);
      }
    }
  },
);

actionTest(
  "container",
  "disable_client_token_deletion",
  "reported to the app in the policies of finalize and synchronize",
  async () => {
    for (const isOn of [false, true]) {
      const p = await phoneSetup(isOn ? "disable_client_token_deletion" : "");
      try {
        await register(p);
        assert.equal(p.app.policies.disable_client_token_deletion, isOn);
        assert.equal((await p.app.synchronize()).status, 200);
        assert.equal(p.app.policies.disable_client_token_deletion, isOn);
      } finally {
        await done(p);
      }
    }
  },
);

actionTest(
  "container",
  "disable_client_container_unregister",
  "the app cannot unregister the container",
  async () => {
    for (const isOn of [false, true]) {
      const p = await phoneSetup(isOn ? "disable_client_container_unregister" : "");
      try {
        await register(p);
        const res = await p.app.terminate();
        assert.equal(res.status, isOn ? 403 : 200);
        if (isOn) {
          assert.equal(
            res.body.result.error.message,
            "The action is not allowed! Policy disable_client_container_unregister is set.",
          );
        }
        assert.equal(await info(p, "registration_state"), isOn ? "registered" : undefined);
      } finally {
        await done(p);
      }
    }
  },
);

actionTest(
  "container",
  "hide_specific_error_message",
  "the app's endpoints answer failures with a generic message under the same status",
  async () => {
    const p = await phoneSetup();
    try {
      await register(p);
      const forged = { container_serial: p.container.serial, signature: "AAAA" };
      const base = await p.app.post("container/register/terminate/client", forged);
      assert.equal(base.status, 400);
      assert.equal(base.body.result.error.message, "ERR3002: Could not verify signature!");
      await containerPolicy(p, "hide_specific_error_message");
      const hidden = await p.app.post("container/register/terminate/client", forged);
      assert.equal(hidden.status, 400);
      assert.equal(hidden.body.result.error.code, 3000);
      assert.equal(
        hidden.body.result.error.message,
        "Failed terminating container registration",
      );
      const sync = await p.app.post("container/synchronize", {
        ...forged,
        public_enc_key_client: "AAAA",
      });
      assert.equal(sync.body.result.error.message, "Failed container synchronization");
      assert.equal(await info(p, "registration_state"), "registered");
    } finally {
      await done(p);
    }
  },
);

/** `POST /container/register/initialize` (optionally `rollover`) with `token` (a user JWT). */
async function initAs(p: Phone, options: { token?: string; rollover?: boolean } = {}) {
  const body = {
    container_serial: p.container.serial,
    ...(options.rollover ? { rollover: 1 } : {}),
  };
  const res = options.token === undefined
    ? await p.t.asAdmin("POST", "/container/register/initialize", { body })
    : await p.t.request("POST", "/container/register/initialize", { body, token: options.token });
  return await jsonOf(res);
}

async function terminateAs(p: Phone, token?: string) {
  const path = `/container/register/${p.container.serial}/terminate`;
  return await jsonOf(
    token === undefined
      ? await p.t.asAdmin("POST", path)
      : await p.t.request("POST", path, { token }),
  );
}

async function aliceJwt(p: Phone): Promise<string> {
  const res = await jsonOf(await p.t.post("/auth", { username: "alice", password: "alicepw" }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.token;
}

for (const scope of ["admin", "user"] as const) {
  actionTest(
    scope,
    ["container_register", "container_rollover", "container_unregister"],
    "with policies of the scope, starting a registration, a rollover and unregistering each need their action",
    async () => {
      const p = await phoneSetup("container_client_rollover");
      try {
        const token = scope === "user" ? await aliceJwt(p) : undefined;
        // another action of the scope: policies are defined, these three are not granted
        await savePolicy(p.t.deps, "rights", { scope, action: "container_list" });
        const denied = (action: string) =>
          `${
            scope === "admin" ? "Admin" : "User"
          } actions are defined, but the action ${action} is not allowed!`;
        const refused = await initAs(p, { token });
        assert.equal(refused.status, 403);
        assert.equal(refused.body.result.error.message, denied("container_register"));
        assert.equal(await info(p, "registration_state"), undefined);

        await savePolicy(p.t.deps, "rights", {
          scope,
          action: "container_list, container_register",
        });
        const init = await initAs(p, { token });
        assert.equal(init.status, 200, JSON.stringify(init.body));
        p.app.scan(init.body.result.value.container_url.value);
        assert.equal((await p.app.finalize()).status, 200);

        const noRoll = await initAs(p, { token, rollover: true });
        assert.equal(noRoll.status, 403);
        assert.equal(noRoll.body.result.error.message, denied("container_rollover"));
        const noTerm = await terminateAs(p, token);
        assert.equal(noTerm.status, 403);
        assert.equal(noTerm.body.result.error.message, denied("container_unregister"));
        assert.equal(await info(p, "registration_state"), "registered");

        await savePolicy(p.t.deps, "rights", {
          scope,
          action: "container_list, container_register, container_rollover, container_unregister",
        });
        const roll = await initAs(p, { token, rollover: true });
        assert.equal(roll.status, 200, JSON.stringify(roll.body));
        assert.equal(await info(p, "registration_state"), "rollover");
        const term = await terminateAs(p, token);
        assert.equal(term.status, 200);
        assert.equal(await info(p, "registration_state"), undefined);
      } finally {
        await done(p);
      }
    },
  );
}
