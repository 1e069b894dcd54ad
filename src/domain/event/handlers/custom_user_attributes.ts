/**
 * The `CustomUserAttributes` handler: sets or deletes a custom attribute of
 * the token owner or the logged-in user.
 *
 * @module
 */
import type { HandlerModule } from "../types.ts";
import { opt } from "../types.ts";
import { chosenUser } from "../facts.ts";
import { setCustomAttribute } from "../ports.ts";

const WHO = opt("str", "Whose attribute", {
  required: true,
  value: ["tokenowner", "logged_in_user"],
});

/** CustomUserAttributes / set_custom_user_attributes, delete_custom_user_attributes. */
export const customUserAttributesHandler: HandlerModule = {
  id: "CustomUserAttributes",
  positions: ["post", "pre"],
  defaultAbort: false,
  actions() {
    return Promise.resolve({
      set_custom_user_attributes: {
        user: WHO,
        attrkey: opt("str", "The attribute key", { required: true }),
        attrvalue: opt("str", "The attribute value", { required: true }),
      },
      delete_custom_user_attributes: {
        user: WHO,
        attrkey: opt("str", "The attribute key", { required: true }),
      },
    });
  },
  async run(deps, def, ctx) {
    const o = def.options;
    if (!o.attrkey || (o.user !== "tokenowner" && o.user !== "logged_in_user")) {
      return { success: false };
    }
    const user = await chosenUser(deps, ctx, o.user);
    if (!user) return { success: false };
    if (def.action === "set_custom_user_attributes") {
      await setCustomAttribute(deps, user, o.attrkey, o.attrvalue ?? "");
    } else if (def.action === "delete_custom_user_attributes") {
      await setCustomAttribute(deps, user, o.attrkey, undefined);
    } else {
      return { success: false };
    }
    return { success: true };
  },
};
