import dgram from "node:dgram";
import assert from "node:assert/strict";
import { TEST_ENGINE } from "../test_db.ts";
import { isRunning, serverDatabase, type ServerProcess, startTessera } from "./_server.ts";

// on the PostgreSQL run only the first test runs again (on PostgreSQL); the others are
// about processes, not the database
const SQLITE_RUN_ONLY = { ignore: TEST_ENGINE !== "sqlite" };

const WORKER_LISTEN_REGEXP =
  /Tessera listening address=127\.0\.0\.1:(\d+) version=\S+ pid=(\d+) worker=(\d+)/g;

/** Waits until `count` workers said they listen; returns port and pid by worker number. */
async function workersListening(
  server: ServerProcess,
  count: number,
  from = 0,
): Promise<{ port: number; pids: Map<number, number> }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const pids = new Map<number, number>();
    let port = 0;
    for (const m of server.log().slice(from).matchAll(WORKER_LISTEN_REGEXP)) {
      port = Number(m[1]);
      pids.set(Number(m[3]), Number(m[2]));
    }
    if (pids.size >= count) return { port, pids };
    if (Date.now() > deadline) throw new Error(`Workers did not start:\n${server.log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function parentOf(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** Connections to `port` that a process holds (not its listening socket or database links). */
function connectionsTo(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const e of Deno.readDirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(Deno.readLinkSync(`/proc/${pid}/fd/${e.name}`));
      if (m) inodes.add(m[1]);
    } catch { /* closed meanwhile */ }
  }
  let n = 0;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = Deno.readTextFileSync(table);
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const localPort = parseInt(f[1].split(":")[1], 16);
      const isEstablished = f[3] === "01";
      if (isEstablished && localPort === port && inodes.has(f[9])) n++;
    }
  }
  return n;
}

async function waitUntil(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Opens a connection, sends one keep-alive request (a refused admin call: answered and audited;
 * the health probes write no row) and reads the answer's head.
 */
async function openConnection(port: number): Promise<Deno.TcpConn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(
    new TextEncoder().encode("GET /system/ HTTP/1.1\r\nHost: localhost\r\n\r\n"),
  );
  const buf = new Uint8Array(4096);
  let head = "";
  while (!head.includes("\r\n\r\n")) {
    const n = await conn.read(buf);
    if (n === null) throw new Error("connection closed before the answer");
    head += new TextDecoder().decode(buf.subarray(0, n));
  }
  assert.match(head, /^HTTP\/1\.1 401/);
  return conn;
}

Deno.test("serve --workers 2: two processes answer on one port; SIGTERM stops all, exit 0", async () => {
  const db = await serverDatabase();
  const server = await startTessera(["serve", "--workers", "2", "--listen", "127.0.0.1:0"], {
    env: db.env,
  });
  const conns: Deno.TcpConn[] = [];
  try {
    const { port, pids } = await workersListening(server, 2);
    assert.ok(port > 0);
    const [one, two] = [pids.get(1)!, pids.get(2)!];
    assert.notEqual(one, two);
    assert.equal(parentOf(one), server.child.pid);
    assert.equal(parentOf(two), server.child.pid);
    // the parent ran the migrations and wrote the first-start files once, before the workers
    assert.ok((server.log().match(/Applied database migrations/g) ?? []).length <= 1);
    assert.doesNotMatch(server.log(), /Applied database migrations.*worker=/);
    assert.equal((server.log().match(/Created initial admin/g) ?? []).length, 1);

    // the kernel spreads new connections over both listening sockets
    for (let i = 0; i < 24; i++) conns.push(await openConnection(port));
    const held = [connectionsTo(one, port), connectionsTo(two, port)];
    assert.ok(held[0] > 0 && held[1] > 0, `connections per worker: ${held}`);
    assert.equal(held[0] + held[1], 24);
    for (const c of conns.splice(0)) c.close();

    server.child.kill("SIGTERM");
    const status = await server.status;
    assert.equal(status.code, 0, server.log());
    assert.ok(!isRunning(one) && !isRunning(two), "the workers ended with the parent");
    assert.match(server.log(), /Shutting down reason=SIGTERM worker=1/);
    assert.match(server.log(), /Shutting down reason=SIGTERM worker=2/);
    assert.match(server.log(), /All workers stopped code=0/);
    // every request of both workers is audited, under the one node name
    const rows = await db.rows(server.dataDir);
    assert.equal(rows.filter((r) => r.action === "GET /system").length, 24);
    assert.equal(new Set(rows.map((r) => r.node)).size, 1);
  } finally {
    for (const c of conns) c.close();
    await server.cleanup();
    await db.drop();
  }
});

Deno.test(
  "serve --workers: a worker that dies is restarted; the parent goes on serving",
  SQLITE_RUN_ONLY,
  async () => {
    const server = await startTessera(["serve", "--workers", "2", "--listen", "127.0.0.1:0"]);
    try {
      const first = await workersListening(server, 2);
      const mark = server.log().length;
      Deno.kill(first.pids.get(1)!, "SIGKILL");
      await server.waitFor(
        /ERROR Worker exited; restarting it worker=1 pid=\d+ code=\d+ signal=SIGKILL/,
        {
          from: mark,
        },
      );
      const again = await workersListening(server, 1, mark);
      const restarted = again.pids.get(1)!;
      assert.notEqual(restarted, first.pids.get(1));
      assert.equal(again.port, first.port);
      assert.equal(parentOf(restarted), server.child.pid);
      const res = await fetch(`http://127.0.0.1:${first.port}/healthz/`);
      assert.equal(res.status, 200);
      await res.body?.cancel();
      server.child.kill("SIGTERM");
      assert.equal((await server.status).code, 0, server.log());
      assert.ok(!isRunning(restarted) && !isRunning(first.pids.get(2)!));
    } finally {
      await server.cleanup();
    }
  },
);

