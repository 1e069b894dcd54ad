import assert from "node:assert/strict";
import {
  ArgsError,
  benchTargets,
  DEFAULTS,
  parseBenchArgs,
  parseDatabases,
  parseDuration,
  parseNodes,
  SCENARIOS,
  targetLabel,
} from "../../bench/lib/args.ts";

Deno.test("parseDuration reads s, ms, m and bare seconds", () => {
  assert.equal(parseDuration("10s"), 10);
  assert.equal(parseDuration("1500ms"), 1.5);
  assert.equal(parseDuration("2m"), 120);
  assert.equal(parseDuration("7"), 7);
  assert.equal(parseDuration("2.5s"), 2.5);
  assert.throws(() => parseDuration("ten"), ArgsError);
  assert.throws(() => parseDuration("-1s"), ArgsError);
  assert.throws(() => parseDuration("5h"), ArgsError);
});

Deno.test("parseBenchArgs: no arguments gives the defaults with every scenario", () => {
  const o = parseBenchArgs([]);
  assert.deepEqual(o, { ...DEFAULTS, scenarios: [...SCENARIOS] });
  assert.equal(o.json, false);
});

Deno.test("parseBenchArgs reads every option, inline values too", () => {
  const o = parseBenchArgs([
    "--duration",
    "10s",
    "--connections=64",
    "--threads",
    "2",
    "--users",
    "50",
    "--tokens",
    "10000",
    "--warmup",
    "0",
    "--json",
    "--keep",
    "--binary",
    "dist/tessera",
  ]);
  assert.equal(o.durationS, 10);
  assert.equal(o.connections, 64);
  assert.equal(o.threads, 2);
  assert.equal(o.users, 50);
  assert.equal(o.tokens, 10000);
  assert.equal(o.warmupS, 0);
  assert.equal(o.json, true);
  assert.equal(o.keep, true);
  assert.equal(o.binary, "dist/tessera");
});

Deno.test("parseBenchArgs --scenario takes several names, keeps run order and the ceiling", () => {
  const o = parseBenchArgs(["--scenario", "auth", "hotp,wrong", "--json"]);
  assert.deepEqual(o.scenarios, ["hello", "hotp", "wrong", "auth"]);
  assert.equal(o.json, true);
  assert.deepEqual(parseBenchArgs(["--scenario=tokenlist"]).scenarios, ["hello", "tokenlist"]);
});

Deno.test("parseBenchArgs rejects bad input with a readable message", () => {
  assert.throws(() => parseBenchArgs(["--scenario", "nope"]), /Unknown scenario "nope"/);
  assert.throws(() => parseBenchArgs(["--scenario"]), /at least one name/);
  assert.throws(() => parseBenchArgs(["--users", "0"]), /positive whole number/);
  assert.throws(() => parseBenchArgs(["--users", "x"]), ArgsError);
  assert.throws(() => parseBenchArgs(["--duration"]), /needs a value/);
  assert.throws(() => parseBenchArgs(["--duration", "500ms"]), /at least 1s/);
  assert.throws(() => parseBenchArgs(["--frobnicate"]), /Unknown option/);
  assert.throws(
    () => parseBenchArgs(["--threads", "4", "--connections", "2"]),
    /at least --threads/,
  );
});

Deno.test("parseBenchArgs --server-env collects NAME=VALUE pairs (values may hold =)", () => {
  const o = parseBenchArgs([
    "--server-env",
    "MALLOC_ARENA_MAX=1",
    "--server-env=DENO_V8_FLAGS=--max-old-space-size=64",
  ]);
  assert.deepEqual(o.serverEnv, {
    MALLOC_ARENA_MAX: "1",
    DENO_V8_FLAGS: "--max-old-space-size=64",
  });
  assert.deepEqual(DEFAULTS.serverEnv, {}); // defaults untouched
  assert.throws(() => parseBenchArgs(["--server-env", "NOEQUALS"]), /NAME=VALUE/);
  assert.throws(() => parseBenchArgs(["--server-env", "=x"]), /NAME=VALUE/);
});

