/**
 * Rights of the `/container/…` routes: an admin limited to realm `sales` acts on sales
 * containers (and sales tokens) and is refused on staff ones; a user acts only on their own
 * container; no JWT is 401; the admin-only routes refuse a user JWT. Refusals change nothing
 * (state read back).
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../../test_app.ts";
import { createUsers } from "../../fixtures/users.ts";
import { enrollHotp } from "../../fixtures/tokens.ts";
import { addAdmin } from "../../../src/domain/admin/mod.ts";
import { savePolicy } from "../../../src/domain/policy/mod.ts";
import {
  addTokenToContainer,
  createContainer,
  listContainers,
  setTemplate,
} from "../../../src/domain/container/mod.ts";
import { getTokenBySerial } from "../../../src/domain/token/mod.ts";
import { resolveUser } from "../../../src/domain/user/mod.ts";

const CONTAINER_ACTIONS = [
  "container_info",
  "container_state",
  "container_description",
  "container_create",
  "container_delete",
  "container_add_token",
  "container_remove_token",
  "container_assign_user",
  "container_unassign_user",
  "container_realms",
  "container_list",
  "tokenlist",
  "enrollHOTP",
];

interface World {
  t: TestApp;
  sub: string;
  alice: string;
  /** Owned containers, owner-less containers and tokens, per realm. */
  staff: { c: string; free: string; token: string; token2: string };
  sales: { c: string; free: string; token: string; token2: string };
}

async function login(t: TestApp, username: string, password: string): Promise<string> {
  const res = await jsonOf(await t.post("/auth", { username, password }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.token;
}

async function world(): Promise<World> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "staff", users: [{ login: "alice", password: "a-pass" }] });
  await createUsers(t.deps, { realm: "sales", users: [{ login: "sam", password: "s-pass" }] });
  await t.adminToken();
  await savePolicy(t.deps, "all", { scope: "admin", action: "*", adminuser: "admin" });
  await savePolicy(t.deps, "sub", {
    scope: "admin",
    action: CONTAINER_ACTIONS.join(", "),
    adminuser: "sub",
    realm: "sales",
  });
  await savePolicy(t.deps, "users", {
    scope: "user",
    action: CONTAINER_ACTIONS.filter((a) =>
      !["container_info", "container_realms", "tokenlist"].includes(a)
    )
      .join(", "),
  });
  await addAdmin(t.deps, "sub", { password: "sub-password" });
  const realm = async (name: string, login: string) => {
    const owner = await resolveUser(t.deps, login, name);
    const c = await createContainer(t.deps, { type: "generic", owner });
    const free = await createContainer(t.deps, { type: "generic", realms: [name] });
    const token = await enrollHotp(t, { user: login, realm: name });
    const token2 = await enrollHotp(t, { user: login, realm: name });
    await addTokenToContainer(t.deps, c, await getTokenBySerial(t.deps, token2));
    return { c: c.serial, free: free.serial, token, token2 };
  };
  return {
    t,
    staff: await realm("staff", "alice"),
    sales: await realm("sales", "sam"),
    sub: await login(t, "sub", "sub-password"),
    alice: await login(t, "alice@staff", "a-pass"),
  };
}

/** Everything the routes could change. */
async function snapshot(t: TestApp): Promise<string> {
  const all = await listContainers(t.deps, {});
  return JSON.stringify(all.containers.map((c) => ({ ...c, lastSeen: undefined })));
}

type Objects = World["staff"];
interface Endpoint {
  name: string;
  call: (o: Objects) => [string, string, Record<string, unknown>?];
  adminOnly?: boolean;
  /** Also for users (else the user case is skipped: e.g. assign needs an owner-less one). */
  userOwn?: boolean;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: "description",
    call: (o) => ["POST", `/container/${o.c}/description`, { description: "x" }],
    userOwn: true,
  },
  {
    name: "states",
    call: (o) => ["POST", `/container/${o.c}/states`, { states: "lost" }],
    userOwn: true,
  },
  {
    name: "add",
    call: (o) => ["POST", `/container/${o.c}/add`, { serial: o.token }],
    userOwn: true,
  },
  {
    name: "addall",
    call: (o) => ["POST", `/container/${o.c}/addall`, { serial: o.token }],
    userOwn: true,
  },
  {
    name: "remove",
    call: (o) => ["POST", `/container/${o.c}/remove`, { serial: o.token2 }],
    userOwn: true,
  },
  {
    name: "removeall",
    call: (o) => ["POST", `/container/${o.c}/removeall`, { serial: o.token2 }],
    userOwn: true,
  },
  {
    name: "unassign",
    call: (o) => ["POST", `/container/${o.c}/unassign`, { user: o === undefined ? "" : "x" }],
  },
  {
    name: "realms",
    call: (o) => ["POST", `/container/${o.c}/realms`, { realms: "" }],
    adminOnly: true,
  },
  {
    name: "info",
    call: (o) => ["POST", `/container/${o.c}/info/k`, { value: "v" }],
    adminOnly: true,
  },
  {
    name: "info delete",
    call: (o) => ["DELETE", `/container/${o.c}/info/delete/creation_date`],
    adminOnly: true,
  },
  { name: "delete", call: (o) => ["DELETE", `/container/${o.c}`], userOwn: true },
];

