import assert from "node:assert/strict";
import { TOKEN_TYPES } from "../../../../src/domain/token/types/catalogue.ts";
import { TOKEN_TYPE_MODULES } from "../../../../src/domain/token/types/mod.ts";

Deno.test("the token type catalogue names exactly the registered type modules, in their order", () => {
  assert.deepEqual(Object.keys(TOKEN_TYPES), TOKEN_TYPE_MODULES.map((t) => t.type));
  for (const [type, description] of Object.entries(TOKEN_TYPES)) {
    assert.match(description, /\S/, `${type} has a description`);
  }
});