Deno.test("parseBenchArgs -h / --help", () => {
  assert.equal(parseBenchArgs(["-h"]).help, true);
  assert.equal(parseBenchArgs(["--help"]).help, true);
});

Deno.test("parseBenchArgs --database and --nodes: engines and node counts of the run", () => {
  assert.deepEqual(parseBenchArgs([]).databases, ["sqlite"]);
  assert.deepEqual(parseBenchArgs([]).nodes, [1]);
  assert.deepEqual(parseBenchArgs(["--database", "postgres"]).databases, ["postgres"]);
  assert.deepEqual(parseBenchArgs(["--database=both"]).databases, ["sqlite", "postgres"]);
  assert.deepEqual(parseBenchArgs(["--database", "postgres,sqlite"]).databases, [
    "sqlite",
    "postgres",
  ]);
  assert.deepEqual(parseDatabases("PostgreSQL"), ["postgres"]);
  const two = parseBenchArgs(["--database", "postgres", "--nodes", "2"]);
  assert.deepEqual(two.nodes, [2]);
  assert.deepEqual(parseNodes("2,1"), [1, 2]);
  assert.deepEqual(parseNodes("both"), [1, 2]);
  assert.deepEqual(DEFAULTS.databases, ["sqlite"]); // defaults untouched
});

Deno.test("parseBenchArgs refuses unknown engines, node counts and two SQLite nodes", () => {
  assert.throws(() => parseBenchArgs(["--database", "mysql"]), /Cannot parse --database "mysql"/);
  assert.throws(() => parseBenchArgs(["--database", ","]), /needs sqlite, postgres or both/);
  assert.throws(() => parseBenchArgs(["--nodes", "3"]), /Cannot parse --nodes "3"/);
  assert.throws(() => parseBenchArgs(["--nodes"]), /needs a value/);
  assert.throws(() => parseBenchArgs(["--nodes", "2"]), /--nodes 2 needs --database postgres/);
  assert.throws(
    () => parseBenchArgs(["--database", "sqlite", "--nodes", "1,2"]),
    /needs --database postgres/,
  );
});

Deno.test("benchTargets: SQLite once with one node, then PostgreSQL per node count", () => {
  const label = (args: string[]) => benchTargets(parseBenchArgs(args)).map(targetLabel);
  assert.deepEqual(label([]), ["SQLite, 1 node"]);
  assert.deepEqual(label(["--database", "both"]), ["SQLite, 1 node", "PostgreSQL, 1 node"]);
  assert.deepEqual(label(["--database", "both", "--nodes", "1,2"]), [
    "SQLite, 1 node",
    "PostgreSQL, 1 node",
    "PostgreSQL, 2 nodes",
  ]);
  assert.deepEqual(label(["--database", "both", "--nodes", "2"]), [
    "SQLite, 1 node",
    "PostgreSQL, 2 nodes",
  ]);
  assert.deepEqual(benchTargets(parseBenchArgs(["--database", "postgres", "--nodes", "2"])), [
    { database: "postgres", nodes: 2 },
  ]);
});

Deno.test("parseBenchArgs: --workers and --wrk-cpus", () => {
  const o = parseBenchArgs(["--workers", "2", "--wrk-cpus", "1"]);
  assert.equal(o.workers, 2);
  assert.equal(o.wrkCpus, "1");
  assert.equal(parseBenchArgs(["--wrk-cpus=0,1"]).wrkCpus, "0,1");
  assert.equal(parseBenchArgs([]).workers, 1);
  assert.equal(parseBenchArgs([]).wrkCpus, undefined);
  assert.throws(() => parseBenchArgs(["--workers", "0"]), ArgsError);
  assert.throws(() => parseBenchArgs(["--wrk-cpus", "one"]), /Cannot parse --wrk-cpus/);
});
