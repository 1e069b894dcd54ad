/**
 * The native RADIUS listener driven by FreeRADIUS' `radclient` (a peer nobody
 * here wrote) and by raw packets built with the npm `radius` package.
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { Buffer } from "node:buffer";
import Radius from "radius";
import { createTestApp, type TestApp } from "../test_app.ts";
import {
  type RadiusCheck,
  type RadiusCheckRequest,
  type RadiusListener,
  startRadiusListener,
} from "../../src/radius_listener/listener.ts";
import { HAS_RADCLIENT, radclient } from "./radclient.ts";
import { setSystemConfig } from "../../src/domain/system_config/mod.ts";

// deno-lint-ignore no-explicit-any
const lib = Radius as any;
const SECRET = "nas-secret";

/** A stand-in for validateCheck: alice/123456 accepts, bob gets a challenge. */
function fakeCheck(calls: RadiusCheckRequest[]): RadiusCheck {
  return (_deps, req) => {
    calls.push(req);
    if (req.user === "alice" && req.pass === "123456") {
      return Promise.resolve({
        value: true,
        detail: { message: "matching 1 tokens", serial: "S1" },
      });
    }
    if (req.user === "bob" && req.pass === "pin" && !req.transactionId) {
      return Promise.resolve({
        value: false,
        detail: { message: "please enter otp: ", transaction_id: "08282050332785263453" },
      });
    }
    if (
      req.user === "bob" && req.transactionId === "08282050332785263453" && req.pass === "654321"
    ) {
      return Promise.resolve({ value: true, detail: { message: "Found matching challenge" } });
    }
    return Promise.resolve({ value: false, detail: { message: "wrong otp pin" } });
  };
}

async function setup(
  clients = [{ address: "127.0.0.1", secret: SECRET, name: "loopback" }],
): Promise<{ t: TestApp; listener: RadiusListener; calls: RadiusCheckRequest[] }> {
  const t = await createTestApp();
  const calls: RadiusCheckRequest[] = [];
  const listener = await startRadiusListener(t.deps, {
    host: "127.0.0.1",
    port: 0,
    clients,
    check: fakeCheck(calls),
  });
  return { t, listener, calls };
}

Deno.test({
  name: "radclient: Access-Accept for a correct PAP password, with Message-Authenticator",
  ignore: !HAS_RADCLIENT,
  async fn() {
    const { t, listener, calls } = await setup();
    try {
      const r = await radclient(
        listener.port,
        SECRET,
        'User-Name = "alice", User-Password = "123456", NAS-IP-Address = 10.1.2.3, ' +
          "Message-Authenticator = 0x00",
      );
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /Received Access-Accept/);
      assert.match(r.out, /Reply-Message = "privacyIDEA access granted"/);
      assert.match(r.out, /Message-Authenticator = 0x/);
      assert.equal(calls.length, 1);
      // onTokens: how the validate path tells the listener the tokens it checks (audit)
      const { onTokens, ...request } = calls[0];
      assert.equal(typeof onTokens, "function");
      assert.deepEqual(request, {
        user: "alice",
        pass: "123456",
        transactionId: undefined,
        clientIp: "127.0.0.1",
        userAgent: "FreeRADIUS",
      });
      await t.deps.audit.flush();
      const rows = await t.deps.db.selectFrom("audit").selectAll()
        .where("action", "=", "RADIUS Access-Request").execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0].user, "alice");
      assert.equal(rows[0].success, 1);
      assert.equal(rows[0].serial, "S1");
      assert.equal(rows[0].client, "127.0.0.1", "NAS-IP-Address ignored by default");
      assert.match(rows[0].request_id, /^[0-9a-f-]{36}$/, "a RADIUS request has an id too");
    } finally {
      await listener.close();
      await t.close();
    }
  },
});

Deno.test({
  name: "radclient: NAS-IP-Address is the client only for NAS in OverrideAuthorizationClient",
  ignore: !HAS_RADCLIENT,
  async fn() {
    const { t, listener, calls } = await setup();
    try {
      await setSystemConfig(t.deps, { OverrideAuthorizationClient: "10.9.9.9, 127.0.0.0/8" });
      const r = await radclient(
        listener.port,
        SECRET,
        'User-Name = "alice", User-Password = "123456", NAS-IP-Address = 10.1.2.3',
      );
      assert.match(r.out, /Received Access-Accept/, r.out);
      assert.equal(calls[0].clientIp, "10.1.2.3");
    } finally {
      await listener.close();
      await t.close();
    }
  },
});

