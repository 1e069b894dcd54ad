import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { createHostsResolver, HOSTS_TEXT, initToken, SSH_KEY } from "../domain/machine/fixtures.ts";
import { pbkdf2Sha512Verify } from "../../src/domain/machine/mod.ts";

async function get(t: TestApp, path: string, query: Record<string, string> = {}) {
  return await jsonOf(await t.asAdmin("GET", path, { query }));
}

async function post(t: TestApp, path: string, body: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin("POST", path, { body }));
}

function assertError(
  res: { status: number; body: Json },
  status: number,
  code: number,
  msg: RegExp,
) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.result.status, false);
  assert.equal(res.body.result.error.code, code);
  assert.match(res.body.result.error.message, msg);
}

// ---------------------------------------------------------------------------
// GET /machine/

Deno.test("GET /machine/ lists hosts-file machines with the spec's filter counts", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  const all = await get(t, "/machine/");
  assert.equal(all.status, 200);
  assert.equal(all.body.result.value.length, 5);
  assert.deepEqual(all.body.result.value[1], {
    id: "192.168.0.1",
    hostname: ["gandalf", "whitewizard"],
    ip: "192.168.0.1",
    resolver_name: "machineresolver1",
  });
  const table: [Record<string, string>, number][] = [
    [{ any: "192" }, 4],
    [{ hostname: "n" }, 4],
    [{ any: "in" }, 2],
    [{ any: "0" }, 5],
    [{ any: "gandalf" }, 2],
    [{ hostname: "Gandalf" }, 0],
    [{ id: "192.168.0" }, 2],
    [{ ip: "192.168.0.2" }, 1],
    [{ ip: "192.168.0.22" }, 0],
    // not an address: the filter is dropped
    [{ ip: "gandalf" }, 5],
    [{ resolver: "resolver" }, 5],
    [{ resolver: "other" }, 0],
    [{ hostname: "gandalf", ip: "192.168.10.10" }, 1],
  ];
  for (const [query, count] of table) {
    const res = await get(t, "/machine/", query);
    assert.equal(res.status, 200);
    assert.equal(res.body.result.value.length, count, JSON.stringify(query));
  }
  const pippin = await get(t, "/machine/", { any: "in" });
  assert.deepEqual(pippin.body.result.value.map((m: Json) => m.hostname[0]), ["pippin", "borodin"]);
  await t.close();
});

Deno.test("GET /machine/ re-reads a changed hosts file", async () => {
  const t = await createTestApp();
  await createHostsResolver(t, "mr");
  assert.equal((await get(t, "/machine/")).body.result.value.length, 5);
  const path = `${t.deps.config.storage.dataDir}/mr.hosts`;
  await Deno.writeTextFile(path, HOSTS_TEXT + "10.0.0.1 newhost and-a-longer-line\n");
  const after = await get(t, "/machine/", { hostname: "newhost" });
  assert.equal(after.body.result.value.length, 1);
  assert.equal(after.body.result.value[0].ip, "10.0.0.1");
  await t.close();
});

Deno.test("GET /machine/ fails cleanly on a missing or broken hosts file", async () => {
  const t = await createTestApp();
  await createHostsResolver(t, "mr");
  const path = `${t.deps.config.storage.dataDir}/mr.hosts`;
  await Deno.writeTextFile(path, "not-an-ip host\n");
  const broken = await get(t, "/machine/");
  assertError(broken, 400, 905, /line 1 is not an IP address/);
  // file content is never echoed (the path may name any readable file)
  assert.equal(broken.body.result.error.message.includes("not-an-ip"), false);
  await Deno.remove(path);
  assertError(await get(t, "/machine/"), 400, 905, /Cannot read hosts file/);
  await t.close();
});

Deno.test("/machine/ endpoints need an admin JWT", async () => {
  const t = await createTestApp();
  for (
    const [method, path] of [
      ["GET", "/machine/"],
      ["GET", "/machine/token"],
      ["POST", "/machine/token"],
      ["GET", "/machine/authitem"],
      ["POST", "/machine/tokenoption"],
    ]
  ) {
    const res = await jsonOf(await t.request(method, path));
    assert.equal(res.status, 401, path);
  }
  await t.close();
});

// ---------------------------------------------------------------------------
// POST/GET/DELETE /machine/token, POST /machine/tokenoption

