/**
 * The event engine's Hono middleware (spec 05 §7): for endpoints with an event
 * name, `pre` handlers run before the route (and may change `c.get("params")`),
 * `post` handlers run after a normal response and may change it.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";
import { authenticate } from "./auth.ts";
import {
  type EventContext,
  type EventIdentity,
  eventOf,
  eventPlan,
  runDefinitions,
} from "../domain/event/mod.ts";
import { getTokensOfUser, reloadTokens } from "../domain/token/mod.ts";
import { pythonJson } from "../lib/py_json.ts";
import { ENVELOPE_BODIES } from "./envelope.ts";

function identityOf(c: Context<AppEnv>): EventIdentity | undefined {
  const id = c.get("identity");
  return id
    ? { username: id.username, realm: id.realm, role: id.role, resolver: id.resolver }
    : undefined;
}

function contextFor(
  c: Context<AppEnv>,
  event: { name: string; pathSerial?: string },
  position: "pre" | "post",
): EventContext {
  const audit = c.get("audit");
  return {
    event: event.name,
    position,
    request: {
      method: c.req.method,
      path: c.req.path,
      rawPath: new URL(c.req.url).pathname,
      params: c.get("params"),
      headers: c.req.raw.headers,
      clientIp: c.get("clientIp"),
      userAgent: c.get("userAgent"),
      identity: identityOf(c),
      pathSerial: event.pathSerial,
      checked: c.get("target"),
      audit: {
        serial: audit.serial,
        user: audit.user,
        realm: audit.realm,
        tokenType: audit.tokenType,
      },
    },
    cache: new Map(),
  };
}

/**
 * A pre handler changed tokens: the endpoint acts on the checked tokens as they are now
 * (the same tokens, read again; a deleted one is gone, a user's new one counts).
 */
async function reloadChecked(c: Context<AppEnv>): Promise<void> {
  const deps = c.get("deps");
  const target = c.get("target");
  target.tokens = await reloadTokens(deps, target.tokens);
  if (target.userTokens && target.user) {
    target.userTokens = await getTokensOfUser(deps, target.user);
  }
}

/** Reads a JSON response once; the returned response replaces the consumed one. */
async function readJson(
  res: Response,
): Promise<{ body: Record<string, unknown> | undefined; res: Response }> {
  if (!(res.headers.get("content-type") ?? "").includes("json")) return { body: undefined, res };
  // reading the text and rebuilding the response is cheaper than res.clone()
  const text = await res.text();
  const fresh = new Response(text, { status: res.status, headers: res.headers });
  try {
    const body = JSON.parse(text);
    return {
      body: body && typeof body === "object" && !Array.isArray(body) ? body : undefined,
      res: fresh,
    };
  } catch {
    return { body: undefined, res: fresh };
  }
}

async function rebuild(
  c: Context<AppEnv>,
  old: Response,
  body: Record<string, unknown>,
  status: number,
) {
  delete body.signature;
  let text: string;
  const signer = c.get("deps").signer;
  if (signer) {
    // the changed body needs a fresh signature, made like the envelope makes it
    const canonical = pythonJson(body);
    const signature = await signer.sign(canonical);
    text = canonical.slice(0, -1) + (canonical.length > 2 ? ", " : "") +
      `"signature": "rsa_sha256_pss:${signature}"}`;
  } else {
    text = JSON.stringify(body);
  }
  const headers = new Headers(old.headers);
  headers.delete("content-length");
  // a handler may replace the status with the body (Federation: the remote's status)
  return new Response(text, { status, headers });
}

/** Runs the event handlers configured for the request's event, if any. */
export const eventMiddleware: MiddlewareHandler<AppEnv> = async (c, next) => {
  const ev = eventOf(c.req.method, c.req.path);
  if (!ev) return await next();
  const deps = c.get("deps");
  const plan = await eventPlan(deps, ev.name);
  if (!plan) return await next();

  if (plan.pre.length > 0) {
    // a request the endpoint will refuse for lack of a valid JWT fires no handlers
    let allowed = !ev.needsAuth || c.get("identity") !== undefined;
    if (!allowed) {
      try {
        await authenticate(c);
        allowed = true;
      } catch {
        allowed = false;
      }
    }
    if (allowed) {
      const ctx = contextFor(c, ev, "pre");
      await runDefinitions(deps, plan.pre, ctx, c.get("audit"));
      if (ctx.tokensChanged) await reloadChecked(c);
    }
  }

  await next();

  // an endpoint that raised fires no post handlers
  if (plan.post.length === 0 || c.error !== undefined) return;
  // the envelope object when the response is one of ours, else the parsed text
  let read: { body: Record<string, unknown> | undefined; res: Response };
  const stashed = ENVELOPE_BODIES.get(c.res);
  if (stashed) {
    read = { body: stashed, res: c.res };
  } else if (
    c.res.body === null && (c.res.status === 204 || c.res.status === 400) &&
    c.req.path.startsWith("/validate/radiuscheck")
  ) {
    // /validate/radiuscheck answers with an empty 204 (accepted) or 400 (rejected)
    const value = c.res.status === 204;
    read = {
      body: {
        result: { status: true, value, authentication: value ? "ACCEPT" : "REJECT" },
        detail: {},
      },
      res: c.res,
    };
  } else {
    read = await readJson(c.res);
    c.res = undefined;
    c.res = read.res;
  }
  // an error envelope (e.g. an unknown path) is not a normal response either
  const result = read.body?.result as Record<string, unknown> | undefined;
  if (result?.status === false) return;
  // the request's writes are committed before a handler acts on its answer (a notification
  // must not announce a check that a failed commit undid)
  try {
    await c.get("writes").settle();
  } catch (err) {
    // the answer becomes the error (onError): the audit row follows its status
    delete c.get("audit").outcome;
    throw err;
  }
  const ctx = contextFor(c, ev, "post");
  ctx.response = { status: read.res.status, body: read.body, changed: false };
  await runDefinitions(deps, plan.post, ctx, c.get("audit"));
  // the empty radiuscheck answer stays empty: a non-JSON response is left untouched
  if (ctx.response.changed && ctx.response.body && read.res.body !== null) {
    const fresh = await rebuild(c, read.res, ctx.response.body, ctx.response.status);
    c.res = undefined;
    c.res = fresh;
  }
};