Deno.test({
  name: "radclient: long UTF-8 passwords (several 16-byte blocks) arrive intact",
  ignore: !HAS_RADCLIENT,
  async fn() {
    const { t, listener, calls } = await setup();
    try {
      const password = "pässwörd-" + "0123456789".repeat(5) + "-€";
      await radclient(
        listener.port,
        SECRET,
        `User-Name = "nönäscii", User-Password = "${password}"`,
      );
      assert.equal(calls.length, 1);
      assert.equal(calls[0].user, "nönäscii");
      assert.equal(calls[0].pass, password);
    } finally {
      await listener.close();
      await t.close();
    }
  },
});

Deno.test({
  name: "radclient: Access-Reject with a uniform message; the reason goes to the audit",
  ignore: !HAS_RADCLIENT,
  async fn() {
    const { t, listener } = await setup();
    try {
      const r = await radclient(
        listener.port,
        SECRET,
        'User-Name = "alice", User-Password = "000000"',
      );
      assert.match(r.out, /Received Access-Reject/, r.out);
      assert.match(r.out, /Reply-Message = "privacyIDEA server denied access!"/);
      await t.deps.audit.flush();
      const row = await t.deps.db.selectFrom("audit").selectAll().executeTakeFirstOrThrow();
      assert.equal(row.success, 0);
      assert.equal(row.info, "wrong otp pin");
    } finally {
      await listener.close();
      await t.close();
    }
  },
});

Deno.test({
  name: "radclient: Access-Challenge with State, then the answer with that State is accepted",
  ignore: !HAS_RADCLIENT,
  async fn() {
    const { t, listener, calls } = await setup();
    try {
      const first = await radclient(
        listener.port,
        SECRET,
        'User-Name = "bob", User-Password = "pin"',
      );
      assert.match(first.out, /Received Access-Challenge/, first.out);
      assert.match(first.out, /Reply-Message = "please enter otp: "/);
      const state = first.out.match(/State = (0x[0-9a-f]+)/)?.[1];
      assert.ok(state, first.out);
      assert.equal(
        new TextDecoder().decode(Buffer.from(state.slice(2), "hex")),
        "08282050332785263453",
      );
      const second = await radclient(
        listener.port,
        SECRET,
        `User-Name = "bob", User-Password = "654321", State = ${state}`,
      );
      assert.match(second.out, /Received Access-Accept/, second.out);
      assert.equal(calls[1].transactionId, "08282050332785263453");
    } finally {
      await listener.close();
      await t.close();
    }
  },
});

Deno.test({
  name: "radclient: a wrong shared secret gets no answer at all",
  ignore: !HAS_RADCLIENT,
  async fn() {
    const { t, listener, calls } = await setup();
    try {
      const r = await radclient(
        listener.port,
        "not-the-secret",
        'User-Name = "alice", User-Password = "123456", Message-Authenticator = 0x00',
      );
      assert.notEqual(r.code, 0);
      assert.doesNotMatch(r.out, /Received Access-/);
      assert.match(r.out, /No reply/i);
      assert.equal(calls.length, 0);
      assert.ok(listener.dropped() >= 1);
    } finally {
      await listener.close();
      await t.close();
    }
  },
});

Deno.test({
  name: "radclient status: Status-Server is answered without a validate call",
  ignore: !HAS_RADCLIENT,
  async fn() {
    const { t, listener, calls } = await setup();
    try {
      const { out } = await radclient(
        listener.port,
        SECRET,
        "Message-Authenticator = 0x00",
        { command: "status" },
      );
      assert.match(out, /Received Access-Accept/, out);
      assert.equal(calls.length, 0);
      const wrong = await radclient(
        listener.port,
        "wrong",
        "Message-Authenticator = 0x00",
        { command: "status" },
      );
      assert.doesNotMatch(wrong.out, /Received/);
    } finally {
      await listener.close();
      await t.close();
    }
  },
});

/** Sends raw datagrams and collects replies for `ms` milliseconds. */
async function exchange(
  port: number,
  packets: Uint8Array[],
  ms = 300,
  gapMs = 0,
): Promise<Buffer[]> {
  const socket = dgram.createSocket("udp4");
  const replies: Buffer[] = [];
  socket.on("message", (m: Buffer) => replies.push(m));
  await new Promise<void>((r) => socket.bind(0, "127.0.0.1", () => r()));
  for (const p of packets) {
    socket.send(Buffer.from(p), port, "127.0.0.1");
    if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
  }
  await new Promise((r) => setTimeout(r, ms));
  await new Promise<void>((r) => socket.close(() => r()));
  return replies;
}

