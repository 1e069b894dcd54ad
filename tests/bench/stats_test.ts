import assert from "node:assert/strict";
import {
  combineRuns,
  mean,
  parseProcStat,
  parseProcStatus,
  parseWrkOutput,
  percentile,
  type ProcStat,
  ratePerSecond,
  RESULT_MARKER,
  serverErrors,
  treeCpuSeconds,
} from "../../bench/lib/stats.ts";

Deno.test("percentile interpolates linearly between closest ranks", () => {
  const v = [15, 20, 35, 40, 50];
  assert.equal(percentile(v, 0), 15);
  assert.equal(percentile(v, 100), 50);
  assert.equal(percentile(v, 50), 35);
  assert.equal(percentile(v, 40), 29); // rank 1.6 → 20 + 0.6·15
  assert.equal(percentile([3, 1, 2], 50), 2); // unsorted input
  assert.equal(percentile([7], 99), 7);
  assert.equal(percentile([], 50), undefined);
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.ok(Math.abs(percentile(hundred, 99)! - 99.01) < 1e-9);
  assert.throws(() => percentile(v, 101), RangeError);
});

Deno.test("mean and ratePerSecond", () => {
  assert.equal(mean([1, 2, 3, 6]), 3);
  assert.equal(mean([]), undefined);
  assert.equal(ratePerSecond(5000, 2_000_000), 2500);
  assert.equal(ratePerSecond(10, 0), 0);
});

const sampleOutput = `Running 8s test @ http://127.0.0.1:4000
  1 threads and 32 connections
${RESULT_MARKER}{"requests":20000,"duration_us":8000000,"p50_us":1200,"p99_us":9500.5,"mean_us":1500,"max_us":30000,"errors":{"connect":0,"read":1,"write":0,"status":12,"timeout":2},"statuses":{"200":19988,"400":10,"503":2},"accepts":19900,"signed":0,"sent":20032,"used":{"1":100,"2":99},"exhausted":false}
Requests/sec:   2500.00
`;

Deno.test("parseWrkOutput reads the Lua result line", () => {
  const r = parseWrkOutput(sampleOutput);
  assert.equal(r.requests, 20000);
  assert.equal(r.sent, 20032);
  assert.equal(r.rps, 2500);
  assert.equal(r.p50Ms, 1.2);
  assert.equal(r.p99Ms, 9.5005);
  assert.equal(r.meanMs, 1.5);
  assert.equal(r.maxMs, 30);
  assert.deepEqual(r.statuses, { "200": 19988, "400": 10, "503": 2 });
  assert.equal(r.accepts, 19900);
  assert.deepEqual(r.errors, { connect: 0, read: 1, write: 0, timeout: 2 });
  assert.deepEqual(r.used, { "1": 100, "2": 99 });
  assert.equal(r.exhausted, false);
  assert.equal(serverErrors(r.statuses), 2);
});

Deno.test("parseWrkOutput fails loudly without a result line and tolerates empty tables", () => {
  assert.throws(() => parseWrkOutput("unable to connect to 127.0.0.1:1\n"), /no result line/);
  // an empty Lua table is encoded as {} and missing numbers become 0
  const r = parseWrkOutput(`${RESULT_MARKER}{"requests":0,"statuses":{},"used":{}}\n`);
  assert.equal(r.rps, 0);
  assert.deepEqual(r.statuses, {});
  assert.equal(serverErrors(r.statuses), 0);
});

Deno.test("parseProcStatus reads VmHWM and VmRSS in bytes", () => {
  const text = "Name:\tdeno\nVmPeak:\t 999 kB\nVmHWM:\t  120000 kB\nVmRSS:\t   90000 kB\n";
  assert.deepEqual(parseProcStatus(text), { peakRss: 120000 * 1024, rss: 90000 * 1024 });
  assert.deepEqual(parseProcStatus("Name:\tx\n"), { peakRss: undefined, rss: undefined });
});

Deno.test("combineRuns adds requests, statuses, accepts and socket errors over runs", () => {
  const a = parseWrkOutput(sampleOutput);
  const b = parseWrkOutput(
    `${RESULT_MARKER}{"requests":5,"sent":6,"statuses":{"200":4,"500":1},"accepts":3,"signed":2,"errors":{"connect":1,"read":0,"write":0,"timeout":0}}\n`,
  );
  const c = combineRuns([a, b]);
  assert.equal(c.requests, 20005);
  assert.equal(c.sent, 20038);
  assert.equal(c.accepts, 19903);
  assert.equal(c.signed, 2);
  assert.deepEqual(c.statuses, { "200": 19992, "400": 10, "503": 2, "500": 1 });
  assert.equal(c.socketErrors, 4); // 1 read + 2 timeouts + 1 connect
  assert.deepEqual(combineRuns([]), {
    requests: 0,
    sent: 0,
    accepts: 0,
    signed: 0,
    statuses: {},
    socketErrors: 0,
  });
});

Deno.test("parseProcStat reads the parent pid and the process's and its ended children's CPU", () => {
  // fields 3…17: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
  const line = "77 (postgres: x (y)) S 42 1 1 0 -1 4194560 10 0 0 0 250 50 30 20 20 0";
  assert.deepEqual(parseProcStat(line), { ppid: 42, cpuSeconds: 3, childCpuSeconds: 0.5 });
  assert.equal(parseProcStat("garbage"), undefined);
});

Deno.test("treeCpuSeconds adds a process and all its descendants, ended children included", () => {
  const st = (ppid: number, cpu: number, child = 0): ProcStat => ({
    ppid,
    cpuSeconds: cpu,
    childCpuSeconds: child,
  });
  const stats = new Map<number, ProcStat>([
    [1, st(0, 100)], // init: not part of the tree
    [10, st(1, 1, 0.5)], // the root (e.g. runuser) with an ended child
    [11, st(10, 2, 4)], // postmaster: ended backends count in its child times
    [12, st(11, 3)],
    [13, st(11, 0.25)],
    [14, st(13, 0.25)],
    [20, st(1, 50)], // unrelated
  ]);
  assert.equal(treeCpuSeconds(10, stats), 1 + 0.5 + 2 + 4 + 3 + 0.25 + 0.25);
  assert.equal(treeCpuSeconds(99, stats), undefined);
});
