/**
 * The handler modules Tessera implements, in privacyIDEA's listing order.
 *
 * @module
 */
import type { HandlerModule } from "../types.ts";
import { userNotificationHandler } from "./user_notification.ts";
import { tokenHandler } from "./token.ts";
import { scriptHandler } from "./script.ts";
import { federationHandler } from "./federation.ts";
import { counterHandler } from "./counter.ts";
import { requestManglerHandler } from "./request_mangler.ts";
import { responseManglerHandler } from "./response_mangler.ts";
import { loggingHandler } from "./logging.ts";
import { customUserAttributesHandler } from "./custom_user_attributes.ts";
import { webhookHandler } from "./webhook.ts";
import { containerHandler } from "./container.ts";

/** The modules, in privacyIDEA's order (`GET /event/handlermodules`). */
export const HANDLER_MODULES: readonly HandlerModule[] = [
  userNotificationHandler,
  tokenHandler,
  scriptHandler,
  federationHandler,
  counterHandler,
  requestManglerHandler,
  responseManglerHandler,
  loggingHandler,
  customUserAttributesHandler,
  webhookHandler,
  containerHandler,
];

const BY_ID = new Map(HANDLER_MODULES.map((m) => [m.id, m]));

/** The module with identifier `id`. */
export function handlerModule(id: string): HandlerModule | undefined {
  return BY_ID.get(id);
}