Deno.test("POST /machine/token attaches by host name, by id pair, or to no machine", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  await initToken(t, { type: "sshkey", serial: "SSHKEY1", sshkey: SSH_KEY });
  const byHost = await post(t, "/machine/token", {
    serial: "SSHKEY1",
    application: "ssh",
    hostname: "gandalf",
    user: "root",
    count: 17,
  });
  assert.equal(byHost.status, 200);
  assert.equal(byHost.body.result.value, 1);
  const byPair = await post(t, "/machine/token", {
    serial: "SSHKEY1",
    application: "luks",
    machineid: "192.168.0.2",
    resolver: "machineresolver1",
    slot: "1",
  });
  assert.equal(byPair.body.result.value, 2);
  // resolver "" means no machine, even with a machineid
  const none = await post(t, "/machine/token", {
    serial: "SSHKEY1",
    application: "offline",
    machineid: "x",
    resolver: "",
  });
  assert.equal(none.body.result.value, 3);

  const view = await get(t, "/machine/token", { serial: "SSHKEY1", application: "ignored" });
  assert.equal(view.status, 200);
  assert.deepEqual(view.body.result.value, [
    {
      machine_id: "192.168.0.1",
      hostname: "gandalf",
      application: "ssh",
      resolver: "machineresolver1",
      options: { user: "root", count: "17" },
      id: 1,
      serial: "SSHKEY1",
    },
    {
      machine_id: "192.168.0.2",
      hostname: "pippin",
      application: "luks",
      resolver: "machineresolver1",
      options: { slot: "1" },
      id: 2,
      serial: "SSHKEY1",
    },
    {
      machine_id: "any machine",
      hostname: "any host",
      application: "offline",
      resolver: "no resolver",
      options: {},
      id: 3,
      serial: "SSHKEY1",
    },
  ]);
  await t.close();
});

Deno.test("POST /machine/token errors: unknown serial, application, host, resolver, tuple", async () => {
  const t = await createTestApp();
  await createHostsResolver(t, "mr1");
  await initToken(t, { type: "sshkey", serial: "SSHKEY1", sshkey: SSH_KEY });
  const base = { serial: "SSHKEY1", application: "ssh" };
  assertError(
    await post(t, "/machine/token", { ...base, serial: "NOPE" }),
    404,
    601,
    /^Token with serial NOPE does not exist\.$/,
  );
  assertError(
    await post(t, "/machine/token", { ...base, application: "openssh" }),
    400,
    905,
    /^ERR905: Application openssh is not supported\./,
  );
  assertError(await post(t, "/machine/token", { application: "ssh" }), 400, 905, /serial/);
  assertError(await post(t, "/machine/token", { serial: "SSHKEY1" }), 400, 905, /application/);
  assertError(
    await post(t, "/machine/token", { ...base, hostname: "saruman" }),
    400,
    905,
    /^ERR905: There is no machine with name='saruman' and IP=None$/,
  );
  assertError(
    await post(t, "/machine/token", { ...base, hostname: "gand" }),
    400,
    905,
    /no machine/,
  );
  assertError(
    await post(t, "/machine/token", { ...base, machineid: "192.168.0.1" }),
    400,
    905,
    /^ERR905: Incomplete tuple of machine_id and resolver_name$/,
  );
  assertError(
    await post(t, "/machine/token", { ...base, machineid: "1", resolver: "nothere" }),
    404,
    601,
    /MachineResolver could not be found/,
  );
  // a second resolver over the same file makes every host ambiguous
  await createHostsResolver(t, "mr2");
  assertError(
    await post(t, "/machine/token", { ...base, hostname: "gandalf" }),
    400,
    905,
    /^ERR905: Can not get unique ID for hostname=gandalf\. More than one machine found\.$/,
  );
  const listed = await get(t, "/machine/token", { serial: "SSHKEY1" });
  assert.deepEqual(listed.body.result.value, []);
  assertError(await get(t, "/machine/token", { serial: "NOPE" }), 404, 601, /NOPE/);
  await t.close();
});

async function serviceIdSet(t: TestApp): Promise<void> {
  await initToken(t, { type: "sshkey", serial: "SSHKEY1", sshkey: SSH_KEY });
  await initToken(t, { type: "sshkey", serial: "SSHKEY2", sshkey: SSH_KEY });
  for (
    const [serial, service_id, user] of [
      ["SSHKEY1", "webserver", "root"],
      ["SSHKEY1", "mailserver", "root"],
      ["SSHKEY2", "mailserver", "root"],
      ["SSHKEY1", "mailserver", "admin"],
    ]
  ) {
    const res = await post(t, "/machine/token", { serial, application: "ssh", service_id, user });
    assert.equal(res.status, 200);
  }
}

