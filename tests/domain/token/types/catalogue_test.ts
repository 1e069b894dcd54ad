import assert from "node:assert/strict";
import { NOT_ENROLLED_TYPES, TOKEN_TYPES } from "../../../../src/domain/token/types/catalogue.ts";
import { TOKEN_TYPE_MODULES } from "../../../../src/domain/token/types/mod.ts";

Deno.test("the token type catalogue names exactly the registered type modules, in their order", () => {
  const enrolled = TOKEN_TYPE_MODULES.map((t) => t.type).filter((t) => !(t in NOT_ENROLLED_TYPES));
  assert.deepEqual(Object.keys(TOKEN_TYPES), enrolled);
  for (const [type, description] of Object.entries({ ...TOKEN_TYPES, ...NOT_ENROLLED_TYPES })) {
    assert.match(description, /\S/, `${type} has a description`);
  }
});

Deno.test("each type kept only to authenticate (u2f) has a module and is not in the enrolment list", () => {
  for (const type of Object.keys(NOT_ENROLLED_TYPES)) {
    assert.ok(TOKEN_TYPE_MODULES.some((t) => t.type === type), type);
    assert.equal(type in TOKEN_TYPES, false, type);
  }
});
