/**
 * The smartphone container's registration and synchronisation endpoints
 * (spec 13 §2.7–§2.11), mounted under `/container`: the app's own endpoints
 * (no JWT: its signature is the authentication) and the registration start
 * and server-side unregister for admins and users.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { AppError, HttpError, httpStatusOf, ParameterError } from "../../errors.ts";
import { type Container, getContainer } from "../../domain/container/mod.ts";
import {
  clientRollover,
  containerPolicies,
  createContainerChallenge,
  finalizeRegistration,
  hidesContainerErrors,
  initRegistration,
  synchronizeContainer,
  terminateByClient,
  terminateRegistration,
} from "../../domain/container/smartphone.ts";

/** `/container/…` routes of the app's registration and synchronisation. */
export const containerRegisterRoutes = new Hono<AppEnv>();

/** The container the request names (`container_serial`), 404 when unknown; audited. */
async function appContainer(c: Context<AppEnv>): Promise<Container> {
  const raw = c.get("params").container_serial;
  if (raw === undefined || raw === null) {
    throw new ParameterError("Missing parameter: 'container_serial'");
  }
  if (typeof raw !== "string" || raw.length > 40) {
    throw new ParameterError(`Cannot parse parameter "container_serial": expected a serial`);
  }
  const container = await getContainer(c.get("deps"), raw);
  const audit = c.get("audit");
  audit.info = `container ${container.serial} (${container.type})`;
  if (container.owner) {
    audit.user = container.owner.login;
    audit.realm = container.owner.realm;
    audit.resolver = container.owner.resolver;
  }
  return container;
}

function policiesFor(c: Context<AppEnv>, container: Container) {
  return containerPolicies(c.get("deps"), container, { client: c.get("clientIp") });
}

/**
 * One of the app's endpoints: the container it names, then `fn`. With the container policy
 * `hide_specific_error_message`, any failure answers `hidden` (code 3000) under the
 * original status; the audit keeps the real reason.
 */
function appEndpoint(
  hidden: string,
  fn: (c: Context<AppEnv>, container: Container) => Promise<unknown>,
) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    let container: Container | undefined;
    try {
      container = await appContainer(c);
      return await ok(c, await fn(c, container));
    } catch (err) {
      const deps = c.get("deps");
      const hides = await hidesContainerErrors(deps, container, { client: c.get("clientIp") })
        .catch(() => false);
      if (!hides) throw err;
      const audit = c.get("audit");
      audit.info = `${audit.info} ${err instanceof AppError ? err.message : "internal error"}`
        .trim();
      if (!(err instanceof AppError)) {
        deps.log.error("Unhandled error", { path: c.req.path, error: err as Error });
      }
      throw new HttpError(httpStatusOf(err), hidden, 3000);
    }
  };
}

containerRegisterRoutes.post(
  "/register/finalize",
  appEndpoint(
    "Failed finalizing container registration",
    async (c, container) =>
      await finalizeRegistration(
        c.get("deps"),
        container,
        await policiesFor(c, container),
        c.get("params"),
      ),
  ),
);

containerRegisterRoutes.post(
  "/challenge",
  appEndpoint(
    "Failed creating container challenge",
    async (c, container) =>
      await createContainerChallenge(c.get("deps"), container, c.get("params")),
  ),
);

containerRegisterRoutes.post(
  "/synchronize",
  appEndpoint(
    "Failed container synchronization",
    async (c, container) =>
      await synchronizeContainer(
        c.get("deps"),
        container,
        await policiesFor(c, container),
        c.get("params"),
      ),
  ),
);

containerRegisterRoutes.post(
  "/register/terminate/client",
  appEndpoint(
    "Failed terminating container registration",
    async (c, container) =>
      await terminateByClient(
        c.get("deps"),
        container,
        await policiesFor(c, container),
        c.get("params"),
      ),
  ),
);

containerRegisterRoutes.post(
  "/rollover",
  appEndpoint("Failed container rollover", async (c, container) =>
    await clientRollover(
      c.get("deps"),
      container,
      await policiesFor(c, container),
      c.get("params"),
    )),
);

/** The container the rights step resolved and checked (the JWT routes). */
function checkedContainer(c: Context<AppEnv>): Container {
  const container = c.get("target").container;
  // the rights table names these routes' container, so the rights step always resolved one
  if (!container) throw new ParameterError("Missing parameter: 'container_serial'");
  c.get("audit").info = `container ${container.serial} (${container.type})`;
  return container;
}

containerRegisterRoutes.post("/register/initialize", async (c) => {
  const container = checkedContainer(c);
  const policies = await policiesFor(c, container);
  return await ok(c, await initRegistration(c.get("deps"), container, policies, c.get("params")));
});

containerRegisterRoutes.post("/register/:container_serial/terminate", async (c) => {
  return await ok(c, await terminateRegistration(c.get("deps"), checkedContainer(c)));
});
