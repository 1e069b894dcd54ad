/**
 * The walk over `GET /policy/defs`: every listed action has a registered test that shows its
 * effect (`actionTest` in `_registry.ts`) or is still in `_pending.ts`; a pending action has no
 * registered test (a pending `{type}` pattern stands for the expansions not covered yet, and
 * goes when none is left); every pending entry and every registration names a listed action.
 *
 * The registrations are collected by importing every test module under `tests/` that uses
 * `actionTest` with `Deno.test` switched off, so table-driven registrations count, and the
 * tests themselves run only in their own files.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";
import { knownTokenTypes } from "../../src/domain/policy/_known.ts";
import { type ActionTestRegistration, expandAction, registeredActionTests } from "./_registry.ts";
import { PENDING } from "./_pending.ts";

const TESTS_DIR = new URL("../", import.meta.url);
const SELF = new Set(["_registry.ts", "walk_test.ts", "_pending.ts"]);

async function* tsFiles(dir: URL): AsyncGenerator<URL> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) yield* tsFiles(new URL(`${entry.name}/`, dir));
    else if (entry.isFile && entry.name.endsWith(".ts")) yield new URL(entry.name, dir);
  }
}

/** Test modules that register action tests (they import the registry and call actionTest). */
async function registeringModules(): Promise<URL[]> {
  const out: URL[] = [];
  for await (const file of tsFiles(TESTS_DIR)) {
    const name = file.pathname.split("/").pop()!;
    if (file.pathname.includes("/policy_actions/") && SELF.has(name)) continue;
    const text = await Deno.readTextFile(file);
    if (/_registry\.ts["']/.test(text) && text.includes("actionTest(")) out.push(file);
  }
  return out.sort((a, b) => a.href.localeCompare(b.href));
}

/** Imports the registering modules with `Deno.test` switched off; returns the registrations. */
async function collectRegistrations(): Promise<readonly ActionTestRegistration[]> {
  const modules = await registeringModules();
  const realTest = Deno.test;
  // the modules' tests run in their own files; here only their registrations are wanted
  (Deno as { test: unknown }).test = () => {};
  try {
    for (const m of modules) await import(m.href);
  } finally {
    (Deno as { test: unknown }).test = realTest;
  }
  return registeredActionTests();
}

/** `scope:action` of every action `/policy/defs` lists, read through the API. */
async function listedActions(): Promise<Set<string>> {
  const t = await createTestApp();
  try {
    const res = await jsonOf(await t.asAdmin("GET", "/policy/defs"));
    assert.equal(res.status, 200);
    const defs = res.body.result.value as Record<string, Record<string, unknown>>;
    const out = new Set<string>();
    for (const [scope, actions] of Object.entries(defs)) {
      for (const action of Object.keys(actions)) out.add(`${scope}:${action}`);
    }
    return out;
  } finally {
    await t.close();
  }
}

/** The `scope:action` names a registration covers. */
function coveredBy(r: ActionTestRegistration, allTypes: readonly string[]): string[] {
  const types = r.types === undefined || r.types === "all" ? allTypes : r.types;
  return expandAction(r.action, types).map((a) => `${r.scope}:${a}`);
}

/** The `scope:action` names a pending entry stands for (patterns over every type). */
function pendingNames(entry: string, allTypes: readonly string[]): string[] {
  const i = entry.indexOf(":");
  return expandAction(entry.slice(i + 1), allTypes).map((a) => `${entry.slice(0, i)}:${a}`);
}

Deno.test("every action /policy/defs lists has a registered effect test or is pending", async () => {
  const allTypes = knownTokenTypes().map((t) => t.type);
  const listed = await listedActions();
  const registrations = await collectRegistrations();

  const covered = new Set<string>();
  const unlisted: string[] = [];
  for (const r of registrations) {
    if (r.types !== undefined && r.types !== "all") {
      const unknown = r.types.filter((t) => !allTypes.includes(t));
      assert.deepEqual(unknown, [], `${r.scope}:${r.action} (${r.name}): unknown token types`);
    }
    const names = coveredBy(r, allTypes).filter((n) => listed.has(n));
    if (names.length === 0) unlisted.push(`${r.scope}:${r.action} (${r.name})`);
    for (const n of names) covered.add(n);
  }
  assert.deepEqual(
    unlisted,
    [],
    "registered effect tests of actions /policy/defs does not list (make them plain tests)",
  );

  // a concrete entry must not be covered; a pattern entry stands for the expansions not yet
  // covered (a family can be registered type by type) and goes when none is left
  const pending = new Set<string>();
  const stale: string[] = [];
  const both: string[] = [];
  for (const entry of PENDING) {
    const names = pendingNames(entry, allTypes).filter((n) => listed.has(n));
    if (names.length === 0) stale.push(entry);
    else if (!/\{type\}|\{TYPE\}/.test(entry)) {
      if (covered.has(entry)) both.push(entry);
      pending.add(entry);
    } else {
      const open = names.filter((n) => !covered.has(n));
      if (open.length === 0) both.push(entry);
      for (const n of open) pending.add(n);
    }
  }
  assert.deepEqual(stale, [], "_pending.ts entries that name no listed action: delete them");
  assert.equal(new Set(PENDING).size, PENDING.length, "_pending.ts has duplicate entries");
  assert.deepEqual(both, [], "actions with a registered test are still in _pending.ts: remove");

  const missing = [...listed].filter((n) => !covered.has(n) && !pending.has(n)).sort();
  assert.deepEqual(missing, [], "listed actions without a registered effect test (actionTest)");
});
