/**
 * The `Container` handler (spec 13 §2.15, privacyIDEA's `containerhandler.py`): creates a
 * container, or changes the container of the request (see `container_facts.ts`). Without
 * such a container every action but `create` does nothing and reports failure.
 *
 * @module
 */
import type { Deps } from "../../../deps.ts";
import type { EventContext, HandlerModule, RunDefinition } from "../types.ts";
import { isTrue, opt } from "../types.ts";
import { contextToken, contextUser, detailOf } from "../facts.ts";
import { contextContainer, forgetContainer } from "../container_facts.ts";
import type { EventUser } from "../ports.ts";
import {
  addContainerStates,
  addTokenToContainer,
  assignContainerUser,
  type Container,
  CONTAINER_TYPES,
  createContainer,
  deleteContainer,
  deleteContainerInfo,
  PI_INTERNAL,
  removeTokenFromContainer,
  setContainerDescription,
  setContainerInfo,
  setContainerStates,
  STATE_TYPES,
  unassignContainerUser,
} from "../../container/mod.ts";
import { deleteChallengesOf } from "../../challenge/mod.ts";
import { enableTokens, findTokenBySerial, findTokensBySerials } from "../../token/mod.ts";
import { terminateRegistration } from "../../container/smartphone.ts";
import { NotImplementedError } from "../../../errors.ts";

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** The states whose option is set (privacyIDEA: one bool option per state). */
function selectedStates(options: Record<string, string>): string[] {
  return Object.keys(STATE_TYPES).filter((s) => isTrue(options[s]));
}

/**
 * The user a container is assigned to: the request's user, else the owner of the request's
 * container, else the owner of the request's token.
 */
async function requestUser(deps: Deps, ctx: EventContext): Promise<EventUser | undefined> {
  const user = await contextUser(deps, ctx);
  if (user) return user;
  if (ctx.request.identity?.role === "user") return undefined;
  const owner = (await contextContainer(deps, ctx))?.owner;
  if (owner) return { ...owner };
  return (await contextToken(deps, ctx))?.owner;
}

/** Deletes the user-editable info entries (internal ones stay). */
async function deleteUserInfo(deps: Deps, c: Container): Promise<void> {
  for (const i of c.info) {
    if (i.type !== PI_INTERNAL) await deleteContainerInfo(deps, c, i.key);
  }
}

/** `create`: a new container, optionally owned by the request user and holding its token. */
async function create(deps: Deps, def: RunDefinition, ctx: EventContext) {
  const o = def.options;
  if (!o.type) return { success: false };
  const owner = isTrue(o.user) ? await requestUser(deps, ctx) : undefined;
  const created = await createContainer(deps, {
    type: o.type,
    description: o.description ?? "",
    owner,
  });
  if (isTrue(o.token)) {
    const serial = str(ctx.request.params.serial) || str(detailOf(ctx).serial) ||
      ctx.request.audit.serial;
    const token = serial ? await findTokenBySerial(deps, serial) : undefined;
    const me = ctx.request.identity?.role === "user" ? await contextUser(deps, ctx) : undefined;
    // a user-role request only ever puts the user's own token into the new container
    const mayTake = token !== undefined &&
      (me === undefined || (token.owner?.uid === me.uid && token.owner.realm === me.realm));
    if (mayTake) {
      await addTokenToContainer(deps, created, token);
      ctx.tokensChanged = true;
    }
  }
  return { success: true, details: created.serial };
}

/** Runs an action on the request's container; false when the action had nothing to do. */
async function onContainer(
  deps: Deps,
  def: RunDefinition,
  ctx: EventContext,
  c: Container,
): Promise<boolean> {
  const o = def.options;
  switch (def.action) {
    case "delete":
      await deleteContainer(deps, c);
      await deleteChallengesOf(deps, [c.serial]);
      return true;
    case "unassign":
      if (!c.owner) return false;
      await unassignContainerUser(deps, c, c.owner);
      return true;
    case "assign": {
      const user = await requestUser(deps, ctx);
      if (!user) return false;
      await assignContainerUser(deps, c, user);
      return true;
    }
    case "set states":
    case "add states": {
      const states = selectedStates(o);
      if (states.length === 0) return false;
      if (def.action === "set states") await setContainerStates(deps, c, states);
      else await addContainerStates(deps, c, states);
      return true;
    }
    case "set description":
      if (!o.description) return false;
      await setContainerDescription(deps, c, o.description);
      return true;
    case "remove all tokens":
      for (const t of c.tokens) await removeTokenFromContainer(deps, c, t);
      ctx.tokensChanged ||= c.tokens.length > 0;
      return true;
    case "set container info": {
      if (!o.key) return false;
      await deleteUserInfo(deps, c);
      // an internal key is not overwritten (privacyIDEA logs and skips it)
      if (!c.info.some((i) => i.key === o.key && i.type === PI_INTERNAL)) {
        await setContainerInfo(deps, c, o.key, o.value ?? "");
      }
      return true;
    }
    case "add container info":
      if (!o.key) return false;
      // an internal key: PolicyError, as privacyIDEA raises
      await setContainerInfo(deps, c, o.key, o.value ?? "");
      return true;
    case "delete container info":
      await deleteUserInfo(deps, c);
      return true;
    case "disable all tokens":
    case "enable all tokens": {
      const tokens = await findTokensBySerials(deps, c.tokens.map((t) => t.serial));
      await enableTokens(deps, tokens, def.action === "enable all tokens");
      ctx.tokensChanged ||= tokens.length > 0;
      return true;
    }
    case "unregister":
      // ends the app's registration and deletes the container's challenges
      if (c.type !== "smartphone") {
        throw new NotImplementedError("Registration is not implemented for this container type.");
      }
      await terminateRegistration(deps, c);
      return true;
  }
  deps.log.warn("Container handler: unknown action", { action: def.action });
  return false;
}

/** Container / the actions of spec 13 §2.15. */
export const containerHandler: HandlerModule = {
  id: "Container",
  positions: ["post", "pre"],
  defaultAbort: false,
  actions() {
    const states = Object.fromEntries(
      Object.keys(STATE_TYPES).map((s) => [s, opt("bool", `Set the state ${s}`)]),
    );
    return Promise.resolve({
      create: {
        type: opt("str", "Container type to create", {
          required: true,
          value: Object.keys(CONTAINER_TYPES),
        }),
        description: opt("str", "Description of the container"),
        user: opt("bool", "Assign container to user in request or to token/container owner"),
        token: opt("bool", "Add token from request to container"),
      },
      delete: {},
      unassign: {},
      assign: {},
      "set states": states,
      "add states": { ...states },
      "set description": {
        description: opt("str", "Description of the container", { required: true }),
      },
      "remove all tokens": {},
      "set container info": {
        key: opt("str", "Set this container info key (deletes all existing keys).", {
          required: true,
        }),
        value: opt("str", "Set the value for the key above."),
      },
      "add container info": {
        key: opt("str", "Add this key to the container info.", { required: true }),
        value: opt("str", "Set the value for the key above."),
      },
      "delete container info": {},
      "disable all tokens": {},
      "enable all tokens": {},
      unregister: {},
    });
  },
  async run(deps, def, ctx) {
    if (def.action === "create") return await create(deps, def, ctx);
    const c = await contextContainer(deps, ctx);
    if (!c) return { success: false };
    const success = await onContainer(deps, def, ctx, c);
    forgetContainer(ctx);
    return { success, details: c.serial };
  },
};
