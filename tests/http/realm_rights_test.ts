/**
 * Realm-restricted admins and users cannot reach other realms' tokens and
 * users, however the request names them: every token/user endpoint × every
 * way of naming an object, for an admin limited to realm `sales` and for a
 * user. Own-realm attempts must succeed (so the test cannot pass by refusing
 * everything); other-realm attempts are refused and change nothing (state
 * read back).
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp } from "../fixtures/tokens.ts";
import { addAdmin } from "../../src/domain/admin/mod.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { findTokenBySerial, listTokens } from "../../src/domain/token/mod.ts";

const TOKEN_ACTIONS = [
  "enable",
  "disable",
  "delete",
  "setpin",
  "setrandompin",
  "setdescription",
  "reset",
  "revoke",
  "resync",
  "assign",
  "unassign",
  "set",
  "settokeninfo",
  "tokenrealms",
  "tokenlist",
  "losttoken",
  "getchallenges",
  "getserial",
  "enrollHOTP",
  "userlist",
  "updateuser",
  "adduser",
  "deleteuser",
  "set_custom_user_attributes=:*: *",
  "delete_custom_user_attributes=*",
].join(", ");

interface World {
  t: TestApp;
  sub: string;
  alice: string;
  /** staff token of alice, sales token of sam, an unassigned token in each realm. */
  staff: string;
  sales: string;
  staffFree: string;
  salesFree: string;
}

async function login(t: TestApp, username: string, password: string): Promise<string> {
  const res = await jsonOf(await t.post("/auth", { username, password }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.token;
}

/** Realms staff (default) and sales; admin `sub` limited to sales; user alice of staff. */
async function world(): Promise<World> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "staff", users: [{ login: "alice", password: "a-pass" }] });
  await createUsers(t.deps, { realm: "sales", users: [{ login: "sam", password: "s-pass" }] });
  await createUsers(t.deps, { realm: "north", users: [{ login: "nora", password: "n-pass" }] });
  await t.adminToken();
  await savePolicy(t.deps, "all", { scope: "admin", action: "*", adminuser: "admin" });
  await savePolicy(t.deps, "sub", {
    scope: "admin",
    action: TOKEN_ACTIONS,
    adminuser: "sub",
    realm: "sales, north",
  });
  await savePolicy(t.deps, "users", {
    scope: "user",
    action:
      "enable, disable, delete, setpin, setdescription, reset, revoke, resync, unassign, enrollHOTP, userlist, updateuser",
  });
  await addAdmin(t.deps, "sub", { password: "sub-password" });
  const staff = await enrollHotp(t, { user: "alice", realm: "staff" });
  const sales = await enrollHotp(t, { user: "sam", realm: "sales" });
  const staffFree = await enrollHotp(t, { realm: "staff" });
  const salesFree = await enrollHotp(t, { realm: "sales" });
  return {
    t,
    sub: await login(t, "sub", "sub-password"),
    alice: await login(t, "alice@staff", "a-pass"),
    staff,
    sales,
    staffFree,
    salesFree,
  };
}

/** Everything an endpoint could change about the tokens, and how many there are. */
async function snapshot(w: World): Promise<string> {
  const out: unknown[] = [];
  for (const s of [w.staff, w.sales, w.staffFree, w.salesFree]) {
    const t = await findTokenBySerial(w.t.deps, s);
    out.push(t && { ...t, lastAuth: undefined });
  }
  out.push((await listTokens(w.t.deps, { page: 1, pagesize: 100 })).count);
  return JSON.stringify(out);
}

