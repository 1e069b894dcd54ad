import assert from "node:assert/strict";
import {
  createLogger,
  currentRequestId,
  memoryLogger,
  withRequestId,
} from "../../src/lib/logger.ts";

Deno.test("logger: text lines are time, level, message and key=value fields, quoted when needed", () => {
  const log = memoryLogger();
  log.info("Login failed", { user: "alice", reason: "wrong password", n: 3 });
  assert.equal(log.lines.length, 1);
  assert.match(
    log.lines[0],
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO Login failed user=alice reason="wrong password" n=3$/,
  );
});

Deno.test("logger: json lines are one object each, with time, level, msg and the fields", () => {
  const log = memoryLogger("json");
  log.warn("Cannot reach the database", { path: "/validate/check", error: new Error("boom") });
  const event = JSON.parse(log.lines[0]);
  assert.deepEqual(Object.keys(event), ["time", "level", "msg", "path", "error"]);
  assert.equal(event.level, "warn");
  assert.equal(event.msg, "Cannot reach the database");
  assert.equal(event.path, "/validate/check");
  assert.equal(event.error, "boom");
  assert.ok(!Number.isNaN(Date.parse(event.time)));
});

Deno.test("logger: a field cannot overwrite the line's own time, level or message", () => {
  const log = memoryLogger("json");
  log.error("real message", { msg: "forged", level: "debug", time: "never" });
  const event = JSON.parse(log.lines[0]);
  assert.equal(event.msg, "real message");
  assert.equal(event.level, "error");
  assert.notEqual(event.time, "never");
});

Deno.test("logger: a message with a line break stays one line in both formats", () => {
  const text = memoryLogger();
  text.info("x", { value: "a\nb" });
  text.info("forged\n2026-01-01T00:00:00.000Z INFO Login succeeded");
  assert.equal(text.lines.join("\n").split("\n").length, 2);
  assert.match(text.lines[1], / INFO "forged\\n2026-01-01T00:00:00.000Z INFO Login succeeded"$/);
  const json = memoryLogger("json");
  json.info("two\nlines", { value: "a\nb" });
  assert.equal(json.lines[0].split("\n").length, 1);
  assert.equal(JSON.parse(json.lines[0]).msg, "two\nlines");
});

Deno.test("logger: lines inside withRequestId carry request_id, across awaits, and only there", async () => {
  const text = memoryLogger();
  const json = memoryLogger("json");
  text.info("before");
  await withRequestId("req-1", async () => {
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(currentRequestId(), "req-1");
    text.info("inside", { a: 1 });
    json.info("inside");
  });
  // two requests interleaved keep their own ids
  await Promise.all(["req-2", "req-3"].map((id) =>
    withRequestId(id, async () => {
      await new Promise((r) => setTimeout(r, id === "req-2" ? 10 : 1));
      text.info("interleaved");
    })
  ));
  text.info("after");
  assert.equal(currentRequestId(), undefined);
  assert.match(text.lines[0], / INFO before$/);
  assert.match(text.lines[1], / INFO inside a=1 request_id=req-1$/);
  assert.match(text.lines[2], / INFO interleaved request_id=req-3$/);
  assert.match(text.lines[3], / INFO interleaved request_id=req-2$/);
  assert.match(text.lines[4], / INFO after$/);
  assert.equal(JSON.parse(json.lines[0]).request_id, "req-1");
});

Deno.test("logger: levels below the minimum are dropped; fixed fields end every line", () => {
  const lines: string[] = [];
  const log = createLogger("warn", { write: (l) => lines.push(l), fields: { worker: 2 } });
  log.info("dropped");
  log.warn("kept", { x: "y" });
  assert.equal(lines.length, 1);
  assert.match(lines[0], / WARN kept x=y worker=2$/);
  const json: string[] = [];
  createLogger("info", { format: "json", write: (l) => json.push(l), fields: { worker: 2 } })
    .info("kept");
  assert.equal(JSON.parse(json[0]).worker, 2);
});

Deno.test("logger: text lines escape control characters in the message, every key and every value", () => {
  const log = memoryLogger();
  const nasty = "a\x1b[2Jb\x07\x7f\u009b31m\u2028\u202ec";
  const escaped = '"a\\u001b[2Jb\\u0007\\u007f\\u009b31m\\u2028\\u202ec"';
  log.info(`msg ${nasty}`, { [nasty]: nasty, "k=v": "x", plain: "a=b", n: { s: nasty } });
  assert.equal(
    log.lines[0].replace(/^\S+ /, ""),
    `INFO "msg ${escaped.slice(1, -1)}" ${escaped}=${escaped} "k=v"=x plain=a=b ` +
      `n="{\\"s\\":\\"a\\\\u001b[2Jb\\\\u0007\\u007f\\u009b31m\\u2028\\u202ec\\"}"`,
  );
  // nothing a terminal acts on is left in the line
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(log.lines[0], /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e]/);
  // fixed fields and a message without controls are written as before
  const lines: string[] = [];
  createLogger("info", { write: (l) => lines.push(l), fields: { [nasty]: nasty } }).info("plain");
  assert.equal(lines[0].replace(/^\S+ /, ""), `INFO plain ${escaped}=${escaped}`);
});

Deno.test("logger: json lines escape the controls JSON.stringify leaves raw, and still parse", () => {
  const log = memoryLogger("json");
  const nasty = "a\x1b[2Jb\x7f\u009b31m\u2028\u202ec";
  log.info(nasty, { [nasty]: nasty });
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(log.lines[0], /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e]/);
  assert.ok(log.lines[0].includes('"msg":"a\\u001b[2Jb\\u007f\\u009b31m\\u2028\\u202ec"'));
  const event = JSON.parse(log.lines[0]);
  assert.equal(event.msg, nasty);
  assert.equal(event[nasty], nasty);
});