Deno.test("GET /machine/token filter view: the spec's service_id examples", async () => {
  const t = await createTestApp();
  await serviceIdSet(t);
  const table: [Record<string, string>, number][] = [
    [{ service_id: "mailserver", application: "ssh", user: "root" }, 2],
    [{ service_id: "*server*", application: "ssh" }, 4],
    [{ application: "ssh", user: "*oot" }, 3],
    [{ application: "ssh", user: "*adm*" }, 1],
    [{ application: "ssh", serial: "*KEY1" }, 3],
    [{ service_id: "mailserver", application: "openssh" }, 0],
    [{ service_id: "MAIL*", application: "ssh" }, 3],
    [{ application: "ssh", user: "oot" }, 0],
    // % and _ are literal
    [{ application: "ssh", serial: "SSHKEY_*" }, 0],
    [{ application: "ssh", serial: "SSH.*" }, 0],
  ];
  for (const [query, count] of table) {
    const res = await get(t, "/machine/token", query);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result.value.length, count, JSON.stringify(query));
  }
  const one = await get(t, "/machine/token", { service_id: "webserver", application: "ssh" });
  assert.deepEqual(one.body.result.value, [{
    serial: "SSHKEY1",
    machine_id: null,
    resolver: null,
    type: "sshkey",
    application: "ssh",
    id: 1,
    options: { service_id: "webserver", user: "root" },
  }]);
  const sorted = await get(t, "/machine/token", {
    application: "ssh",
    sortby: "user",
    sortdir: "desc",
  });
  assert.deepEqual(sorted.body.result.value.map((i: Json) => i.id), [3, 2, 1, 4]);
  const bySerial = await get(t, "/machine/token", { application: "ssh", sortdir: "desc" });
  assert.deepEqual(bySerial.body.result.value.map((i: Json) => i.serial), [
    "SSHKEY2",
    "SSHKEY1",
    "SSHKEY1",
    "SSHKEY1",
  ]);
  await t.close();
});

Deno.test("GET /machine/token filter view by host echoes the queried machine", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  await initToken(t, { type: "sshkey", serial: "SSHKEY1", sshkey: SSH_KEY });
  await post(t, "/machine/token", { serial: "SSHKEY1", application: "ssh", hostname: "gandalf" });
  await post(t, "/machine/token", { serial: "SSHKEY1", application: "ssh", hostname: "pippin" });
  const res = await get(t, "/machine/token", { hostname: "gandalf" });
  assert.deepEqual(res.body.result.value, [{
    serial: "SSHKEY1",
    machine_id: "192.168.0.1",
    resolver: "machineresolver1",
    type: "sshkey",
    application: "ssh",
    id: 1,
    options: {},
  }]);
  const pair = await get(t, "/machine/token", {
    machineid: "192.168.0.2",
    resolver: "machineresolver1",
  });
  assert.deepEqual(pair.body.result.value.map((i: Json) => i.id), [2]);
  const any = await get(t, "/machine/token", { machineid: "any machine", hostname: "gandalf" });
  assert.equal(any.body.result.value.length, 2);
  assertError(await get(t, "/machine/token", { hostname: "nohost" }), 400, 905, /no machine/);
  await t.close();
});

Deno.test("DELETE /machine/token by machine, by 'any machine' and by mtid", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  await initToken(t, { type: "sshkey", serial: "SSHKEY1", sshkey: SSH_KEY });
  for (const hostname of ["gandalf", "gandalf", "pippin"]) {
    await post(t, "/machine/token", { serial: "SSHKEY1", application: "ssh", hostname });
  }
  await post(t, "/machine/token", { serial: "SSHKEY1", application: "luks", hostname: "gandalf" });
  await post(t, "/machine/token", { serial: "SSHKEY1", application: "offline" });

  const del = async (path: string) => await jsonOf(await t.asAdmin("DELETE", path));
  const wrongApp = await del("/machine/token/SSHKEY1/192.168.0.1/machineresolver1/offline");
  assert.equal(wrongApp.body.result.value, 0);
  const two = await del("/machine/token/SSHKEY1/192.168.0.1/machineresolver1/ssh");
  assert.equal(two.status, 200);
  assert.equal(two.body.result.value, 2);
  const anyMachine = await del("/machine/token/SSHKEY1/any%20machine/no%20resolver/ssh");
  assert.equal(anyMachine.body.result.value, 1);
  assertError(await del("/machine/token/NOPE/any%20machine/no%20resolver/ssh"), 404, 601, /NOPE/);
  const left = await get(t, "/machine/token", { serial: "SSHKEY1" });
  assert.deepEqual(left.body.result.value.map((i: Json) => i.application), ["luks", "offline"]);
  const mtid = left.body.result.value[1].id;
  const byId = await del(`/machine/token/SSHKEY1/offline/${mtid}`);
  assert.equal(byId.status, 200);
  assert.equal(byId.body.result.value, 1);
  assertError(await del(`/machine/token/SSHKEY1/offline/${mtid}`), 400, 905, /no machine token/);
  assertError(await del("/machine/token/SSHKEY1/offline/abc"), 400, 905, /mtid/);
  const last = await get(t, "/machine/token", { serial: "SSHKEY1" });
  assert.deepEqual(last.body.result.value.map((i: Json) => i.application), ["luks"]);
  await t.close();
});

