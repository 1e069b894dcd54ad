/**
 * `/periodictask/` (spec 14 §10): the task modules and their options, task
 * definitions in privacyIDEA's shape (create, replace, enable, disable,
 * delete), refusals that change nothing; and the scheduler: tasks run on their
 * interval on the nodes they name, with a fake clock and a short tick.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enroll, enrollHotp } from "../fixtures/tokens.ts";
import { runDueTasks, startScheduler } from "../../src/domain/periodic_task/mod.ts";
import { TASK_MODULES, type TaskModule } from "../../src/domain/periodic_task/task_modules.ts";
import { readEventCounter } from "../../src/domain/event/mod.ts";
import { changeCounter } from "../../src/domain/event/event_store.ts";

const MINUTE = 60_000;
// the test clock's start (2026-01-01 00:00 UTC) as privacyIDEA writes it
const EPOCH_TEXT = "2026-01-01 00:00:00.000000+0000";

async function createTask(t: TestApp, body: Record<string, unknown>): Promise<number> {
  const res = await jsonOf(await t.asAdmin("POST", "/periodictask/", { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

async function tasks(t: TestApp) {
  const res = await jsonOf(await t.asAdmin("GET", "/periodictask/"));
  assert.equal(res.status, 200);
  return res.body.result.value;
}

async function monitoring(t: TestApp, key: string) {
  const res = await jsonOf(await t.asAdmin("GET", `/monitoring/${key}`));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value as [string, number][];
}

const STATS_TASK = {
  name: "stats",
  interval: "*/5 * * * *",
  nodes: "test-node",
  taskmodule: "SimpleStats",
  ordering: 1,
  options: { total_tokens: true, hardware_tokens: "True", assigned_tokens: "1" },
};

Deno.test("GET /periodictask/taskmodules/, /options/<module> and /nodes/ describe what there is", async () => {
  const t = await createTestApp();
  const modules = await jsonOf(await t.asAdmin("GET", "/periodictask/taskmodules/"));
  assert.deepEqual(modules.body.result.value, ["EventCounter", "SimpleStats"]);
  const options = await jsonOf(await t.asAdmin("GET", "/periodictask/options/EventCounter"));
  assert.deepEqual(options.body.result.value, {
    event_counter: {
      type: "str",
      description: "The name of the event counter to read.",
      required: true,
    },
    stats_key: {
      type: "str",
      description: "The name of the stats key to write to the MonitoringStats table.",
      required: true,
    },
    reset_event_counter: {
      type: "bool",
      description:
        "Whether to reset the event_counter, if it is read and written to the MonitoringStats table.",
    },
  });
  const simple = await jsonOf(await t.asAdmin("GET", "/periodictask/options/SimpleStats"));
  assert.deepEqual(Object.keys(simple.body.result.value), [
    "total_tokens",
    "hardware_tokens",
    "software_tokens",
    "unassigned_hardware_tokens",
    "assigned_tokens",
    "user_with_token",
  ]);
  const unknown = await jsonOf(await t.asAdmin("GET", "/periodictask/options/Nope"));
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.result.error.code, 905);
  assert.equal(unknown.body.result.error.message, "ERR905: Unknown task module: 'Nope'");
  const nodes = await jsonOf(await t.asAdmin("GET", "/periodictask/nodes/"));
  assert.deepEqual(nodes.body.result.value, ["test-node"]);
  await t.close();
});