/** A request: method, path, body. `own` and `other` name the object to act on. */
type Req = [string, string, Record<string, unknown>?];
interface Endpoint {
  name: string;
  /** The request on a token or user; `s` a serial, `u` a user name (login@realm). */
  call: (s: string, u: string) => Req;
  /** A path+body form to try a serial mismatch: path names `a`, body names `b`. */
  mismatch?: (a: string, b: string) => Req;
  /** Uses a free (unassigned) token rather than an owned one. */
  free?: boolean;
  /** Not for user-role callers. */
  adminOnly?: boolean;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: "disable",
    call: (s) => ["POST", "/token/disable", { serial: s }],
    mismatch: (a, b) => ["POST", `/token/disable/${a}`, { serial: b }],
  },
  {
    name: "delete",
    call: (s) => ["DELETE", `/token/${s}`],
    mismatch: (a, b) => ["DELETE", `/token/${a}?serial=${b}`],
  },
  {
    name: "setpin",
    call: (s) => ["POST", "/token/setpin", { serial: s, otppin: "1234" }],
    mismatch: (a, b) => ["POST", `/token/setpin/${a}`, { serial: b, otppin: "1234" }],
  },
  {
    name: "description",
    call: (s) => ["POST", "/token/description", { serial: s, description: "changed" }],
    mismatch: (a, b) => ["POST", `/token/description/${a}`, { serial: b, description: "x" }],
  },
  { name: "revoke", call: (s) => ["POST", "/token/revoke", { serial: s }] },
  {
    name: "set",
    call: (s) => ["POST", "/token/set", { serial: s, max_failcount: 3 }],
    mismatch: (a, b) => ["POST", `/token/set/${a}`, { serial: b, max_failcount: 3 }],
    adminOnly: true,
  },
  {
    name: "tokenrealms",
    call: (s) => ["POST", `/token/realm/${s}`, { realms: "sales,north" }],
    mismatch: (a, b) => ["POST", `/token/realm/${a}`, { serial: b, realms: "sales,north" }],
    adminOnly: true,
  },
  {
    name: "settokeninfo",
    call: (s) => ["POST", `/token/info/${s}/k`, { value: "v" }],
    mismatch: (a, b) => ["POST", `/token/info/${a}/k`, { serial: b, value: "v" }],
    adminOnly: true,
  },
  {
    name: "lost",
    call: (s) => ["POST", `/token/lost/${s}`],
    mismatch: (a, b) => ["POST", `/token/lost/${a}`, { serial: b }],
    adminOnly: true,
  },
  { name: "unassign", call: (s) => ["POST", "/token/unassign", { serial: s }] },
  {
    name: "assign",
    call: (s, u) => ["POST", "/token/assign", { serial: s, user: u }],
    free: true,
    adminOnly: true,
  },
  {
    name: "init",
    call: (_s, u) => ["POST", "/token/init", { type: "hotp", genkey: 1, user: u }],
  },
  {
    name: "setpin by user",
    call: (_s, u) => ["POST", "/token/setpin", { user: u, otppin: "1234" }],
    adminOnly: true,
  },
];

/** For the admin: the own object, the other realm's, and the forms of naming the other. */
function adminCases(w: World, e: Endpoint): [string, Req, boolean][] {
  const own = e.free ? w.salesFree : w.sales;
  const other = e.free ? w.staffFree : w.staff;
  const cases: [string, Req, boolean][] = [
    ["own realm", e.call(own, "sam@sales"), true],
    ["other realm via user@realm", e.call(other, "alice@staff"), false],
    ["other realm via the default realm", e.call(other, "alice"), false],
    ["other realm with a lying realm", withRealm(e.call(other, "alice@staff"), "sales"), false],
  ];
  if (e.mismatch) cases.push(["path/body serial mismatch", e.mismatch(other, own), false]);
  return cases;
}

const HOWS = [
  "own realm",
  "other realm via user@realm",
  "other realm via the default realm",
  "other realm with a lying realm",
  "path/body serial mismatch",
];

function withRealm(req: Req, realm: string): Req {
  const [method, path, body] = req;
  if (method === "DELETE") {
    return [method, `${path}${path.includes("?") ? "&" : "?"}realm=${realm}`];
  }
  return [method, path, { ...body, realm }];
}

async function send(w: World, token: string, [method, path, body]: Req) {
  return await jsonOf(await w.t.request(method, path, { token, body, json: true }));
}