Deno.test("deleting a token deletes its bindings; deleting a resolver keeps them", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  await initToken(t, { type: "sshkey", serial: "SSHKEY1", sshkey: SSH_KEY });
  await initToken(t, { type: "sshkey", serial: "SSHKEY2", sshkey: SSH_KEY });
  await post(t, "/machine/token", { serial: "SSHKEY1", application: "ssh", user: "a" });
  await post(t, "/machine/token", { serial: "SSHKEY2", application: "ssh", hostname: "gandalf" });
  const del = await jsonOf(await t.asAdmin("DELETE", "/token/SSHKEY1"));
  assert.equal(del.status, 200, JSON.stringify(del.body));
  const rows = await t.deps.db.selectFrom("machinetoken").select("id").execute();
  assert.deepEqual(rows.map((r) => r.id), [2]);
  assert.equal((await t.deps.db.selectFrom("machinetokenoption").selectAll().execute()).length, 0);
  await t.asAdmin("DELETE", "/machineresolver/machineresolver1");
  const view = await get(t, "/machine/token", { serial: "SSHKEY2" });
  assert.equal(view.body.result.value.length, 1);
  assert.equal(view.body.result.value[0].machine_id, "192.168.0.1");
  assert.equal(view.body.result.value[0].hostname, "unknown");
  await t.close();
});

Deno.test("POST /machine/tokenoption adds, overwrites and deletes options", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  await initToken(t, { type: "sshkey", serial: "SSHKEY1", sshkey: SSH_KEY });
  await post(t, "/machine/token", {
    serial: "SSHKEY1",
    application: "luks",
    hostname: "gandalf",
    slot: "1",
  });
  const unbound = await post(t, "/machine/token", { serial: "SSHKEY1", application: "offline" });
  const byHost = await post(t, "/machine/tokenoption", {
    serial: "SSHKEY1",
    application: "luks",
    hostname: "gandalf",
    partition: "/dev/sdb1",
    slot: "",
  });
  assert.equal(byHost.status, 200, JSON.stringify(byHost.body));
  assert.deepEqual(byHost.body.result.value, { added: 1, deleted: 1 });
  const byId = await post(t, "/machine/tokenoption", {
    mtid: unbound.body.result.value,
    count: 12,
    rounds: "1000",
  });
  assert.deepEqual(byId.body.result.value, { added: 2, deleted: 0 });
  const view = await get(t, "/machine/token", { serial: "SSHKEY1" });
  assert.deepEqual(view.body.result.value.map((i: Json) => i.options), [
    { partition: "/dev/sdb1" },
    { count: "12", rounds: "1000" },
  ]);
  assertError(
    await post(t, "/machine/tokenoption", { mtid: unbound.body.result.value, nothere: "" }),
    400,
    905,
    /does not exist/,
  );
  assertError(
    await post(t, "/machine/tokenoption", { mtid: 999, a: "b" }),
    400,
    905,
    /no machine token/,
  );
  assertError(
    await post(t, "/machine/tokenoption", { serial: "SSHKEY1", application: "offline", a: "b" }),
    400,
    905,
    /Incomplete tuple/,
  );
  assertError(
    await post(t, "/machine/tokenoption", { mtid: 1, ["k".repeat(65)]: "v" }),
    400,
    905,
    /at most 64/,
  );
  // the refused requests changed nothing
  const again = await get(t, "/machine/token", { serial: "SSHKEY1" });
  assert.deepEqual(again.body.result.value.map((i: Json) => i.options), [
    { partition: "/dev/sdb1" },
    { count: "12", rounds: "1000" },
  ]);
  await t.close();
});

// ---------------------------------------------------------------------------
// GET /machine/authitem

