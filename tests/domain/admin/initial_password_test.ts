import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createTestApp } from "../../test_app.ts";
import {
  addAdmin,
  deleteAdmin,
  ensureInitialAdmin,
  initialPasswordFile,
  setAdminPassword,
} from "../../../src/domain/admin/mod.ts";

Deno.test("the initial admin password file goes once that password is changed or the admin deleted", async () => {
  const t = await createTestApp();
  const file = initialPasswordFile(t.deps);
  const first = await ensureInitialAdmin(t.deps);
  assert.ok(first);
  Deno.writeTextFileSync(file, first + "\n", { mode: 0o600 });
  // another admin's change keeps it
  await addAdmin(t.deps, "other", { password: "other-password-1" });
  await setAdminPassword(t.deps, "other", "other-password-2");
  await deleteAdmin(t.deps, "other");
  assert.ok(existsSync(file));
  // the initial admin's new password makes the file stale: it is removed
  await setAdminPassword(t.deps, "admin", "a-new-admin-password");
  assert.ok(!existsSync(file));
  assert.ok(t.log.lines.some((l) => l.includes("Removed the initial admin password file")));
  // deleting the admin removes a file that is (again) there, and a missing file is fine
  Deno.writeTextFileSync(file, "x\n", { mode: 0o600 });
  await deleteAdmin(t.deps, "admin");
  assert.ok(!existsSync(file));
  await t.close();
});
