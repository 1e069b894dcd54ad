/**
 * The caches' rule across real processes (DEVELOPERS.md, "Caches"): a change
 * made through node 1 is in effect for the very next request on node 2, whose
 * caches were warm. Two processes on one SQLite file, or two nodes on one
 * PostgreSQL database (the run's engine).
 *
 * @module
 */
import assert from "node:assert/strict";
import { TEST_ENGINE } from "../test_db.ts";
import { api, type ApiResult, hotp, HOTP_KEY_HEX, type TesseraNode } from "./_node.ts";
import { type Pair, startPair } from "./_scenarios.ts";

// deno-lint-ignore no-explicit-any
function valueOf(res: ApiResult): any {
  assert.equal(res.status, 200, `HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.result.value;
}

function admin(pair: Pair, node: TesseraNode, method: string, path: string, params = {}) {
  return api(node, method, path, { jwt: pair.adminJwt, params });
}

async function enrolHotp(pair: Pair, node: TesseraNode, pin = ""): Promise<string> {
  const serial = `MC${crypto.randomUUID().replaceAll("-", "").slice(0, 10).toUpperCase()}`;
  const params = { type: "hotp", otpkey: HOTP_KEY_HEX, genkey: "0", serial, pin };
  valueOf(await admin(pair, node, "POST", "/token/init", params));
  valueOf(await admin(pair, node, "POST", "/token/set", { serial, max_failcount: "1000" }));
  return serial;
}

async function check(node: TesseraNode, serial: string, pass: string): Promise<ApiResult> {
  const res = await api(node, "POST", "/validate/check", { params: { serial, pass } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res;
}

/** An event definition added, then disabled, on node 1 runs (then no longer) on node 2. */
async function eventDefinitions(pair: Pair): Promise<void> {
  const [a, b] = pair.nodes;
  const serial = await enrolHotp(pair, a);
  const before = await check(b, serial, hotp(HOTP_KEY_HEX, 0));
  assert.equal(before.body.result.value, true);
  assert.notEqual(before.body.detail?.message, "mangled");
  const id = valueOf(
    await admin(pair, a, "POST", "/event", {
      name: `mc_${crypto.randomUUID().slice(0, 8)}`,
      event: "validate_check",
      handlermodule: "ResponseMangler",
      action: "set",
      position: "post",
      "option.JSON pointer": "/detail/message",
      "option.type": "string",
      "option.value": "mangled",
    }),
  );
  const mangled = await check(b, serial, hotp(HOTP_KEY_HEX, 1));
  assert.equal(mangled.body.detail.message, "mangled", "the event added on node 1 runs on node 2");
  valueOf(await admin(pair, a, "POST", `/event/disable/${id}`));
  const plain = await check(b, serial, hotp(HOTP_KEY_HEX, 2));
  assert.notEqual(plain.body.detail?.message, "mangled", "disabled on node 1");
  valueOf(await admin(pair, a, "DELETE", `/event/${id}`));
}

/** A system setting changed on node 1 (PrependPin) is in effect on node 2's next check. */
async function systemConfig(pair: Pair): Promise<void> {
  const [a, b] = pair.nodes;
  const serial = await enrolHotp(pair, a, "pin");
  assert.equal((await check(b, serial, "pin" + hotp(HOTP_KEY_HEX, 0))).body.result.value, true);
  valueOf(await admin(pair, a, "POST", "/system/setConfig", { PrependPin: "False" }));
  try {
    assert.equal(
      (await check(b, serial, "pin" + hotp(HOTP_KEY_HEX, 1))).body.result.value,
      false,
      "the PIN goes after the OTP since node 1 changed PrependPin",
    );
    assert.equal((await check(b, serial, hotp(HOTP_KEY_HEX, 2) + "pin")).body.result.value, true);
  } finally {
    valueOf(await admin(pair, a, "POST", "/system/setConfig", { PrependPin: "True" }));
  }
  assert.equal((await check(b, serial, "pin" + hotp(HOTP_KEY_HEX, 3))).body.result.value, true);
}

/** A realm whose resolvers node 1 changes no longer finds its user on node 2's next request. */
async function realmResolvers(pair: Pair): Promise<void> {
  const [a, b] = pair.nodes;
  const dir = await Deno.makeTempDir({ prefix: "tessera-mc-" });
  try {
    const tag = crypto.randomUUID().slice(0, 8);
    const [users, others, realm] = [`mcu_${tag}`, `mco_${tag}`, `mcr_${tag}`];
    await Deno.writeTextFile(`${dir}/users`, "carol:x:1000:1000:Carol:/home/carol:/bin/sh\n");
    await Deno.writeTextFile(`${dir}/others`, "dave:x:1001:1001:Dave:/home/dave:/bin/sh\n");
    for (const [name, file] of [[users, "users"], [others, "others"]]) {
      const params = { type: "passwdresolver", fileName: `${dir}/${file}` };
      valueOf(await admin(pair, a, "POST", `/resolver/${name}`, params));
    }
    valueOf(await admin(pair, a, "POST", `/realm/${realm}`, { resolvers: users }));
    const serial = await enrolHotp(pair, a);
    const assign = { serial, user: "carol", realm };
    valueOf(await admin(pair, a, "POST", "/token/assign", assign));
    const byUser = (pass: string) =>
      api(b, "POST", "/validate/check", { params: { user: "carol", realm, pass } });
    assert.equal(valueOf(await byUser(hotp(HOTP_KEY_HEX, 0))), true);
    valueOf(await admin(pair, a, "POST", `/realm/${realm}`, { resolvers: others }));
    const gone = await byUser(hotp(HOTP_KEY_HEX, 1));
    assert.equal(gone.status, 400, "carol is no user of the realm since node 1");
    assert.match(gone.body.result.error.message, /User <carol@mcr_\w+> does not exist/);
    valueOf(await admin(pair, a, "POST", `/realm/${realm}`, { resolvers: users }));
    assert.equal(valueOf(await byUser(hotp(HOTP_KEY_HEX, 2))), true, "and again since node 1");
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const SCENARIOS: [string, (pair: Pair) => Promise<void>][] = [
  [
    "an event definition added or disabled on node 1 counts on node 2's next request",
    eventDefinitions,
  ],
  ["a system setting changed on node 1 counts on node 2's next request", systemConfig],
  ["a realm's resolvers changed on node 1 count on node 2's next request", realmResolvers],
];

Deno.test({
  name: `caches: a change through node 1 is seen by node 2's next request (${TEST_ENGINE})`,
  async fn(t) {
    const pair = await startPair(TEST_ENGINE);
    try {
      for (const [name, scenario] of SCENARIOS) await t.step(name, () => scenario(pair));
    } finally {
      await pair.close();
    }
  },
});
