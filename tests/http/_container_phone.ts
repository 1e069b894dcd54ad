/**
 * Fixtures of the smartphone container tests: alice with a smartphone container holding a
 * TOTP token, the app double, and the registration steps over real HTTP.
 *
 * @module
 */
import assert from "node:assert/strict";
import { jsonOf, type TestApp } from "../test_app.ts";
import { appWithAlice, enrolOk } from "./_challenge_types.ts";
import { serveApp, type ServedApp } from "./_serve_app.ts";
import { ContainerApp } from "./_container_app.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { resolveUser } from "../../src/domain/user/mod.ts";
import {
  addTokenToContainer,
  type Container,
  containerInfoValue,
  createContainer,
  getContainer,
} from "../../src/domain/container/mod.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";

/** A served app with alice's smartphone container and the app double. */
export interface Phone {
  t: TestApp;
  served: ServedApp;
  container: Container;
  app: ContainerApp;
  /** The serial of alice's TOTP token in the container. */
  totp: string;
}

/** alice, a smartphone container of hers holding a TOTP token (PIN 1234), the server URL policy. */
export async function phoneSetup(
  containerActions = "",
  withUrl = true,
  configText?: string,
): Promise<Phone> {
  const t = await appWithAlice(configText);
  const served = serveApp(t);
  const actions = [withUrl ? `privacyIDEA_server_url=${served.url}/` : "", containerActions]
    .filter((a) => a !== "").join(", ");
  if (actions) await savePolicy(t.deps, "phone", { scope: "container", action: actions });
  const alice = await resolveUser(t.deps, "alice", "realm1");
  const c = await createContainer(t.deps, { type: "smartphone", owner: alice });
  const body = await enrolOk(t, {
    type: "totp",
    genkey: 1,
    user: "alice",
    realm: "realm1",
    pin: "1234",
  });
  const totp = body.detail.serial as string;
  await addTokenToContainer(t.deps, c, await getTokenBySerial(t.deps, totp));
  const container = await getContainer(t.deps, c.serial);
  return { t, served, container, app: new ContainerApp(() => t.clock.now()), totp };
}

/** Stops the served app and closes the test app. */
export async function done(p: Phone): Promise<void> {
  await p.served.close();
  await p.t.close();
}

/** `POST /container/register/initialize` as the admin; the app scans the QR URL. */
export async function initialize(p: Phone, body: Record<string, unknown> = {}, app = p.app) {
  const res = await jsonOf(
    await p.t.asAdmin("POST", "/container/register/initialize", {
      body: { container_serial: p.container.serial, ...body },
      json: true,
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  app.scan(res.body.result.value.container_url.value);
  return res.body.result.value;
}

/** Registers the app (initialize + finalize with brand and model). */
export async function register(p: Phone): Promise<void> {
  await initialize(p);
  const fin = await p.app.finalize({ brand: "XY", model: "ABC123" });
  assert.equal(fin.status, 200, JSON.stringify(fin.body));
}

export async function info(p: Phone, key: string): Promise<string | undefined> {
  return containerInfoValue(await getContainer(p.t.deps, p.container.serial), key);
}

/** The token's stored encrypted key: it changes only when the token gets a new secret. */
export async function keyOf(p: Phone, serial: string): Promise<string> {
  return (await getTokenBySerial(p.t.deps, serial)).keyEnc;
}
