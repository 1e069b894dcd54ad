/**
 * A handler acts on exactly what the rights step checked, by construction: the token
 * functions an endpoint calls take the checked token objects (a serial or a selector no
 * longer type-checks, so the domain cannot look up another token than the one decided on),
 * and in the HTTP layer only the rights step (and the event middleware, which reads the
 * checked tokens again after a pre handler changed them) reaches the token lookups. The
 * lists act on the user and realm the rights step resolved, too.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf } from "../../test_app.ts";
import { createUsers } from "../../fixtures/users.ts";
import { enrollHotp } from "../../fixtures/tokens.ts";
import {
  checkRight,
  loadPolicySet,
  rightValue,
  savePolicy,
} from "../../../src/domain/policy/mod.ts";
import type { Deps } from "../../../src/deps.ts";
import * as token from "../../../src/domain/token/mod.ts";
import * as lookup from "../../../src/domain/token/lookup.ts";
import type { Token } from "../../../src/domain/token/mod.ts";

/** True when `A` is checked token objects (one or a list), not a name of one. */
type IsChecked<A> = [A] extends [Token | readonly Token[]] ? true : false;
/** The argument after `deps`. */
type Target<F> = F extends (deps: Deps, target: infer A, ...rest: never[]) => unknown ? A
  : never;

// each line stops compiling when its function takes a serial or a selector again
const ADMIN_FUNCTIONS: Record<string, true> = {
  enableTokens: true satisfies IsChecked<Target<typeof token.enableTokens>>,
  disableTokens: true satisfies IsChecked<Target<typeof token.disableTokens>>,
  revokeTokens: true satisfies IsChecked<Target<typeof token.revokeTokens>>,
  resetTokens: true satisfies IsChecked<Target<typeof token.resetTokens>>,
  deleteTokens: true satisfies IsChecked<Target<typeof token.deleteTokens>>,
  unassignTokens: true satisfies IsChecked<Target<typeof token.unassignTokens>>,
  assignToken: true satisfies IsChecked<Target<typeof token.assignToken>>,
  resyncToken: true satisfies IsChecked<Target<typeof token.resyncToken>>,
  setPin: true satisfies IsChecked<Target<typeof token.setPin>>,
  setRandomPin: true satisfies IsChecked<Target<typeof token.setRandomPin>>,
  setDescription: true satisfies IsChecked<Target<typeof token.setDescription>>,
  setTokenFields: true satisfies IsChecked<Target<typeof token.setTokenFields>>,
  setTokenInfo: true satisfies IsChecked<Target<typeof token.setTokenInfo>>,
  deleteTokenInfo: true satisfies IsChecked<Target<typeof token.deleteTokenInfo>>,
  setTokenRealms: true satisfies IsChecked<Target<typeof token.setTokenRealms>>,
  setFailcount: true satisfies IsChecked<Target<typeof token.setFailcount>>,
  lostToken: true satisfies IsChecked<Target<typeof token.lostToken>>,
};

/** The token room's lookups: every function of token/lookup.ts that finds tokens. */
const LOOKUPS = Object.entries(lookup).filter(([name, f]) =>
  typeof f === "function" && name !== "isOwner"
).map(([name]) => name);

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...tsFiles(path));
    else if (e.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** The names a file imports from the token domain (any of its modules). */
function tokenImports(text: string): string[] {
  const names: string[] = [];
  const re = /import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*"[^"]*domain\/token\/[^"]*"/g;
  for (const m of text.matchAll(re)) {
    for (const part of m[1].split(",")) {
      const name = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0];
      if (name) names.push(name);
    }
  }
  return names;
}

Deno.test("the admin token functions take the checked token objects, not serials", () => {
  assert.equal(Object.keys(ADMIN_FUNCTIONS).length, 17);
  for (const name of Object.keys(ADMIN_FUNCTIONS)) {
    assert.equal(typeof (token as Record<string, unknown>)[name], "function", name);
  }
});

Deno.test("in the HTTP layer only the rights step reaches the token lookups", () => {
  for (const name of ["findTokenBySerial", "findTokensBySerials", "getTokensOfUser"]) {
    assert.ok(LOOKUPS.includes(name), LOOKUPS.join(", "));
  }
  const allowed = new Set(["src/http/rights/guard.ts", "src/http/events.ts"]);
  const offenders: string[] = [];
  for (const file of tsFiles("src/http")) {
    if (allowed.has(file)) continue;
    const used = tokenImports(Deno.readTextFileSync(file)).filter((n) => LOOKUPS.includes(n));
    if (used.length > 0) offenders.push(`${file}: ${used.join(", ")}`);
  }
  assert.deepEqual(offenders, []);
});

Deno.test("a list shows the user and realm the rights step checked, not parameters changed after it", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "staff", users: [{ login: "alice", password: "a" }] });
  await createUsers(t.deps, { realm: "sales", users: [{ login: "sam", password: "s" }] });
  const alices = await enrollHotp(t, { user: "alice", realm: "staff" });
  await enrollHotp(t, { user: "sam", realm: "sales" });
  // a pre handler that points the lists at another realm after the rights step decided
  for (const event of ["token_list", "user_list"]) {
    const res = await jsonOf(
      await t.asAdmin("POST", "/event", {
        body: {
          name: `to sales ${event}`,
          event,
          handlermodule: "RequestMangler",
          action: "set",
          position: "pre",
          "option.parameter": "realm",
          "option.value": "sales",
        },
        json: true,
      }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
  const tokens = await jsonOf(await t.asAdmin("GET", "/token/", { query: { realm: "staff" } }));
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  assert.deepEqual(tokens.body.result.value.tokens.map((x: Json) => x.serial), [alices]);
  const users = await jsonOf(await t.asAdmin("GET", "/user/", { query: { realm: "staff" } }));
  assert.equal(users.status, 200, JSON.stringify(users.body));
  assert.deepEqual(users.body.result.value.map((u: Json) => u.username), ["alice"]);
  await t.close();
});

Deno.test("a rights check decides with the request's policy set, when given one", async () => {
  const t = await createTestApp();
  const admin = { role: "admin" as const, username: "admin", realm: "", resolver: "" };
  await savePolicy(t.deps, "may", { scope: "admin", action: "enable", adminuser: "admin" });
  const decided = await loadPolicySet(t.deps);
  // a change after the rights step decided: this request keeps reading the set it decided with
  await savePolicy(t.deps, "may", { scope: "admin", action: "disable", adminuser: "admin" });
  assert.deepEqual(await checkRight(t.deps, admin, "enable", { policies: decided }), ["may"]);
  await assert.rejects(() => checkRight(t.deps, admin, "enable"), /not allowed/);
  assert.equal(await rightValue(t.deps, admin, "enable", { policies: decided }), undefined);
  await t.close();
});
