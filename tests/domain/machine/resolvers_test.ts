import assert from "node:assert/strict";
import { createTestApp } from "../../test_app.ts";
import {
  listMachines,
  machineRefOf,
  resolveHostname,
  saveMachineResolver,
  testMachineResolver,
} from "../../../src/domain/machine/mod.ts";
import { ParameterError, ResourceNotFoundError } from "../../../src/errors.ts";
import { HOSTS_TEXT, writeHosts } from "./fixtures.ts";

Deno.test("an unreachable ldap machine resolver contributes no machines; the others still answer", async () => {
  const t = await createTestApp();
  await saveMachineResolver(t.deps, "hosts1", { type: "hosts", filename: await writeHosts(t) });
  // a loopback port nobody listens on: refused at once (tests/ldap/ covers a real directory)
  await saveMachineResolver(t.deps, "ldap1", {
    type: "ldap",
    LDAPURI: "ldap://127.0.0.1:1",
    LDAPBASE: "dc=example,dc=org",
    BINDPW: "pw",
    TIMEOUT: "2",
  });
  // the hosts file's five machines; the directory that cannot be reached adds none
  assert.equal((await listMachines(t.deps)).length, 5);
  const res = await testMachineResolver(t.deps, { type: "ldap", LDAPURI: "ldap://127.0.0.1:1" });
  assert.equal(res.ok, false);
  await t.close();
});

Deno.test("machineRefOf: host name, id pair, nothing, and the errors", async () => {
  const t = await createTestApp();
  const id = await saveMachineResolver(t.deps, "mr", {
    type: "hosts",
    filename: await writeHosts(t),
  });
  assert.deepEqual(await machineRefOf(t.deps, { hostname: "whitewizard" }), {
    machineId: "192.168.0.1",
    resolverId: id,
    resolverName: "mr",
  });
  // the pair is taken as given: the machine is not looked up
  assert.deepEqual(await machineRefOf(t.deps, { machineid: "10.9.9.9", resolver: "mr" }), {
    machineId: "10.9.9.9",
    resolverId: id,
    resolverName: "mr",
  });
  assert.equal(await machineRefOf(t.deps, {}), undefined);
  await assert.rejects(() => machineRefOf(t.deps, { resolver: "mr" }), ParameterError);
  await assert.rejects(
    () => machineRefOf(t.deps, { machineid: "1", resolver: "MR" }),
    ResourceNotFoundError,
  );
  // exact, case-sensitive host names
  await assert.rejects(() => resolveHostname(t.deps, "Gandalf"), /There is no machine/);
  await assert.rejects(() => resolveHostname(t.deps, "gandal"), /There is no machine/);
  await t.close();
});

Deno.test("an absolute hosts path is used as given", async () => {
  const t = await createTestApp();
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/hosts`, HOSTS_TEXT);
  await saveMachineResolver(t.deps, "abs", { type: "hosts", filename: `${dir}/hosts` });
  assert.equal((await listMachines(t.deps, { hostname: "pippin" })).length, 1);
  await Deno.remove(dir, { recursive: true });
  await t.close();
});
