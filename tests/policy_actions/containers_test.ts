/**
 * Effect tests of the container rights (admin and user scope, spec 13 §2.13) and
 * `hide_container_info`. Each request is made with a policy of the scope that lacks the
 * action (refused, nothing changed) and then with the action (done).
 *
 * @module
 */
import assert from "node:assert/strict";
import { actionTest } from "./_registry.ts";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp } from "../fixtures/tokens.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import {
  addTokenToContainer,
  createContainer,
  listContainers,
  listTemplates,
  setContainerInfo,
  setTemplate,
} from "../../src/domain/container/mod.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { resolveUser } from "../../src/domain/user/mod.ts";

interface World {
  t: TestApp;
  caller: string;
  /** alice's container with token2, an owner-less one, alice's token1 (in none). */
  c: string;
  free: string;
  token1: string;
  token2: string;
}

async function world(scope: "admin" | "user", actions: string): Promise<World> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "staff", users: [{ login: "alice", password: "a-pass" }] });
  await createUsers(t.deps, { realm: "sales", users: [] });
  const alice = await resolveUser(t.deps, "alice", "staff");
  const c = await createContainer(t.deps, { type: "generic", owner: alice });
  const free = await createContainer(t.deps, { type: "generic", realms: ["staff"] });
  await setContainerInfo(t.deps, c, "colour", "blue");
  const token1 = await enrollHotp(t, { user: "alice", realm: "staff" });
  const token2 = await enrollHotp(t, { user: "alice", realm: "staff" });
  await addTokenToContainer(t.deps, c, await getTokenBySerial(t.deps, token2));
  await setTemplate(t.deps, {
    name: "tpl",
    containerType: "generic",
    options: {},
    isDefault: false,
  });
  let caller: string;
  if (scope === "admin") {
    caller = await t.adminToken();
    await savePolicy(t.deps, "p", { scope: "admin", action: actions });
  } else {
    await savePolicy(t.deps, "p", { scope: "user", action: actions });
    const res = await jsonOf(
      await t.post("/auth", { username: "alice@staff", password: "a-pass" }),
    );
    caller = res.body.result.value.token;
  }
  return { t, caller, c: c.serial, free: free.serial, token1, token2 };
}

async function state(t: TestApp): Promise<string> {
  return JSON.stringify({
    containers: (await listContainers(t.deps, {})).containers,
    templates: (await listTemplates(t.deps, {})).templates,
  });
}

type Req = [string, string, Record<string, unknown>?];

/** The request each action allows, on the world's objects. */
const REQUESTS: Record<string, (w: World) => Req> = {
  container_info: (w) => ["POST", `/container/${w.c}/info/k`, { value: "v" }],
  container_state: (w) => ["POST", `/container/${w.c}/states`, { states: "lost" }],
  container_description: (w) => ["POST", `/container/${w.c}/description`, { description: "d" }],
  container_create: () => ["POST", "/container/init", { type: "generic" }],
  container_delete: (w) => ["DELETE", `/container/${w.c}`],
  container_add_token: (w) => ["POST", `/container/${w.c}/add`, { serial: w.token1 }],
  container_remove_token: (w) => ["POST", `/container/${w.c}/remove`, { serial: w.token2 }],
  container_assign_user: (w) => [
    "POST",
    `/container/${w.free}/assign`,
    { user: "alice", realm: "staff" },
  ],
  container_unassign_user: (w) => [
    "POST",
    `/container/${w.c}/unassign`,
    { user: "alice", realm: "staff" },
  ],
  container_realms: (w) => ["POST", `/container/${w.c}/realms`, { realms: "staff,sales" }],
  container_list: () => ["GET", "/container/"],
  container_template_create: () => ["POST", "/container/generic/template/new", {
    template_options: {},
  }],
  container_template_delete: () => ["DELETE", "/container/template/tpl"],
  container_template_list: () => ["GET", "/container/templates"],
};

const USER_ACTIONS = Object.keys(REQUESTS).filter((a) =>
  a !== "container_info" && a !== "container_realms"
);

for (const scope of ["admin", "user"] as const) {
  const actions = scope === "admin" ? Object.keys(REQUESTS) : USER_ACTIONS;
  for (const action of actions) {
    actionTest(
      scope,
      action,
      `${scope} ${action}: refused without it (nothing changed), done with it`,
      async () => {
        // the baseline policy grants another container action, so rights are "defined"
        const other = action === "container_list" ? "container_delete" : "container_list";
        const denied = await world(scope, other);
        try {
          const before = await state(denied.t);
          const [method, path, body] = REQUESTS[action](denied);
          const res = await jsonOf(
            await denied.t.request(method, path, { token: denied.caller, body, json: true }),
          );
          assert.equal(res.status, 403, JSON.stringify(res.body));
          assert.equal(
            res.body.result.error.message,
            `${
              scope === "admin" ? "Admin" : "User"
            } actions are defined, but the action ${action} is not allowed!`,
          );
          assert.equal(await state(denied.t), before);
        } finally {
          await denied.t.close();
        }
        const allowed = await world(scope, `${action}, enrollHOTP`);
        try {
          const before = await state(allowed.t);
          const [method, path, body] = REQUESTS[action](allowed);
          const res = await jsonOf(
            await allowed.t.request(method, path, { token: allowed.caller, body, json: true }),
          );
          assert.equal(res.status, 200, JSON.stringify(res.body));
          assert.equal(res.body.result.status, true);
          const isRead = method === "GET";
          assert.equal(await state(allowed.t) === before, isRead, "a write changed the state");
        } finally {
          await allowed.t.close();
        }
      },
    );
  }
  actionTest(
    scope,
    "hide_container_info",
    `${scope}: the listed info keys are left out of GET /container/`,
    async () => {
      const infoOf = async (w: World) => {
        const res = await jsonOf(await w.t.request("GET", "/container/", { token: w.caller }));
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const c = res.body.result.value.containers.find((x: { serial: string }) =>
          x.serial === w.c
        );
        return c.info;
      };
      const plain = await world(scope, "container_list");
      try {
        assert.equal((await infoOf(plain)).colour, "blue");
      } finally {
        await plain.t.close();
      }
      const hidden = await world(scope, "container_list, hide_container_info=colour creation_date");
      try {
        assert.deepEqual(await infoOf(hidden), {});
      } finally {
        await hidden.t.close();
      }
    },
  );
}
