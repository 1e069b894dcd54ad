import { type Context, Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam, requireString, stringParam } from "../params.ts";
import { missingParameter, ParameterError } from "../../errors.ts";
import {
  checkPolicy,
  conditionDefs,
  deletePolicy,
  exportPolicies,
  importPolicies,
  isTrueValue,
  listPolicies,
  type Policy,
  policyDefs,
  type PolicyFilter,
  policyNodes,
  renamePolicy,
  savePolicy,
  setPolicyActive,
} from "../../domain/policy/mod.ts";
import { requestConditionData } from "../rights/rights.ts";

/** `/policy/`: policy administration (spec 04 §2). */
export const policyRoutes = new Hono<AppEnv>();

policyRoutes.get("/defs", async (c) => ok(c, await policyDefs(c.get("deps"))));
policyRoutes.get("/defs/conditions", (c) => ok(c, conditionDefs()));
policyRoutes.get("/defs/pinodes", (c) => ok(c, policyNodes(c.get("deps"))));
policyRoutes.get("/defs/:scope", async (c) => {
  return ok(c, await policyDefs(c.get("deps"), pathParam(c, "scope")));
});

policyRoutes.get("/check", async (c) => {
  const p = c.get("params");
  return ok(
    c,
    await checkPolicy(c.get("deps"), {
      user: requireString(p, "user"),
      realm: requireString(p, "realm"),
      scope: requireString(p, "scope"),
      action: requireString(p, "action"),
      client: stringParam(p, "client") ?? c.get("clientIp"),
      resolver: stringParam(p, "resolver"),
      // privacyIDEA matches the user's name here, not a user object: no userinfo
      conditions: { ...requestConditionData(c, c.get("target")), userinfo: undefined },
    }),
  );
});

policyRoutes.get("/export/:fn", async (c) => {
  // the file name is only a label: keep it to safe characters for the header
  const fn = pathParam(c, "fn").replace(/[^A-Za-z0-9_.\-]/g, "_").replace(/^\.+/, "_");
  c.get("audit").info = fn;
  const body = await exportPolicies(c.get("deps"));
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "content-disposition": `attachment; filename=${fn}`,
      "cache-control": "no-store, no-cache",
    },
  });
});

policyRoutes.post("/import/:fn", async (c) => {
  const file = c.get("params").file;
  let content: Uint8Array | string;
  if (file instanceof File) content = new Uint8Array(await file.arrayBuffer());
  else if (typeof file === "string") content = file;
  else throw missingParameter("file");
  c.get("audit").info = pathParam(c, "fn");
  return ok(c, await importPolicies(c.get("deps"), content));
});

policyRoutes.post("/enable/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name;
  return ok(c, await setPolicyActive(c.get("deps"), name, true));
});

policyRoutes.post("/disable/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name;
  return ok(c, await setPolicyActive(c.get("deps"), name, false));
});

function filterOf(params: Record<string, unknown>): PolicyFilter {
  // privacyIDEA reads these query keys case-insensitively
  const lower: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) lower[k.toLowerCase()] ??= v;
  const filter: PolicyFilter = {};
  const str = (k: string) => {
    const v = lower[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return String(v);
    throw new ParameterError(`Cannot parse parameter "${k}": expected a string`);
  };
  const scope = str("scope");
  if (scope !== undefined && scope !== "") filter.scope = scope;
  const realm = str("realm");
  if (realm !== undefined && realm !== "") filter.realm = realm;
  const active = str("active");
  if (active !== undefined && active !== "") filter.active = isTrueValue(active);
  return filter;
}

function shape(c: Context<AppEnv>, policies: Policy[]): unknown {
  if (c.get("deps").config.compat.policyList) return policies;
  return Object.fromEntries(policies.map((p) => [p.name, p]));
}

policyRoutes.get("/", async (c) => {
  return ok(c, shape(c, await listPolicies(c.get("deps"), filterOf(c.get("params")))));
});

policyRoutes.get("/:name", async (c) => {
  const filter = { ...filterOf(c.get("params")), name: pathParam(c, "name") };
  return ok(c, shape(c, await listPolicies(c.get("deps"), filter)));
});

policyRoutes.post("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name;
  const id = await savePolicy(c.get("deps"), name, c.get("params"));
  return ok(c, { [`setPolicy ${name}`]: id });
});

policyRoutes.patch("/:name", async (c) => {
  const oldName = pathParam(c, "name");
  const newName = stringParam(c.get("params"), "name");
  if (newName === undefined || newName === "") throw missingParameter("name");
  c.get("audit").info = `${oldName} -> ${newName}`;
  return ok(c, await renamePolicy(c.get("deps"), oldName, newName));
});

policyRoutes.delete("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name;
  return ok(c, await deletePolicy(c.get("deps"), name));
});