Deno.test("end to end: hosts file → resolver → sshkey token → authitem for that host only", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "cornelius", password: "x" }] });
  await createHostsResolver(t);
  await initToken(t, {
    type: "sshkey",
    serial: "SSHKEY1",
    sshkey: SSH_KEY + " NetKnights GmbH",
    user: "cornelius",
    realm: "realm1",
  });
  const attach = await post(t, "/machine/token", {
    serial: "SSHKEY1",
    application: "ssh",
    hostname: "gandalf",
    user: "testuser",
  });
  assert.equal(attach.status, 200);

  const res = await get(t, "/machine/authitem/ssh", { hostname: "gandalf" });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.result.value, {
    ssh: [{
      sshkey: SSH_KEY + " NetKnights GmbH",
      username: "cornelius",
      user: "testuser",
      serial: null,
    }],
  });
  const all = await get(t, "/machine/authitem", { hostname: "gandalf" });
  assert.deepEqual(all.body.result.value, res.body.result.value);
  // the same host by its other name is the same machine
  const alias = await get(t, "/machine/authitem/ssh", { hostname: "whitewizard" });
  assert.equal(alias.body.result.value.ssh.length, 1);
  const other = await get(t, "/machine/authitem/ssh", { hostname: "pippin" });
  assert.equal(other.status, 200);
  assert.deepEqual(other.body.result.value, {});
  const wrongUser = await get(t, "/machine/authitem/ssh", { hostname: "gandalf", user: "root" });
  assert.deepEqual(wrongUser.body.result.value, {});
  const rightUser = await get(t, "/machine/authitem/ssh", {
    hostname: "gandalf",
    user: "testuser",
  });
  assert.equal(rightUser.body.result.value.ssh.length, 1);
  const luksOnly = await get(t, "/machine/authitem/luks", { hostname: "gandalf" });
  assert.deepEqual(luksOnly.body.result.value, {});

  // a disabled sshkey token gives no key
  await post(t, "/token/disable", { serial: "SSHKEY1" });
  const disabled = await get(t, "/machine/authitem/ssh", { hostname: "gandalf" });
  assert.deepEqual(disabled.body.result.value, {});
  await t.close();
});

Deno.test("GET /machine/authitem errors: missing hostname, unknown host", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  assertError(
    await get(t, "/machine/authitem/ssh"),
    400,
    905,
    /^ERR905: Missing parameter: hostname$/,
  );
  assertError(await get(t, "/machine/authitem/ssh", { hostname: "saruman" }), 400, 905, /saruman/);
  await t.close();
});

Deno.test("GET /machine/authitem with service_id ignores the host name", async () => {
  const t = await createTestApp();
  await serviceIdSet(t);
  const res = await get(t, "/machine/authitem/ssh", {
    hostname: "whatever",
    service_id: "mailserver",
    user: "root",
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.value.ssh.length, 2);
  assert.deepEqual(res.body.result.value.ssh.map((i: Json) => i.service_id), [
    "mailserver",
    "mailserver",
  ]);
  assert.ok(res.body.result.value.ssh.every((i: Json) => i.user === "root"));
  await t.close();
});

Deno.test("GET /machine/authitem/luks answers the spec's test vector", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  await initToken(t, { type: "totp", serial: "UBOM12345678", otpkey: "12345678" });
  await initToken(t, { type: "totp", serial: "TOTP0001", otpkey: "12345678" });
  for (const serial of ["UBOM12345678", "TOTP0001"]) {
    await post(t, "/machine/token", {
      serial,
      application: "luks",
      hostname: "gandalf",
      slot: "1",
      partition: "/dev/sdb1",
    });
  }
  const res = await get(t, "/machine/authitem/luks", { hostname: "gandalf", challenge: "abcdef" });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.result.value, {
    luks: [{
      challenge: "abcdef",
      response: "93235fc7d1d444d0ec014ea9eafcc44fc65b73eb",
      slot: "1",
      partition: "/dev/sdb1",
      serial: null,
    }],
  });
  // no challenge: 32 random bytes, answered with the same HMAC
  const random = await get(t, "/machine/authitem/luks", { hostname: "gandalf" });
  const item = random.body.result.value.luks[0];
  assert.match(item.challenge, /^[0-9a-f]{64}$/);
  const expected = createHmac("sha1", Buffer.from("12345678", "hex"))
    .update(Buffer.from(item.challenge, "hex")).digest("hex");
  assert.equal(item.response, expected);
  assertError(
    await get(t, "/machine/authitem/luks", { hostname: "gandalf", challenge: "xyz" }),
    400,
    905,
    /challenge/,
  );
  // a disabled token keeps the challenge but gives no response
  await post(t, "/token/disable", { serial: "UBOM12345678" });
  const disabled = await get(t, "/machine/authitem/luks", { hostname: "gandalf", challenge: "ab" });
  assert.deepEqual(disabled.body.result.value.luks[0].challenge, "ab");
  assert.equal("response" in disabled.body.result.value.luks[0], false);
  await t.close();
});

