import assert from "node:assert/strict";
import {
  ArgsError,
  DEFAULTS,
  parseBenchArgs,
  parseDuration,
  SCENARIOS,
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
