import { type Context, Hono } from "hono";
import type { AppEnv, Params } from "../context.ts";
import { ok } from "../envelope.ts";
import { boolParam, pathParam, requireString, stringParam } from "../params.ts";
import { adminOnly, adminOrUser } from "../auth.ts";
import { requireRight, visibleRealms } from "../rights.ts";
import {
  type Caller,
  createUser,
  deleteCustomAttribute,
  deleteUser,
  editableAttributes,
  listUsers,
  readCustomAttributes,
  setCustomAttribute,
  updateUser,
  type UserSelector,
} from "../../domain/user/mod.ts";

/** `/user/`: users of the realms' resolvers and their custom attributes. */
export const userRoutes = new Hono<AppEnv>();

/** Parameters that select or control, never passed on as user attributes or search fields. */
const CONTROL_KEYS = new Set([
  "user",
  "username",
  "realm",
  "resolver",
  "userid",
  "password",
  "attributes",
  "include_custom_attributes",
  "nonce",
]);

function callerOf(c: Context<AppEnv>): Caller {
  const id = c.get("identity")!;
  return { role: id.role, username: id.username, realm: id.realm, client: c.get("clientIp") };
}

function csv(value: string | undefined): string[] {
  return (value ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
}

/** Every non-control parameter as a string (user attributes / search fields). */
function extraStrings(p: Params): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(p)) {
    if (CONTROL_KEYS.has(key)) continue;
    const v = stringParam(p, key);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

function selectorOf(c: Context<AppEnv>, user: string): UserSelector {
  const p = c.get("params");
  const who = { user, realm: stringParam(p, "realm"), resolver: stringParam(p, "resolver") };
  c.get("audit").user = user;
  c.get("audit").realm = who.realm ?? "";
  return who;
}

userRoutes.get("/", adminOrUser, requireRight("userlist"), async (c) => {
  const p = c.get("params");
  const common = {
    attributes: csv(stringParam(p, "attributes")),
    includeCustomAttributes: boolParam(p, "include_custom_attributes", true),
  };
  if (c.get("identity")!.role === "user") {
    // a user sees only himself (params were forced to the caller in adminOrUser)
    const only = selectorOf(c, requireString(p, "user"));
    return ok(c, await listUsers(c.get("deps"), { ...common, search: {}, only }));
  }
  const search = extraStrings(p);
  search.username = stringParam(p, "user") || stringParam(p, "username") || "*";
  return ok(
    c,
    await listUsers(c.get("deps"), {
      ...common,
      realms: csv(stringParam(p, "realm")),
      resolver: stringParam(p, "resolver") || undefined,
      search,
      // realm-restricted admin policies: only the users of those realms (spec 03 §5)
      allowedRealms: await visibleRealms(c, "userlist"),
    }),
  );
});

userRoutes.post("/", adminOnly, requireRight("adduser"), async (c) => {
  const p = c.get("params");
  const login = requireString(p, "user");
  const resolver = requireString(p, "resolver");
  c.get("audit").user = login;
  c.get("audit").resolver = resolver;
  const uid = await createUser(c.get("deps"), {
    login,
    resolver,
    password: stringParam(p, "password"),
    attributes: extraStrings(p),
  });
  return ok(c, uid);
});

userRoutes.put("/", adminOrUser, requireRight("updateuser"), async (c) => {
  const p = c.get("params");
  const login = requireString(p, "user");
  const resolver = requireString(p, "resolver");
  c.get("audit").user = login;
  c.get("audit").resolver = resolver;
  const changed = await updateUser(c.get("deps"), {
    login,
    resolver,
    userid: stringParam(p, "userid") || undefined,
    password: stringParam(p, "password"),
    attributes: extraStrings(p),
  });
  return ok(c, changed);
});

userRoutes.post("/attribute", adminOrUser, async (c) => {
  const p = c.get("params");
  const who = selectorOf(c, requireString(p, "user"));
  const key = requireString(p, "key");
  c.get("audit").info = `attribute ${key}`;
  const id = await setCustomAttribute(c.get("deps"), who, {
    key,
    value: requireString(p, "value"),
    type: stringParam(p, "type"),
    caller: callerOf(c),
  });
  return ok(c, id);
});

userRoutes.get("/attribute", adminOrUser, async (c) => {
  const p = c.get("params");
  const who = selectorOf(c, requireString(p, "user"));
  return ok(c, await readCustomAttributes(c.get("deps"), who, stringParam(p, "key")));
});

userRoutes.delete("/attribute/:key/:user/:realm", adminOrUser, async (c) => {
  const key = pathParam(c, "key");
  const who = { user: pathParam(c, "user"), realm: pathParam(c, "realm") };
  c.get("audit").user = who.user;
  c.get("audit").realm = who.realm;
  c.get("audit").info = `attribute ${key}`;
  return ok(c, await deleteCustomAttribute(c.get("deps"), who, { key, caller: callerOf(c) }));
});

userRoutes.get("/editable_attributes", adminOrUser, async (c) => {
  const who = selectorOf(c, requireString(c.get("params"), "user"));
  return ok(c, await editableAttributes(c.get("deps"), who, callerOf(c)));
});

userRoutes.delete("/:resolver/:user", adminOnly, requireRight("deleteuser"), async (c) => {
  const resolver = pathParam(c, "resolver");
  const login = pathParam(c, "user");
  c.get("audit").user = login;
  c.get("audit").resolver = resolver;
  return ok(c, await deleteUser(c.get("deps"), resolver, login));
});
