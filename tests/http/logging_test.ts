import assert from "node:assert/strict";
import { createTestApp } from "../test_app.ts";
import { memoryLogger } from "../../src/lib/logger.ts";

// a user name that clears the screen, sets the terminal title and turns the text red
// (ESC sequences, BEL, the one-byte CSI 0x9b) and reverses the rest of the line (U+202E)
const NAME = "x\x1b]0;pwned\x07\x1b[2J\u009b31mred\u202e";
const ESCAPED = '"x\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31mred\\u202e"';

Deno.test("log: a /auth user name with terminal escapes is written escaped in the text format", async () => {
  const t = await createTestApp();
  const res = await t.post("/auth", { username: NAME, password: "nope" }, { json: true });
  await res.body?.cancel();
  assert.equal(res.status, 401);
  const id = res.headers.get("x-request-id");
  const lines = t.log.lines.filter((l) => l.includes("Login failed"));
  assert.equal(lines.length, 1);
  assert.equal(
    lines[0].replace(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /, ""),
    `INFO Login failed username=${ESCAPED} realm= ` +
      `reason="no local admin or realm user of that name" request_id=${id}`,
  );
  await t.close();
});

Deno.test("log: the same user name in the json format is escaped and reads back", async () => {
  const log = memoryLogger("json");
  const t = await createTestApp({ deps: { log } });
  const res = await t.post("/auth", { username: NAME, password: "nope" });
  await res.body?.cancel();
  const line = log.lines.find((l) => l.includes("Login failed")) ?? "";
  assert.ok(line.includes(`"username":${ESCAPED}`), line);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(line, /[\x00-\x1f\x7f-\x9f\u202e]/);
  assert.equal(JSON.parse(line).username, NAME);
  await t.close();
});