function accessRequest(user: string, pass: string, extra: unknown[][] = [], secret = SECRET) {
  return lib.encode({
    code: "Access-Request",
    identifier: 7,
    secret,
    attributes: [["User-Name", user], ["User-Password", pass], ...extra],
  });
}

Deno.test("listener: a retransmitted request is answered from the cache, checked once", async () => {
  const { t, listener, calls } = await setup();
  try {
    const packet = accessRequest("alice", "123456", [["Proxy-State", Buffer.from("ps1")]]);
    const replies = await exchange(listener.port, [packet, packet], 300, 150);
    assert.equal(calls.length, 1);
    assert.equal(replies.length, 2);
    for (const reply of replies) {
      assert.equal(lib.verify_response({ request: packet, response: reply, secret: SECRET }), true);
      const decoded = lib.decode({ packet: reply, secret: SECRET });
      assert.equal(decoded.code, "Access-Accept");
      assert.equal(decoded.attributes["Proxy-State"].toString(), "ps1");
      assert.ok(decoded.attributes["Message-Authenticator"]);
    }
    assert.deepEqual(replies[0], replies[1]);
  } finally {
    await listener.close();
    await t.close();
  }
});

Deno.test("listener: packets from unknown clients and non-requests are dropped", async () => {
  const { t, listener, calls } = await setup([{
    address: "10.0.0.0/8",
    secret: SECRET,
    name: "x",
  }]);
  try {
    const replies = await exchange(listener.port, [accessRequest("alice", "123456")]);
    assert.equal(replies.length, 0);
    assert.equal(calls.length, 0);
    assert.equal(listener.dropped(), 1);
  } finally {
    await listener.close();
    await t.close();
  }
  const s2 = await setup();
  try {
    const garbage = [new Uint8Array([1, 2, 0, 5]), new Uint8Array(30).fill(1)];
    const accounting = lib.encode({
      code: "Accounting-Request",
      identifier: 1,
      secret: SECRET,
      attributes: [["User-Name", "alice"]],
    });
    const replies = await exchange(s2.listener.port, [...garbage, accounting]);
    assert.equal(replies.length, 0);
    assert.equal(s2.calls.length, 0);
    assert.equal(s2.listener.dropped(), 3);
  } finally {
    await s2.listener.close();
    await s2.t.close();
  }
});

Deno.test("listener: a Message-Authenticator of the wrong size is dropped", async () => {
  const { t, listener, calls } = await setup();
  try {
    const packet = accessRequest("alice", "123456", [[80, Buffer.alloc(4)]]);
    const replies = await exchange(listener.port, [packet]);
    assert.equal(replies.length, 0);
    assert.equal(calls.length, 0);
  } finally {
    await listener.close();
    await t.close();
  }
});

Deno.test("listener: after a signed request, unsigned ones from that NAS are dropped", async () => {
  const { t, listener, calls } = await setup();
  try {
    const unsigned = lib.encode({
      code: "Access-Request",
      identifier: 1,
      secret: SECRET,
      attributes: [["User-Name", "alice"], ["User-Password", "123456"]],
      add_message_authenticator: false,
    });
    assert.equal(
      (await exchange(listener.port, [unsigned])).length,
      1,
      "unsigned is fine at first",
    );
    const signed = lib.encode({
      code: "Access-Request",
      identifier: 2,
      secret: SECRET,
      attributes: [["User-Name", "alice"], ["User-Password", "123456"]],
      add_message_authenticator: true,
    });
    assert.equal((await exchange(listener.port, [signed])).length, 1);
    const unsigned2 = lib.encode({
      code: "Access-Request",
      identifier: 3,
      secret: SECRET,
      attributes: [["User-Name", "alice"], ["User-Password", "123456"]],
      add_message_authenticator: false,
    });
    assert.equal((await exchange(listener.port, [unsigned2])).length, 0);
    assert.equal(calls.length, 2);
  } finally {
    await listener.close();
    await t.close();
  }
});

Deno.test("listener: CHAP requests are rejected without calling the validate path", async () => {
  const { t, listener, calls } = await setup();
  try {
    const packet = lib.encode({
      code: "Access-Request",
      identifier: 9,
      secret: SECRET,
      attributes: [["User-Name", "alice"], ["CHAP-Password", Buffer.alloc(17, 1)]],
    });
    const [reply] = await exchange(listener.port, [packet]);
    const decoded = lib.decode({ packet: reply, secret: SECRET });
    assert.equal(decoded.code, "Access-Reject");
    assert.equal(decoded.attributes["Reply-Message"], "Only PAP (User-Password) is supported");
    assert.equal(calls.length, 0);
  } finally {
    await listener.close();
    await t.close();
  }
});