Deno.test("POST, GET, enable, disable and DELETE /periodictask/ in privacyIDEA's shape", async () => {
  const t = await createTestApp();
  const id = await createTask(t, { ...STATS_TASK, nodes: " test-node , other " });
  assert.equal(typeof id, "number");
  assert.deepEqual(await tasks(t), [{
    id,
    name: "stats",
    active: true,
    interval: "*/5 * * * *",
    nodes: ["test-node", "other"],
    taskmodule: "SimpleStats",
    retry_if_failed: true,
    ordering: 1,
    last_update: EPOCH_TEXT,
    options: { assigned_tokens: "1", hardware_tokens: "True", total_tokens: "True" },
    last_runs: {},
  }]);
  // a second task with a lower ordering comes first; options may be JSON text
  t.clock.advance(1500);
  const first = await createTask(t, {
    name: "counter",
    interval: "0 8 * * *",
    nodes: "other",
    taskmodule: "EventCounter",
    ordering: "0",
    active: "false",
    retry_if_failed: "0",
    options: JSON.stringify({ event_counter: "c1", stats_key: "k1" }),
  });
  const listed = await tasks(t);
  assert.deepEqual(listed.map((x: { id: number }) => x.id), [first, id]);
  assert.equal(listed[0].active, false);
  assert.equal(listed[0].retry_if_failed, false);
  assert.equal(listed[0].last_update, "2026-01-01 00:00:01.500000+0000");

  // the task runs on test-node: a last run appears for it
  t.clock.advance(5 * MINUTE);
  await runDueTasks(t.deps, { holder: "h", timeZone: "UTC" });
  const ran = (await jsonOf(await t.asAdmin("GET", `/periodictask/${id}`))).body.result.value;
  assert.deepEqual(Object.keys(ran.last_runs), ["test-node"]);

  // replacing by id: options not sent go, as do the last runs of nodes no longer named
  t.clock.advance(1000);
  const replaced = await jsonOf(
    await t.asAdmin("POST", "/periodictask/", {
      json: true,
      body: { ...STATS_TASK, id, nodes: "other", options: { user_with_token: true } },
    }),
  );
  assert.equal(replaced.body.result.value, id);
  const after = (await jsonOf(await t.asAdmin("GET", `/periodictask/${id}`))).body.result.value;
  assert.deepEqual(after.options, { user_with_token: "True" });
  assert.deepEqual(after.nodes, ["other"]);
  assert.deepEqual(after.last_runs, {});
  assert.equal(after.last_update, "2026-01-01 00:05:02.500000+0000");

  // enable/disable answer the id and move last_update
  t.clock.advance(1000);
  const off = await jsonOf(await t.asAdmin("POST", `/periodictask/disable/${id}`));
  assert.equal(off.body.result.value, id);
  const disabled = (await jsonOf(await t.asAdmin("GET", `/periodictask/${id}`))).body.result.value;
  assert.equal(disabled.active, false);
  assert.equal(disabled.last_update, "2026-01-01 00:05:03.500000+0000");
  assert.equal((await jsonOf(await t.asAdmin("POST", `/periodictask/enable/${id}`))).status, 200);
  assert.equal(
    (await jsonOf(await t.asAdmin("GET", `/periodictask/${id}`))).body.result.value.active,
    true,
  );

  const del = await jsonOf(await t.asAdmin("DELETE", `/periodictask/${id}`));
  assert.equal(del.status, 200);
  assert.equal(del.body.result.value, id);
  for (
    const [method, path] of [
      ["GET", `/periodictask/${id}`],
      ["DELETE", `/periodictask/${id}`],
      ["POST", `/periodictask/enable/${id}`],
      ["POST", `/periodictask/disable/${id}`],
    ]
  ) {
    const gone = await jsonOf(await t.asAdmin(method, path));
    assert.equal(gone.status, 404, `${method} ${path}`);
    assert.equal(gone.body.result.error.code, 601);
    assert.equal(gone.body.result.error.message, "The requested PeriodicTask could not be found.");
  }
  assert.deepEqual((await tasks(t)).map((x: { id: number }) => x.id), [first]);
  await t.close();
});

