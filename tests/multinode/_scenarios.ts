/**
 * Two Tessera processes on one database, and the guarantees every engine must
 * keep across them: one OTP value succeeds once, no fail-counter increment is
 * lost, a change made through one node is in effect on the other with the
 * very next request, and a JWT of one node is good on the other.
 *
 * @module
 */
import assert from "node:assert/strict";
import { openTestDatabase } from "../test_db.ts";
import {
  api,
  type ApiResult,
  copyKeys,
  hotp,
  HOTP_KEY_HEX,
  initialAdminPassword,
  login,
  type NodeSetup,
  runCli,
  startNode,
  type TesseraNode,
} from "./_node.ts";

/** Two running nodes on one database, with the initial admin's credentials. */
export interface Pair {
  nodes: [TesseraNode, TesseraNode];
  setups: [NodeSetup, NodeSetup];
  adminPassword: string;
  /** JWT of the initial admin, issued by node 1. */
  adminJwt: string;
  /** Stops both nodes (SIGTERM) and removes their folders and database. */
  close(): Promise<void>;
}

/**
 * Starts two nodes on one database: on PostgreSQL a fresh migrated test
 * database, each node with its own data directory holding a copy of the same
 * key file; on SQLite two processes on the same data directory and file.
 * The first node starts alone (it creates the key file and the initial admin).
 */
export async function startPair(engine: "sqlite" | "postgres"): Promise<Pair> {
  const dirs = [await Deno.makeTempDir({ prefix: "tessera-mn-" })];
  const database = engine === "postgres" ? await openTestDatabase() : undefined;
  const nodes: TesseraNode[] = [];
  const close = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await database?.drop();
    for (const dir of dirs) await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    const first: NodeSetup = { dataDir: dirs[0], databaseUrl: database?.url };
    nodes.push(await startNode(first));
    let second: NodeSetup = first;
    if (engine === "postgres") {
      dirs.push(await Deno.makeTempDir({ prefix: "tessera-mn-" }));
      second = { dataDir: dirs[1], databaseUrl: database!.url };
      await copyKeys(dirs[0], dirs[1]);
    }
    nodes.push(await startNode(second));
    const adminPassword = await initialAdminPassword(dirs[0]);
    const adminJwt = await login(nodes[0], "admin", adminPassword);
    return {
      nodes: [nodes[0], nodes[1]],
      setups: [first, second],
      adminPassword,
      adminJwt,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

function show(res: ApiResult): string {
  return `HTTP ${res.status} ${JSON.stringify(res.body)}`;
}

/** Asserts HTTP `status` and returns `result.value`. */
// deno-lint-ignore no-explicit-any
function expectValue(res: ApiResult, status = 200): any {
  assert.equal(res.status, status, show(res));
  return res.body?.result?.value;
}

/** Enrols an HOTP token (RFC 4226 key, no PIN, max_failcount 1000) through `node`. */
async function enrolHotp(pair: Pair, node: TesseraNode): Promise<string> {
  const serial = `MN${crypto.randomUUID().replaceAll("-", "").slice(0, 10).toUpperCase()}`;
  const params = { type: "hotp", otpkey: HOTP_KEY_HEX, genkey: "0", serial };
  expectValue(await api(node, "POST", "/token/init", { jwt: pair.adminJwt, params }));
  // the test's own failures must not lock the token
  const set = { serial, max_failcount: "1000" };
  expectValue(await api(node, "POST", "/token/set", { jwt: pair.adminJwt, params: set }));
  return serial;
}

async function check(node: TesseraNode, serial: string, pass: string): Promise<boolean> {
  const value = expectValue(
    await api(node, "POST", "/validate/check", { params: { serial, pass } }),
  );
  assert.equal(typeof value, "boolean");
  return value;
}

async function failcountOf(pair: Pair, node: TesseraNode, serial: string): Promise<number> {
  const value = expectValue(
    await api(node, "GET", "/token/", { jwt: pair.adminJwt, params: { serial } }),
  );
  assert.equal(value.tokens.length, 1, JSON.stringify(value));
  return value.tokens[0].failcount;
}

/**
 * Scenario 1: each round sends one fresh HOTP value `perNode` times to each
 * node at once; exactly one request of the round is accepted.
 */
export async function sameOtpAcceptedOnce(pair: Pair, rounds = 30, perNode = 3): Promise<void> {
  const [a, b] = pair.nodes;
  const serial = await enrolHotp(pair, a);
  const wins = [0, 0];
  for (let round = 0; round < rounds; round++) {
    const pass = hotp(HOTP_KEY_HEX, round);
    const results = await Promise.all(
      Array.from({ length: 2 * perNode }, (_, i) => check(i % 2 === 0 ? a : b, serial, pass)),
    );
    const accepted = results.flatMap((ok, i) => ok ? [i % 2] : []);
    assert.equal(
      accepted.length,
      1,
      `round ${round}: OTP ${pass} accepted ${accepted.length} times (nodes ${accepted})`,
    );
    wins[accepted[0]]++;
  }
  // both nodes won rounds: the races were real, not one node always first
  assert.ok(wins[0] > 0 && wins[1] > 0, `wins per node: ${wins}`);
}

/** Scenario 2: `n` wrong OTPs sent at once over both nodes raise the fail counter by `n`. */
export async function failCounterExact(pair: Pair, n = 40): Promise<void> {
  const [a, b] = pair.nodes;
  const serial = await enrolHotp(pair, a);
  const near = new Set(Array.from({ length: 100 }, (_, i) => hotp(HOTP_KEY_HEX, i)));
  let wrong = 0;
  while (near.has(String(wrong).padStart(6, "0"))) wrong++;
  const pass = String(wrong).padStart(6, "0");
  const before = await failcountOf(pair, b, serial);
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) => check(i % 2 === 0 ? a : b, serial, pass)),
  );
  assert.ok(results.every((ok) => !ok), "a wrong OTP was accepted");
  assert.equal(await failcountOf(pair, a, serial), before + n, "fail counter read on node 1");
  assert.equal(await failcountOf(pair, b, serial), before + n, "fail counter read on node 2");
}

