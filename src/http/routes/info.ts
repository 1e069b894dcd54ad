import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { HttpError } from "../../errors.ts";

/** `/info/`: privacyIDEA's news feeds for its web interface, which Tessera does not offer. */
export const infoRoutes = new Hono<AppEnv>();

infoRoutes.get("/rss", () => {
  throw new HttpError(
    404,
    "GET /info/rss is not available in Tessera: its web interface shows no news feeds, and " +
      "the server fetches no outside feeds",
    404,
  );
});