async function send(
  w: World,
  token: string | undefined,
  req: [string, string, Record<string, unknown>?],
) {
  return await jsonOf(await w.t.request(req[0], req[1], { token, body: req[2], json: true }));
}

Deno.test("/container rights: a realm-limited admin acts in its realm only; refusals change nothing", async () => {
  const w = await world();
  try {
    for (const e of ENDPOINTS) {
      if (e.name === "unassign") continue;
      const before = await snapshot(w.t);
      const other = await send(w, w.sub, e.call(w.staff));
      assert.equal(other.status, 403, `${e.name} other realm: ${JSON.stringify(other.body)}`);
      assert.equal(await snapshot(w.t), before, `${e.name} changed nothing`);
      const own = await send(w, w.sub, e.call(w.sales));
      assert.equal(own.status, 200, `${e.name} own realm: ${JSON.stringify(own.body)}`);
      assert.equal(own.body.result.status, true);
      if (e.name === "delete") continue;
    }
    // a sales container but a staff token: the token must be allowed too
    const mixedBefore = await snapshot(w.t);
    const free =
      (await listContainers(w.t.deps, { realm: "sales", assigned: false })).containers[0];
    const mixed = await send(w, w.sub, ["POST", `/container/${free.serial}/add`, {
      serial: w.staff.token,
    }]);
    assert.equal(mixed.status, 403);
    assert.equal(await snapshot(w.t), mixedBefore);
    // assign: an owner-less container of its realm, its own user; not another realm's
    const a1 = await send(w, w.sub, ["POST", `/container/${w.staff.free}/assign`, {
      user: "alice",
      realm: "staff",
    }]);
    assert.equal(a1.status, 403);
    const a2 = await send(w, w.sub, ["POST", `/container/${w.sales.free}/assign`, {
      user: "alice",
      realm: "staff",
    }]);
    assert.equal(a2.status, 403, "a user of another realm");
    assert.equal(await snapshot(w.t), mixedBefore);
    const a3 = await send(w, w.sub, ["POST", `/container/${w.sales.free}/assign`, {
      user: "sam",
      realm: "sales",
    }]);
    assert.equal(a3.status, 200, JSON.stringify(a3.body));
    const u1 = await send(w, w.sub, ["POST", `/container/${w.sales.free}/unassign`, {
      user: "sam",
      realm: "sales",
    }]);
    assert.equal(u1.body.result.value, true);
    // create: in its realm yes, in another or in none no
    const c1 = await send(w, w.sub, ["POST", "/container/init", {
      type: "generic",
      realm: "staff",
    }]);
    assert.equal(c1.status, 403);
    // no realm named: the first realm its policies allow
    const c2 = await send(w, w.sub, ["POST", "/container/init", { type: "generic" }]);
    assert.equal(c2.status, 200, JSON.stringify(c2.body));
    const placed = await listContainers(w.t.deps, {
      serial: c2.body.result.value.container_serial,
    });
    assert.deepEqual(placed.containers[0].realms, ["sales"]);
    const c3 = await send(w, w.sub, ["POST", "/container/init", {
      type: "generic",
      realm: "sales",
    }]);
    assert.equal(c3.status, 200);
    // the list shows the sales containers only
    const list = await send(w, w.sub, ["GET", "/container/"]);
    const realms = list.body.result.value.containers.map((c: { realms: string[] }) => c.realms);
    assert.ok(realms.length > 0);
    for (const r of realms) assert.ok(r.includes("sales"), JSON.stringify(r));
  } finally {
    await w.t.close();
  }
});

