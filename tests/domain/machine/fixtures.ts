/**
 * Machine test fixtures: the spec's hosts file and a hosts resolver through the API.
 *
 * @module
 */
import assert from "node:assert/strict";
import { jsonOf, type TestApp } from "../../test_app.ts";

/** The hosts test vector of spec 07 §3. */
export const HOSTS_TEXT = [
  "127.0.0.1\tlocalhost",
  "192.168.0.1\tgandalf whitewizard",
  "192.168.0.2\tpippin",
  "192.168.1.10\tborodin",
  "192.168.10.10 rgandalf-old",
  "",
].join("\n");

/** Writes `text` to `<dataDir>/<name>` and returns the relative name. */
export async function writeHosts(t: TestApp, text = HOSTS_TEXT, name = "hosts"): Promise<string> {
  await Deno.writeTextFile(`${t.deps.config.storage.dataDir}/${name}`, text);
  return name;
}

/** Creates hosts resolver `name` over a fresh hosts file; returns its id. */
export async function createHostsResolver(
  t: TestApp,
  name = "machineresolver1",
  text = HOSTS_TEXT,
): Promise<number> {
  const filename = await writeHosts(t, text, `${name}.hosts`);
  const { status, body } = await jsonOf(
    await t.asAdmin("POST", `/machineresolver/${name}`, { body: { type: "hosts", filename } }),
  );
  assert.equal(status, 200, JSON.stringify(body));
  return body.result.value;
}

/** Enrols a token through the API (`/token/init`). */
export async function initToken(t: TestApp, body: Record<string, unknown>): Promise<void> {
  const { status, body: res } = await jsonOf(await t.asAdmin("POST", "/token/init", { body }));
  assert.equal(status, 200, JSON.stringify(res));
}

/** An SSH public key for tests (syntactically valid base64). */
export const SSH_KEY =
  "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDJy0rLoxqc8SsY8DVAFijMsQyCvhBu4K40hdZOacXK4O6OgnacnSKN56MP6pzz2+4svzvDzwvkFsvf34pbsgDF67PPSCsimmjEQjf0UfamBKh0cl181CbPYsph3UTBOCgHh3FFDXBduPK4DQzEVQpmqe80h+lsvQ81qPYagbRW6fpd0uWn9H7a/qiLQZsiKLL07HGB+NwWue4os0r9s4qxeG76K6QM7nZKyC0KRAz7CjAf+0X7YzCOu2pzyxVdj/T+KArFcMmq8Vdz24mhcFFXTzU3wveas1A9rwamYWB+Spuohh/OrK3wDsrryStKQv7yofgnPMsTdaL7XxyQVPCmh";
