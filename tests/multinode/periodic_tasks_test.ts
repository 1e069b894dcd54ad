/**
 * Periodic tasks run by real server processes that share a node name: two
 * nodes on one PostgreSQL database (the PostgreSQL run), and the two workers
 * of `serve --workers 2` on one SQLite file (the SQLite run). A task due
 * every second, looked for every 100 ms by each process, runs once per due
 * time: every statistics row is one run, no due time is run twice, and no
 * process runs a task of a node it is not.
 *
 * @module
 */
import assert from "node:assert/strict";
import { openTestDatabase, TEST_ENGINE } from "../test_db.ts";
import {
  api,
  copyKeys,
  initialAdminPassword,
  login,
  startNode,
  type TesseraNode,
} from "./_node.ts";
import { startTessera } from "../cli/_server.ts";

const ENV = {
  TESSERA_SERVER_NODE_NAME: "pinode1",
  TESSERA_PERIODIC_TASKS_TICK: "100",
  TESSERA_PERIODIC_TASKS_TIME_ZONE: "UTC",
};
const RUN_REGEXP = /Ran periodic task task=(\S+) node=(\S+) due=(\S+) holder=(\S+)/g;

/** The runs the processes logged: task, node, due time, holder. */
function runsIn(log: string): { task: string; node: string; due: string; holder: string }[] {
  return [...log.matchAll(RUN_REGEXP)].map((m) => ({
    task: m[1],
    node: m[2],
    due: m[3],
    holder: m[4],
  }));
}

const TASKS = 12;

/**
 * Creates tasks due every second on pinode1 (enough that the processes' ticks
 * overlap) and one on a node no process has, lets the processes tick for a few
 * seconds, deletes the tasks, and checks that every due time of every task ran
 * once. `logs()` gives the processes' output.
 */
async function runOncePerDueTime(node: { url: string }, jwt: string, logs: () => string) {
  const create = async (name: string, nodes: string) => {
    const res = await api(node, "POST", "/periodictask/", {
      jwt,
      params: {
        name,
        interval: "* * * * * *",
        nodes,
        taskmodule: "SimpleStats",
        ordering: "0",
        options: JSON.stringify({ total_tokens: true }),
      },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.result.value as number;
  };
  const ids: number[] = [];
  for (let i = 0; i < TASKS; i++) ids.push(await create(`every-second-${i}`, "pinode1"));
  ids.push(await create("elsewhere", "pinode2"));
  await new Promise((r) => setTimeout(r, 5_000));
  for (const id of ids) {
    assert.equal((await api(node, "DELETE", `/periodictask/${id}`, { jwt })).status, 200);
  }
  // a run that began before the delete has committed by now
  await new Promise((r) => setTimeout(r, 500));
  const stats = await api(node, "GET", "/monitoring/total_tokens", { jwt });
  assert.equal(stats.status, 200);
  const rows = stats.body.result.value as [string, number][];
  const runs = runsIn(logs());
  assert.ok(rows.length >= 3 * TASKS, `3 runs a task in 5 s, got ${rows.length}: ${logs()}`);
  assert.equal(runs.length, rows.length, "every run wrote one row, and every row is one run");
  assert.ok(runs.every((r) => r.task.startsWith("every-second-")), "no task of another node");
  assert.deepEqual(new Set(runs.map((r) => r.node)), new Set(["pinode1"]));
  const dues = runs.map((r) => `${r.task}@${r.due}`);
  const twice = dues.filter((d, i) => dues.indexOf(d) !== i);
  assert.deepEqual(twice, [], "due times that ran twice");
  return runs;
}

Deno.test({
  name: "two nodes with one node name on PostgreSQL run a due periodic task once",
  ignore: TEST_ENGINE !== "postgres",
  fn: async () => {
    const database = await openTestDatabase();
    const dirs = [
      await Deno.makeTempDir({ prefix: "tessera-pt-" }),
      await Deno.makeTempDir({ prefix: "tessera-pt-" }),
    ];
    const nodes: TesseraNode[] = [];
    try {
      nodes.push(await startNode({ dataDir: dirs[0], databaseUrl: database.url, env: ENV }));
      await copyKeys(dirs[0], dirs[1]);
      nodes.push(await startNode({ dataDir: dirs[1], databaseUrl: database.url, env: ENV }));
      const jwt = await login(nodes[0], "admin", await initialAdminPassword(dirs[0]));
      const runs = await runOncePerDueTime(
        nodes[1],
        jwt,
        () => nodes.map((n) => n.output()).join("\n"),
      );
      // the holders are the two processes (which of them runs a due time is a race)
      for (const r of runs) {
        assert.ok(nodes.some((n) => n.output().includes(`holder=${r.holder}`)));
      }
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
      await database.drop();
      for (const dir of dirs) await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "the two workers of serve --workers 2 on SQLite run a due periodic task once",
  ignore: TEST_ENGINE !== "sqlite",
  fn: async () => {
    const server = await startTessera(["serve", "--workers", "2", "--listen", "127.0.0.1:0"], {
      env: ENV,
    });
    try {
      const listening = /Tessera listening address=127\.0\.0\.1:(\d+) version=\S+ pid=\d+ worker=2/;
      await server.waitFor(/worker=1/);
      const port = (await server.waitFor(listening))[1];
      const node = { url: `http://127.0.0.1:${port}` };
      const jwt = await login(node, "admin", await initialAdminPassword(server.dataDir));
      const runs = await runOncePerDueTime(node, jwt, () => server.log());
      // each run names the worker that made it (log field worker=N)
      const workers = new Set(
        [...server.log().matchAll(/Ran periodic task [^\n]* worker=(\d)/g)].map((m) => m[1]),
      );
      assert.ok(workers.size >= 1 && runs.length >= 3);
    } finally {
      server.child.kill("SIGTERM");
      await server.cleanup();
    }
  },
});