for (const e of ENDPOINTS) {
  Deno.test(`a realm-limited admin: ${e.name} reaches the own realm only`, async () => {
    for (const how of HOWS) {
      // a fresh world per case: an allowed case changes state
      const w = await world();
      const found = adminCases(w, e).find(([h]) => h === how);
      if (!found) {
        await w.t.close();
        continue;
      }
      const [, req, expectAllowed] = found;
      const before = await snapshot(w);
      const res = await send(w, w.sub, req);
      const label = `${e.name} ${how}: ${JSON.stringify(req)} → ${JSON.stringify(res.body.result)}`;
      if (expectAllowed) {
        assert.equal(res.status, 200, label);
        assert.notEqual(await snapshot(w), before, `${label}: nothing changed`);
      } else {
        assert.ok(res.status === 403 || res.status === 400, label);
        if (res.status === 403) {
          assert.equal(res.body.result.error.code, 303, label);
          assert.match(res.body.result.error.message, /Admin actions are defined/, label);
        }
        assert.equal(await snapshot(w), before, `${label}: state changed`);
      }
      await w.t.close();
    }
  });
}

for (const e of ENDPOINTS.filter((x) => !x.adminOnly)) {
  Deno.test(`a user: ${e.name} reaches the own tokens only`, async () => {
    const cases: [string, (w: World) => Req, boolean][] = [
      ["own token", (w) => e.call(w.staff, "alice@staff"), true],
      ["another user's token or user", (w) => e.call(w.sales, "sam@sales"), false],
      ["another realm by name", (w) => withRealm(e.call(w.sales, "sam"), "sales"), false],
    ];
    if (e.mismatch) cases.push(["path/body mismatch", (w) => e.mismatch!(w.sales, w.staff), false]);
    for (const [how, make, allowed] of cases) {
      const w = await world();
      const req = make(w);
      const samBefore = JSON.stringify(await findTokenBySerial(w.t.deps, w.sales));
      const samCount = (await listTokens(w.t.deps, { tokenrealm: "sales", page: 1, pagesize: 50 }))
        .count;
      const res = await send(w, w.alice, req);
      const label = `${e.name} ${how}: ${JSON.stringify(req)} → ${JSON.stringify(res.body.result)}`;
      if (allowed) assert.equal(res.status, 200, label);
      // whatever the answer, sam's token and realm are untouched
      assert.equal(JSON.stringify(await findTokenBySerial(w.t.deps, w.sales)), samBefore, label);
      assert.equal(
        (await listTokens(w.t.deps, { tokenrealm: "sales", page: 1, pagesize: 50 })).count,
        samCount,
        label,
      );
      if (!allowed && e.name !== "init") assert.ok(res.status >= 400, label);
      await w.t.close();
    }
  });
}

Deno.test("a realm-limited admin cannot move an own-realm token into another realm", async () => {
  const w = await world();
  const before = await snapshot(w);
  for (const realms of ["staff", "sales,staff"]) {
    const res = await send(w, w.sub, ["POST", `/token/realm/${w.sales}`, { realms }]);
    assert.equal(res.status, 403, realms);
    assert.equal(res.body.result.error.code, 303);
  }
  assert.equal(await snapshot(w), before);
  await w.t.close();
});

Deno.test("a realm-limited admin cannot enrol a token into no realm or another realm", async () => {
  const w = await world();
  const before = await snapshot(w);
  for (const body of [{}, { realm: "staff" }, { realm: "STAFF" }]) {
    const res = await send(w, w.sub, ["POST", "/token/init", { type: "hotp", genkey: 1, ...body }]);
    assert.equal(res.status, 403, JSON.stringify(body));
  }
  assert.equal(await snapshot(w), before);
  const own = await send(w, w.sub, ["POST", "/token/init", {
    type: "hotp",
    genkey: 1,
    realm: "sales",
  }]);
  assert.equal(own.status, 200);
  await w.t.close();
});

