/**
 * The container facts of spec 05 §6.1 and spec 13 §2.15: which container a request is
 * about, for the container conditions and the `Container` handler. Looked up lazily and
 * cached per request like the user and token facts.
 *
 * The container is the one named by the request (`container_serial`, or the serial in a
 * `/container/<serial>/…` path), else `result.value.container_serial` of the response, each
 * only when such a container exists; else the container of the request's single token.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  type Container,
  containerOfTokens,
  findContainer,
  listContainers,
} from "../container/mod.ts";
import { findTokenBySerial } from "../token/mod.ts";
import type { EventContext } from "./types.ts";
import { contextToken, contextUser, resultOf } from "./facts.ts";
import type { EventUser } from "./ports.ts";

/** First path segments of `/container/…` routes that are not a container serial. */
const NOT_SERIAL = new Set([
  "",
  "init",
  "challenge",
  "rollover",
  "synchronize",
  "types",
  "statetypes",
  "template",
  "templates",
]);

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/**
 * The container serial in the path of a `/container/<serial>/…` route (`DELETE
 * /container/<serial>`, `/container/register/<serial>/terminate`), else "".
 */
export function pathContainerSerial(path: string): string {
  const parts = path.split("/");
  if (parts[1] !== "container") return "";
  let raw = parts[2] ?? "";
  if (raw === "register") raw = parts[4] === "terminate" ? parts[3] ?? "" : "";
  else if (NOT_SERIAL.has(raw) || parts[3] === "template") raw = "";
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

async function cached<T>(ctx: EventContext, key: string, make: () => Promise<T>): Promise<T> {
  if (ctx.cache.has(key)) return ctx.cache.get(key) as T;
  const v = await make();
  ctx.cache.set(key, v);
  return v;
}

function ownedBy(c: Container, user: EventUser | undefined): boolean {
  return user !== undefined && c.owner !== undefined && c.owner.uid === user.uid &&
    c.owner.resolver === user.resolver && c.owner.realm === user.realm.toLowerCase();
}

/** The container of the token with `serial`, if it is in one. */
export async function containerOfToken(
  deps: Deps,
  serial: string,
): Promise<Container | undefined> {
  const token = await findTokenBySerial(deps, serial);
  if (!token) return undefined;
  const ref = (await containerOfTokens(deps, [token.id])).get(token.id);
  return ref ? await findContainer(deps, ref.serial) : undefined;
}

/**
 * The container the request names (`container_serial` or the path) or the answer names
 * (`result.value.container_serial`), if it exists; no token lookup (privacyIDEA's
 * `_get_container_serial`). A user-role caller only gets a container they own.
 */
export async function namedContainer(
  deps: Deps,
  ctx: EventContext,
): Promise<Container | undefined> {
  return await cached(ctx, "namedContainer", async () => {
    let found: Container | undefined;
    const named = str(ctx.request.params.container_serial) ||
      pathContainerSerial(ctx.request.path);
    if (named && !named.includes("*")) found = await findContainer(deps, named);
    if (!found) {
      const value = resultOf(ctx).value;
      const fromResult = value && typeof value === "object" && !Array.isArray(value)
        ? str((value as Record<string, unknown>).container_serial)
        : "";
      if (fromResult) found = await findContainer(deps, fromResult);
    }
    return await visible(deps, ctx, found);
  });
}

async function visible(
  deps: Deps,
  ctx: EventContext,
  c: Container | undefined,
): Promise<Container | undefined> {
  // a pre handler runs before the endpoint's ownership checks: never someone else's container
  if (c && ctx.request.identity?.role === "user" && !ownedBy(c, await contextUser(deps, ctx))) {
    return undefined;
  }
  return c;
}

/**
 * The container the request is about (see the module doc), read as it is now. A user-role
 * caller only ever gets a container they own.
 */
export async function contextContainer(
  deps: Deps,
  ctx: EventContext,
): Promise<Container | undefined> {
  return await cached(ctx, "container", async () => {
    const named = str(ctx.request.params.container_serial) ||
      pathContainerSerial(ctx.request.path);
    const found = await namedContainer(deps, ctx);
    // a named container the caller may not see is not replaced by the token's
    if (found || (named && ctx.request.identity?.role === "user")) return found;
    const token = await contextToken(deps, ctx);
    return await visible(deps, ctx, token ? await containerOfToken(deps, token.serial) : undefined);
  });
}

/** Forgets the cached container (a handler changed or deleted it). */
export function forgetContainer(ctx: EventContext): void {
  ctx.cache.delete("container");
  ctx.cache.delete("namedContainer");
}

/** How many containers `user` owns. */
export async function containerCountOfUser(deps: Deps, user: EventUser): Promise<number> {
  const list = await listContainers(deps, {
    owner: { uid: user.uid, realm: user.realm.toLowerCase(), resolver: user.resolver },
    page: 1,
    pagesize: 1,
  });
  return list.count ?? list.containers.length;
}
