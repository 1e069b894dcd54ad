import assert from "node:assert/strict";
import { advanceUsers, planUsers, REALM, validateBody } from "../../bench/lib/enrol.ts";
import { mapLimit } from "../../bench/lib/api.ts";
import { benchKey } from "../../bench/lib/otp.ts";

Deno.test("planUsers names users and serials and gives each a distinct known key", () => {
  const users = planUsers("h", 3);
  assert.deepEqual(users.map((u) => [u.login, u.serial]), [
    ["h00001", "BH00001"],
    ["h00002", "BH00002"],
    ["h00003", "BH00003"],
  ]);
  assert.deepEqual(users[1].key, benchKey("h", 1));
  assert.ok(users.every((u) => u.next === 0 && u.pin !== ""));
  assert.equal(new Set(users.map((u) => u.key.join())).size, 3);
});

Deno.test("validateBody names the user and realm, or the serial without the users API", () => {
  const [u] = planUsers("w", 1);
  assert.equal(validateBody(u, true), `user=w00001&realm=${REALM}&pass=${u.pin}`);
  assert.equal(validateBody(u, false), `serial=BW00001&pass=${u.pin}`);
  assert.equal(
    validateBody({ ...u, login: "a b&c", pin: "p+1" }, true, "r"),
    "user=a%20b%26c&realm=r&pass=p%2B1",
  );
});

Deno.test("mapLimit keeps input order and never exceeds the limit", async () => {
  let active = 0, peak = 0;
  const out = await mapLimit([5, 1, 4, 2, 3], 2, async (n, i) => {
    active++;
    peak = Math.max(peak, active);
    await new Promise((r) => setTimeout(r, n));
    active--;
    return n * 10 + i;
  });
  assert.deepEqual(out, [50, 11, 42, 23, 34]);
  assert.equal(peak, 2);
  assert.deepEqual(await mapLimit([], 4, () => Promise.resolve(1)), []);
});

Deno.test("advanceUsers moves counters past the OTPs wrk used and refuses unknown items", () => {
  const users = planUsers("h", 3);
  users[2].next = 10;
  assert.equal(advanceUsers(users, { "1": 5, "3": 2 }), 7);
  assert.deepEqual(users.map((u) => u.next), [5, 0, 12]);
  assert.equal(advanceUsers(users, {}), 0);
  assert.throws(() => advanceUsers(users, { "4": 1 }), /item 4/);
});
