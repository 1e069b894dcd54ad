/**
 * The `ResponseMangler` handler: sets or deletes a key of the JSON response.
 *
 * @module
 */
import type { HandlerModule } from "../types.ts";
import { opt } from "../types.ts";

const MAX_LEVELS = 3;

function pointer(text: string): string[] | undefined {
  if (!text.startsWith("/")) return undefined;
  const parts = text.slice(1).split("/").map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
  if (parts.length === 0 || parts.length > MAX_LEVELS || parts.some((p) => p === "")) {
    return undefined;
  }
  // never let a pointer reach the prototype
  if (parts.some((p) => p === "__proto__" || p === "constructor" || p === "prototype")) {
    return undefined;
  }
  return parts;
}

function typed(type: string, value: string): unknown {
  if (type === "integer") {
    if (!/^-?\d+$/.test(value.trim())) throw new Error("not an integer");
    return Number(value);
  }
  if (type === "bool") return ["1", "true", "yes", "on"].includes(value.toLowerCase());
  if (type === "string") return value;
  throw new Error(`unknown type ${type}`);
}

/** ResponseMangler / set, delete. */
export const responseManglerHandler: HandlerModule = {
  id: "ResponseMangler",
  positions: ["post"],
  defaultAbort: false,
  actions() {
    const ptr = opt("str", "A JSON pointer like /detail/message (up to three levels)", {
      required: true,
    });
    return Promise.resolve({
      delete: { "JSON pointer": ptr },
      set: {
        "JSON pointer": ptr,
        type: opt("str", "The type of the value", {
          required: true,
          value: ["string", "integer", "bool"],
        }),
        value: opt("str", "The value to set", { required: true }),
      },
    });
  },
  run(deps, def, ctx) {
    const body = ctx.response?.body;
    if (!ctx.response || !body) return Promise.resolve({ success: true }); // not JSON: untouched
    const parts = pointer(def.options["JSON pointer"] ?? "");
    if (!parts) {
      deps.log.warn("ResponseMangler: unusable JSON pointer", { definition: def.name });
      return Promise.resolve({ success: false });
    }
    const last = parts.pop()!;
    let node: Record<string, unknown> = body;
    if (def.action === "delete") {
      for (const p of parts) {
        const next = node[p];
        if (!next || typeof next !== "object") return Promise.resolve({ success: true });
        node = next as Record<string, unknown>;
      }
      if (!Object.hasOwn(node, last)) {
        deps.log.info("ResponseMangler: no such key to delete", { definition: def.name });
        return Promise.resolve({ success: true });
      }
      delete node[last];
    } else if (def.action === "set") {
      let value: unknown;
      try {
        value = typed(def.options.type ?? "", def.options.value ?? "");
      } catch {
        deps.log.warn("ResponseMangler: bad type or value", { definition: def.name });
        return Promise.resolve({ success: false });
      }
      for (const p of parts) {
        let next = node[p];
        if (!next || typeof next !== "object" || Array.isArray(next)) {
          next = {};
          node[p] = next;
        }
        node = next as Record<string, unknown>;
      }
      node[last] = value;
    } else {
      return Promise.resolve({ success: false });
    }
    ctx.response.changed = true;
    return Promise.resolve({ success: true });
  },
};