/** Scenario 3a: a token disabled (and enabled) on one node is refused (accepted) by the other at once. */
export async function disabledTokenRefusedAtOnce(pair: Pair): Promise<void> {
  for (const [writer, reader] of [pair.nodes, [pair.nodes[1], pair.nodes[0]]]) {
    const serial = await enrolHotp(pair, writer);
    // the reader has used the token, so any cache of it is warm
    assert.equal(await check(reader, serial, hotp(HOTP_KEY_HEX, 0)), true);
    const jwt = pair.adminJwt;
    const disabled = await api(writer, "POST", "/token/disable", { jwt, params: { serial } });
    assert.equal(expectValue(disabled), 1);
    assert.equal(await check(reader, serial, hotp(HOTP_KEY_HEX, 1)), false, "disabled token");
    const enabled = await api(writer, "POST", "/token/enable", { jwt, params: { serial } });
    assert.equal(expectValue(enabled), 1);
    assert.equal(await check(reader, serial, hotp(HOTP_KEY_HEX, 2)), true, "enabled again");
  }
}

/**
 * Scenario 3b: an admin policy set on node 1 that leaves out `tokenlist`
 * refuses `GET /token/` on node 2 with the next request, and its deletion
 * allows it again; likewise an authorization policy for `/validate/check`.
 */
export async function policyChangeAtOnce(pair: Pair): Promise<void> {
  const [a, b] = pair.nodes;
  const jwt = pair.adminJwt;
  const name = `mn_admin_${crypto.randomUUID().slice(0, 8)}`;
  expectValue(await api(b, "GET", "/token/", { jwt }));
  const admin = {
    scope: "admin",
    action: "policyread, policywrite, policydelete",
    adminuser: "admin",
  };
  expectValue(await api(a, "POST", `/policy/${name}`, { jwt, params: admin }));
  const refused = await api(b, "GET", "/token/", { jwt });
  assert.equal(refused.status, 403, show(refused));
  assert.equal(refused.body.result.error.code, 303);
  expectValue(await api(a, "DELETE", `/policy/${name}`, { jwt }));
  expectValue(await api(b, "GET", "/token/", { jwt }));

  const serial = await enrolHotp(pair, a);
  assert.equal(await check(b, serial, hotp(HOTP_KEY_HEX, 0)), true);
  const onlyTotp = { scope: "authorization", action: "tokentype=totp" };
  expectValue(await api(a, "POST", `/policy/${name}`, { jwt, params: onlyTotp }));
  const params = { serial, pass: hotp(HOTP_KEY_HEX, 1) };
  const notAllowed = await api(b, "POST", "/validate/check", { params });
  // privacyIDEA answers a token type the policy leaves out with a policy error, not "false"
  assert.equal(notAllowed.status, 403, show(notAllowed));
  assert.match(notAllowed.body.result.error.message, /Tokentype not allowed/);
  expectValue(await api(a, "DELETE", `/policy/${name}`, { jwt }));
  assert.equal(await check(b, serial, hotp(HOTP_KEY_HEX, 2)), true, "policy deleted");
}