const RFC4226_KEY = "3132333435363738393031323334353637383930";

async function tokenCount(t: TestApp, serial: string): Promise<number> {
  const row = await t.deps.db.selectFrom("token").select("count").where("serial", "=", serial)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

Deno.test("GET /machine/authitem/offline: 17 hashed HOTP values, counter advances (spec vector)", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "cornelius", password: "x" }] });
  await createHostsResolver(t);
  await initToken(t, {
    type: "hotp",
    serial: "HOTP1",
    otpkey: RFC4226_KEY,
    pin: "test",
    user: "cornelius",
    realm: "realm1",
  });
  await post(t, "/machine/token", {
    serial: "HOTP1",
    application: "offline",
    hostname: "gandalf",
    count: 17,
  });
  const res = await get(t, "/machine/authitem/offline", { hostname: "gandalf" });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const [item] = res.body.result.value.offline;
  assert.equal(item.user, "cornelius");
  assert.equal(item.username, "cornelius");
  assert.equal(item.count, "17");
  assert.equal(item.serial, null);
  assert.match(item.refilltoken, /^[0-9a-f]{80}$/);
  assert.deepEqual(Object.keys(item.response), Array.from({ length: 17 }, (_, i) => String(i)));
  assert.match(item.response["0"], /^\$pbkdf2-sha512\$6549\$[A-Za-z0-9./]{14}\$[A-Za-z0-9./]{86}$/);
  assert.equal(await pbkdf2Sha512Verify(item.response["0"], "755224"), true);
  assert.equal(await pbkdf2Sha512Verify(item.response["1"], "287082"), true);
  assert.equal(await pbkdf2Sha512Verify(item.response["1"], "287083"), false);
  assert.equal(await tokenCount(t, "HOTP1"), 17);

  // refill: the client used the value of counter 3 ("test" + 969429)
  const refill = await jsonOf(
    await t.post("/validate/offlinerefill", {
      serial: "HOTP1",
      refilltoken: item.refilltoken,
      pass: "test969429",
    }),
  );
  assert.equal(refill.status, 200, JSON.stringify(refill.body));
  assert.equal(refill.body.result.value, true);
  const [again] = refill.body.auth_items.offline;
  assert.equal(again.serial, "HOTP1");
  assert.notEqual(again.refilltoken, item.refilltoken);
  assert.deepEqual(Object.keys(again.response), ["17", "18", "19", "20"]);
  // the PIN of the refill request is part of the new hashes
  assert.equal(await pbkdf2Sha512Verify(again.response["17"], "test447589"), true);
  assert.equal(await tokenCount(t, "HOTP1"), 21);

  // the old refill token is spent; a wrong OTP or PIN is refused
  const reused = await jsonOf(
    await t.post("/validate/offlinerefill", {
      serial: "HOTP1",
      refilltoken: item.refilltoken,
      pass: "test969429",
    }),
  );
  assertError(reused, 400, 905, /refill token is incorrect/);
  assertError(
    await jsonOf(
      await t.post("/validate/offlinerefill", {
        serial: "HOTP1",
        refilltoken: again.refilltoken,
        pass: "test000000",
      }),
    ),
    400,
    905,
    /wrong OTP value/,
  );
  assertError(
    await jsonOf(
      await t.post("/validate/offlinerefill", {
        serial: "HOTP1",
        refilltoken: again.refilltoken,
        pass: "nope447589",
      }),
    ),
    400,
    905,
    /PIN is not correct/,
  );
  assertError(
    await jsonOf(await t.post("/validate/offlinerefill", { serial: "HOTP1", pass: "x" })),
    400,
    905,
    /refilltoken/,
  );
  assertError(
    await jsonOf(
      await t.post("/validate/offlinerefill", { serial: "NOPE", refilltoken: "a", pass: "b" }),
    ),
    400,
    905,
    /The token does not exist/,
  );
  assert.equal(await tokenCount(t, "HOTP1"), 21);
  await t.close();
});

