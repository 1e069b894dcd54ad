/**
 * The scheduler that runs periodic tasks inside the server (privacyIDEA needs
 * an OS cron entry calling `privacyidea-cron run_scheduled`; the due rule is
 * the same). Every serving process ticks; a task runs for the nodes it names,
 * on the processes whose node name (`server.node_name`) is one of them.
 *
 * Exactly once per due time, however many processes share a node name (the
 * workers of `serve --workers N`, or several servers configured alike) and
 * whichever database: a process runs a due task for its node only under the
 * task's lease for that node, taken by one conditional update
 * (`periodictasklease`), and reads the last run again once it holds it. What
 * the task measured, the last run and the lease's release are written in one
 * transaction that commits only while the process still holds the lease; a
 * process that dies mid-run writes nothing and its lease expires, after which
 * the task runs again.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { nextCronTime } from "../../lib/cron.ts";
import { writeStats } from "../monitoring/mod.ts";
import { takeFromEventCounter } from "../event/mod.ts";
import * as store from "./periodic_task_store.ts";
import { TASK_MODULES, type TaskModule, type TaskOutcome } from "./task_modules.ts";

/** How long a lease lasts unless given: a run that takes longer may run twice. */
export const DEFAULT_LEASE_MS = 2 * 60_000;
/** A failed run with `retry_if_failed` is tried again after this long (privacyIDEA: next cron). */
export const DEFAULT_RETRY_DELAY_MS = 60_000;

/** Options of {@link runDueTasks}. */
export interface RunOptions {
  /** Who holds a lease: unique per process. */
  holder: string;
  leaseMs?: number;
  /** IANA time zone the intervals are read in; default: the process's local zone. */
  timeZone?: string;
  /** Task modules by identifier (tests); default: {@link TASK_MODULES}. */
  modules?: Readonly<Record<string, TaskModule>>;
  /** When each `id:node` last failed, kept by the caller between ticks (see retryDelayMs). */
  failures?: Map<string, number>;
  retryDelayMs?: number;
}

/** What one tick did with a task. */
export interface TaskRun {
  id: number;
  name: string;
  node: string;
  /** The due time (ms) the run was for. */
  due: number;
  isSuccess: boolean;
}

class LeaseLostError extends Error {}

/** The next due time of a task on a node, or undefined when its interval cannot be read. */
async function dueTime(
  deps: Deps,
  task: Pick<store.StoredTask, "name" | "interval">,
  reference: number,
  timeZone?: string,
): Promise<number | undefined> {
  try {
    return await nextCronTime(task.interval, reference, timeZone);
  } catch (err) {
    deps.log.warn("Ignoring periodic task: its interval cannot be read", {
      task: task.name,
      error: err instanceof Error ? err.message : String(err),
    });
    return undefined;
  }
}

/**
 * Runs the tasks due now on this process's node, in `ordering` order: those
 * active, naming the node, whose next interval time after their last run on
 * the node (else after their last change) has come. Resolves to the runs
 * this process made.
 */
export async function runDueTasks(deps: Deps, options: RunOptions): Promise<TaskRun[]> {
  const node = deps.nodeName;
  const modules = options.modules ?? TASK_MODULES;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const runs: TaskRun[] = [];
  const tasks = await store.listTasks(deps.db, { isActive: true });
  for (const listed of tasks) {
    if (!listed.nodes.includes(node)) continue;
    const now = deps.clock.now();
    const failedAt = options.failures?.get(`${listed.id}:${node}`);
    if (
      failedAt !== undefined && now - failedAt < (options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS)
    ) {
      continue;
    }
    const due = await dueTime(
      deps,
      listed,
      listed.lastRuns[node] ?? listed.lastUpdate,
      options.timeZone,
    );
    if (due === undefined || due > now) continue;
    const lease = { id: listed.id, node, holder: options.holder };
    let run: TaskRun | undefined;
    try {
      if (!await store.claimLease(deps.db, lease, now, now + leaseMs)) continue;
      run = await runLeased(deps, lease, { modules, now, timeZone: options.timeZone });
    } catch (err) {
      // the task was deleted meanwhile, or the database failed: the other tasks still run
      deps.log.warn("Cannot run periodic task", {
        task: listed.name,
        node,
        error: err instanceof Error ? err.message : String(err),
      });
      continue;
    }
    if (run === undefined) continue;
    runs.push(run);
    if (run.isSuccess) options.failures?.delete(`${listed.id}:${node}`);
    else options.failures?.set(`${listed.id}:${node}`, now);
  }
  return runs;
}

