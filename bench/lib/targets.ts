/**
 * The engine/node runs of one benchmark (SQLite; PostgreSQL with one or two
 * Tessera processes on one database): where each node keeps its data and
 * logs, and how a further node gets the first one's keys.
 *
 * @module
 */
import { type BenchTarget, targetLabel } from "./args.ts";
import type { Enrolment } from "./enrol.ts";
import type { BenchCluster } from "./postgres.ts";
import type { PgCounter } from "./pg_stats.ts";

/** One engine/node run: where its nodes keep their data and logs, and its state across phases. */
export interface TargetRun {
  target: BenchTarget;
  label: string;
  /** The first run: its numbers are the ones the ratio targets are judged on. */
  primary: boolean;
  /** One data directory per node (keys; SQLite's database). */
  dataDirs: string[];
  logs: string[];
  signedLogs: string[];
  /** SQLite file of the bench users; undefined = default under the data directory. */
  usersDatabase?: string;
  /** PostgreSQL database of the run. */
  databaseUrl?: string;
  cluster?: BenchCluster;
  /** Counts PostgreSQL's statements and transactions in the run's database (pg_stat_statements). */
  pgCounter?: PgCounter;
  enrolment?: Enrolment;
  /** Set when the run's unsigned part finished (the signed part needs it). */
  enrolled?: boolean;
}

/** wrk threads for `nodes` nodes: at least `threads`, a multiple of the nodes. */
export function threadsFor(threads: number, nodes: number): number {
  return Math.ceil(threads / nodes) * nodes;
}

/** Where a run keeps its files; SQLite alone keeps today's paths under `tmp`. */
export function planRun(target: BenchTarget, tmp: string, primary: boolean): TargetRun {
  const label = targetLabel(target);
  if (target.database === "sqlite") {
    return {
      target,
      label,
      primary,
      dataDirs: [`${tmp}/data`],
      logs: [`${tmp}/tessera.log`],
      signedLogs: [`${tmp}/tessera-signed.log`],
    };
  }
  const dir = `${tmp}/postgres-${target.nodes}node${target.nodes === 1 ? "" : "s"}`;
  const nodes = Array.from({ length: target.nodes }, (_, i) => i + 1);
  return {
    target,
    label,
    primary,
    dataDirs: nodes.map((n) => `${dir}/node${n}`),
    logs: nodes.map((n) => `${dir}/node${n}.log`),
    signedLogs: nodes.map((n) => `${dir}/node${n}-signed.log`),
    // the users' SQLite file outside the data directories: every node resolves the same users
    usersDatabase: `${dir}/bench-users.sqlite`,
  };
}

/** Gives a further node the first node's key files (encryption key, signing key), as an installation does. */
export async function shareKeys(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true, mode: 0o700 });
  for (const name of ["encKey", "signing-key.pem"]) {
    try {
      await Deno.copyFile(`${from}/${name}`, `${to}/${name}`);
      await Deno.chmod(`${to}/${name}`, 0o600);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
}
