/**
 * The `Logging` handler: writes a templated line to the server log.
 *
 * @module
 */
import type { HandlerModule } from "../types.ts";
import { opt } from "../types.ts";
import { formatTemplate } from "../tags.ts";
import { commonTags } from "../facts.ts";

const LEVELS = ["ERROR", "WARNING", "INFO", "DEBUG"];

/** Logging / logging. */
export const loggingHandler: HandlerModule = {
  id: "Logging",
  positions: ["post", "pre"],
  defaultAbort: false,
  actions() {
    return Promise.resolve({
      logging: {
        name: opt("str", "The name of the logger", { default: "pi-eventlogger" }),
        message: opt("text", "The log message; tags like {serial} are replaced", {
          default: "event={action} triggered",
        }),
        level: opt("str", "The log level", { value: LEVELS, default: "INFO" }),
      },
    });
  },
  async run(deps, def, ctx) {
    const tags = await commonTags(deps, ctx);
    // recipient, enrolment, URL/image, pin and container tags render as None here
    for (
      const t of [
        "recipient_givenname",
        "recipient_surname",
        "registrationcode",
        "googleurl_value",
        "googleurl_img",
        "pushurl_value",
        "pushurl_img",
        "pin",
        "container_serial",
        "container_url_value",
        "container_url_img",
        "challenge",
      ]
    ) tags[t] = undefined;
    tags.url = undefined;
    const message = formatTemplate(def.options.message || "event={action} triggered", tags);
    const logger = def.options.name || "pi-eventlogger";
    const level = (def.options.level || "INFO").toUpperCase();
    const fields = { logger, event: ctx.event };
    if (level === "ERROR") deps.log.error(message, fields);
    else if (level === "WARNING") deps.log.warn(message, fields);
    else if (level === "DEBUG") deps.log.debug(message, fields);
    else deps.log.info(message, fields);
    return { success: true };
  },
};
