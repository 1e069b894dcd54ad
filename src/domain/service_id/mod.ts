/**
 * Service IDs (spec 14 §13): names of services (e.g. a group of SSH servers) that SSH key
 * bindings name in their `service_id` option; `/application/` offers the defined ones.
 * Like privacyIDEA, Tessera does not check a binding's or an applspec token's `service_id`
 * against them, and deleting one in use is allowed.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, ResourceNotFoundError } from "../../errors.ts";
import * as store from "./service_id_store.ts";

const MAX_NAME = 255;
const MAX_DESCRIPTION = 255;

/** `GET /serviceid/[<name>]`: `{name: {description, id}}` (an unknown name: `{}`). */
export async function listServiceIds(
  deps: Deps,
  name?: string,
): Promise<Record<string, { description: string; id: number }>> {
  const rows = await store.listServiceIds(deps.db, name);
  return Object.fromEntries(rows.map((r) => [r.name, { description: r.description, id: r.id }]));
}

/** The names of the defined service IDs (the ssh application's `service_id` values). */
export async function serviceIdNames(deps: Deps): Promise<string[]> {
  return (await store.listServiceIds(deps.db)).map((r) => r.name);
}

/** `POST /serviceid/<name>`: creates the service ID or sets its description; its id. */
export async function setServiceId(
  deps: Deps,
  name: string,
  description: string | undefined,
): Promise<number> {
  // deno-lint-ignore no-control-regex
  if (name === "" || name.length > MAX_NAME || /[\x00-\x1f\x7f]/.test(name)) {
    throw new ParameterError(
      `Invalid serviceid name: 1 to ${MAX_NAME} characters, no control characters`,
    );
  }
  if (description !== undefined && description.length > MAX_DESCRIPTION) {
    throw new ParameterError(`description: at most ${MAX_DESCRIPTION} characters`);
  }
  return await store.upsertServiceId(deps.db, name, description);
}

/** `DELETE /serviceid/<name>`: 1; an unknown name 404. */
export async function deleteServiceId(deps: Deps, name: string): Promise<number> {
  if (!(await store.deleteServiceId(deps.db, name))) {
    throw new ResourceNotFoundError("The requested Serviceid could not be found.");
  }
  return 1;
}
