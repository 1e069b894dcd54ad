/**
 * The `RequestMangler` handler: sets or deletes request parameters. In pre
 * position the endpoint sees the changed parameters.
 *
 * @module
 */
import type { HandlerModule } from "../types.ts";
import { opt } from "../types.ts";

const USER_PARAMS = new Set(["user", "username", "realm", "resolver"]);

/** RequestMangler / set, delete. */
export const requestManglerHandler: HandlerModule = {
  id: "RequestMangler",
  positions: ["post", "pre"],
  defaultAbort: false,
  actions() {
    return Promise.resolve({
      delete: {
        parameter: opt("str", "The parameter to remove from the request", { required: true }),
      },
      set: {
        parameter: opt("str", "The parameter to set", { required: true }),
        value: opt("str", "The new value; {0}, {1}… are the groups of match_pattern", {
          required: true,
        }),
        match_parameter: opt("str", "Only set when this parameter matches match_pattern"),
        match_pattern: opt("str", "A regex that must fully match match_parameter"),
        reset_user: opt("bool", "Rebuild the request user when user, username or realm changes"),
      },
    });
  },
  run(deps, def, ctx) {
    const params = ctx.request.params;
    const name = def.options.parameter ?? "";
    if (!name) return Promise.resolve({ success: false });
    if (def.action === "delete") {
      delete params[name];
    } else if (def.action === "set") {
      let value = def.options.value ?? "";
      const matchParam = def.options.match_parameter;
      if (matchParam) {
        const subject = params[matchParam];
        if (typeof subject !== "string") return Promise.resolve({ success: true });
        let m: RegExpMatchArray | null;
        try {
          m = subject.match(new RegExp(`^(?:${def.options.match_pattern ?? ""})$`));
        } catch {
          deps.log.warn("RequestMangler: invalid match_pattern", { definition: def.name });
          return Promise.resolve({ success: false });
        }
        if (!m) return Promise.resolve({ success: true });
        value = value.replace(/\{(\d+)\}/g, (_x, i) => m![Number(i) + 1] ?? "");
      }
      params[name] = value;
    } else {
      return Promise.resolve({ success: false });
    }
    // the user (and so the token facts) may have changed
    if (USER_PARAMS.has(name) || name === "serial") ctx.cache.clear();
    return Promise.resolve({ success: true });
  },
};
