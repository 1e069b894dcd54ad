/**
 * The `Counter` handler: named counters in the database (atomic updates).
 *
 * @module
 */
import type { HandlerModule } from "../types.ts";
import { isTrue, opt } from "../types.ts";
import { changeCounter, setCounter } from "../event_store.ts";

const NAME = { counter_name: opt("str", "The name of the counter", { required: true }) };

/** Counter / increase_counter, decrease_counter, reset_counter. */
export const counterHandler: HandlerModule = {
  id: "Counter",
  positions: ["post", "pre"],
  defaultAbort: false,
  actions() {
    return Promise.resolve({
      increase_counter: { ...NAME },
      decrease_counter: {
        ...NAME,
        allow_negative_values: opt("bool", "The counter may go below zero"),
      },
      reset_counter: { ...NAME },
    });
  },
  async run(deps, def) {
    const name = (def.options.counter_name ?? "").trim();
    if (!name || name.length > 80) {
      deps.log.warn("Counter handler without a usable counter_name", { definition: def.name });
      return { success: false };
    }
    if (def.action === "increase_counter") await changeCounter(deps.db, name, 1, false);
    else if (def.action === "decrease_counter") {
      await changeCounter(deps.db, name, -1, !isTrue(def.options.allow_negative_values));
    } else if (def.action === "reset_counter") await setCounter(deps.db, name, 0);
    else return { success: false };
    return { success: true };
  },
};