Deno.test("POST /periodictask/ refuses bad input with 400/905 (or 404) and changes nothing", async () => {
  const t = await createTestApp();
  const id = await createTask(t, STATS_TASK);
  const before = await tasks(t);
  const cases: [Record<string, unknown>, number, string][] = [
    [{ ...STATS_TASK, name: undefined }, 400, "ERR905: Missing parameter: name"],
    [{ ...STATS_TASK, interval: undefined }, 400, "ERR905: Missing parameter: interval"],
    [{ ...STATS_TASK, nodes: undefined }, 400, "ERR905: Missing parameter: nodes"],
    [{ ...STATS_TASK, taskmodule: undefined }, 400, "ERR905: Missing parameter: taskmodule"],
    [{ ...STATS_TASK, ordering: undefined }, 400, "ERR905: Missing parameter: ordering"],
    [{ ...STATS_TASK, nodes: "  " }, 400, "ERR905: nodes: expected at least one node"],
    [{ ...STATS_TASK, taskmodule: "Foo" }, 400, "ERR905: Unknown task module: 'Foo'"],
    [{ ...STATS_TASK, ordering: -3 }, 400, "ERR905: Invalid ordering: -3"],
    [{ ...STATS_TASK, ordering: "x" }, 400, "ERR905: Invalid ordering: x"],
    [
      { ...STATS_TASK, interval: "61 * * * *" },
      400,
      "ERR905: Invalid interval: Constraint error, got value 61 expected range 0-59",
    ],
    [
      { ...STATS_TASK, interval: "* * *" },
      400,
      "ERR905: Invalid interval: expected 5 fields (minute hour day month weekday) or 6 " +
      "(seconds last), got 3",
    ],
    [{ ...STATS_TASK, options: "[1, 2]" }, 400, "ERR905: options: expected dictionary, got [1,2]"],
    [
      { ...STATS_TASK, options: "{x" },
      400,
      'ERR905: options: expected dictionary, got "{x" (not JSON)',
    ],
    [
      {
        ...STATS_TASK,
        name: "n2",
        taskmodule: "EventCounter",
        options: { stats_key: "k".repeat(129) },
      },
      400,
      "ERR905: options: stats_key: at most 128 characters, got 129",
    ],
    [
      { ...STATS_TASK, name: "n".repeat(65) },
      400,
      "ERR905: Cannot use periodic task name: at most 64 characters",
    ],
    [
      { ...STATS_TASK, name: "stats", ordering: 2 },
      400,
      'ERR905: Cannot save periodic task "stats": another periodic task has this name',
    ],
    [{ ...STATS_TASK, id: 999 }, 404, "The requested PeriodicTask could not be found."],
    [
      { ...STATS_TASK, id: "x1" },
      400,
      'ERR905: Cannot parse periodic task id: expected a non-negative integer, got "x1"',
    ],
  ];
  for (const [body, status, message] of cases) {
    t.clock.advance(1000);
    const res = await jsonOf(await t.asAdmin("POST", "/periodictask/", { body, json: true }));
    assert.equal(res.status, status, `${message}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.result.status, false);
    assert.equal(res.body.result.error.message, message);
    assert.deepEqual(await tasks(t), before, `${message}: nothing changed`);
  }
  // a non-number id in the path is a 400 (privacyIDEA: 500), for every route
  for (
    const [method, path] of [
      ["GET", "/periodictask/abc"],
      ["DELETE", "/periodictask/abc"],
      ["POST", "/periodictask/enable/1x"],
    ]
  ) {
    const res = await jsonOf(await t.asAdmin(method, path));
    assert.equal(res.status, 400, path);
    assert.equal(res.body.result.error.code, 905);
  }
  assert.deepEqual(await tasks(t), before);
  assert.equal(before[0].id, id);
  await t.close();
});

Deno.test("scheduler: a task runs when its interval comes after its last run, on its nodes only", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice" }] });
  await enrollHotp(t, { user: "alice", realm: "realm1" });
  await enrollHotp(t);
  await enroll(t, { type: "yubikey", genkey: "1" });
  const id = await createTask(t, STATS_TASK);
  await createTask(t, { ...STATS_TASK, name: "elsewhere", nodes: "other-node" });
  const run = () => runDueTasks(t.deps, { holder: "h", timeZone: "UTC" });

  // created at 00:00; the next time of */5 is 00:05
  t.clock.advance(4 * MINUTE + 59_000);
  assert.deepEqual(await run(), []);
  assert.deepEqual(await monitoring(t, "total_tokens"), []);
  t.clock.advance(1000);
  const runs = await run();
  assert.deepEqual(runs.map((r) => [r.name, r.node, new Date(r.due).toISOString()]), [
    ["stats", "test-node", "2026-01-01T00:05:00.000Z"],
  ]);
  assert.deepEqual(await monitoring(t, "total_tokens"), [["2026-01-01 00:05:00.000000+0000", 3]]);
  assert.deepEqual(await monitoring(t, "hardware_tokens"), [[
    "2026-01-01 00:05:00.000000+0000",
    1,
  ]]);
  assert.deepEqual(await monitoring(t, "assigned_tokens"), [[
    "2026-01-01 00:05:00.000000+0000",
    1,
  ]]);
  // options that are off write nothing
  assert.deepEqual(await monitoring(t, "software_tokens"), []);
  const task = (await jsonOf(await t.asAdmin("GET", `/periodictask/${id}`))).body.result.value;
  assert.deepEqual(task.last_runs, { "test-node": "2026-01-01 00:05:00.000000+0000" });

  // not again before 00:10, then once
  t.clock.advance(4 * MINUTE);
  assert.deepEqual(await run(), []);
  t.clock.advance(MINUTE);
  assert.equal((await run()).length, 1);
  assert.equal((await run()).length, 0);
  assert.equal((await monitoring(t, "total_tokens")).length, 2);

  // a disabled task does not run
  await t.asAdmin("POST", `/periodictask/disable/${id}`);
  t.clock.advance(10 * MINUTE);
  assert.deepEqual(await run(), []);
  await t.close();
});

Deno.test("scheduler: started with a short tick, it runs due tasks by itself and stops cleanly", async () => {
  const t = await createTestApp();
  await enrollHotp(t);
  await createTask(t, { ...STATS_TASK, interval: "* * * * *" });
  const scheduler = startScheduler(t.deps, { tickMs: 20, timeZone: "UTC" });
  try {
    const waitFor = async (count: number) => {
      for (let i = 0; i < 200; i++) {
        if ((await monitoring(t, "total_tokens")).length >= count) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.fail(`no ${count} runs within 2 s`);
    };
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await monitoring(t, "total_tokens"), [], "not due before 00:01");
    t.clock.advance(MINUTE);
    await waitFor(1);
    t.clock.advance(MINUTE);
    await waitFor(2);
    // many ticks within one minute run it once
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await monitoring(t, "total_tokens")).length, 2);
  } finally {
    await scheduler.stop();
  }
  t.clock.advance(MINUTE);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await monitoring(t, "total_tokens")).length, 2, "no run after stop()");
  await t.close();
});

Deno.test("EventCounter: a Counter event handler's count is written to /monitoring, and reset", async () => {
  const t = await createTestApp();
  const handler = await jsonOf(
    await t.asAdmin("POST", "/event/", {
      json: true,
      body: {
        name: "count-inits",
        event: "token_init",
        handlermodule: "Counter",
        action: "increase_counter",
        position: "post",
        "option.counter_name": "inits",
      },
    }),
  );
  assert.equal(handler.status, 200, JSON.stringify(handler.body));
  await createTask(t, {
    name: "inits",
    interval: "* * * * *",
    nodes: "test-node",
    taskmodule: "EventCounter",
    ordering: 0,
    options: { event_counter: "inits", stats_key: "token_inits", reset_event_counter: true },
  });
  const run = () => runDueTasks(t.deps, { holder: "h", timeZone: "UTC" });
  for (let i = 0; i < 3; i++) await enrollHotp(t);
  assert.equal(await readEventCounter(t.deps.db, "inits"), 3);
  t.clock.advance(MINUTE);
  assert.equal((await run()).length, 1);
  assert.equal(await readEventCounter(t.deps.db, "inits"), 0, "reset after the snapshot");
  await enrollHotp(t);
  t.clock.advance(MINUTE);
  await run();
  t.clock.advance(MINUTE);
  await run();
  assert.deepEqual(await monitoring(t, "token_inits"), [
    ["2026-01-01 00:01:00.000000+0000", 3],
    ["2026-01-01 00:02:00.000000+0000", 1],
    ["2026-01-01 00:03:00.000000+0000", 0],
  ]);
  const last = await jsonOf(await t.asAdmin("GET", "/monitoring/token_inits/last"));
  assert.equal(last.body.result.value, 0);
  // a counter that does not exist writes nothing and is no failure
  await createTask(t, {
    name: "missing",
    interval: "* * * * *",
    nodes: "test-node",
    taskmodule: "EventCounter",
    ordering: 5,
    options: { event_counter: "nope", stats_key: "nope_key" },
  });
  t.clock.advance(MINUTE);
  const runs = await run();
  assert.deepEqual(runs.map((r) => [r.name, r.isSuccess]), [["inits", true], ["missing", true]]);
  assert.deepEqual(await monitoring(t, "nope_key"), []);
  await t.close();
});

Deno.test("EventCounter: a count made while the task runs is kept by the reset", async () => {
  const t = await createTestApp();
  await changeCounter(t.deps.db, "c", 5, false);
  // a request counts between the task's read and its write
  const modules = {
    ...TASK_MODULES,
    EventCounter: {
      ...TASK_MODULES.EventCounter,
      async run(deps: typeof t.deps, options: Readonly<Record<string, string>>) {
        const outcome = await TASK_MODULES.EventCounter.run(deps, options);
        await changeCounter(deps.db, "c", 1, false);
        return outcome;
      },
    },
  };
  await createTask(t, {
    name: "c",
    interval: "* * * * *",
    nodes: "test-node",
    taskmodule: "EventCounter",
    ordering: 0,
    options: { event_counter: "c", stats_key: "c", reset_event_counter: "True" },
  });
  t.clock.advance(MINUTE);
  await runDueTasks(t.deps, { holder: "h", timeZone: "UTC", modules });
  assert.deepEqual(await monitoring(t, "c"), [["2026-01-01 00:01:00.000000+0000", 5]]);
  // privacyIDEA sets the counter to 0 and loses that count
  assert.equal(await readEventCounter(t.deps.db, "c"), 1);
  await t.close();
});

Deno.test("scheduler: a failed run is noted only without retry_if_failed, and writes nothing", async () => {
  const t = await createTestApp();
  const failing: TaskModule = {
    ...TASK_MODULES.SimpleStats,
    run: () => Promise.reject(new Error("the statistics backend is away")),
  };
  const modules = { ...TASK_MODULES, SimpleStats: failing };
  const retried = await createTask(t, STATS_TASK);
  const once = await createTask(t, { ...STATS_TASK, name: "once", retry_if_failed: false });
  const failures = new Map<string, number>();
  const run = () =>
    runDueTasks(t.deps, { holder: "h", timeZone: "UTC", modules, failures, retryDelayMs: 0 });
  t.clock.advance(5 * MINUTE);
  const runs = await run();
  assert.deepEqual(runs.map((r) => [r.name, r.isSuccess]), [["stats", false], ["once", false]]);
  const get = async (id: number) =>
    (await jsonOf(await t.asAdmin("GET", `/periodictask/${id}`))).body.result.value;
  assert.deepEqual((await get(retried)).last_runs, {});
  assert.deepEqual((await get(once)).last_runs, { "test-node": "2026-01-01 00:05:00.000000+0000" });
  assert.deepEqual(await monitoring(t, "total_tokens"), []);
  assert.ok(t.log.lines.some((l) => l.includes("the statistics backend is away")));
  // the retried task is tried again on the next tick, the other waits for its interval
  t.clock.advance(1000);
  assert.deepEqual((await run()).map((r) => r.name), ["stats"]);
  // with the default retry delay, the next tick skips it
  const braked = await runDueTasks(t.deps, { holder: "h", timeZone: "UTC", modules, failures });
  assert.deepEqual(braked, []);
  await t.close();
});

Deno.test("scheduler: of two processes with the node's name, one runs a due task (lease)", async () => {
  const t = await createTestApp();
  await enrollHotp(t);
  await createTask(t, { ...STATS_TASK, interval: "* * * * *" });
  for (let minute = 1; minute <= 5; minute++) {
    t.clock.advance(MINUTE);
    const [a, b] = await Promise.all([
      runDueTasks(t.deps, { holder: "process-a", timeZone: "UTC" }),
      runDueTasks(t.deps, { holder: "process-b", timeZone: "UTC" }),
    ]);
    assert.equal(a.length + b.length, 1, `minute ${minute}: ${a.length} + ${b.length} runs`);
  }
  assert.equal((await monitoring(t, "total_tokens")).length, 5);
  await t.close();
});
