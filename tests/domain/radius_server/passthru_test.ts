import assert from "node:assert/strict";
import { createTestApp } from "../../test_app.ts";
import { createUsers } from "../../fixtures/users.ts";
import { startResponder } from "./responder.ts";
import { setRadiusServer } from "../../../src/domain/radius_server/mod.ts";
import { savePolicy } from "../../../src/domain/policy/mod.ts";
import { validateCheck } from "../../../src/domain/validate/mod.ts";

Deno.test("validateCheck with passthru=<RADIUS definition> for a user without tokens", async () => {
  const t = await createTestApp();
  const up = await startResponder(
    "pt-secret",
    (req) =>
      req.attributes["User-Name"] === "alice" && req.attributes["User-Password"] === "upstream-pw"
        ? { code: "Access-Accept" }
        : { code: "Access-Reject" },
  );
  try {
    await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "local" }] });
    await setRadiusServer(t.deps, "up", {
      server: "127.0.0.1",
      port: up.port,
      secret: "pt-secret",
      timeout: 1,
      retries: 1,
    });
    await savePolicy(t.deps, "pt", { scope: "authentication", action: "passthru=up" });
    const req = { user: "alice", realm: "r1", clientIp: "127.0.0.1", userAgent: "test" };
    const ok = await validateCheck(t.deps, { ...req, pass: "upstream-pw" });
    assert.equal(ok.value, true);
    assert.equal(ok.detail.message, "against RADIUS server up due to 'pt'");
    const no = await validateCheck(t.deps, { ...req, pass: "wrong" });
    assert.equal(no.value, false);
    assert.equal(no.detail.message, "The user has no tokens assigned");
  } finally {
    await up.close();
    await t.close();
  }
});