/**
 * Runs task `lease.id` for `lease.node` under the lease this process holds:
 * reads the task again (another process may have run it, or it changed), runs
 * it if still due, and writes the outcome with the release. Undefined when it
 * did not run.
 */
async function runLeased(
  deps: Deps,
  lease: { id: number; node: string; holder: string },
  context: { modules: Readonly<Record<string, TaskModule>>; now: number; timeZone?: string },
): Promise<TaskRun | undefined> {
  const [task] = await store.listTasks(deps.db, { id: lease.id });
  const due = task === undefined || !task.isActive || !task.nodes.includes(lease.node)
    ? undefined
    : await dueTime(deps, task, task.lastRuns[lease.node] ?? task.lastUpdate, context.timeZone);
  if (task === undefined || due === undefined || due > context.now) {
    await store.releaseLease(deps.db, lease);
    return undefined;
  }
  let outcome: TaskOutcome | undefined;
  try {
    const module = context.modules[task.taskmodule];
    if (module === undefined) throw new Error(`Unknown task module: '${task.taskmodule}'`);
    outcome = await module.run(deps, task.options);
  } catch (err) {
    deps.log.warn("Periodic task failed", {
      task: task.name,
      node: lease.node,
      error: err instanceof Error ? err.message : String(err),
      ...(task.isRetriedIfFailed ? { retry: "on a later tick" } : {}),
    });
  }
  try {
    await deps.db.transaction().execute(async (trx) => {
      const finished = deps.clock.now();
      // a failed run is noted only when it is not to be retried (privacyIDEA's rule). The last
      // run comes first: its foreign key locks the task's row before the lease's, the order in
      // which a delete of the task takes them, so the two wait for each other, never deadlock
      if (outcome !== undefined || !task.isRetriedIfFailed) {
        await store.setLastRun(trx, task.id, lease.node, finished);
      }
      if (outcome !== undefined) {
        for (const s of outcome.stats) await writeStats(trx, s.key, s.value, finished);
        for (const t of outcome.counterTakes) await takeFromEventCounter(trx, t.name, t.amount);
      }
      // another process took the lease over (this run outlasted it): it runs the task
      if (!await store.releaseLease(trx, lease)) throw new LeaseLostError();
    });
  } catch (err) {
    if (!(err instanceof LeaseLostError)) throw err;
    deps.log.warn("Periodic task ran longer than its lease; its result is dropped", {
      task: task.name,
      node: lease.node,
    });
    return undefined;
  }
  if (outcome !== undefined) {
    deps.log.info("Ran periodic task", {
      task: task.name,
      node: lease.node,
      due: new Date(due).toISOString(),
      holder: lease.holder,
    });
  }
  return { id: task.id, name: task.name, node: lease.node, due, isSuccess: outcome !== undefined };
}

/** Options of {@link startScheduler}. */
export interface SchedulerOptions extends Omit<RunOptions, "holder" | "failures"> {
  /** Milliseconds between two looks for due tasks. */
  tickMs: number;
}

/** A running scheduler. */
export interface Scheduler {
  /** Who this process is in the leases. */
  holder: string;
  /** Stops ticking and waits for a running tick to end. */
  stop(): Promise<void>;
}

/** Starts ticking: every `tickMs` the due tasks of this node run (see {@link runDueTasks}). */
export function startScheduler(deps: Deps, options: SchedulerOptions): Scheduler {
  const id = [...deps.random.bytes(6)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const holder = `${deps.nodeName.slice(0, 200)}/${id}`;
  // a brake per process, no correctness: a failing task is not retried on every tick
  const failures = new Map<string, number>();
  const stopped = new AbortController();
  const sleep = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.tickMs);
      stopped.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      await sleep();
      if (stopped.signal.aborted) break;
      try {
        await runDueTasks(deps, { ...options, holder, failures });
      } catch (err) {
        // the database may be away for a while: the next tick tries again
        deps.log.warn("Cannot run periodic tasks", {
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  })();
  return {
    holder,
    async stop() {
      stopped.abort();
      await loop;
    },
  };
}