Deno.test("bulk calls of a realm-limited admin touch only own-realm serials", async () => {
  const w = await world();
  const res = await send(w, w.sub, ["POST", "/token/unassign", {
    serials: [w.staff, w.sales],
  }]);
  assert.equal(res.status, 200);
  assert.equal(res.body.result.value.count_success, 1);
  assert.deepEqual(res.body.result.value.unauthorized, [w.staff]);
  assert.ok((await findTokenBySerial(w.t.deps, w.staff))?.owner, "staff token still assigned");
  assert.equal((await findTokenBySerial(w.t.deps, w.sales))?.owner, undefined);
  await w.t.close();
});

Deno.test("lists of a realm-limited admin show only their realms: tokens (also CSV), challenges, realms, getserial", async () => {
  const w = await world();
  const list = await send(w, w.sub, ["GET", "/token/"]);
  assert.equal(list.status, 200);
  const serials = list.body.result.value.tokens.map((t: { serial: string }) => t.serial).sort();
  assert.deepEqual(serials, [w.sales, w.salesFree].sort());
  const csv = await w.t.request("GET", "/token/", { token: w.sub, query: { outform: "csv" } });
  const text = await csv.text();
  assert.equal(csv.status, 200);
  assert.ok(text.includes(w.sales) && !text.includes(w.staff), text);
  // the superadmin's CSV has both
  const all = await (await w.t.asAdmin("GET", "/token/", { query: { outform: "csv" } })).text();
  assert.ok(all.includes(w.sales) && all.includes(w.staff));
  const realms = await send(w, w.sub, ["GET", "/realm/"]);
  assert.deepEqual(Object.keys(realms.body.result.value).sort(), ["north", "sales"]);
  const allRealms = await jsonOf(await w.t.asAdmin("GET", "/realm/"));
  assert.deepEqual(Object.keys(allRealms.body.result.value).sort(), ["north", "sales", "staff"]);
  // HOTP of SEED_HEX at counter 0 is 755224: both tokens have it; sub finds only the sales one
  const found = await send(w, w.sub, ["GET", "/token/getserial/755224", undefined]);
  assert.equal(found.status, 200);
  assert.ok(
    [w.sales, w.salesFree].includes(found.body.result.value.serial),
    JSON.stringify(found.body),
  );
  const onlyStaff = await send(w, w.sub, ["GET", `/token/getserial/755224?serial=${w.staff}`]);
  assert.equal(onlyStaff.body.result.value.serial, "");
  await w.t.close();
});

Deno.test("GET /token/challenges/ of a realm-limited admin shows only their realms' challenges", async () => {
  const w = await world();
  await savePolicy(w.t.deps, "cr", { scope: "authentication", action: "challenge_response=hotp" });
  for (const [user, pin] of [["alice@staff", "pa"], ["sam@sales", "ps"]]) {
    const serial = user.startsWith("alice") ? w.staff : w.sales;
    const set = await jsonOf(
      await w.t.asAdmin("POST", "/token/setpin", { body: { serial, otppin: pin } }),
    );
    assert.equal(set.status, 200);
    const trig = await jsonOf(await w.t.post("/validate/check", { user, pass: pin }));
    assert.ok(trig.body.detail?.transaction_id, JSON.stringify(trig.body));
  }
  const mine = await send(w, w.sub, ["GET", "/token/challenges/"]);
  assert.deepEqual(mine.body.result.value.challenges.map((c: { serial: string }) => c.serial), [
    w.sales,
  ]);
  const other = await send(w, w.sub, ["GET", `/token/challenges/${w.staff}`]);
  assert.equal(other.status, 403);
  const everything = await jsonOf(await w.t.asAdmin("GET", "/token/challenges/"));
  assert.equal(everything.body.result.value.count, 2);
  await w.t.close();
});

