/**
 * Actions `/policy/defs` lists that have no registered effect test yet (see `_registry.ts`).
 *
 * This list only shrinks: register an action's effect test with `actionTest(...)` and delete
 * its line here in the same commit (the walker fails while an action is both registered and
 * pending, and when an entry names no listed action). Entries are `scope:action`; a pattern
 * (`{type}`, `{TYPE}`) stands for every listed action it expands to.
 *
 * @module
 */

/** `scope:action` entries without a registered effect test yet. */
export const PENDING: readonly string[] = [
  // --- authentication
  // --- authorization
  // --- enrollment
  // --- token
];