Deno.test(
  "serve --workers: workers stop by themselves when the parent is killed",
  SQLITE_RUN_ONLY,
  async () => {
    // server.workers from the environment, like every config key
    const server = await startTessera(["serve", "--listen", "127.0.0.1:0"], {
      env: { TESSERA_SERVER_WORKERS: "2" },
    });
    try {
      const { pids } = await workersListening(server, 2);
      server.child.kill("SIGKILL");
      await server.status;
      for (const pid of pids.values()) {
        await waitUntil(() => !isRunning(pid), `worker ${pid} ends`);
      }
      await server.waitFor(/Shutting down reason="parent process exited" worker=1/);
    } finally {
      await server.cleanup();
    }
  },
);

Deno.test(
  "serve --workers: workers that cannot start make the parent give up with exit 1",
  SQLITE_RUN_ONLY,
  async () => {
    // the HTTP port is free (the parent checks it), but another program holds the RADIUS
    // port that worker 1 listens on: worker 1 fails at every start
    const blocker = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => blocker.bind(0, "127.0.0.1", resolve));
    const radiusPort = blocker.address().port;
    const server = await startTessera(["serve", "--workers", "2", "--listen", "127.0.0.1:0"], {
      env: {
        TESSERA_RADIUS_ENABLED: "true",
        TESSERA_RADIUS_HOST: "127.0.0.1",
        TESSERA_RADIUS_PORT: String(radiusPort),
        TESSERA_RADIUS_CLIENTS: '[{"address":"127.0.0.1","secret":"s3cret"}]',
      },
    });
    try {
      const status = await server.status;
      assert.equal(status.code, 1, server.log());
      assert.match(server.log(), /ERROR Worker keeps failing at start; stopping all workers/);
      assert.match(server.log(), /ERROR Worker exited; restarting it worker=1 pid=\d+ code=1/);
    } finally {
      blocker.close();
      await server.cleanup();
    }
  },
);

Deno.test(
  "serve --workers: a count that is not 1 to 256 is a usage error (exit 2)",
  SQLITE_RUN_ONLY,
  async () => {
    const cases: { args: string[]; env?: Record<string, string>; message: RegExp }[] = [
      {
        args: ["serve", "--workers", "0"],
        message: /Cannot parse --workers "0": expected an integer from 1 to 256/,
      },
      { args: ["serve", "--workers", "abc"], message: /Cannot parse --workers "abc"/ },
      { args: ["serve", "--workers=-2"], message: /Cannot parse --workers "-2"/ },
      { args: ["serve", "--workers", "257"], message: /Cannot parse --workers "257"/ },
      { args: ["serve", "--workers", "1.5"], message: /Cannot parse --workers "1.5"/ },
      { args: ["serve", "--workers"], message: /Option --workers needs a value/ },
      {
        args: ["migrate", "--workers", "2"],
        message: /--workers is only valid for serve, not for migrate/,
      },
      {
        args: ["serve"],
        env: { TESSERA_SERVER_WORKERS: "0" },
        message: /server\.workers: must be between 1 and 256/,
      },
    ];
    for (const c of cases) {
      const server = await startTessera(c.args, { env: c.env });
      try {
        const status = await server.status;
        assert.equal(status.code, 2, `${c.args.join(" ")}: ${server.log()}`);
        assert.match(server.log(), c.message);
      } finally {
        await server.cleanup();
      }
    }
  },
);
