import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { stringParam } from "../params.ts";
import { addAuditPolicies } from "../rights/rights.ts";
import { webuiRequest } from "../webui_request.ts";
import { getNews, rssSettings } from "../../domain/info/mod.ts";

/** `/info/`: the news feeds of the web interface (spec 14 §15). */
export const infoRoutes = new Hono<AppEnv>();

infoRoutes.get("/rss", async (c) => {
  const deps = c.get("deps");
  const identity = c.get("identity")!;
  // the age and the feeds come from webui policies only: a request parameter cannot widen them
  const settings = await rssSettings(
    deps,
    { ...identity, resolver: identity.resolver ?? "" },
    webuiRequest(c),
  );
  addAuditPolicies(c, settings.policies);
  const channel = stringParam(c.get("params"), "channel") || undefined;
  return ok(c, await getNews(settings.feeds, settings.age, { channel, now: deps.clock.now() }));
});
