import assert from "node:assert/strict";
import { luaScript, luaString } from "../../bench/lib/lua.ts";
import { hotpSequence } from "../../bench/lib/otp.ts";
import { runWrk, wrkArgs, wrkVersion } from "../../bench/lib/wrk.ts";
import { RESULT_MARKER } from "../../bench/lib/stats.ts";

Deno.test("luaString escapes quotes, backslashes, control and non-ASCII bytes", () => {
  assert.equal(luaString("plain /path?a=1"), '"plain /path?a=1"');
  assert.equal(luaString('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(luaString("x\ny"), '"x\\010y"');
  assert.equal(luaString("é"), '"\\195\\169"');
});

Deno.test("luaScript embeds method, headers, items, thread count and the result marker", () => {
  const script = luaScript({
    method: "POST",
    headers: { "PI-Authorization": "jwt.x.y" },
    items: [
      { path: "/validate/check", body: "user=a&pass=1", otps: "123456654321" },
      { path: "/token/?page=1" },
    ],
    threads: 2,
  });
  assert.match(script, /local METHOD = "POST"/);
  assert.match(script, /\["Content-Type"\] = "application\/x-www-form-urlencoded"/);
  assert.match(script, /\["PI-Authorization"\] = "jwt.x.y"/);
  assert.match(script, /\{"\/validate\/check", "user=a&pass=1", "123456654321"\}/);
  assert.match(script, /\{"\/token\/\?page=1", nil, nil\}/);
  assert.match(script, /local THREADS = 2/);
  assert.ok(script.includes(`io.write("${RESULT_MARKER}"`));
  const get = luaScript({ method: "GET", items: [{ path: "/" }], threads: 1 });
  assert.doesNotMatch(get, /Content-Type/);
});

Deno.test("luaScript refuses empty runs and OTP items shared between threads", () => {
  assert.throws(() => luaScript({ method: "GET", items: [], threads: 1 }), /at least one/);
  assert.throws(
    () => luaScript({ method: "POST", items: [{ path: "/", otps: "123456" }], threads: 2 }),
    /at least as many/,
  );
});

Deno.test("wrkArgs builds the command line (whole seconds, at least 1)", () => {
  assert.deepEqual(
    wrkArgs({
      url: "http://127.0.0.1:1",
      script: "s.lua",
      seconds: 0.4,
      connections: 8,
      threads: 2,
    }),
    ["-t", "2", "-c", "8", "-d", "1s", "--timeout", "10s", "-s", "s.lua", "http://127.0.0.1:1"],
  );
});

const hasWrk = (await wrkVersion()) !== undefined;

Deno.test({
  name: "the generated script under wrk: OTPs sent once each, in sequence, counted and reported",
  ignore: !hasWrk, // wrk is not in CI; `apt-get install -y wrk` to run this
  async fn() {
    const seen = new Map<string, string[]>();
    let served = 0;
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
      const form = new URLSearchParams(await req.text());
      const user = form.get("user");
      // after the OTPs run out the script asks for /healthz/ while its thread stops
      if (user === null) return new Response("not here", { status: 404 });
      const list = seen.get(user) ?? [];
      list.push(form.get("pass")!.slice(2));
      seen.set(user, list);
      served++;
      if (user === "u4") return new Response("down", { status: 503 });
      return Response.json({ result: { status: true, value: user !== "u3" } });
    });
    const dir = await Deno.makeTempDir();
    try {
      const keys = [1, 2, 3, 4].map((i) => new TextEncoder().encode(`key-${i}`));
      const perUser = 300;
      const r = await runWrk({
        url: `http://127.0.0.1:${server.addr.port}`,
        spec: {
          method: "POST",
          items: keys.map((k, i) => ({
            path: "/validate/check",
            body: `user=u${i + 1}&pass=pp`,
            otps: hotpSequence(k, 10, perUser),
          })),
          threads: 2,
        },
        scriptPath: `${dir}/t.lua`,
        seconds: 1,
        connections: 2,
      });
      // 4 × 300 OTPs run out well within a second: the threads stop instead of replaying
      assert.equal(r.exhausted, true);
      assert.equal(r.sent, 4 * perUser);
      assert.deepEqual(r.used, { "1": perUser, "2": perUser, "3": perUser, "4": perUser });
      assert.ok(r.requests <= r.sent && r.requests >= r.sent - 2);
      assert.equal(served >= r.requests, true);
      keys.forEach((k, i) => {
        const got = seen.get(`u${i + 1}`)!;
        assert.equal(new Set(got).size, got.length, "no OTP sent twice");
        // one connection per thread, two users per thread: exactly the sequence, in order
        assert.deepEqual(
          got,
          Array.from({ length: got.length }, (_, c) => hotpSequence(k, 10 + c, 1)),
        );
      });
      const c = r.statuses;
      assert.equal((c["200"] ?? 0) + (c["503"] ?? 0) + (c["404"] ?? 0), r.requests);
      assert.ok((c["404"] ?? 0) <= 2);
      assert.ok(c["503"] > 0);
      // u1, u2 answer value true
      assert.ok(r.accepts > 0 && r.accepts <= (c["200"] ?? 0));
    } finally {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("luaScript spreads threads over several nodes only when there are several", () => {
  const spec = { method: "GET" as const, items: [{ path: "/" }], threads: 2 };
  assert.equal(
    luaScript({ ...spec, nodes: [{ host: "127.0.0.1", port: 1 }] }),
    luaScript(spec),
  );
  const two = luaScript({
    ...spec,
    nodes: [{ host: "127.0.0.1", port: 4001 }, { host: "127.0.0.1", port: 4002 }],
  });
  assert.match(two, /local NODES = \{\{"127.0.0.1", "4001"\}, \{"127.0.0.1", "4002"\}\}/);
  assert.match(two, /thread\.addr = node_addr\(next_tid\)/);
  assert.doesNotMatch(luaScript(spec), /node_addr/);
  assert.throws(
    () =>
      luaScript({
        ...spec,
        threads: 3,
        nodes: [{ host: "127.0.0.1", port: 1 }, { host: "127.0.0.1", port: 2 }],
      }),
    /multiple of the nodes/,
  );
});

Deno.test({
  name: "the generated script under wrk with two nodes: each thread, and its users, on one node",
  ignore: !hasWrk,
  async fn() {
    const byNode: Map<string, Set<string>>[] = [new Map(), new Map()];
    const servers = byNode.map((seen) =>
      Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
        const form = new URLSearchParams(await req.text());
        const user = form.get("user");
        if (user === null) return new Response("not here", { status: 404 });
        const otps = seen.get(user) ?? new Set();
        otps.add(form.get("pass")!);
        seen.set(user, otps);
        return Response.json({ result: { status: true, value: true } });
      })
    );
    const dir = await Deno.makeTempDir();
    try {
      const perUser = 200;
      const keys = [1, 2, 3, 4].map((i) => new TextEncoder().encode(`key-${i}`));
      const r = await runWrk({
        url: `http://127.0.0.1:${servers[0].addr.port}`,
        spec: {
          method: "POST",
          items: keys.map((k, i) => ({
            path: "/validate/check",
            body: `user=u${i + 1}&pass=`,
            otps: hotpSequence(k, 0, perUser),
          })),
          threads: 2,
          nodes: servers.map((s) => ({ host: "127.0.0.1", port: s.addr.port })),
        },
        scriptPath: `${dir}/t.lua`,
        seconds: 1,
        connections: 2,
      });
      assert.equal(r.sent, 4 * perUser);
      // thread 0 (users 1 and 3) on the first node, thread 1 (users 2 and 4) on the second
      assert.deepEqual([...byNode[0].keys()].sort(), ["u1", "u3"]);
      assert.deepEqual([...byNode[1].keys()].sort(), ["u2", "u4"]);
      const received = byNode.reduce(
        (n, m) => n + [...m.values()].reduce((a, s) => a + s.size, 0),
        0,
      );
      assert.ok(received >= r.requests - 2 && received <= r.sent, `${received} of ${r.sent}`);
    } finally {
      for (const s of servers) await s.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
