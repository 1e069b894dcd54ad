import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { boolParam, pathParam } from "../params.ts";
import { adminVisibleRealms } from "../rights/rights.ts";
import { missingParameter, ParameterError } from "../../errors.ts";
import {
  deleteRealm,
  listRealms,
  type NodeResolverEntry,
  setRealm,
  setRealmNodeResolvers,
} from "../../domain/realm/mod.ts";

/** `/realm/`: realms and their resolvers (admin only). */
export const realmRoutes = new Hono<AppEnv>();

realmRoutes.get("/", async (c) => {
  const all = await listRealms(c.get("deps"));
  // a realm-limited admin sees only the realms of their policies
  const visible = await adminVisibleRealms(c);
  if (visible === undefined) return ok(c, all);
  return ok(c, Object.fromEntries(Object.entries(all).filter(([name]) => visible.includes(name))));
});

realmRoutes.get("/superuser", (c) => {
  return ok(c, c.get("deps").config.auth.superuserRealms);
});

/** `resolvers` as CSV string or JSON list of strings. */
function resolverList(raw: unknown): string[] {
  if (raw === undefined || raw === null || raw === "") throw missingParameter("resolvers");
  if (typeof raw === "string") return raw.split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (Array.isArray(raw) && raw.every((r) => typeof r === "string")) {
    return raw.map((s) => s.trim()).filter((s) => s !== "");
  }
  throw new ParameterError(
    'Cannot parse parameter "resolvers": expected a comma-separated string or a list of names',
  );
}

realmRoutes.post("/:realm", async (c) => {
  const p = c.get("params");
  const realm = pathParam(c, "realm");
  c.get("audit").info = `realm ${realm}`;
  const priorities: Record<string, number> = {};
  for (const [key, value] of Object.entries(p)) {
    // only JSON integers count; form strings are ignored (spec 03 §7)
    if (key.startsWith("priority.") && typeof value === "number" && Number.isInteger(value)) {
      priorities[key.slice("priority.".length)] = value;
    }
  }
  return ok(
    c,
    await setRealm(c.get("deps"), realm, { resolvers: resolverList(p.resolvers), priorities }),
  );
});

/** The JSON body `{"resolver": [{"name": …, "priority": int}]}` of the node endpoint. */
function nodeEntries(raw: unknown): NodeResolverEntry[] {
  const bad = () => new ParameterError("Could not verify data in request!");
  if (!Array.isArray(raw)) throw bad();
  return raw.map((e) => {
    if (typeof e !== "object" || e === null || typeof e.name !== "string") throw bad();
    const priority = e.priority;
    if (
      priority !== undefined && priority !== null &&
      !(typeof priority === "number" && Number.isInteger(priority))
    ) {
      throw bad();
    }
    return { name: e.name, priority: priority ?? null };
  });
}

realmRoutes.post("/:realm/node/:node", async (c) => {
  const realm = pathParam(c, "realm");
  c.get("audit").info = `realm ${realm}`;
  const entries = nodeEntries(c.get("params").resolver);
  return ok(c, await setRealmNodeResolvers(c.get("deps"), realm, pathParam(c, "node"), entries));
});

realmRoutes.delete("/:realm", async (c) => {
  const realm = pathParam(c, "realm");
  c.get("audit").info = `realm ${realm}`;
  return ok(
    c,
    await deleteRealm(c.get("deps"), realm, {
      deleteCustomAttributes: boolParam(c.get("params"), "delete_custom_attributes"),
    }),
  );
});
