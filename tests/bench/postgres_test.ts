import assert from "node:assert/strict";
import { Api } from "../../bench/lib/api.ts";
import { hotp, toHex } from "../../bench/lib/otp.ts";
import { benchDatabaseName, startBenchCluster } from "../../bench/lib/postgres.ts";
import { freePort, type ServerProcess, startServer } from "../../bench/lib/server.ts";
import { planRun, shareKeys } from "../../bench/lib/targets.ts";
import { pgBinDir } from "../pg_cluster.ts";

Deno.test({
  name: "bench on PostgreSQL: two nodes on one database with shared keys, one OTP accepted once",
  ignore: pgBinDir() === undefined, // Debian's postgresql package
  async fn() {
    const tmp = await Deno.makeTempDir();
    const cluster = await startBenchCluster();
    const servers: ServerProcess[] = [];
    try {
      const cpuAtStart = cluster.cpuSeconds();
      assert.ok(cpuAtStart !== undefined && cpuAtStart >= 0);
      const run = planRun({ database: "postgres", nodes: 2 }, tmp, true);
      const url = await cluster.createDatabase(benchDatabaseName(2));
      assert.match(url, /\/tessera_bench_2nodes$/);
      await Deno.writeTextFile(`${tmp}/tessera.toml`, "");
      await Deno.mkdir(`${tmp}/postgres-2nodes`, { recursive: true });
      for (const [i, dataDir] of run.dataDirs.entries()) {
        if (i > 0) await shareKeys(run.dataDirs[0], dataDir);
        const port = freePort();
        servers.push(
          await startServer({
            args: ["serve", "--data-dir", dataDir, "--listen", `127.0.0.1:${port}`],
            port,
            env: {
              TESSERA_CONFIG: `${tmp}/tessera.toml`,
              TESSERA_LOG_LEVEL: "warn",
              TESSERA_SIGNING_ENABLED: "false",
              TESSERA_STORAGE_DATABASE_URL: url,
            },
            logFile: run.logs[i],
            readyPath: "/healthz/",
            timeoutMs: 60000,
          }),
        );
      }
      const [a, b] = servers.map((s) => new Api(s.url));
      const password = (await Deno.readTextFile(`${run.dataDirs[0]}/initial-admin-password`))
        .trim();
      await a.login("admin", password);
      b.jwt = a.jwt; // the same key file: node 2 accepts node 1's admin JWT
      const key = new TextEncoder().encode("12345678901234567890");
      await a.call("POST", "/token/init", { type: "hotp", serial: "PG1", otpkey: toHex(key) });
      // node 2 decrypts the secret node 1 stored; the OTP is then used up on node 1 too
      const answer = await b.raw("POST", "/validate/check", { serial: "PG1", pass: hotp(key, 0) });
      assert.equal(answer.body.result.value, true, answer.text);
      const again = await a.raw("POST", "/validate/check", { serial: "PG1", pass: hotp(key, 0) });
      assert.equal(again.body.result.value, false, again.text);
      assert.ok(cluster.cpuSeconds()! > cpuAtStart!, "the backends' CPU time is counted");
    } finally {
      for (const s of servers) await s.stop();
      await cluster.stop();
      await Deno.remove(tmp, { recursive: true });
    }
  },
});
