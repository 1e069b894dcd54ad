/**
 * The web interface's field lists against the server's own: every system setting Tessera knows
 * is offered with the same type and default, and every key of each resolver type's defaults has
 * a field in that type's form (or is named here as one the form leaves as stored).
 */
import assert from "node:assert/strict";
import { SYSTEM_KEYS } from "../../src/domain/system_config/mod.ts";
import { resolverDefaults } from "../../src/domain/resolver/mod.ts";
import { SYSTEM_SETTINGS } from "../../src/ui/app/specs/system_keys.ts";
import { RESOLVER_FIELDS, RESOLVER_TYPES } from "../../src/ui/app/specs/resolver_fields.ts";

Deno.test("the system settings page offers every known key with the server's type and default", () => {
  const ui = new Map(SYSTEM_SETTINGS.map((s) => [s.key, s]));
  assert.deepEqual([...ui.keys()].sort(), Object.keys(SYSTEM_KEYS).sort());
  for (const [key, known] of Object.entries(SYSTEM_KEYS)) {
    const spec = ui.get(key)!;
    assert.equal(spec.default, known.default, `${key}: default`);
    assert.ok(spec.help && spec.help.length > 10, `${key}: help`);
    if (known.type === "bool") {
      assert.equal(spec.type, "bool", key);
      // the server stores True/False
      assert.deepEqual(spec.bool, ["True", "False"], key);
    } else if (known.type === "int") {
      assert.ok(spec.type === "int" || spec.type === "select", `${key}: ${spec.type}`);
      if (spec.type === "select") {
        for (const o of spec.options ?? []) {
          const v = Array.isArray(o) ? o[0] : o;
          assert.equal(known.check?.(v), undefined, `${key}: option ${v} is refused`);
        }
      } else {
        // the field's limits are values the server takes, and just outside them it refuses
        if (spec.min !== undefined) {
          assert.equal(known.check?.(String(spec.min)), undefined, `${key}: min`);
        }
        if (spec.max !== undefined) {
          assert.equal(known.check?.(String(spec.max)), undefined, `${key}: max`);
          assert.notEqual(known.check?.(String(spec.max + 1)), undefined, `${key}: max + 1`);
        }
      }
    } else {
      assert.ok(["text", "url", "select"].includes(spec.type), `${key}: ${spec.type}`);
    }
  }
});

/** Keys of a type's defaults that the form does not offer, and why. */
const NOT_OFFERED: Record<string, string> = {
  // the type is the form's own select
  type: "the resolver type",
  // Tessera reads neither: ldapts never follows referrals and reads no schema
  NOREFERRALS: "not used by Tessera",
  NOSCHEMAS: "not used by Tessera",
  // the HTTP presets' mode flag: Entra ID and Keycloak are always in advanced mode
  advanced: "fixed by the type",
};

Deno.test("each resolver type's form has a field for every key of the type's defaults", () => {
  for (const [type] of RESOLVER_TYPES) {
    const fields = new Set((RESOLVER_FIELDS[type] ?? []).map((f) => f.key));
    assert.ok(fields.size > 0, `${type}: no fields`);
    const missing = Object.keys(resolverDefaults(type)).filter((k) =>
      !fields.has(k) && !(k in NOT_OFFERED)
    );
    assert.deepEqual(missing, [], `${type}: keys without a field`);
  }
  // every type the server has is offered (an unknown type is refused by resolverDefaults)
  assert.deepEqual(RESOLVER_TYPES.map(([t]) => t).sort(), [
    "entraidresolver",
    "httpresolver",
    "keycloakresolver",
    "ldapresolver",
    "passwdresolver",
    "scimresolver",
    "sqlresolver",
  ]);
});
