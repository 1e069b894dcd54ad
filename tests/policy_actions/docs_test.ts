/**
 * `docs/policies.md` is generated from the policy definitions (`src/domain/policy/defs.ts`)
 * and `_pending.ts`; this test keeps it in sync. After changing either, regenerate it with
 * `UPDATE_DOCS=1 deno test -A tests/policy_actions/docs_test.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type ActionDef, FEATURE_DEFS, policyDefinitions } from "../../src/domain/policy/defs.ts";
import { knownTokenTypes } from "../../src/domain/policy/_known.ts";
import { expandAction } from "./_registry.ts";
import { PENDING } from "./_pending.ts";

const DOC = new URL("../../docs/policies.md", import.meta.url);
const SCOPE_ORDER = [
  "admin",
  "user",
  "authentication",
  "authorization",
  "enrollment",
  "webui",
  "token",
  "register",
  "container",
  "hardening",
];

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

function valuesOf(def: ActionDef): string {
  if (!def.value || def.value.length === 0) return "";
  const list = def.value.length > 12
    ? `${def.value[0]} … ${def.value[def.value.length - 1]}`
    : def.value.join(", ");
  return def.multiple ? `${list} (several)` : list;
}

function byScope(scopes: string[]): string[] {
  return [...scopes].sort((a, b) => SCOPE_ORDER.indexOf(a) - SCOPE_ORDER.indexOf(b));
}

/** The text of docs/policies.md. */
export function renderPoliciesDoc(): string {
  const types = knownTokenTypes();
  const ctx = { realms: [], resolvers: [], tokenTypes: types };
  const defs = policyDefinitions(ctx);
  const pending = new Set(
    PENDING.flatMap((entry) => {
      const i = entry.indexOf(":");
      const scope = entry.slice(0, i);
      return expandAction(entry.slice(i + 1), types.map((t) => t.type)).map((a) => `${scope}:${a}`);
    }),
  );
  const out: string[] = [];
  out.push("# Policy actions");
  out.push("");
  out.push(
    "<!-- Generated from src/domain/policy/defs.ts by tests/policy_actions/docs_test.ts: " +
      "do not edit by hand. -->",
  );
  out.push("");
  out.push(
    "These are the actions `GET /policy/defs` lists, per scope. Tessera accepts exactly these: " +
      "a policy naming any other action is refused with `ERR905: Invalid actions [..]!` " +
      "(HTTP 400), as privacyIDEA refuses actions it does not define — by `POST /policy/<name>`, " +
      "by `POST /policy/import/<file>` (the whole file, nothing is saved) and by " +
      "`tessera import privacyidea` (the policy is left out whole, see " +
      "[migration.md](migration.md)).",
  );
  out.push("");
  // the "in effect" column only while some listed action still waits for its effect test
  const withState = pending.size > 0;
  out.push(
    "Actions with a type are generated for each token type Tessera has (for example " +
      "`enrollHOTP`, `hotp_max_token_per_user`). " +
      (withState
        ? "Actions marked *not yet* in the last column are accepted for compatibility with " +
          "privacyIDEA but do not take effect yet; every other listed action takes effect as " +
          "privacyIDEA 3.12 describes it, and a test shows it."
        : "Every listed action takes effect as privacyIDEA 3.12 describes it, and a test " +
          "(tests/policy_actions/) shows it."),
  );
  out.push("");
  for (const scope of byScope(Object.keys(defs))) {
    const actions = defs[scope];
    out.push(`## ${scope}`);
    out.push("");
    out.push(`| action | type | values | description |${withState ? " in effect |" : ""}`);
    out.push(withState ? "|---|---|---|---|---|" : "|---|---|---|---|");
    for (const name of Object.keys(actions).sort((a, b) => a.localeCompare(b))) {
      const def = actions[name];
      const state = pending.has(`${scope}:${name}`) ? "not yet" : "yes";
      out.push(
        `| \`${name}\` | ${def.type} | ${cell(valuesOf(def))} | ${cell(def.desc)} |` +
          (withState ? ` ${state} |` : ""),
      );
    }
    out.push("");
  }
  out.push("## Not supported: actions of features Tessera does not have");
  out.push("");
  out.push(
    "These privacyIDEA actions belong to features Tessera does not have. They are not listed " +
      "and a policy naming one is refused; they come back with their feature.",
  );
  out.push("");
  for (const feature of Object.values(FEATURE_DEFS)) {
    if (feature.isBuilt) continue;
    const actions = feature.actions(ctx);
    const parts = byScope(Object.keys(actions)).map((scope) => {
      const names = Object.keys(actions[scope as keyof typeof actions] ?? {}).sort();
      return `${scope}: ${names.map((n) => `\`${n}\``).join(", ")}`;
    });
    out.push(`- **${cell(feature.description)}** — ${parts.join("; ")}`);
  }
  out.push("");
  return out.join("\n");
}

/** `text` as `deno fmt` writes Markdown with the project's settings (so the file stays formatted). */
async function formatted(text: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "fmt",
      "--config",
      new URL("../../deno.json", import.meta.url).pathname,
      "--ext=md",
      "-",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const out = await child.output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

Deno.test("docs/policies.md is generated from the policy definitions", async () => {
  const text = await formatted(renderPoliciesDoc());
  if (Deno.env.get("UPDATE_DOCS") === "1") await Deno.writeTextFile(DOC, text);
  const current = await Deno.readTextFile(DOC).catch(() => "");
  assert.ok(
    current === text,
    "docs/policies.md is out of date: run UPDATE_DOCS=1 deno test -A tests/policy_actions/docs_test.ts",
  );
});
