/**
 * `GET /audit/<file>.csv` (spec 14 §17): the audit log as privacyIDEA's CSV (one quoted line per
 * row, oldest first, no header), for admins with `auditlog_download`, limited to the realms
 * their `auditlog` policies grant and their own actions as `GET /audit/`; filters, `timelimit`
 * and `auditlog_age` as there.
 */
import assert from "node:assert/strict";
import { ADMIN_PASSWORD, createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { addAdmin } from "../../src/domain/admin/mod.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { actionTest } from "../policy_actions/_registry.ts";

async function login(t: TestApp, username: string, password: string): Promise<string> {
  const res = await jsonOf(await t.post("/auth", { username, password }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.token;
}

/** Parses privacyIDEA's lines: `'v','v',…` with '' for a quote inside a value. */
function parse(text: string): string[][] {
  return text.split("\n").filter((l) => l !== "").map((line) => {
    const values: string[] = [];
    const re = /'((?:[^']|'')*)'(?:,|$)/gy;
    let m;
    while ((m = re.exec(line)) !== null) {
      values.push(m[1].replaceAll("''", "'"));
      if (re.lastIndex >= line.length) break;
    }
    assert.equal(values.length, 27, `27 columns: ${line}`);
    return values;
  });
}

// column positions in privacyIDEA's order
const C = { number: 0, date: 1, action: 4, success: 6, user: 11, realm: 12, admin: 14, info: 16 };

/** Realms r1 (alice), r2 (bob); a failed check of each; admin `one` limited to r1. */
async function world() {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "a-pass" }] });
  await createUsers(t.deps, { realm: "r2", users: [{ login: "bob", password: "b-pass" }] });
  await addAdmin(t.deps, "one", { password: "one-password" });
  for (const [user, realm] of [["alice", "r1"], ["bob", "r2"]]) {
    const res = await t.post("/validate/check", { user, realm, pass: "it's wrong" });
    await res.body?.cancel();
  }
  return t;
}

Deno.test("GET /audit/<file>.csv: every row oldest first in privacyIDEA's format, filters and the file name", async () => {
  const t = await world();
  const res = await t.asAdmin("GET", "/audit/audit.csv");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/csv; charset=utf-8");
  assert.equal(res.headers.get("content-disposition"), "attachment; filename=audit.csv");
  const text = await res.text();
  assert.ok(text.endsWith("\n"));
  const rows = parse(text);
  const numbers = rows.map((r) => Number(r[C.number]));
  assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b), "oldest first");
  const alice = rows.find((r) => r[C.user] === "alice")!;
  assert.equal(alice[C.action], "POST /validate/check");
  assert.equal(alice[C.realm], "r1");
  assert.equal(alice[C.success], "0");
  assert.match(alice[C.date], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
  assert.equal(alice[2], "None", "sig_check: Tessera does not sign rows");
  // the same rows as GET /audit/
  const json = await jsonOf(await t.asAdmin("GET", "/audit/", { query: { page_size: "1000" } }));
  const listed = json.body.result.value.auditdata.map((r: { number: number }) => r.number);
  for (const n of numbers) assert.ok(listed.includes(n), `row ${n} in GET /audit/`);
  // filters as GET /audit/: user, wildcard, success; another name in the header
  const bob = await t.asAdmin("GET", "/audit/bob.csv", { query: { user: "b*" } });
  assert.equal(bob.headers.get("content-disposition"), "attachment; filename=bob.csv");
  const bobRows = parse(await bob.text());
  assert.ok(bobRows.length >= 1 && bobRows.every((r) => r[C.user] === "bob"));
  const ok = parse(
    await (await t.asAdmin("GET", "/audit/x.csv", { query: { success: "1" } })).text(),
  );
  assert.ok(ok.every((r) => r[C.success] === "1") && ok.length > 0);
  // a bad filter: the envelope's refusal, not a broken file
  const bad = await jsonOf(
    await t.asAdmin("GET", "/audit/x.csv", { query: { timelimit: "soon" } }),
  );
  assert.equal(bad.status, 400);
  assert.equal(bad.body.result.error.code, 905);
  // timelimit: nothing older than the limit
  t.clock.advance(3 * 3600_000);
  const token = await login(t, "admin", ADMIN_PASSWORD);
  const recent = parse(
    await (await t.get("/audit/x.csv", { token, query: { timelimit: "1h" } })).text(),
  );
  assert.ok(recent.length > 0);
  assert.ok(!recent.some((r) => r[C.user] === "alice"));
  await t.close();
});

