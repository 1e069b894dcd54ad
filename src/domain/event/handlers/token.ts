/**
 * The `Token` handler: changes the token(s) of the request (spec 05 §5.2).
 * Every action but `enroll` works on each serial of the context.
 *
 * @module
 */
import type { Deps } from "../../../deps.ts";
import type { EventContext, HandlerModule, RunDefinition } from "../types.ts";
import { isTrue, opt } from "../types.ts";
import { parseDuration } from "../compare.ts";
import { contextSerials, contextToken, contextUser } from "../facts.ts";
import { changeToken, enrollToken, findTokens, type TokenChange } from "../ports.ts";
import { randomDigits } from "../../../lib/random.ts";
import { namedContainer } from "../container_facts.ts";
import { addTokenToContainer } from "../../container/mod.ts";
import { findTokenBySerial } from "../../token/mod.ts";

const OFFSET_REGEXP = /^\s*([+-])\s*(\d+[smhdy])\s*$/;

/** `{now}`/`{current_time}` (with an optional `+10m` right after), `{client_ip}`, `{ua_*}`. */
function describe(deps: Deps, text: string, ctx: EventContext, extra: Record<string, string>) {
  const now = deps.clock.now();
  return text
    .replace(/\{(?:now|current_time)\}([+-]\d+[smhdy])?/g, (_m, off?: string) => {
      const m = off ? off.match(OFFSET_REGEXP) : null;
      const delta = m ? (m[1] === "-" ? -1 : 1) * (parseDuration(m[2]) ?? 0) : 0;
      return new Date(now + delta).toISOString();
    })
    .replaceAll("{client_ip}", ctx.request.clientIp)
    .replaceAll("{ua_browser}", ctx.request.userAgent.split("/")[0] ?? "")
    .replaceAll("{ua_string}", ctx.request.userAgent)
    .replace(/\{(username|realm)\}/g, (_m, k: string) => extra[k] ?? "");
}