Deno.test("listener: an error of the validate path becomes a uniform Access-Reject", async () => {
  const t = await createTestApp();
  const { UserError } = await import("../../src/errors.ts");
  const listener = await startRadiusListener(t.deps, {
    host: "127.0.0.1",
    port: 0,
    clients: [{ address: "127.0.0.1", secret: SECRET, name: "lo" }],
    check: () =>
      Promise.reject(new UserError("The user can not be found in any resolver in this realm!")),
  });
  try {
    const [reply] = await exchange(listener.port, [accessRequest("nobody", "x")]);
    const decoded = lib.decode({ packet: reply, secret: SECRET });
    assert.equal(decoded.code, "Access-Reject");
    assert.equal(decoded.attributes["Reply-Message"], "privacyIDEA server denied access!");
    await t.deps.audit.flush();
    const row = await t.deps.db.selectFrom("audit").selectAll().executeTakeFirstOrThrow();
    assert.match(row.info, /can not be found/);
  } finally {
    await listener.close();
    await t.close();
  }
});

Deno.test("listener: a retransmission during a slow validation does not validate twice", async () => {
  const t = await createTestApp();
  let calls = 0;
  const listener = await startRadiusListener(t.deps, {
    host: "127.0.0.1",
    port: 0,
    clients: [{ address: "127.0.0.1", secret: SECRET, name: "lo" }],
    duplicateWindowMs: 50,
    check: async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 200));
      return { value: true, detail: {} };
    },
  });
  try {
    const packet = accessRequest("alice", "123456");
    // sent at 0 ms and 100 ms: the second arrives while the first is still being validated
    const replies = await exchange(listener.port, [packet, packet], 400, 100);
    assert.equal(calls, 1);
    assert.equal(replies.length, 1);
  } finally {
    await listener.close();
    await t.close();
  }
});

Deno.test("listener: requests beyond maxInFlight are dropped, the NAS retransmits", async () => {
  const t = await createTestApp();
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => release = r);
  let calls = 0;
  const listener = await startRadiusListener(t.deps, {
    host: "127.0.0.1",
    port: 0,
    clients: [{ address: "127.0.0.1", secret: SECRET, name: "lo" }],
    maxInFlight: 1,
    check: async () => {
      calls++;
      await gate;
      return { value: true, detail: {} };
    },
  });
  try {
    const a = accessRequest("alice", "1");
    const b = lib.encode({
      code: "Access-Request",
      identifier: 8,
      secret: SECRET,
      attributes: [["User-Name", "bob"], ["User-Password", "2"]],
    });
    const pending = exchange(listener.port, [a, b], 300);
    await new Promise((r) => setTimeout(r, 100));
    release();
    const replies = await pending;
    assert.equal(calls, 1);
    assert.equal(replies.length, 1);
    assert.equal(listener.dropped(), 1);
  } finally {
    await listener.close();
    await t.close();
  }
});

Deno.test("listener: an extra dictionary must be a readable file", async () => {
  const t = await createTestApp();
  await assert.rejects(
    startRadiusListener(t.deps, {
      host: "127.0.0.1",
      port: 0,
      clients: [],
      dictionary: "/no/such/dictionary",
      check: fakeCheck([]),
    }),
    /radius.dictionary: cannot load/,
  );
  const file = await Deno.makeTempFile();
  await Deno.writeTextFile(
    file,
    "VENDOR NetKnights 44929\nBEGIN-VENDOR NetKnights\nATTRIBUTE privacyIDEA-Serial 1 string\nEND-VENDOR NetKnights\n",
  );
  const listener = await startRadiusListener(t.deps, {
    host: "127.0.0.1",
    port: 0,
    clients: [{ address: "127.0.0.1", secret: SECRET, name: "lo" }],
    dictionary: file,
    check: fakeCheck([]),
  });
  try {
    const [reply] = await exchange(listener.port, [accessRequest("alice", "123456")]);
    assert.equal(lib.decode({ packet: reply, secret: SECRET }).code, "Access-Accept");
  } finally {
    await listener.close();
    await Deno.remove(file);
    await t.close();
  }
});

Deno.test("listener: a bad client address in the config is refused at start", async () => {
  const t = await createTestApp();
  await assert.rejects(
    startRadiusListener(t.deps, {
      host: "127.0.0.1",
      port: 0,
      clients: [{ address: "not-an-ip", secret: "s", name: "x" }],
      check: fakeCheck([]),
    }),
    /no IP or CIDR/,
  );
  await t.close();
});
