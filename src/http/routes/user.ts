import { type Context, Hono } from "hono";
import type { AppEnv, Params } from "../context.ts";
import { ok } from "../envelope.ts";
import { missingParameter } from "../../errors.ts";
import { boolParam, pathParam, requireString, stringParam } from "../params.ts";
import { visibleRealms } from "../rights/rights.ts";
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

/** The user the rights step resolved and checked (`user` is required). */
function selectorOf(c: Context<AppEnv>): UserSelector {
  const target = c.get("target");
  const ref = target.user;
  if (!ref) throw missingParameter("user");
  c.get("audit").user = ref.login;
  c.get("audit").realm = ref.realm;
  return { user: ref.login, realm: ref.realm, resolver: ref.resolver };
}

/** The login and resolver of a user-store request, as the rights step checked them. */
function storeUserOf(c: Context<AppEnv>): { login: string; resolver: string } {
  const target = c.get("target");
  const login = target.login;
  const resolver = target.resolver ?? target.user?.resolver;
  if (!login) throw missingParameter("user");
  if (!resolver) throw missingParameter("resolver");
  c.get("audit").user = login;
  c.get("audit").resolver = resolver;
  return { login, resolver };
}

userRoutes.get("/", async (c) => {
  const p = c.get("params");
  const common = {
    attributes: csv(stringParam(p, "attributes")),
    includeCustomAttributes: boolParam(p, "include_custom_attributes", true),
  };
  if (c.get("identity")!.role === "user") {
    // a user sees only himself (the rights step resolved the caller as the target)
    const only = selectorOf(c);
    return ok(c, await listUsers(c.get("deps"), { ...common, search: {}, only }));
  }
  const search = extraStrings(p);
  // `user` (a search pattern), `realm` and `resolver` as the rights step read them
  const names = c.get("target").names;
  search.username = names.user || stringParam(p, "username") || "*";
  return ok(
    c,
    await listUsers(c.get("deps"), {
      ...common,
      realms: csv(names.realm),
      resolver: names.resolver,
      search,
      // realm-restricted admin policies: only the users of those realms (spec 03 §5)
      allowedRealms: await visibleRealms(c, "userlist"),
    }),
  );
});

userRoutes.post("/", async (c) => {
  const p = c.get("params");
  const { login, resolver } = storeUserOf(c);
  const uid = await createUser(c.get("deps"), {
    login,
    resolver,
    password: stringParam(p, "password"),
    attributes: extraStrings(p),
  });
  return ok(c, uid);
});

userRoutes.put("/", async (c) => {
  const p = c.get("params");
  const { login, resolver } = storeUserOf(c);
  const changed = await updateUser(c.get("deps"), {
    login,
    resolver,
    userid: stringParam(p, "userid") || undefined,
    password: stringParam(p, "password"),
    attributes: extraStrings(p),
  });
  return ok(c, changed);
});

userRoutes.post("/attribute", async (c) => {
  const p = c.get("params");
  const who = selectorOf(c);
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

userRoutes.get("/attribute", async (c) => {
  const who = selectorOf(c);
  return ok(c, await readCustomAttributes(c.get("deps"), who, stringParam(c.get("params"), "key")));
});

userRoutes.delete("/attribute/:key/:user/:realm", async (c) => {
  const key = pathParam(c, "key");
  const who = selectorOf(c);
  c.get("audit").info = `attribute ${key}`;
  return ok(c, await deleteCustomAttribute(c.get("deps"), who, { key, caller: callerOf(c) }));
});

userRoutes.get("/editable_attributes", async (c) => {
  return ok(c, await editableAttributes(c.get("deps"), selectorOf(c), callerOf(c)));
});

userRoutes.delete("/:resolver/:user", async (c) => {
  const { login, resolver } = storeUserOf(c);
  return ok(c, await deleteUser(c.get("deps"), resolver, login));
});