Deno.test("POST /validate/check adds offline auth_items for an offline token (spec 07 §5.4 vector)", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "cornelius", password: "x" }] });
  await createHostsResolver(t);
  await initToken(t, {
    type: "hotp",
    serial: "HOTP1",
    otpkey: RFC4226_KEY,
    pin: "test",
    user: "cornelius",
    realm: "realm1",
  });
  await post(t, "/machine/token", {
    serial: "HOTP1",
    application: "offline",
    hostname: "gandalf",
    count: 17,
  });
  const first = await get(t, "/machine/authitem/offline", { hostname: "gandalf" });
  assert.equal(Object.keys(first.body.result.value.offline[0].response).length, 17);
  assert.equal(await tokenCount(t, "HOTP1"), 17);

  const check = await jsonOf(
    await t.post("/validate/check", { user: "cornelius", realm: "realm1", pass: "test447589" }),
  );
  assert.equal(check.status, 200, JSON.stringify(check.body));
  assert.equal(check.body.result.value, true);
  const [item] = check.body.auth_items.offline;
  assert.equal(item.serial, "HOTP1");
  assert.equal(item.user, "cornelius");
  assert.deepEqual(
    Object.keys(item.response),
    Array.from({ length: 17 }, (_, i) => String(18 + i)),
  );
  assert.equal(await pbkdf2Sha512Verify(item.response["18"], "test903435"), true);
  assert.equal(await pbkdf2Sha512Verify(item.response["34"], "test749439"), true);
  assert.equal(await tokenCount(t, "HOTP1"), 35);

  // a failed check carries no auth_items and moves nothing
  const failed = await jsonOf(
    await t.post("/validate/check", { user: "cornelius", realm: "realm1", pass: "test000000" }),
  );
  assert.equal(failed.body.result.value, false);
  assert.equal("auth_items" in failed.body, false);
  assert.equal(await tokenCount(t, "HOTP1"), 35);
  await t.close();
});

Deno.test("POST /validate/check without an offline binding has no auth_items", async () => {
  const t = await createTestApp();
  await initToken(t, { type: "hotp", serial: "HOTP2", otpkey: RFC4226_KEY, pin: "" });
  const check = await jsonOf(await t.post("/validate/check", { serial: "HOTP2", pass: "755224" }));
  assert.equal(check.body.result.value, true, JSON.stringify(check.body));
  assert.equal("auth_items" in check.body, false);
  await t.close();
});

Deno.test("admin policies gate the machine endpoints by right", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  const pol = await post(t, "/policy/machines-readonly", {
    scope: "admin",
    action: "machinelist, mresolverread",
  });
  assert.equal(pol.status, 200, JSON.stringify(pol.body));
  assert.equal((await get(t, "/machine/")).status, 200);
  assert.equal((await get(t, "/machineresolver/")).status, 200);
  const denied: [string, string, string][] = [
    ["GET", "/machine/token", "manage_machine_tokens"],
    ["GET", "/machine/authitem/ssh?hostname=gandalf", "fetch_authentication_items"],
    ["POST", "/machineresolver/other", "mresolverwrite"],
    ["DELETE", "/machineresolver/machineresolver1", "mresolverdelete"],
  ];
  for (const [method, path, action] of denied) {
    const res = await jsonOf(
      await t.asAdmin(method, path, { body: method === "POST" ? { type: "hosts" } : undefined }),
    );
    assertError(res, 403, 303, new RegExp(`the action ${action} is not allowed`));
  }
  await t.close();
});

Deno.test("parallel offline requests never hand out the same OTP values", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  await initToken(t, { type: "hotp", serial: "HOTP1", otpkey: RFC4226_KEY });
  await post(t, "/machine/token", {
    serial: "HOTP1",
    application: "offline",
    hostname: "gandalf",
    count: 5,
    rounds: 10,
  });
  const results = await Promise.all(
    Array.from({ length: 4 }, () => get(t, "/machine/authitem/offline", { hostname: "gandalf" })),
  );
  const keys = results.flatMap((r) => Object.keys(r.body.result.value.offline[0].response));
  assert.equal(new Set(keys).size, 20);
  assert.deepEqual(keys.map(Number).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i));
  assert.equal(await tokenCount(t, "HOTP1"), 20);
  await t.close();
});

Deno.test("parallel creates of one machine resolver end in one row, never a 500", async () => {
  const t = await createTestApp();
  await t.adminToken();
  const results = await Promise.all(
    ["mr", "MR", "Mr", "mR", "mr"].map((name) =>
      t.asAdmin("POST", `/machineresolver/${name}`, { body: { type: "hosts", filename: "h" } })
        .then(jsonOf)
    ),
  );
  for (const r of results) assert.ok(r.status === 200 || r.status === 400, JSON.stringify(r.body));
  const rows = await t.deps.db.selectFrom("machineresolver").selectAll().execute();
  assert.equal(rows.length, 1);
  await t.close();
});