/** Scenario 3c: an admin deleted with the CLI on node 1's setup loses its JWT on node 2 at once. */
export async function deletedAdminRefusedAtOnce(pair: Pair): Promise<void> {
  const [a, b] = pair.nodes;
  const name = `ops${crypto.randomUUID().slice(0, 8)}`;
  const password = "multinode-ops-password";
  const added = await runCli(pair.setups[0], ["admin", "add", name, "--password", password]);
  assert.equal(added.code, 0, added.stderr);
  const jwt = await login(a, name, password);
  expectValue(await api(b, "GET", "/token/", { jwt }));
  const deleted = await runCli(pair.setups[0], ["admin", "delete", name]);
  assert.equal(deleted.code, 0, deleted.stderr);
  const refused = await api(b, "GET", "/token/", { jwt });
  assert.equal(refused.status, 401, show(refused));
  assert.equal((await api(a, "GET", "/token/", { jwt })).status, 401);
}

/** Scenario 4: a JWT issued by either node is accepted by the other; a forged one by neither. */
export async function jwtAcrossNodes(pair: Pair): Promise<void> {
  for (const [issuer, other] of [pair.nodes, [pair.nodes[1], pair.nodes[0]]]) {
    const jwt = await login(issuer, "admin", pair.adminPassword);
    const list = expectValue(await api(other, "GET", "/token/", { jwt }));
    assert.equal(typeof list.count, "number");
    const [head, payload, signature] = jwt.split(".");
    const forged = `${head}.${payload}.${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`;
    assert.equal((await api(other, "GET", "/token/", { jwt: forged })).status, 401);
  }
}

/** The pair scenarios in order, by test step name. */
const PAIR_SCENARIOS: [string, (pair: Pair) => Promise<void>][] = [
  [
    "the same HOTP value sent to both nodes at once is accepted once, 30 rounds",
    (pair) => sameOtpAcceptedOnce(pair),
  ],
  [
    "wrong OTPs spread over both nodes raise the fail counter by exactly N",
    (pair) => failCounterExact(pair),
  ],
  [
    "a token disabled on one node is refused by the other on the next request",
    disabledTokenRefusedAtOnce,
  ],
  ["a policy changed on node 1 is in effect on node 2 on the next request", policyChangeAtOnce],
  [
    "an admin deleted on node 1 has its JWT refused by node 2 on the next request",
    deletedAdminRefusedAtOnce,
  ],
  ["a JWT issued by one node is accepted by the other", jwtAcrossNodes],
];

/**
 * Starts a pair on `engine` and runs every scenario as a step of `t`; when a
 * step fails, the nodes' warnings and errors are printed with it.
 */
export async function runPairScenarios(
  t: Deno.TestContext,
  engine: "sqlite" | "postgres",
): Promise<void> {
  const pair = await startPair(engine);
  try {
    let isFailed = false;
    for (const [name, scenario] of PAIR_SCENARIOS) {
      if (!(await t.step(name, () => scenario(pair)))) isFailed = true;
    }
    if (isFailed) {
      for (const [i, node] of pair.nodes.entries()) {
        const lines = node.output().split("\n").filter((l) => / (WARN|ERROR) /.test(l));
        console.error(`node ${i + 1} warnings and errors:\n${lines.join("\n")}`);
      }
    }
  } finally {
    await pair.close();
  }
}
