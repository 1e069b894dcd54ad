/**
 * The `WebHook` handler: sends a templated body to a URL (POST, or GET with
 * the data as query string) with a timeout. A failure returns false.
 *
 * @module
 */
import type { Deps } from "../../../deps.ts";
import type { EventContext, HandlerModule } from "../types.ts";
import { isTrue, opt } from "../types.ts";
import { formatTemplate } from "../tags.ts";
import { commonTags, contextToken, contextUser } from "../facts.ts";

const JSON_TYPES = new Set(["application/json", "json"]);
const FORM_TYPES = new Set(["application/x-www-form-urlencoded", "urlencoded"]);
const DEFAULT_TIMEOUT_S = 10;

async function webhookTags(deps: Deps, ctx: EventContext): Promise<Record<string, string>> {
  const tags = await commonTags(deps, ctx);
  const user = await contextUser(deps, ctx);
  const token = await contextToken(deps, ctx);
  const id = ctx.request.identity;
  const all: Record<string, string | undefined> = {
    ...tags,
    // {realm} is the request user's realm here
    realm: user?.realm,
    logged_in_user: id ? `${id.username}${id.realm ? `@${id.realm}` : ""}` : undefined,
    token_serial: tags.serial,
    token_owner: token?.owner?.login,
    user_realm: user?.realm,
  };
  // None values become ""
  return Object.fromEntries(Object.entries(all).map(([k, v]) => [k, v ?? ""]));
}

function formatDeep(value: unknown, tags: Record<string, string>): unknown {
  if (typeof value === "string") return formatTemplate(value, tags, { none: "" });
  if (Array.isArray(value)) return value.map((v) => formatDeep(v, tags));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map((
        [k, v],
      ) => [formatTemplate(k, tags, { none: "" }), formatDeep(v, tags)]),
    );
  }
  return value;
}

/** WebHook / post_webhook. */
export const webhookHandler: HandlerModule = {
  id: "WebHook",
  positions: ["post", "pre"],
  defaultAbort: false,
  actions() {
    return Promise.resolve({
      post_webhook: {
        URL: opt("str", "The URL the data is sent to (http or https)", { required: true }),
        content_type: opt("str", "The content type of the data", {
          required: true,
          value: ["application/json", "application/x-www-form-urlencoded"],
        }),
        replace: opt("bool", "Replace tags like {serial} in the data", { required: true }),
        data: opt("text", "The data to send (JSON for application/json)", { required: true }),
        method: opt("str", "The HTTP method (default POST; GET sends the data as query)", {
          value: ["POST", "GET"],
        }),
        timeout: opt("int", "Seconds to wait for the receiver (default 10)"),
      },
    });
  },
  async run(deps, def, ctx) {
    const o = def.options;
    let url: URL;
    try {
      url = new URL(o.URL ?? "");
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("scheme");
    } catch {
      deps.log.warn("WebHook: invalid URL", { definition: def.name });
      return { success: false };
    }
    const type = (o.content_type ?? "").trim();
    const isJson = JSON_TYPES.has(type);
    if (!isJson && !FORM_TYPES.has(type)) {
      deps.log.warn("WebHook: unknown content type", { definition: def.name, type });
      return { success: false };
    }
    const raw = o.data ?? "";
    const tags = isTrue(o.replace) ? await webhookTags(deps, ctx) : undefined;
    let body: string;
    try {
      if (isJson) {
        const parsed = raw.trim() === "" ? {} : JSON.parse(raw);
        body = JSON.stringify(tags ? formatDeep(parsed, tags) : parsed);
      } else {
        body = tags ? formatTemplate(raw, tags, { none: "" }) : raw;
      }
    } catch (err) {
      deps.log.warn("WebHook: cannot build the data", {
        definition: def.name,
        error: (err as Error).message,
      });
      return { success: false };
    }
    const method = (o.method ?? "POST").toUpperCase() === "GET" ? "GET" : "POST";
    const timeoutS = Number.parseInt(o.timeout ?? "", 10);
    const timeout = (timeoutS > 0 && timeoutS <= 60 ? timeoutS : DEFAULT_TIMEOUT_S) * 1000;
    const contentType = isJson ? "application/json" : "application/x-www-form-urlencoded";
    try {
      let res: Response;
      if (method === "GET") {
        if (isJson) url.searchParams.set("data", body);
        else url.search = url.search ? `${url.search}&${body}` : body;
        res = await fetch(url, { method, signal: AbortSignal.timeout(timeout) });
      } else {
        res = await fetch(url, {
          method,
          body,
          headers: { "content-type": contentType },
          signal: AbortSignal.timeout(timeout),
        });
      }
      await res.body?.cancel();
      deps.log.info("WebHook sent", { definition: def.name, status: res.status });
      return { success: res.ok, details: res.ok ? undefined : `HTTP ${res.status}` };
    } catch (err) {
      deps.log.warn("WebHook failed", { definition: def.name, error: (err as Error).message });
      return { success: false };
    }
  },
};