Deno.test("/container rights: a user acts on their own container only; admin routes and no JWT refused", async () => {
  const w = await world();
  try {
    for (const e of ENDPOINTS) {
      const before = await snapshot(w.t);
      const other = await send(w, w.alice, e.call(w.sales));
      assert.equal(
        other.status,
        e.adminOnly ? 401 : 403,
        `${e.name} other: ${JSON.stringify(other.body)}`,
      );
      assert.equal(await snapshot(w.t), before, `${e.name} changed nothing`);
      const anon = await send(w, undefined, e.call(w.staff));
      assert.equal(anon.status, 401, `${e.name} without JWT`);
      assert.equal(await snapshot(w.t), before);
      if (e.userOwn) {
        const own = await send(w, w.alice, e.call(w.staff));
        assert.equal(own.status, 200, `${e.name} own: ${JSON.stringify(own.body)}`);
      }
    }
    // a user creates containers for themselves and lists only their own
    const created = await send(w, w.alice, ["POST", "/container/init", {
      type: "smartphone",
      user: "sam",
      realm: "sales",
    }]);
    assert.equal(created.status, 200);
    const mine = await send(w, w.alice, ["GET", "/container/"]);
    const owners = mine.body.result.value.containers.map((c: { users: { user_name: string }[] }) =>
      c.users.map((u) => u.user_name).join()
    );
    assert.ok(owners.length > 0);
    assert.deepEqual([...new Set(owners)], ["alice"]);
    // a user may take a container nobody owns? only with the assign right and as themselves
    const take = await send(w, w.alice, ["POST", `/container/${w.sales.free}/assign`, {}]);
    assert.equal(take.status, 200, JSON.stringify(take.body));
    const taken = (await listContainers(w.t.deps, { serial: w.sales.free })).containers[0];
    assert.equal(taken.owner?.login, "alice");
    for (const path of ["/container/", "/container/types", "/container/templates"]) {
      assert.equal((await send(w, undefined, ["GET", path])).status, 401, path);
    }
  } finally {
    await w.t.close();
  }
});

Deno.test("/token/init container_serial: the token goes in only with container_add_token on that container", async () => {
  const w = await world();
  try {
    // the realm-limited admin: a sales container yes, a staff container no (token still made)
    const own = await send(w, w.sub, ["POST", "/token/init", {
      type: "hotp",
      genkey: 1,
      realm: "sales",
      container_serial: w.sales.free,
    }]);
    assert.equal(own.body.detail.container_serial, w.sales.free);
    const before = await snapshot(w.t);
    const other = await send(w, w.sub, ["POST", "/token/init", {
      type: "hotp",
      genkey: 1,
      realm: "sales",
      container_serial: w.staff.c,
    }]);
    assert.equal(other.status, 200);
    assert.equal("container_serial" in other.body.detail, false);
    assert.equal(await snapshot(w.t), before);
    // a user: their own container yes, another's no
    const mine = await send(w, w.alice, ["POST", "/token/init", {
      type: "hotp",
      genkey: 1,
      container_serial: w.staff.c,
    }]);
    assert.equal(mine.body.detail.container_serial, w.staff.c, JSON.stringify(mine.body));
    const before2 = await snapshot(w.t);
    const theirs = await send(w, w.alice, ["POST", "/token/init", {
      type: "hotp",
      genkey: 1,
      container_serial: w.sales.c,
    }]);
    assert.equal(theirs.status, 200);
    assert.equal("container_serial" in theirs.body.detail, false);
    assert.equal(await snapshot(w.t), before2);
  } finally {
    await w.t.close();
  }
});

Deno.test("/container/init from a template: each token needs the caller's enroll right for its owner", async () => {
  const w = await world();
  try {
    await setTemplate(w.t.deps, {
      name: "owned",
      containerType: "generic",
      options: { tokens: [{ type: "hotp", genkey: true, user: true }] },
      isDefault: false,
    });
    await setTemplate(w.t.deps, {
      name: "loose",
      containerType: "generic",
      options: { tokens: [{ type: "hotp", genkey: true }] },
      isDefault: false,
    });
    // deno-lint-ignore no-explicit-any
    const tokensOf = (res: { body: any }) => Object.keys(res.body.result.value.tokens ?? {});
    // the sales admin: a token for sam (sales) yes; a token in no realm no (the container is made)
    const forSam = await send(w, w.sub, ["POST", "/container/init", {
      type: "generic",
      template_name: "owned",
      user: "sam",
      realm: "sales",
    }]);
    assert.equal(forSam.status, 200, JSON.stringify(forSam.body));
    assert.equal(tokensOf(forSam).length, 1);
    const owner = (await getTokenBySerial(w.t.deps, tokensOf(forSam)[0])).owner;
    assert.equal(owner?.login, "sam");
    const loose = await send(w, w.sub, ["POST", "/container/init", {
      type: "generic",
      template_name: "loose",
      realm: "sales",
    }]);
    assert.equal(loose.status, 200);
    assert.deepEqual(tokensOf(loose), []);
    // a user: the template's tokens are always the user's own
    const mine = await send(w, w.alice, ["POST", "/container/init", {
      type: "generic",
      template_name: "loose",
    }]);
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.equal(tokensOf(mine).length, 1);
    assert.equal((await getTokenBySerial(w.t.deps, tokensOf(mine)[0])).owner?.login, "alice");
  } finally {
    await w.t.close();
  }
});
