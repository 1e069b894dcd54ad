/**
 * `/container/…`: token containers (spec 13 §2.5), without the smartphone's registration and
 * synchronisation (`container_register.ts`). The rights step resolved and checked the
 * container (`target.container`), the tokens of `serial` and the user; handlers act on those.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { AppEnv, RequestTarget } from "../context.ts";
import { ok } from "../envelope.ts";
import { boolParam, intParam, pathParam, stringParam } from "../params.ts";
import { requestRightValues, visibleRealms } from "../rights/rights.ts";
import { ParameterError, ResourceNotFoundError } from "../../errors.ts";
import {
  addTokenToContainer,
  assignContainerUser,
  compareWithTemplate,
  type Container,
  containerNotFound,
  containerTokenTypes,
  containerTypesView,
  containerViews,
  createContainer,
  deleteContainer,
  deleteContainerInfo,
  deleteTemplate,
  findContainer,
  getTemplate,
  listContainers,
  listTemplates,
  removeTokenFromContainer,
  setContainerDescription,
  setContainerInfo,
  setContainerRealms,
  setContainerStates,
  setTemplate,
  STATE_TYPES,
  TEMPLATE_TOKEN_TYPES,
  unassignContainerUser,
} from "../../domain/container/mod.ts";
import { enrolTemplateTokens as enrolContainerTemplateTokens } from "../../domain/container/template_tokens.ts";
import { isOwner, type TokenWithInfo } from "../../domain/token/mod.ts";
import { realmExists } from "../../domain/user/mod.ts";
import { containerRealms, tokenRealms } from "../../domain/request/context.ts";

type C = Context<AppEnv>;

/** `/container/…` routes (JWT). */
export const containerRoutes = new Hono<AppEnv>();

function targetOf(c: C): RequestTarget {
  return c.get("target");
}

/** The container the rights step checked (container routes always have one). */
function checkedContainer(c: C): Container {
  const container = targetOf(c).container;
  if (!container) throw containerNotFound(pathParam(c, "container_serial"));
  const audit = c.get("audit");
  audit.info = `container ${container.serial} (${container.type})`.slice(0, 255);
  return container;
}

