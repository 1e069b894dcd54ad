/**
 * The task modules a periodic task runs (privacyIDEA's `lib/task/`):
 * `EventCounter` copies an event counter into the statistics, `SimpleStats`
 * counts tokens and token owners. A module only measures; the scheduler
 * writes what it measured together with the run (see scheduler.ts).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { readEventCounter } from "../event/mod.ts";
import { MAX_STATS_KEY } from "../monitoring/mod.ts";
import * as stats from "./token_stats_store.ts";

/** One option of a task module as `/periodictask/options/<module>` describes it. */
export interface TaskOptionDescription {
  type: "bool" | "str";
  description: string;
  required?: boolean;
}

/** What a run measured; written with the run's last-run time in one transaction. */
export interface TaskOutcome {
  /** Statistics values to add (`/monitoring/<key>`). */
  stats: { key: string; value: number }[];
  /** Amounts to take off event counters (what was read, so increments since stay). */
  counterTakes: { name: string; amount: number }[];
}

/** A task module. */
export interface TaskModule {
  identifier: string;
  description: string;
  options: Readonly<Record<string, TaskOptionDescription>>;
  /** Problems of a task's options (checked when the task is saved), or []. */
  optionProblems(options: Readonly<Record<string, string>>): string[];
  /** Measures; a thrown error is a failed run. */
  run(deps: Deps, options: Readonly<Record<string, string>>): Promise<TaskOutcome>;
}

/** privacyIDEA's `is_true` of an option value (`True`, `1`, `yes`, `on`). */
export function isTrueOption(value: string | undefined): boolean {
  return value !== undefined && ["1", "true", "yes", "on"].includes(value.trim().toLowerCase());
}

const EVENT_COUNTER: TaskModule = {
  identifier: "EventCounter",
  description: "Write snapshots of the event counter to the MonitoringStats table.",
  options: {
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
  },
  optionProblems(options) {
    const key = options.stats_key ?? "";
    return key.length > MAX_STATS_KEY
      ? [`stats_key: at most ${MAX_STATS_KEY} characters, got ${key.length}`]
      : [];
  },
  async run(deps, options) {
    const name = options.event_counter ?? "";
    const value = name === "" ? undefined : await readEventCounter(deps.db, name);
    const key = options.stats_key ?? "";
    if (value === undefined || key === "") {
      // privacyIDEA's behaviour: nothing to write is no failure
      deps.log.warn("Periodic task EventCounter: no such event counter or no stats_key", {
        counter: name,
        statsKey: key,
      });
      return { stats: [], counterTakes: [] };
    }
    return {
      stats: [{ key, value }],
      counterTakes: isTrueOption(options.reset_event_counter) && value !== 0
        ? [{ name, amount: value }]
        : [],
    };
  },
};

/** The counts of SimpleStats by option (and statistics key) name. */
const SIMPLE_STATS: Readonly<
  Record<string, { description: string; count: (deps: Deps) => Promise<number> }>
> = {
  total_tokens: {
    description: "Total number of tokens",
    count: (deps) => stats.countTokens(deps.db),
  },
  hardware_tokens: {
    description: "Total number of hardware tokens",
    count: (deps) => stats.countTokens(deps.db, { kind: "hardware" }),
  },
  software_tokens: {
    description: "Total number of software tokens",
    count: (deps) => stats.countTokens(deps.db, { kind: "software" }),
  },
  unassigned_hardware_tokens: {
    description: "Number of hardware tokens not assigned to a user",
    count: (deps) => stats.countTokens(deps.db, { kind: "hardware", isAssigned: false }),
  },
  assigned_tokens: {
    description: "Number of tokens assigned to users",
    count: (deps) => stats.countTokens(deps.db, { isAssigned: true }),
  },
  user_with_token: {
    description: "Number of users with tokens assigned",
    count: (deps) => stats.countUsersWithActiveTokens(deps.db),
  },
};

const SIMPLE_STATS_MODULE: TaskModule = {
  identifier: "SimpleStats",
  description: "Collect simple statistics",
  options: Object.fromEntries(
    Object.entries(SIMPLE_STATS).map(([k, v]) => [k, { type: "bool", description: v.description }]),
  ),
  optionProblems: () => [],
  async run(deps, options) {
    const out: TaskOutcome = { stats: [], counterTakes: [] };
    for (const [key, stat] of Object.entries(SIMPLE_STATS)) {
      if (isTrueOption(options[key])) out.stats.push({ key, value: await stat.count(deps) });
    }
    return out;
  },
};

/** The task modules by identifier. */
export const TASK_MODULES: Readonly<Record<string, TaskModule>> = {
  EventCounter: EVENT_COUNTER,
  SimpleStats: SIMPLE_STATS_MODULE,
};