Deno.test("hostile input on /machine/ endpoints gives 400, not 500", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  await initToken(t, { type: "sshkey", serial: "SSHKEY1", sshkey: SSH_KEY });
  const objectOption = await jsonOf(
    await t.asAdmin("POST", "/machine/token", {
      json: true,
      body: { serial: "SSHKEY1", application: "ssh", user: { a: 1 } },
    }),
  );
  assertError(objectOption, 400, 905, /expected a string/);
  const longValue = await post(t, "/machine/token", {
    serial: "SSHKEY1",
    application: "ssh",
    user: "u".repeat(65),
  });
  assertError(longValue, 400, 905, /at most 64/);
  const badMtid = await post(t, "/machine/tokenoption", { mtid: "1; drop", a: "b" });
  assertError(badMtid, 400, 905, /mtid/);
  const longName = await post(t, `/machineresolver/${"a".repeat(300)}`, { type: "hosts" });
  assertError(longName, 400, 905, /too long/);
  const badCount = await post(t, "/machine/token", {
    serial: "SSHKEY1",
    application: "offline",
    hostname: "pippin",
    count: "many",
  });
  assert.equal(badCount.status, 200);
  // the sshkey token is skipped by the offline application: nothing to build, no error
  const items = await get(t, "/machine/authitem/offline", { hostname: "pippin" });
  assert.deepEqual(items.body.result.value, {});
  assert.equal((await t.deps.db.selectFrom("machinetoken").selectAll().execute()).length, 1);
  await t.close();
});

Deno.test("a bad offline count option is a 400 when the token is served", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  await initToken(t, { type: "hotp", serial: "HOTP1", otpkey: RFC4226_KEY });
  await post(t, "/machine/token", {
    serial: "HOTP1",
    application: "offline",
    hostname: "gandalf",
    count: "100000",
  });
  const res = await get(t, "/machine/authitem/offline", { hostname: "gandalf" });
  assertError(res, 400, 905, /option "count"/);
  assert.equal(await tokenCount(t, "HOTP1"), 0);
  await t.close();
});

Deno.test("GET /application/ describes the options of ssh, luks and offline", async () => {
  const t = await createTestApp();
  const res = await get(t, "/application/");
  assert.equal(res.status, 200);
  const v = res.body.result.value;
  assert.deepEqual(Object.keys(v).sort(), ["luks", "offline", "ssh"]);
  assert.deepEqual(v.luks.options.totp.slot, { type: "int", value: [0, 1, 2, 3, 4, 5, 6, 7] });
  assert.deepEqual(v.offline.options.hotp, { count: { type: "str" }, rounds: { type: "str" } });
  assert.deepEqual(v.offline.options.webauthn, {});
  assert.equal(v.ssh.options.sshkey.user.type, "str");
  assert.deepEqual(v.ssh.options.sshkey.service_id.value, []);
  assert.equal((await jsonOf(await t.get("/application/"))).status, 401);
  await t.close();
});

Deno.test("GET /machine/authitem applies auth-scope mangle policies to the parameters", async () => {
  const t = await createTestApp();
  await createHostsResolver(t);
  await initToken(t, { type: "sshkey", serial: "SSHKEY1", sshkey: SSH_KEY });
  await post(t, "/machine/token", {
    serial: "SSHKEY1",
    application: "ssh",
    hostname: "gandalf",
    user: "testuser",
  });
  const query = { hostname: "gandalf", user: "DOMAIN\\testuser" };
  const before = await get(t, "/machine/authitem/ssh", query);
  assert.deepEqual(before.body.result.value, {});
  const pol = await post(t, "/policy/mangle1", {
    scope: "authentication",
    action: "mangle=user/.*\\\\(.*)/\\1/",
  });
  assert.equal(pol.status, 200, JSON.stringify(pol.body));
  const after = await get(t, "/machine/authitem/ssh", query);
  assert.equal(after.status, 200, JSON.stringify(after.body));
  assert.equal(after.body.result.value.ssh.length, 1);
  assert.equal(after.body.result.value.ssh[0].user, "testuser");
  // a policy with a broken regex is skipped, not a 500
  const bad = await post(t, "/policy/mangle2", {
    scope: "authentication",
    action: "mangle=hostname/([/x/",
  });
  assert.equal(bad.status, 200, JSON.stringify(bad.body));
  const broken = await get(t, "/machine/authitem/ssh", query);
  assert.equal(broken.status, 200, JSON.stringify(broken.body));
  await t.close();
});