Deno.test("GET /audit/<file>.csv: a user JWT and no JWT are refused", async () => {
  const t = await world();
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "r1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  const user = await jsonOf(await t.get("/audit/audit.csv", { token }));
  assert.equal(user.status, 401);
  assert.equal((await jsonOf(await t.get("/audit/audit.csv"))).status, 401);
  await t.close();
});

actionTest(
  "admin",
  "auditlog_download",
  "GET /audit/<file>.csv needs the right; a realm-limited admin gets their realms' and own rows",
  async () => {
    const t = await world();
    await savePolicy(t.deps, "all", { scope: "admin", action: "auditlog", adminuser: "admin" });
    const denied = await jsonOf(await t.asAdmin("GET", "/audit/audit.csv"));
    assert.equal(denied.status, 403);
    assert.equal(
      denied.body.result.error.message,
      "Admin actions are defined, but the action auditlog_download is not allowed!",
    );
    await savePolicy(t.deps, "all", {
      scope: "admin",
      action: "auditlog, auditlog_download",
      adminuser: "admin",
    });
    const all = parse(await (await t.asAdmin("GET", "/audit/audit.csv")).text());
    assert.ok(all.some((r) => r[C.user] === "bob"));
    // `one`: auditlog and auditlog_download for r1 only
    await savePolicy(t.deps, "one", {
      scope: "admin",
      action: "auditlog, auditlog_download, tokenlist",
      adminuser: "one",
      realm: "r1",
    });
    const one = await login(t, "one", "one-password");
    (await t.get("/token/", { token: one })).body?.cancel();
    const res = await t.get("/audit/audit.csv", { token: one });
    assert.equal(res.status, 200);
    const rows = parse(await res.text());
    assert.ok(rows.some((r) => r[C.user] === "alice"));
    assert.ok(rows.some((r) => r[C.admin] === "one"), "own actions");
    assert.ok(!rows.some((r) => r[C.realm] === "r2" || r[C.user] === "bob"), "never r2's rows");
    assert.ok(rows.every((r) => r[C.realm] === "r1" || r[C.admin] === "one"));
    // even when the filter asks for them
    const asked = parse(
      await (await t.get("/audit/a.csv", { token: one, query: { realm: "r2" } })).text(),
    );
    assert.deepEqual(asked.filter((r) => r[C.admin] !== "one"), []);
    await t.close();
  },
);

Deno.test("GET /audit/<file>.csv: auditlog_age replaces timelimit; hide_audit_columns empties columns; quotes doubled", async () => {
  const t = await world();
  t.clock.advance(2 * 86400_000);
  (await t.post("/validate/check", { user: "bob", realm: "r2", pass: "x" })).body?.cancel();
  await savePolicy(t.deps, "p", {
    scope: "admin",
    action: "auditlog, auditlog_download, auditlog_age=1d, hide_audit_columns=info user",
  });
  const rows = parse(
    await (await t.asAdmin("GET", "/audit/a.csv", { query: { timelimit: "10d" } })).text(),
  );
  assert.ok(rows.length > 0);
  assert.ok(!rows.some((r) => r[C.realm] === "r1"), "alice's row is two days old");
  assert.ok(rows.every((r) => r[C.user] === "" && r[C.info] === ""), "hidden columns empty");
  await savePolicy(t.deps, "p", { scope: "admin", action: "auditlog, auditlog_download" });
  // a value with a quote and a line break: one line of 27 columns (parse checks), the quote back
  (await t.post("/validate/check", { user: "o'brien\nx", realm: "r1", pass: "x" })).body?.cancel();
  const all = parse(await (await t.asAdmin("GET", "/audit/a.csv")).text());
  assert.ok(all.some((r) => r[C.user] === "o'brien x"), JSON.stringify(all.map((r) => r[C.user])));
  await t.close();
});