Deno.test("user endpoints: a realm-limited admin reaches users of their realms only", async () => {
  const w = await world();
  const cases: [Req, boolean][] = [
    [["GET", "/user/attribute", { user: "sam@sales" }], true],
    [["GET", "/user/attribute", { user: "alice@staff" }], false],
    [["GET", "/user/attribute", { user: "alice" }], false],
    [["POST", "/user/attribute", { user: "alice@staff", key: "k", value: "v" }], false],
    [["DELETE", "/user/attribute/k/alice/staff"], false],
    [["GET", "/user/editable_attributes", { user: "alice@staff" }], false],
    [["PUT", "/user/", { user: "alice", resolver: "sql-staff", email: "x@y" }], false],
    [["DELETE", "/user/sql-staff/alice"], false],
    [["POST", "/user/", { user: "mallory", resolver: "sql-staff", password: "p" }], false],
    [["GET", "/user/", { realm: "staff" }], false],
  ];
  for (const [req, allowed] of cases) {
    const [method, path, body] = req;
    const res = method === "GET"
      ? await jsonOf(
        await w.t.request(method, path, { token: w.sub, query: body as Record<string, string> }),
      )
      : await send(w, w.sub, req);
    const label = `${JSON.stringify(req)} → ${JSON.stringify(res.body.result)}`;
    assert.equal(res.status, allowed ? 200 : 403, label);
  }
  // nothing changed for alice, and mallory was not created
  const users = await jsonOf(await w.t.asAdmin("GET", "/user/", { query: { realm: "staff" } }));
  assert.deepEqual(users.body.result.value.map((u: { username: string }) => u.username), ["alice"]);
  assert.equal(users.body.result.value[0].email ?? "", "");
  const list = await jsonOf(await w.t.request("GET", "/user/", { token: w.sub }));
  assert.deepEqual(list.body.result.value.map((u: { username: string }) => u.username).sort(), [
    "nora",
    "sam",
  ]);
  await w.t.close();
});

Deno.test("a refused request fires no pre event handler", async () => {
  const w = await world();
  const ev = await jsonOf(
    await w.t.asAdmin("POST", "/event", {
      json: true,
      body: {
        name: "describe before disable",
        event: "token_disable",
        handlermodule: "Token",
        action: "set description",
        position: "pre",
        "option.description": "touched",
      },
    }),
  );
  assert.equal(ev.status, 200, JSON.stringify(ev.body));
  const before = await snapshot(w);
  const res = await send(w, w.sub, ["POST", "/token/disable", { serial: w.staff }]);
  assert.equal(res.status, 403);
  assert.equal(await snapshot(w), before);
  // the same request on an own-realm token fires it
  const own = await send(w, w.sub, ["POST", "/token/disable", { serial: w.sales }]);
  assert.equal(own.status, 200);
  assert.equal((await findTokenBySerial(w.t.deps, w.sales))?.description, "touched");
  await w.t.close();
});

Deno.test("a serial in the path cannot be widened by a serials parameter", async () => {
  const w = await world();
  const before = await snapshot(w);
  const res = await send(w, w.sub, ["POST", `/token/lost/${w.staff}`, { serials: w.sales }]);
  assert.equal(res.status, 403);
  assert.equal(await snapshot(w), before);
  await w.t.close();
});

Deno.test("POST /user/ names the user by resolver, also with a realm parameter", async () => {
  const w = await world();
  const res = await jsonOf(
    await w.t.asAdmin("POST", "/user/", {
      body: { user: "newbie", resolver: "sql-sales", realm: "sales", password: "p" },
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const refused = await send(w, w.sub, ["POST", "/user/", {
    user: "mallory",
    resolver: "sql-staff",
    realm: "sales",
    password: "p",
  }]);
  assert.equal(refused.status, 403, "the resolver's realm counts, not the realm parameter");
  const users = await jsonOf(await w.t.asAdmin("GET", "/user/", { query: { realm: "staff" } }));
  assert.deepEqual(users.body.result.value.map((u: { username: string }) => u.username), ["alice"]);
  await w.t.close();
});
