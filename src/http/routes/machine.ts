import { Hono } from "hono";
import type { Context } from "hono";
import type { AppEnv, Params } from "../context.ts";
import { ok } from "../envelope.ts";
import { intParam, pathParam, requireString, stringParam } from "../params.ts";
import { ParameterError } from "../../errors.ts";
import {
  attachToken,
  detachBinding,
  detachToken,
  getAuthItems,
  listBindings,
  listMachines,
  optionValues,
  setBindingOptions,
} from "../../domain/machine/mod.ts";
import { requestConditionData } from "../rights/rights.ts";

/** `/machine/`: machines, machine-token bindings and authentication items (spec 07 §3–5). */
export const machineRoutes = new Hono<AppEnv>();

/** Params that identify a binding's machine, token and application. */
const IDENTIFYING = ["hostname", "machineid", "resolver", "serial", "application"];
/** Params clients send that are never options or filters. */
const IGNORED = ["client", "g", "page", "pagesize"];

function optional(params: Params, name: string): string | undefined {
  return stringParam(params, name) || undefined;
}

/** Every param not named in `skip`, as option strings. */
function rest(params: Params, skip: string[]): Record<string, string> {
  const picked: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) if (!skip.includes(k)) picked[k] = v;
  return optionValues(picked);
}

function machineParams(params: Params) {
  return {
    hostname: optional(params, "hostname"),
    machineid: optional(params, "machineid"),
    // "" is meaningful for attach (= no machine), so keep it
    resolver: stringParam(params, "resolver"),
  };
}

function auditSerial(c: Context<AppEnv>, serial: string | undefined): void {
  if (serial) c.get("audit").serial = serial.slice(0, 40);
}

machineRoutes.get("/", async (c) => {
  const p = c.get("params");
  return ok(
    c,
    await listMachines(c.get("deps"), {
      hostname: optional(p, "hostname"),
      ip: optional(p, "ip"),
      id: optional(p, "id"),
      resolver: optional(p, "resolver"),
      any: optional(p, "any"),
    }),
  );
});

machineRoutes.post("/token", async (c) => {
  const p = c.get("params");
  const serial = requireString(p, "serial");
  const application = requireString(p, "application");
  auditSerial(c, serial);
  c.get("audit").info = application.slice(0, 900);
  const id = await attachToken(c.get("deps"), {
    serial,
    application,
    ...machineParams(p),
    options: rest(p, IDENTIFYING),
  });
  return ok(c, id);
});

machineRoutes.get("/token", async (c) => {
  const p = c.get("params");
  const serial = optional(p, "serial");
  auditSerial(c, serial);
  const { resolver, ...m } = machineParams(p);
  return ok(
    c,
    await listBindings(c.get("deps"), {
      serial,
      application: optional(p, "application"),
      ...m,
      resolver: resolver || undefined,
      sortby: optional(p, "sortby"),
      sortdir: optional(p, "sortdir"),
      filters: rest(p, [...IDENTIFYING, ...IGNORED, "sortby", "sortdir"]),
    }),
  );
});

machineRoutes.delete(
  "/token/:serial/:machineid/:resolver/:application",
  async (c) => {
    const serial = pathParam(c, "serial");
    auditSerial(c, serial);
    return ok(
      c,
      await detachToken(c.get("deps"), {
        serial,
        machineid: pathParam(c, "machineid"),
        resolver: pathParam(c, "resolver"),
        application: pathParam(c, "application"),
      }),
    );
  },
);

machineRoutes.delete("/token/:serial/:application/:mtid", async (c) => {
  auditSerial(c, pathParam(c, "serial"));
  const raw = pathParam(c, "mtid");
  const mtid = intParam({ mtid: raw }, "mtid", undefined, 1, Number.MAX_SAFE_INTEGER);
  if (mtid === undefined) throw new ParameterError("Missing parameter: mtid");
  return ok(c, await detachBinding(c.get("deps"), mtid));
});

machineRoutes.post("/tokenoption", async (c) => {
  const p = c.get("params");
  const serial = optional(p, "serial");
  auditSerial(c, serial);
  const { resolver, ...m } = machineParams(p);
  return ok(
    c,
    await setBindingOptions(c.get("deps"), {
      mtid: intParam(p, "mtid", undefined, 1, Number.MAX_SAFE_INTEGER),
      serial,
      application: optional(p, "application"),
      ...m,
      resolver: resolver || undefined,
      options: rest(p, [...IDENTIFYING, "mtid", "client", "g"]),
    }),
  );
});

async function authItems(c: Context<AppEnv>, application: string | undefined) {
  const p = c.get("params");
  const hostname = requireString(p, "hostname");
  c.get("audit").info = `hostname: ${hostname}`.slice(0, 900);
  return ok(
    c,
    await getAuthItems(c.get("deps"), {
      hostname,
      application,
      challenge: optional(p, "challenge"),
      serial: optional(p, "serial"),
      filters: rest(p, ["hostname", "challenge", "application", "serial", ...IGNORED]),
      userAgent: c.get("userAgent"),
      mangle: {
        client: c.get("clientIp"),
        userAgent: c.get("userAgent"),
        conditions: requestConditionData(c, c.get("target")),
      },
    }),
  );
}

machineRoutes.get("/authitem", async (c) => await authItems(c, undefined));

machineRoutes.get("/authitem/:application", async (c) => {
  return await authItems(c, pathParam(c, "application"));
});
