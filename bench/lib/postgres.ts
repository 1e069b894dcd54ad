/**
 * The benchmark's PostgreSQL: a private cluster (tests/pg_cluster.ts: initdb
 * in a temporary folder, loopback port, stopped by process id), one fresh
 * database per engine/node run, and the CPU time of the cluster's processes.
 *
 * @module
 */
import pg from "pg";
import { type PgCluster, type PgClusterOptions, startPgCluster } from "../../tests/pg_cluster.ts";
import { processTreeCpuSeconds } from "./server.ts";

/** A running private cluster for one benchmark run. */
export interface BenchCluster {
  cluster: PgCluster;
  /** Creates an empty database and returns its URL (what TESSERA_STORAGE_DATABASE_URL gets). */
  createDatabase(name: string): Promise<string>;
  /** CPU seconds of the server and all its backends so far (ended ones included). */
  cpuSeconds(): number | undefined;
  /** Copies the server's log folder to `dir` (before stop: the cluster folder goes with it). */
  keepLogs(dir: string): Promise<void>;
  /** Stops the server and removes its folder; safe to call twice. */
  stop(): Promise<void>;
}

/** A database name the benchmark may create (letters, digits, underscores). */
export const DB_NAME_REGEXP = /^[a-z_][a-z0-9_]{0,62}$/;

/** The name of the database of a PostgreSQL run with `nodes` nodes. */
export function benchDatabaseName(nodes: number): string {
  return `tessera_bench_${nodes}node${nodes === 1 ? "" : "s"}`;
}

/** Starts the cluster; throws with PostgreSQL's message (or a hint when it is not installed). */
export async function startBenchCluster(options: PgClusterOptions = {}): Promise<BenchCluster> {
  const cluster = await startPgCluster(options);
  let stopped: Promise<void> | undefined;
  return {
    cluster,
    async createDatabase(name) {
      if (!DB_NAME_REGEXP.test(name)) throw new Error(`Cannot create database "${name}": bad name`);
      const client = new pg.Client({ connectionString: cluster.url });
      await client.connect();
      try {
        // the name is checked above: identifiers cannot be bound parameters
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return cluster.urlOf(name);
    },
    cpuSeconds: () => processTreeCpuSeconds(cluster.pid),
    async keepLogs(dir) {
      await Deno.mkdir(dir, { recursive: true });
      for await (const f of Deno.readDir(`${cluster.dir}/log`)) {
        if (f.isFile) await Deno.copyFile(`${cluster.dir}/log/${f.name}`, `${dir}/${f.name}`);
      }
    },
    stop() {
      return stopped ??= cluster.stop();
    },
  };
}