function validityDate(deps: Deps, text: string | undefined): string | undefined {
  if (!text) return undefined;
  const m = text.match(OFFSET_REGEXP);
  if (m) {
    const delta = (m[1] === "-" ? -1 : 1) * (parseDuration(m[2]) ?? 0);
    return new Date(deps.clock.now() + delta).toISOString();
  }
  const t = Date.parse(text);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

function int(text: string | undefined): number | undefined {
  return text !== undefined && /^\s*-?\d+\s*$/.test(text) ? Number(text) : undefined;
}

async function changesFor(
  deps: Deps,
  def: RunDefinition,
  ctx: EventContext,
  serial: string,
): Promise<TokenChange[] | undefined> {
  const o = def.options;
  switch (def.action) {
    case "enable":
    case "disable":
    case "delete":
    case "unassign":
      return [{ op: def.action }];
    case "set tokenrealm":
      return o.realm ? [{ op: "realms", realms: [o.realm], onlyRealm: isTrue(o.only_realm) }] : [];
    case "set description": {
      const user = await contextUser(deps, ctx);
      return [{
        op: "description",
        description: describe(deps, o.description ?? "", ctx, {
          username: user?.login ?? "",
          realm: user?.realm ?? "",
        }),
      }];
    }
    case "set tokeninfo": {
      if (!o.key) return [];
      const user = await contextUser(deps, ctx);
      return [{
        op: "tokeninfo",
        key: o.key,
        value: describe(deps, o.value ?? "", ctx, {
          username: user?.login ?? "",
          realm: user?.realm ?? "",
        }),
      }];
    }
    case "increase tokeninfo": {
      if (!o.key) return [];
      const [token] = await findTokens(deps, { serial });
      const current = int(token?.info[o.key] ?? "0");
      const inc = int(o.increment ?? "1");
      if (current === undefined || inc === undefined) {
        deps.log.warn("Token handler: tokeninfo is not an integer", { serial, key: o.key });
        return [];
      }
      return [{ op: "tokeninfo", key: o.key, value: String(current + inc) }];
    }
    case "delete tokeninfo":
      return o.key ? [{ op: "deleteTokeninfo", key: o.key }] : [];
    case "set failcounter": {
      const n = int(o["fail counter"]);
      return n === undefined || n < 0 ? [] : [{ op: "failcount", value: n }];
    }
    case "change failcounter": {
      const n = int(o["change fail counter"]);
      const [token] = await findTokens(deps, { serial });
      if (n === undefined || !token) return [];
      return [{ op: "failcount", value: Math.max(0, token.failCount + n) }];
    }
    case "set max failcount": {
      const n = int(o["max failcount"]);
      return n === undefined || n < 0 ? [] : [{ op: "maxfail", value: n }];
    }
    case "set countwindow": {
      const n = int(o["count window"] ?? "50");
      return n === undefined || n < 0 ? [] : [{ op: "countwindow", value: n }];
    }
    case "set validity":
      return [{
        op: "validity",
        start: validityDate(deps, o["valid from"]),
        end: validityDate(deps, o["valid till"]),
      }];
    case "set random pin": {
      const len = int(o.length ?? "6");
      if (len === undefined || len < 1 || len > 31) return [];
      return [{ op: "pin", pin: randomDigits(deps.random, len) }];
    }
  }
  return undefined;
}

/** Token / the actions of spec 05 §5.2 that Tessera supports. */
export const tokenHandler: HandlerModule = {
  id: "Token",
  positions: ["post", "pre"],
  defaultAbort: false,
  actions() {
    return Promise.resolve({
      "set tokenrealm": {
        realm: opt("str", "The realm to add", { required: true }),
        only_realm: opt("bool", "Replace all token realms by this one"),
      },
      delete: {},
      unassign: {},
      disable: {},
      enable: {},
      "set random pin": {
        length: opt("int", "The length of the PIN (1 to 31)", { required: true, value: [6] }),
      },
      enroll: {
        tokentype: opt("str", "The type of the new token", { required: true }),
        user: opt("bool", "Assign the token to the request user or the token owner"),
        realm: opt("str", "Put the token into this realm"),
        additional_params: opt("str", "A JSON object merged into the init parameters"),
        container: opt(
          "bool",
          "Add the token to the container if there is one identifiable in the request.",
        ),
      },
      "set description": {
        description: opt(
          "str",
          "The description; tags {now}, {now}+10m, {client_ip}, {ua_browser}",
        ),
      },
      "set validity": {
        "valid from": opt("str", "A date or an offset like +10m, +24h, +7d"),
        "valid till": opt("str", "A date or an offset like +10m, +24h, +7d"),
      },
      "set countwindow": { "count window": opt("int", "The count window", { required: true }) },
      "set failcounter": { "fail counter": opt("int", "The fail counter", { required: true }) },
      "change failcounter": {
        "change fail counter": opt("str", "+n or -n", { required: true }),
      },
      "set max failcount": {
        "max failcount": opt("int", "The maximum fail count", { required: true }),
      },
      "set tokeninfo": {
        key: opt("str", "The tokeninfo key", { required: true }),
        value: opt("str", "The value; tags {now}, {client_ip}, {username}, {realm}"),
      },
      "increase tokeninfo": {
        key: opt("str", "The tokeninfo key", { required: true }),
        increment: opt("int", "The increment (default 1, may be negative)"),
      },
      "delete tokeninfo": { key: opt("str", "The tokeninfo key", { required: true }) },
    });
  },
  async run(deps, def, ctx) {
    if (def.action === "enroll") {
      const o = def.options;
      if (!o.tokentype) return { success: false };
      let extra: Record<string, unknown> = {};
      if (o.additional_params) {
        try {
          const parsed = JSON.parse(o.additional_params);
          if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) extra = parsed;
        } catch {
          deps.log.warn("Token handler: additional_params is not a JSON object", { def: def.name });
        }
      }
      const user = isTrue(o.user)
        ? (await contextToken(deps, ctx))?.owner ?? await contextUser(deps, ctx)
        : undefined;
      const params: Record<string, unknown> = { ...extra, type: o.tokentype, genkey: true };
      if (o.realm) params.realm = o.realm;
      const serial = await enrollToken(deps, params, user);
      ctx.tokensChanged = true;
      if (isTrue(o.container)) {
        // the container the request or its answer names (not a token's), as privacyIDEA
        const container = await namedContainer(deps, ctx);
        const token = container ? await findTokenBySerial(deps, serial) : undefined;
        if (container && token) await addTokenToContainer(deps, container, token);
      }
      return { success: true, details: serial };
    }
    const serials = await contextSerials(deps, ctx);
    if (serials.length === 0) return { success: false };
    let pin: string | undefined;
    for (const serial of serials) {
      const changes = await changesFor(deps, def, ctx, serial);
      if (changes === undefined) {
        deps.log.warn("Token handler: unknown action", { action: def.action });
        return { success: false };
      }
      for (const change of changes) {
        ctx.tokensChanged = true;
        await changeToken(deps, serial, change);
        if (change.op === "pin") pin = change.pin;
      }
    }
    if (pin !== undefined && ctx.response?.body) {
      // "set random pin" hands the new PIN to the caller in detail.pin
      const body = ctx.response.body;
      const detail = (body.detail && typeof body.detail === "object" ? body.detail : {}) as Record<
        string,
        unknown
      >;
      detail.pin = pin;
      body.detail = detail;
      ctx.response.changed = true;
    }
    return { success: true };
  },
};
