/**
 * The registry of policy-action effect tests: "listed" and "takes effect" are one thing.
 *
 * Every action `GET /policy/defs` lists must have a registered test that shows its effect.
 * `tests/policy_actions/walk_test.ts` fetches `/policy/defs` (on the run's engine) and fails
 * when a listed action has neither a registered test nor an entry in `_pending.ts`.
 *
 * ## The convention
 *
 * Register a test with {@link actionTest} instead of `Deno.test`:
 *
 * ```ts
 * import { actionTest } from "../policy_actions/_registry.ts";
 *
 * actionTest("admin", "otp_pin_minlength", "a PIN shorter than the minimum is refused", async () => {
 *   // 1. baseline: without the policy the request behaves one way (e.g. 200)
 *   // 2. with the policy: it behaves differently — assert the exact message or value
 *   //    (spec 15), and for a refusal that nothing changed
 * });
 * ```
 *
 * - `scope` and `action` are exactly as `/policy/defs` lists them. One test may show several
 *   actions of a scope (`["passOnNoToken", "passOnNoUser"]`) when it shows each one's effect
 *   against its own baseline; one action of several scopes likewise (`["enrollment",
 *   "authorization"]`).
 * - Actions generated per token type are registered by a pattern: `{type}` stands for the
 *   lower-case type, `{TYPE}` for the upper-case one (`"{type}_otplen"`, `"enroll{TYPE}"`).
 *   A pattern needs `types`: the token types the test exercises (`{ types: ["hotp", "totp"] }`)
 *   — it covers the listed actions of exactly those types — or `"all"` when the test walks
 *   every token type (a table over the types), which covers every listed expansion.
 * - The test must show the effect: a baseline without the policy that behaves differently
 *   from the same request with the policy. A test that would pass without the policy's code
 *   does not count.
 * - When you register an action, remove it from `_pending.ts` in the same commit: the walker
 *   fails while an action is both registered and pending (the list only shrinks). Then
 *   regenerate docs/policies.md, which marks pending actions as not yet in effect:
 *   `UPDATE_DOCS=1 deno test -A tests/policy_actions/docs_test.ts`.
 * - A test module that registers action tests may call `actionTest` in loops (table-driven),
 *   but must do no work at its top level other than defining tests: the walker imports it
 *   (with `Deno.test` switched off) to collect the registrations.
 * - An action that `/policy/defs` does not list cannot be registered: the walker fails on a
 *   registration that matches no listed action (a feature's actions leave the list with it).
 *
 * @module
 */

/** One registered effect test. */
export interface ActionTestRegistration {
  scope: string;
  /** The action name, or a pattern with `{type}` / `{TYPE}`. */
  action: string;
  name: string;
  /** For a pattern: the token types it covers, or every type. */
  types?: readonly string[] | "all";
}

/** Options of {@link actionTest}: `types` for a pattern, the rest passed to `Deno.test`. */
export type ActionTestOptions = Omit<Deno.TestDefinition, "name" | "fn"> & {
  types?: readonly string[] | "all";
};

const registrations: ActionTestRegistration[] = [];

const SCOPE_RE = /^[a-z]+$/;
// action names: letters, digits, `_`, `.`, `-` (e.g. `registration.length`), and placeholders
const ACTION_RE = /^(?:[A-Za-z0-9_.\-]|\{type\}|\{TYPE\})+$/;

/**
 * Registers a test showing the effect of `action` in `scope` (see the module doc) and defines
 * it as a `Deno.test` named `policy <scope>:<action> — <name>`.
 */
export function actionTest(
  scope: string | readonly string[],
  action: string | readonly string[],
  name: string,
  fn: (t: Deno.TestContext) => void | Promise<void>,
  options: ActionTestOptions = {},
): void {
  const actions = typeof action === "string" ? [action] : [...action];
  const scopes = typeof scope === "string" ? [scope] : [...scope];
  for (const sc of scopes) {
    if (!SCOPE_RE.test(sc)) throw new Error(`actionTest: bad scope "${sc}"`);
  }
  if (actions.length === 0) throw new Error(`actionTest ${scope}: no action`);
  if (name.trim() === "") throw new Error(`actionTest ${scope}:${actions}: the test needs a name`);
  const { types, ...testOptions } = options;
  const hasPattern = actions.some((a) => a.includes("{type}") || a.includes("{TYPE}"));
  for (const a of actions) {
    if (!ACTION_RE.test(a)) throw new Error(`actionTest: bad action "${a}"`);
  }
  if (hasPattern && (types === undefined || (types !== "all" && types.length === 0))) {
    throw new Error(`actionTest ${scope}:${actions}: a pattern needs the token types it tests`);
  }
  if (!hasPattern && types !== undefined) {
    throw new Error(`actionTest ${scope}:${actions}: types only go with a {type} pattern`);
  }
  for (const sc of scopes) {
    for (const a of actions) {
      const isPattern = a.includes("{type}") || a.includes("{TYPE}");
      registrations.push({ scope: sc, action: a, name, ...(isPattern ? { types } : {}) });
    }
  }
  Deno.test({
    ...testOptions,
    name: `policy ${scopes.join("+")}:${actions.join("+")} — ${name}`,
    fn,
  });
}

/** The registrations made so far in this module graph (read by the walker). */
export function registeredActionTests(): readonly ActionTestRegistration[] {
  return registrations;
}

/**
 * The action names a pattern stands for (`{type}` and `{TYPE}` over `tokenTypes`); a plain
 * name stands for itself.
 */
export function expandAction(action: string, tokenTypes: readonly string[]): string[] {
  if (!action.includes("{type}") && !action.includes("{TYPE}")) return [action];
  return tokenTypes.map((t) =>
    action.replaceAll("{type}", t.toLowerCase()).replaceAll("{TYPE}", t.toUpperCase())
  );
}
