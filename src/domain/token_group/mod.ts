/**
 * Token groups (spec 14 §12): named groups (`/tokengroup/`) and the tokens in them
 * (`/token/group/…`). The token list shows a token's groups and filters by one.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { AppError, ParameterError, ResourceNotFoundError } from "../../errors.ts";
import { getTokenBySerial } from "../token/mod.ts";
import * as store from "./token_group_store.ts";

const MAX_NAME = 255;
const MAX_DESCRIPTION = 255;
const GROUP_NOT_FOUND = "The tokengroup does not exist.";

/** A group name from the path: 1 to 255 characters, no control characters. */
function checkName(name: string, what = "tokengroup"): string {
  // deno-lint-ignore no-control-regex
  if (name === "" || name.length > MAX_NAME || /[\x00-\x1f\x7f]/.test(name)) {
    throw new ParameterError(
      `Invalid ${what} name: 1 to ${MAX_NAME} characters, no control characters`,
    );
  }
  return name;
}

/** `GET /tokengroup/[<name>]`: `{name: {description, id}}` (an unknown name: `{}`). */
export async function listTokenGroups(
  deps: Deps,
  name?: string,
): Promise<Record<string, { description: string; id: number }>> {
  const rows = await store.listGroups(deps.db, name);
  return Object.fromEntries(rows.map((r) => [r.name, { description: r.description, id: r.id }]));
}

/** `POST /tokengroup/<name>`: creates the group or sets its description; its id. */
export async function setTokenGroup(
  deps: Deps,
  name: string,
  description: string | undefined,
): Promise<number> {
  checkName(name);
  if (description !== undefined && description.length > MAX_DESCRIPTION) {
    throw new ParameterError(`description: at most ${MAX_DESCRIPTION} characters`);
  }
  return await store.upsertGroup(deps.db, name, description);
}

/** `DELETE /tokengroup/<name>`: 1; unknown 404, refused (ERR10) while tokens are in it. */
export async function deleteTokenGroup(deps: Deps, name: string): Promise<number> {
  const result = await store.deleteGroup(deps.db, name);
  if (result.deleted) return 1;
  if (result.members === undefined) {
    throw new ResourceNotFoundError("The requested Tokengroup could not be found.");
  }
  throw new AppError(
    `The tokengroup with name ${name} still has ${result.members} tokens assigned.`,
    10,
  );
}

async function groupId(deps: Deps, name: string): Promise<number> {
  const row = (await store.listGroups(deps.db, name))[0];
  if (!row) throw new ResourceNotFoundError(GROUP_NOT_FOUND);
  return row.id;
}

/** `POST /token/group/<serial>/<group>`: puts the token into the group. */
export async function addTokenToGroup(deps: Deps, serial: string, group: string): Promise<void> {
  const token = await getTokenBySerial(deps, serial);
  await store.addMember(deps.db, token.id, await groupId(deps, group));
}

/** `DELETE /token/group/<serial>/<group>`: takes the token out of the group. */
export async function removeTokenFromGroup(
  deps: Deps,
  serial: string,
  group: string,
): Promise<void> {
  const token = await getTokenBySerial(deps, serial);
  await store.removeMember(deps.db, token.id, await groupId(deps, group));
}

/**
 * `POST /token/group/<serial>` with `groups`: the token's groups become these; names of no
 * group are skipped, as privacyIDEA does. The names the token is in afterwards.
 */
export async function setGroupsOfToken(
  deps: Deps,
  serial: string,
  groups: string[],
): Promise<string[]> {
  const token = await getTokenBySerial(deps, serial);
  const wanted = new Set(groups.map((g) => g.trim()).filter((g) => g !== ""));
  const known = (await store.listGroups(deps.db)).filter((r) => wanted.has(r.name));
  await store.replaceMembership(deps.db, token.id, known.map((r) => r.id));
  return known.map((r) => r.name);
}