/** A CSV list parameter: trimmed, empty entries dropped. */
function csv(value: string | undefined): string[] {
  return (value ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
}

/** `hide_container_info` values: space-separated keys. */
async function hiddenContainerInfo(c: C): Promise<string[]> {
  return (await requestRightValues(c, "hide_container_info")).flatMap((v) =>
    v.split(/\s+/).filter((k) => k !== "")
  );
}

/** Whether the caller may see a token's details in a container list. */
async function tokenVisibility(c: C): Promise<(t: TokenWithInfo) => boolean> {
  const identity = c.get("identity");
  if (identity?.role === "user") {
    const me = targetOf(c).user;
    return (t) => me !== undefined && isOwner(t, me);
  }
  const realms = await visibleRealms(c, "tokenlist");
  if (realms === undefined) return () => true;
  return (t) => tokenRealms(t).some((r) => realms.includes(r));
}

containerRoutes.get("/", async (c) => {
  const p = c.get("params");
  const target = targetOf(c);
  const assigned = stringParam(p, "assigned");
  const owner = target.user;
  // a named user who does not exist lists nothing rather than everything
  if (!owner && target.names.user !== undefined) return ok(c, { containers: [] });
  // admins with realm-limited container_list policies see only the containers of those realms
  const allowedRealms = await visibleRealms(c, "container_list");
  const result = await listContainers(c.get("deps"), {
    owner: owner ? { uid: owner.uid, realm: owner.realm, resolver: owner.resolver } : undefined,
    serial: stringParam(p, "container_serial") || undefined,
    type: stringParam(p, "type") || undefined,
    tokenSerial: stringParam(p, "token_serial") || undefined,
    realm: stringParam(p, "container_realm") || undefined,
    allowedRealms,
    template: stringParam(p, "template") || undefined,
    description: stringParam(p, "description") || undefined,
    resolver: stringParam(p, "resolver") || undefined,
    assigned: assigned === undefined || assigned === "" ? undefined : boolParam(p, "assigned"),
    infoKey: stringParam(p, "info_key") || undefined,
    infoValue: stringParam(p, "info_value") || undefined,
    lastAuthDelta: stringParam(p, "last_auth_delta") || undefined,
    lastSyncDelta: stringParam(p, "last_sync_delta") || undefined,
    state: stringParam(p, "state") || undefined,
    sortby: stringParam(p, "sortby"),
    sortdir: stringParam(p, "sortdir"),
    page: intParam(p, "page", 0, -1_000_000, 1_000_000),
    pagesize: intParam(p, "pagesize", 0, -1_000_000, 10_000),
  });
  const noToken = boolParam(p, "no_token", false);
  const containers = await containerViews(c.get("deps"), result.containers, {
    noToken,
    hiddenInfo: await hiddenContainerInfo(c),
    hiddenTokenInfo: noToken ? [] : await requestRightValues(c, "hide_tokeninfo"),
    canSeeToken: noToken ? () => false : await tokenVisibility(c),
  });
  return ok(c, { ...result, containers });
});

for (const path of ["/types", "/tokentypes"]) {
  containerRoutes.get(path, (c) => ok(c, containerTypesView()));
}

containerRoutes.get("/statetypes", (c) => ok(c, STATE_TYPES));

containerRoutes.get("/template/tokentypes", (c) => {
  const types = containerTypesView();
  return ok(
    c,
    Object.fromEntries(
      Object.entries(TEMPLATE_TOKEN_TYPES).map(([type, tokenTypes]) => [type, {
        description: types[type].description,
        token_types: [...tokenTypes],
      }]),
    ),
  );
});

containerRoutes.get("/templates", async (c) => {
  const p = c.get("params");
  return ok(
    c,
    await listTemplates(c.get("deps"), {
      name: stringParam(p, "name") || undefined,
      containerType: stringParam(p, "container_type") || undefined,
      sortby: stringParam(p, "sortby"),
      sortdir: stringParam(p, "sortdir"),
      page: intParam(p, "page", 0, -1_000_000, 1_000_000),
      pagesize: intParam(p, "pagesize", 0, -1_000_000, 10_000),
    }),
  );
});

containerRoutes.post("/init", async (c) => {
  const p = c.get("params");
  const target = targetOf(c);
  const template = p.template;
  const templateName = stringParam(p, "template_name");
  const hasTemplate = template !== undefined && template !== null && template !== "";
  if (hasTemplate && templateName) {
    throw new ParameterError("Both template and template_name are given. Choose only one!");
  }
  const type = stringParam(p, "type");
  let templateTokens: unknown[] = [];
  let fromTemplate: string | undefined;
  if (templateName) {
    const stored = await getTemplate(c.get("deps"), templateName);
    // a template of another type (or none) is ignored, as privacyIDEA does
    if (stored && stored.container_type === type?.toLowerCase()) {
      fromTemplate = stored.name;
      templateTokens = stored.template_options.tokens;
    }
  } else if (hasTemplate) {
    if (typeof template !== "object" || Array.isArray(template)) {
      throw new ParameterError("'template' must be a dictionary!");
    }
    const t = template as Record<string, unknown>;
    const options = t.template_options as Record<string, unknown> | undefined;
    if (t.container_type === type?.toLowerCase()) {
      templateTokens = Array.isArray(options?.tokens) ? options.tokens : [];
      const stored = typeof t.name === "string"
        ? await getTemplate(c.get("deps"), t.name)
        : undefined;
      // the name is kept only when the stored template was used unchanged
      if (
        stored && JSON.stringify(stored.template_options.tokens) === JSON.stringify(templateTokens)
      ) fromTemplate = stored.name;
    }
  }
  const realm = target.user ? undefined : target.placeRealm;
  if (realm !== undefined && !(await realmExists(c.get("deps"), realm))) {
    throw new ParameterError(`Realm "${realm}" does not exist`);
  }
  const created = await createContainer(c.get("deps"), {
    type,
    description: stringParam(p, "description"),
    serial: stringParam(p, "container_serial"),
    owner: target.user,
    realms: realm ? [realm] : [],
    templateName: fromTemplate,
  });
  const audit = c.get("audit");
  audit.serial = created.serial;
  audit.info = `container ${created.serial} (${created.type})`;
  if (templateTokens.length === 0) return ok(c, { container_serial: created.serial });
  return ok(c, {
    container_serial: created.serial,
    tokens: await enrolTemplateTokens(c, created, templateTokens),
  });
});

/** A template's tokens enrolled into the new container with the caller's rights. */
async function enrolTemplateTokens(
  c: C,
  container: Container,
  templateTokens: unknown[],
): Promise<Record<string, unknown>> {
  const identity = c.get("identity");
  if (!identity) return {};
  const { role, username, realm, resolver } = identity;
  return await enrolContainerTemplateTokens(c.get("deps"), container, templateTokens, {
    caller: { role, username, realm, resolver },
    callerUser: targetOf(c).user,
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    policies: targetOf(c).policies,
  });
}

containerRoutes.delete("/template/:template_name", async (c) => {
  const name = pathParam(c, "template_name");
  await deleteTemplate(c.get("deps"), name);
  return ok(c, true);
});

containerRoutes.get("/template/:template_name/compare", async (c) => {
  const deps = c.get("deps");
  const name = pathParam(c, "template_name");
  const template = await getTemplate(deps, name);
  if (!template) throw new ResourceNotFoundError(`Template ${name} does not exist.`);
  const cserial = stringParam(c.get("params"), "container_serial");
  let containers: Container[];
  if (cserial) {
    const one = await findContainer(deps, cserial);
    if (!one) throw containerNotFound(cserial);
    containers = [one];
  } else {
    containers = (await listContainers(deps, { template: name })).containers;
  }
  // only containers the caller may list are compared
  const identity = c.get("identity");
  const me = targetOf(c).user;
  const realms = identity?.role === "admin" ? await visibleRealms(c, "container_list") : undefined;
  const result: Record<string, unknown> = {};
  const types = await containerTokenTypes(c.get("deps"), containers);
  for (const container of containers) {
    const isAllowed = identity?.role === "user"
      ? me !== undefined && container.owner?.uid === me.uid &&
        container.owner.resolver === me.resolver && container.owner.realm === me.realm
      : realms === undefined || containerRealms(container).some((r) => realms.includes(r));
    if (!isAllowed) continue;
    result[container.serial] = compareWithTemplate(template, types.get(container.id) ?? []);
  }
  return ok(c, result);
});

containerRoutes.post("/:container_type/template/:template_name", async (c) => {
  const p = c.get("params");
  const raw = p.template_options;
  let options: unknown = raw ?? {};
  if (typeof raw === "string") {
    try {
      options = JSON.parse(raw);
    } catch {
      throw new ParameterError("'template_options' must be a dictionary!");
    }
  }
  const id = await setTemplate(c.get("deps"), {
    name: pathParam(c, "template_name"),
    containerType: pathParam(c, "container_type"),
    options,
    isDefault: boolParam(p, "default", false),
  });
  return ok(c, { template_id: id });
});

containerRoutes.delete("/:container_serial", async (c) => {
  const container = checkedContainer(c);
  await deleteContainer(c.get("deps"), container);
  return ok(c, true);
});

containerRoutes.post("/:container_serial/assign", async (c) => {
  const container = checkedContainer(c);
  const user = targetOf(c).user;
  if (!user) throw new ParameterError("Missing parameter: 'user'");
  await assignContainerUser(c.get("deps"), container, user);
  return ok(c, true);
});

containerRoutes.post("/:container_serial/unassign", async (c) => {
  const p = c.get("params");
  const container = checkedContainer(c);
  const target = targetOf(c);
  const userId = stringParam(p, "user_id");
  const login = stringParam(p, "user");
  if (!login && !userId) {
    throw new ParameterError("Missing one of the following parameters: ['user', 'user_id']");
  }
  const realm = stringParam(p, "realm");
  const resolver = stringParam(p, "resolver");
  if (login && !realm && !resolver && !userId && !target.user) {
    throw new ParameterError("Missing parameter 'realm', 'resolver', and/or 'user_id'");
  }
  const uid = userId || target.user?.uid || "";
  return ok(
    c,
    await unassignContainerUser(c.get("deps"), container, {
      uid,
      resolver: target.user?.resolver ?? resolver,
      realm: target.user?.realm ?? realm,
    }),
  );
});

/** The single token of `serial` the rights step checked; 404 texts of spec 13 §2.4. */
function singleToken(c: C): TokenWithInfo {
  const target = targetOf(c);
  const serial = target.serial ?? target.names.serial;
  if (!serial) throw new ParameterError("Missing parameter: 'serial'");
  const token = target.tokens.find((t) => t.serial === serial);
  if (!token) throw new ResourceNotFoundError(`No token found for serials: ${serial}`);
  return token;
}

/** Each serial of a bulk request → the outcome; refused and unknown serials are false. */
async function forEachSerial(
  c: C,
  act: (token: TokenWithInfo) => Promise<boolean>,
): Promise<Record<string, boolean>> {
  const target = targetOf(c);
  const serials = target.serials ?? (target.serial ? [target.serial] : []);
  const result: Record<string, boolean> = {};
  for (const serial of serials) {
    const token = target.tokens.find((t) => t.serial === serial);
    if (!token) {
      result[serial] = false;
      continue;
    }
    try {
      result[serial] = await act(token);
    } catch (err) {
      // one token that cannot be added (its type) does not stop the others
      if (!(err instanceof ParameterError)) throw err;
      result[serial] = false;
    }
  }
  for (const serial of target.denied) result[serial] = false;
  return result;
}

containerRoutes.post("/:container_serial/add", async (c) => {
  const container = checkedContainer(c);
  const token = singleToken(c);
  c.get("audit").serial = token.serial;
  return ok(c, await addTokenToContainer(c.get("deps"), container, token));
});

containerRoutes.post("/:container_serial/addall", async (c) => {
  const container = checkedContainer(c);
  if (stringParam(c.get("params"), "serial") === undefined) {
    throw new ParameterError("Missing parameter: 'serial'");
  }
  return ok(
    c,
    await forEachSerial(c, (t) => addTokenToContainer(c.get("deps"), container, t)),
  );
});

containerRoutes.post("/:container_serial/remove", async (c) => {
  const container = checkedContainer(c);
  const target = targetOf(c);
  const serial = target.serial ?? target.names.serial;
  if (!serial) throw new ParameterError("Missing parameter: 'serial'");
  const token = target.tokens.find((t) => t.serial === serial);
  if (!token) throw new ResourceNotFoundError(`Token with serial ${serial} does not exist.`);
  c.get("audit").serial = token.serial;
  return ok(c, await removeTokenFromContainer(c.get("deps"), container, token));
});

containerRoutes.post("/:container_serial/removeall", async (c) => {
  const container = checkedContainer(c);
  if (stringParam(c.get("params"), "serial") === undefined) {
    throw new ParameterError("Missing parameter: 'serial'");
  }
  return ok(
    c,
    await forEachSerial(c, (t) => removeTokenFromContainer(c.get("deps"), container, t)),
  );
});

containerRoutes.post("/:container_serial/description", async (c) => {
  const container = checkedContainer(c);
  const description = stringParam(c.get("params"), "description");
  if (description === undefined) throw new ParameterError("Missing parameter: 'description'");
  await setContainerDescription(c.get("deps"), container, description);
  return ok(c, true);
});

containerRoutes.post("/:container_serial/states", async (c) => {
  const container = checkedContainer(c);
  const raw = stringParam(c.get("params"), "states");
  if (raw === undefined) throw new ParameterError("Missing parameter: 'states'");
  const states = csv(raw.replaceAll(" ", ""));
  if (states.length === 0) throw new ParameterError("Parameter 'states' must not be empty");
  return ok(c, await setContainerStates(c.get("deps"), container, states));
});

containerRoutes.post("/:container_serial/realms", async (c) => {
  const container = checkedContainer(c);
  const raw = stringParam(c.get("params"), "realms");
  if (raw === undefined) throw new ParameterError("Missing parameter: 'realms'");
  const deps = c.get("deps");
  const result = await setContainerRealms(deps, container, csv(raw), {
    allowedRealms: await visibleRealms(c, "container_realms"),
    realmExists: (r) => realmExists(deps, r),
  });
  return ok(c, result);
});

containerRoutes.post("/:container_serial/info/:key", async (c) => {
  const container = checkedContainer(c);
  const value = stringParam(c.get("params"), "value");
  if (value === undefined) throw new ParameterError("Missing parameter: 'value'");
  await setContainerInfo(c.get("deps"), container, pathParam(c, "key"), value);
  return ok(c, true);
});

containerRoutes.delete("/:container_serial/info/delete/:key", async (c) => {
  const container = checkedContainer(c);
  return ok(c, await deleteContainerInfo(c.get("deps"), container, pathParam(c, "key")));
});
