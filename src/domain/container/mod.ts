/**
 * Token containers (spec 13 §2): a container (`generic`, `smartphone`, `yubikey`) groups tokens
 * (a token is in at most one container), has at most one owner, realms, states and info.
 *
 * The API other features use (every function takes the resolved container, never a raw
 * serial, so a caller acts on exactly the container it checked):
 *
 * - {@link CONTAINER_TYPES}, {@link containerTypeOf}, {@link containerTypesView},
 *   {@link STATE_TYPES}: the types, their serial prefixes, token types and states.
 * - {@link createContainer}; {@link getContainer} (404 when unknown), {@link findContainer};
 *   {@link listContainers} (filters, sorting, paging); {@link deleteContainer}.
 * - {@link addTokenToContainer} (moves a token out of its previous container),
 *   {@link removeTokenFromContainer}, {@link containerOfTokens}.
 * - {@link assignContainerUser}, {@link unassignContainerUser}, {@link setContainerRealms},
 *   {@link setContainerDescription}, {@link setContainerStates}, {@link addContainerStates}.
 * - Info: {@link setContainerInfo} / {@link deleteContainerInfo} (user-editable keys; an
 *   internal key is refused), {@link setInternalContainerInfo} /
 *   {@link deleteInternalContainerInfo} (server-managed `pi_internal` keys, e.g. registration
 *   state), {@link containerInfoValue}.
 * - Timestamps: {@link markContainerAuthenticated} (last authentication, by token ids; for the
 *   check path), {@link markContainerSynchronized} (last synchronisation),
 *   {@link resetContainerTimestamps}.
 * - Templates: {@link listTemplates}, {@link getTemplate}, {@link setTemplate},
 *   {@link deleteTemplate}, {@link TEMPLATE_TOKEN_TYPES}.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { PendingCommits } from "../../db/direct.ts";
import {
  AppError,
  EnrollmentError,
  ParameterError,
  PolicyError,
  ResourceNotFoundError,
  TokenAdminError,
} from "../../errors.ts";
import { toHex } from "../../lib/random.ts";
import { deleteChallengesOf } from "../challenge/mod.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import { TOKEN_TYPE_MODULES } from "../token/types/mod.ts";
import { getTokenBySerial } from "../token/mod.ts";
import type { UserRef } from "../user/model.ts";
import * as store from "./container_store.ts";

export type { InfoRow, TemplateRow } from "./container_store.ts";
export { type Container, containerTimestamp, PI_INTERNAL, type Template } from "./model.ts";
import { type Container, PI_INTERNAL, type Template } from "./model.ts";
export {
  compareWithTemplate,
  containerTokenTypes,
  type ContainerViewOptions,
  containerViews,
} from "./view.ts";

/** Longest container serial (column width). */
const MAX_SERIAL = 40;
const SERIAL_REGEXP = /^[0-9a-zA-Z\-_]+$/;
const MAX_DESCRIPTION = 1024;
const MAX_INFO_KEY = 255;
const MAX_INFO_VALUE = 2000;
const MAX_TEMPLATE_NAME = 200;
const MAX_TEMPLATE_OPTIONS = 2000;

/** One container type. */
export interface ContainerType {
  type: string;
  prefix: string;
  description: string;
  /** The token types it may hold (sorted). */
  tokenTypes(): string[];
}

/** The token types a smartphone holds (spec 13 §2.1). */
const SMARTPHONE_TOKEN_TYPES = ["daypassword", "hotp", "push", "sms", "totp"];
/** The token types a YubiKey holds. */
const YUBIKEY_TOKEN_TYPES = ["certificate", "hotp", "passkey", "webauthn", "yubico", "yubikey"];

/** The container types by name. */
export const CONTAINER_TYPES: Readonly<Record<string, ContainerType>> = {
  generic: {
    type: "generic",
    prefix: "CONT",
    description: "General purpose container that can hold any type and any number of token.",
    // every token type Tessera has
    tokenTypes: () => TOKEN_TYPE_MODULES.map((t) => t.type).sort(),
  },
  smartphone: {
    type: "smartphone",
    prefix: "SMPH",
    description: "A smartphone that uses an authenticator app.",
    tokenTypes: () => [...SMARTPHONE_TOKEN_TYPES],
  },
  yubikey: {
    type: "yubikey",
    prefix: "YUBI",
    description: "Yubikey hardware device that can hold HOTP, certificate and webauthn token",
    tokenTypes: () => [...YUBIKEY_TOKEN_TYPES],
  },
};

/** The token types a template of each container type may name (spec 13 §2.1). */
export const TEMPLATE_TOKEN_TYPES: Readonly<Record<string, readonly string[]>> = {
  generic: [
    "4eyes",
    "applspec",
    "daypassword",
    "email",
    "hotp",
    "indexedsecret",
    "paper",
    "push",
    "registration",
    "remote",
    "sms",
    "spass",
    "tan",
    "tiqr",
    "totp",
  ],
  smartphone: SMARTPHONE_TOKEN_TYPES,
  yubikey: ["hotp"],
};

/** Every state and the states it excludes (the same for every type). */
export const STATE_TYPES: Readonly<Record<string, readonly string[]>> = {
  active: ["disabled"],
  disabled: ["active"],
  lost: [],
  damaged: [],
};

/** The type named `type` (any case), or undefined. */
export function containerTypeOf(type: string): ContainerType | undefined {
  return Object.hasOwn(CONTAINER_TYPES, type.toLowerCase())
    ? CONTAINER_TYPES[type.toLowerCase()]
    : undefined;
}

/** `GET /container/types`: `{type: {description: "Type: text", token_types}}`. */
export function containerTypesView(): Record<
  string,
  { description: string; token_types: string[] }
> {
  return Object.fromEntries(
    Object.values(CONTAINER_TYPES).map((t) => [t.type, {
      description: `${t.type[0].toUpperCase()}${t.type.slice(1)}: ${t.description}`,
      token_types: t.tokenTypes(),
    }]),
  );
}

/** The 404 of an unknown container serial. */
export function containerNotFound(serial: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`Unable to find container with serial ${serial}.`);
}

function withDetails(row: store.ContainerRow, d: store.ContainerDetails): Container {
  return {
    id: row.id,
    serial: row.serial,
    type: row.type,
    description: row.description,
    lastSeen: row.lastSeen,
    lastUpdated: row.lastUpdated,
    createdAt: row.createdAt,
    templateName: d.templateName,
    owner: d.owner
      ? { login: d.owner.login, realm: d.owner.realm, resolver: d.owner.resolver, uid: d.owner.uid }
      : undefined,
    realms: d.realms,
    states: d.states,
    info: d.info,
    tokens: d.tokens,
  };
}

async function load(deps: Deps, rows: store.ContainerRow[]): Promise<Container[]> {
  const details = await store.detailsOf(deps.db, rows.map((r) => r.id));
  return rows.map((r) => withDetails(r, details.get(r.id)!));
}

/** The container with `serial` (any case), or undefined. */
export async function findContainer(deps: Deps, serial: string): Promise<Container | undefined> {
  const row = await store.findBySerial(deps.db, serial);
  return row ? (await load(deps, [row]))[0] : undefined;
}

/** The container with `serial` (any case); 404 when there is none. */
export async function getContainer(deps: Deps, serial: string): Promise<Container> {
  const c = await findContainer(deps, serial);
  if (!c) throw containerNotFound(serial);
  return c;
}

/** The container again as stored now (after a change). */
export async function reloadContainer(deps: Deps, c: { id: number; serial: string }) {
  const row = await store.findById(deps.db, c.id);
  if (!row) throw containerNotFound(c.serial);
  return (await load(deps, [row]))[0];
}

/** The container each of `tokenIds` is in (tokens in none are absent). */
export async function containerOfTokens(
  deps: Deps,
  tokenIds: number[],
): Promise<Map<number, { id: number; serial: string }>> {
  return await store.containerIdsOfTokens(deps.db, tokenIds);
}

/** `YYYY-MM-DDThh:mm:ss+00:00` (the format of `creation_date`). */
function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "+00:00");
}

async function generateContainerSerial(deps: Deps, type: ContainerType): Promise<string> {
  const serialLength = (await loadSystemConfig(deps)).int("SerialLength");
  const count = await store.countOfType(deps.db, type.type);
  const randomLength = Math.max(0, serialLength - 4);
  for (let attempt = 0; attempt < 50; attempt++) {
    const random = toHex(deps.random.bytes(Math.ceil(randomLength / 2) + 1))
      .slice(0, randomLength).toUpperCase();
    const serial = `${type.prefix}${String(count + attempt).padStart(4, "0")}${random}`;
    if (!(await store.findBySerial(deps.db, serial))) return serial;
  }
  throw new AppError(`Cannot generate a serial number for container type "${type.type}"`, 3000);
}

/** What a new container gets. */
export interface CreateContainerInput {
  /** A key of {@link CONTAINER_TYPES} (any case). */
  type: string | undefined;
  description?: string;
  /** A serial the caller chose (must not exist in any case); else one is generated. */
  serial?: string;
  /** The owner (resolved); their realm becomes a container realm. */
  owner?: UserRef;
  /** Realms (lower case, existing). */
  realms?: string[];
  /** The template it is made from. */
  templateName?: string;
}

/**
 * Creates a container (state `active`, info `creation_date`) with its owner and realms, in one
 * transaction. Unknown type or existing serial: ERR404.
 */
export async function createContainer(
  deps: Deps,
  input: CreateContainerInput,
): Promise<Container> {
  if (input.type === undefined || input.type === "") {
    throw new EnrollmentError("Type parameter is required!");
  }
  const type = containerTypeOf(input.type);
  if (!type) throw new EnrollmentError(`Type '${input.type}' is not a valid type!`);
  const description = input.description ?? "";
  checkDescription(description);
  let serial = input.serial;
  if (serial !== undefined && serial !== "") {
    if (!SERIAL_REGEXP.test(serial) || serial.length > MAX_SERIAL) {
      throw new ParameterError(
        `Invalid container serial: 1 to ${MAX_SERIAL} characters of ^[0-9a-zA-Z\\-_]+$`,
      );
    }
    if (await store.findBySerial(deps.db, serial)) {
      throw new EnrollmentError(`Container with serial ${serial} already exists!`);
    }
  } else {
    serial = await generateContainerSerial(deps, type);
  }
  let templateId: number | null = null;
  if (input.templateName) {
    templateId = (await store.findTemplate(deps.db, input.templateName))?.id ?? null;
  }
  const now = deps.clock.now();
  let id: number;
  try {
    id = await store.insertContainer(deps.db, {
      serial,
      type: type.type,
      description,
      templateId,
      createdAt: now,
    }, {
      states: ["active"],
      info: [{ key: "creation_date", value: isoSeconds(now), type: PI_INTERNAL, description: "" }],
      realms: (input.realms ?? []).map((r) => r.toLowerCase()),
    });
  } catch (err) {
    // two requests choosing the same serial at once: the loser is told it exists
    if (isUniqueViolation(err)) {
      throw new EnrollmentError(`Container with serial ${serial} already exists!`);
    }
    throw err;
  }
  const created = { id, serial };
  if (input.owner) await assignContainerUser(deps, created, input.owner);
  return await reloadContainer(deps, created);
}

function isUniqueViolation(err: unknown): boolean {
  const msg = err instanceof Error ? err.message : String(err);
  return /UNIQUE constraint failed|duplicate key value|unique constraint/i.test(msg) ||
    (err as { code?: string })?.code === "23505";
}

function checkDescription(description: string): void {
  if (description.length > MAX_DESCRIPTION) {
    throw new ParameterError(`description: at most ${MAX_DESCRIPTION} characters`);
  }
}

/**
 * Deletes the container with its owner, realms, states, info and challenges (registration and
 * synchronisation challenges are kept under the container's serial); its tokens stay.
 */
export async function deleteContainer(deps: Deps, c: { id: number; serial: string }) {
  const n = await store.deleteContainer(deps.db, c.id);
  if (n === 0) throw containerNotFound(c.serial);
  await deleteChallengesOf(deps, [c.serial]);
}

/** The query of the container list (filters as privacyIDEA's, `*` wildcards). */
export interface ContainerListQuery
  extends Omit<store.ContainerListFilter, "lastSeenAfter" | "lastUpdatedAfter"> {
  /** `1y`, `14d`, `1h`, `30m`, `10s`: only containers authenticated within it. */
  lastAuthDelta?: string;
  /** As {@link lastAuthDelta}, for the last synchronisation. */
  lastSyncDelta?: string;
  sortby?: string;
  sortdir?: string;
  /** Paginated when page or pagesize is above 0. */
  page?: number;
  pagesize?: number;
}

/** The list answer; the paging fields only when paginated. */
export interface ContainerList {
  containers: Container[];
  count?: number;
  current?: number;
  next?: number | null;
  prev?: number | null;
}

const DELTA_UNITS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  y: 365 * 86_400_000,
};

/** `14d` → ms; a bad value is a 905 naming the parameter. */
export function parseTimeDelta(value: string, name: string): number {
  const m = value.trim().match(/^(\d{1,9})\s*([smhdy])$/i);
  if (!m) {
    throw new ParameterError(
      `Cannot parse parameter "${name}": expected a number and a unit (s, m, h, d, y), got "${value}"`,
    );
  }
  return Number(m[1]) * DELTA_UNITS[m[2].toLowerCase()];
}

/** Lists containers: filtered, sorted (unknown column: serial) and paginated when asked. */
export async function listContainers(deps: Deps, q: ContainerListQuery): Promise<ContainerList> {
  const now = deps.clock.now();
  const filter: store.ContainerListFilter = { ...q };
  for (const key of ["lastAuthDelta", "lastSyncDelta", "sortby", "sortdir", "page", "pagesize"]) {
    delete (filter as Record<string, unknown>)[key];
  }
  // only the wildcard: no filter (privacyIDEA ignores "*" alone)
  for (
    const key of [
      "serial",
      "type",
      "tokenSerial",
      "realm",
      "template",
      "description",
      "resolver",
      "state",
    ] as const
  ) {
    const v = filter[key];
    if (v !== undefined && v.replaceAll("*", "") === "") delete filter[key];
  }
  if (filter.infoKey !== undefined && filter.infoKey.replaceAll("*", "") === "") {
    delete filter.infoKey;
  }
  if (filter.infoValue !== undefined && filter.infoValue.replaceAll("*", "") === "") {
    delete filter.infoValue;
  }
  if (q.lastAuthDelta) {
    filter.lastSeenAfter = now - parseTimeDelta(q.lastAuthDelta, "last_auth_delta");
  }
  if (q.lastSyncDelta) {
    filter.lastUpdatedAfter = now - parseTimeDelta(q.lastSyncDelta, "last_sync_delta");
  }
  const sortby = (store.CONTAINER_SORT_COLUMNS as readonly string[]).includes(q.sortby ?? "")
    ? q.sortby as store.ContainerSortColumn
    : "serial";
  const desc = q.sortdir === "desc";
  const isPaged = (q.page ?? 0) > 0 || (q.pagesize ?? 0) > 0;
  if (!isPaged) {
    const { rows } = await store.listContainers(deps.db, filter, { sortby, desc });
    return { containers: await load(deps, rows) };
  }
  const page = (q.page ?? 0) < 1 ? 1 : q.page!;
  const pagesize = (q.pagesize ?? 0) < 1 ? 10 : Math.min(q.pagesize!, 10_000);
  const { rows, total } = await store.listContainers(deps.db, filter, {
    sortby,
    desc,
    offset: (page - 1) * pagesize,
    limit: pagesize,
  });
  return {
    containers: await load(deps, rows),
    count: total,
    current: page,
    next: page * pagesize < total ? page + 1 : null,
    prev: page > 1 ? page - 1 : null,
  };
}

/**
 * Puts a token into the container, moving it out of its previous one; false when it already
 * is in it. A token type the container type does not hold: ERR905.
 */
export async function addTokenToContainer(
  deps: Deps,
  c: { id: number; type: string },
  token: { id: number; type: string },
): Promise<boolean> {
  checkContainerTokenType(c, token.type);
  return await store.addToken(deps.db, c.id, token.id);
}

/**
 * Puts a token the caller has just enrolled (by its serial) into the container: for
 * `/token/init` with `container_serial` and a template's tokens.
 */
export async function addNewTokenToContainer(
  deps: Deps,
  c: { id: number; type: string },
  serial: string,
): Promise<boolean> {
  return await addTokenToContainer(deps, c, await getTokenBySerial(deps, serial));
}

/** Throws ERR905 unless a container of `c`'s type holds tokens of `tokenType`. */
export function checkContainerTokenType(c: { type: string }, tokenType: string): void {
  const type = containerTypeOf(c.type) ?? CONTAINER_TYPES.generic;
  const supported = type.tokenTypes();
  if (!supported.includes(tokenType.toLowerCase())) {
    throw new ParameterError(
      `Token type ${tokenType} not supported for container type ${type.type}. ` +
        `Supported types are [${supported.map((t) => `'${t}'`).join(", ")}].`,
    );
  }
}

/** Takes a token out of the container; false when it was not in it. */
export async function removeTokenFromContainer(
  deps: Deps,
  c: { id: number },
  token: { id: number },
): Promise<boolean> {
  return await store.removeToken(deps.db, c.id, token.id);
}

/**
 * Makes `user` the owner and adds their realm to the container's realms. A container with an
 * owner: ERR301.
 */
export async function assignContainerUser(
  deps: Deps,
  c: { id: number },
  user: UserRef,
): Promise<void> {
  const isSet = await store.setOwner(deps.db, c.id, {
    uid: user.uid,
    resolver: user.resolver,
    realm: user.realm.toLowerCase(),
    login: user.login,
  });
  if (!isSet) throw new TokenAdminError("This container is already assigned to another user.");
}

/**
 * Removes the owner when it is the user named by `uid` (and `resolver`/`realm` when given);
 * whether one was removed. A uid alone removes an owner that no longer exists.
 */
export async function unassignContainerUser(
  deps: Deps,
  c: { id: number },
  match: { uid: string; resolver?: string; realm?: string },
): Promise<boolean> {
  return await store.removeOwner(deps.db, c.id, {
    uid: match.uid,
    resolver: match.resolver || undefined,
    realm: match.realm ? match.realm.toLowerCase() : undefined,
  });
}

/**
 * Replaces the container's realms by `realms` (privacyIDEA's `set_realms`): the owner's realm
 * stays; with `allowedRealms` (an admin limited to realms) realms outside it are refused
 * (`false`) and the container keeps the realms outside it it had. Unknown realms: `false`.
 * `{deleted: true, <realm>: bool}`.
 */
export async function setContainerRealms(
  deps: Deps,
  c: Container,
  realms: string[],
  opts: { allowedRealms?: string[]; realmExists: (realm: string) => Promise<boolean> },
): Promise<Record<string, boolean>> {
  const wanted = [...new Set(realms.map((r) => r.trim().toLowerCase()).filter((r) => r !== ""))];
  const result: Record<string, boolean> = { deleted: true };
  let keep = wanted;
  if (opts.allowedRealms) {
    const allowed = new Set(opts.allowedRealms.map((r) => r.toLowerCase()));
    keep = wanted.filter((r) => allowed.has(r));
    for (const r of wanted) if (!allowed.has(r)) result[r] = false;
    // realms the admin cannot see stay as they are
    for (const r of c.realms) if (!allowed.has(r) && !keep.includes(r)) keep.push(r);
  }
  if (c.owner && c.owner.realm !== "" && !keep.includes(c.owner.realm)) keep.push(c.owner.realm);
  const existing: string[] = [];
  for (const r of keep) {
    if (await opts.realmExists(r)) {
      existing.push(r);
      result[r] = true;
    } else {
      result[r] = false;
    }
  }
  await store.replaceRealms(deps.db, c.id, existing);
  return result;
}

/** Sets the container's description (at most 1024 characters). */
export async function setContainerDescription(
  deps: Deps,
  c: { id: number },
  description: string,
): Promise<void> {
  checkDescription(description);
  await store.setDescription(deps.db, c.id, description);
}

function checkStates(states: string[]): { known: string[]; result: Record<string, boolean> } {
  const result: Record<string, boolean> = {};
  const known: string[] = [];
  for (const s of states) {
    if (Object.hasOwn(STATE_TYPES, s)) known.push(s);
    else result[s] = false;
  }
  for (const s of known) {
    if (STATE_TYPES[s].some((x) => known.includes(x))) {
      throw new ParameterError(
        `The state list [${states.map((x) => `'${x}'`).join(", ")}] contains exclusive states!`,
      );
    }
  }
  return { known, result };
}

/**
 * Replaces the container's states: unknown states are reported `false` and skipped; states
 * that exclude each other (`active`, `disabled`): ERR905. `{<state>: bool}`.
 */
export async function setContainerStates(
  deps: Deps,
  c: { id: number },
  states: string[],
): Promise<Record<string, boolean>> {
  const { known, result } = checkStates(states);
  await store.replaceStates(deps.db, c.id, known);
  for (const s of known) result[s] = true;
  return result;
}

/** Adds states; a new state replaces the states it excludes. `{<state>: bool}`. */
export async function addContainerStates(
  deps: Deps,
  c: Container,
  states: string[],
): Promise<Record<string, boolean>> {
  const { known, result } = checkStates(states);
  if (known.length === 0) return result;
  const excluded = new Set(known.flatMap((s) => STATE_TYPES[s]));
  const next = [...c.states.filter((s) => !excluded.has(s)), ...known];
  await store.replaceStates(deps.db, c.id, next);
  for (const s of known) result[s] = true;
  return result;
}

function checkInfo(key: string, value: string): void {
  // deno-lint-ignore no-control-regex
  if (key === "" || key.length > MAX_INFO_KEY || /[\x00-\x1f\x7f]/.test(key)) {
    throw new ParameterError(
      `Invalid container info key: 1 to ${MAX_INFO_KEY} characters, no control characters`,
    );
  }
  if (value.length > MAX_INFO_VALUE) {
    throw new ParameterError(`Container info value: at most ${MAX_INFO_VALUE} characters`);
  }
}

/**
 * Sets a user-editable info entry (`POST /container/<serial>/info/<key>`). An internal key:
 * 403, nothing written (checked in the same statement that writes).
 */
export async function setContainerInfo(
  deps: Deps,
  c: { id: number },
  key: string,
  value: string,
): Promise<void> {
  checkInfo(key, value);
  if (!(await store.upsertUserInfo(deps.db, c.id, key, value))) {
    throw new PolicyError(`The key ${key} is an internal entry and can not be modified.`);
  }
}

/** Deletes a user-editable info entry; false when it is internal or missing. */
export async function deleteContainerInfo(
  deps: Deps,
  c: { id: number },
  key: string,
): Promise<boolean> {
  return await store.deleteUserInfo(deps.db, c.id, key);
}

/** Sets server-managed (`pi_internal`) info entries, e.g. the registration state. */
export async function setInternalContainerInfo(
  deps: Deps,
  c: { id: number },
  entries: Record<string, string>,
): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    for (const [key, value] of Object.entries(entries)) {
      await store.upsertInfo(trx, c.id, { key, value, type: PI_INTERNAL, description: "" });
    }
  });
}

/** Deletes info entries by key, internal ones included (server use); how many. */
export async function deleteInternalContainerInfo(
  deps: Deps,
  c: { id: number },
  keys: string[],
): Promise<number> {
  return await store.deleteInfo(deps.db, c.id, { keys, withInternal: true });
}

/** The value of info `key`, or undefined. */
export function containerInfoValue(c: Container, key: string): string | undefined {
  return c.info.find((i) => i.key === key)?.value;
}

/**
 * Records a successful authentication with these tokens: `last_seen` of their containers
 * becomes now (one statement; nothing when none is in a container).
 */
export async function markContainerAuthenticated(
  deps: Deps,
  tokenIds: number[],
  pending?: PendingCommits,
): Promise<void> {
  await store.touchLastSeenOfTokens(deps.db, tokenIds, deps.clock.now(), pending);
}

/** Records a synchronisation with the app: `last_updated` becomes now. */
export async function markContainerSynchronized(deps: Deps, c: { id: number }): Promise<void> {
  await store.touch(deps.db, c.id, "last_updated", deps.clock.now());
}

/** Clears the last authentication and synchronisation (e.g. after unregistering). */
export async function resetContainerTimestamps(deps: Deps, c: { id: number }): Promise<void> {
  await store.touch(deps.db, c.id, "last_seen", null);
  await store.touch(deps.db, c.id, "last_updated", null);
}

function templateView(r: store.TemplateRow): Template {
  let options: { tokens: Record<string, unknown>[] } = { tokens: [] };
  try {
    const parsed = JSON.parse(r.options || "{}");
    if (parsed && Array.isArray(parsed.tokens)) options = { tokens: parsed.tokens };
  } catch {
    // a stored value is ours and valid JSON; an unreadable one shows no tokens
  }
  return {
    name: r.name,
    container_type: r.containerType,
    template_options: options,
    default: r.isDefault,
  };
}

/** Templates by name / type (`*` wildcards), sorted, paginated when asked. */
export async function listTemplates(
  deps: Deps,
  q: {
    name?: string;
    containerType?: string;
    isDefault?: boolean;
    sortby?: string;
    sortdir?: string;
    page?: number;
    pagesize?: number;
  },
): Promise<{
  templates: Template[];
  count?: number;
  current?: number;
  next?: number | null;
  prev?: number | null;
}> {
  const sortby = q.sortby === "container_type" || q.sortby === "id" ? q.sortby : "name";
  const desc = q.sortdir === "desc";
  const filter = {
    name: q.name && q.name.replaceAll("*", "") !== "" ? q.name : undefined,
    containerType: q.containerType && q.containerType.replaceAll("*", "") !== ""
      ? q.containerType
      : undefined,
    isDefault: q.isDefault,
  };
  const isPaged = (q.page ?? 0) > 0 || (q.pagesize ?? 0) > 0;
  if (!isPaged) {
    const { rows } = await store.listTemplates(deps.db, filter, { sortby, desc });
    return { templates: rows.map(templateView) };
  }
  const page = (q.page ?? 0) < 1 ? 1 : q.page!;
  const pagesize = (q.pagesize ?? 0) < 1 ? 10 : Math.min(q.pagesize!, 10_000);
  const { rows, total } = await store.listTemplates(deps.db, filter, {
    sortby,
    desc,
    offset: (page - 1) * pagesize,
    limit: pagesize,
  });
  return {
    templates: rows.map(templateView),
    count: total,
    current: page,
    next: page * pagesize < total ? page + 1 : null,
    prev: page > 1 ? page - 1 : null,
  };
}

/** The template named `name`, or undefined. */
export async function getTemplate(deps: Deps, name: string): Promise<Template | undefined> {
  const r = await store.findTemplate(deps.db, name);
  return r ? templateView(r) : undefined;
}

/**
 * Creates template `name` of `containerType` or sets the options of the existing one (its
 * type stays, as in privacyIDEA); `isDefault`: the only default of its type. Only `tokens` of
 * the options is kept; each must have a `type` the template type allows. Its id.
 */
export async function setTemplate(
  deps: Deps,
  input: { name: string; containerType: string; options: unknown; isDefault: boolean },
): Promise<number> {
  const type = containerTypeOf(input.containerType);
  if (!type) throw new EnrollmentError(`Type '${input.containerType}' is not a valid type!`);
  const name = input.name;
  // deno-lint-ignore no-control-regex
  if (name === "" || name.length > MAX_TEMPLATE_NAME || /[\x00-\x1f\x7f/]/.test(name)) {
    throw new ParameterError(
      `Invalid template name: 1 to ${MAX_TEMPLATE_NAME} characters, no control characters or "/"`,
    );
  }
  const options = input.options;
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new ParameterError("'template_options' must be a dictionary!");
  }
  const rawTokens = (options as Record<string, unknown>).tokens ?? [];
  if (!Array.isArray(rawTokens)) throw new ParameterError("'tokens' must be a list!");
  const existing = await store.findTemplate(deps.db, name);
  const effectiveType = existing ? containerTypeOf(existing.containerType) ?? type : type;
  const allowed = TEMPLATE_TOKEN_TYPES[effectiveType.type];
  const tokens: Record<string, unknown>[] = [];
  for (const t of rawTokens) {
    if (t === null || typeof t !== "object" || Array.isArray(t)) {
      throw new ParameterError("Each template token must be a dictionary!");
    }
    const tokenType = String((t as Record<string, unknown>).type ?? "").toLowerCase();
    if (!allowed.includes(tokenType)) {
      throw new ParameterError(
        `Unsupported token type ${tokenType} for ${effectiveType.type} templates!`,
      );
    }
    tokens.push({ ...(t as Record<string, unknown>), type: tokenType });
  }
  const text = JSON.stringify({ tokens });
  if (text.length > MAX_TEMPLATE_OPTIONS) {
    throw new ParameterError(`template_options: at most ${MAX_TEMPLATE_OPTIONS} characters`);
  }
  try {
    return await store.upsertTemplate(deps.db, {
      name,
      containerType: type.type,
      options: text,
      isDefault: input.isDefault,
    });
  } catch (err) {
    // two requests creating the same name at once: the second one updates it
    if (isUniqueViolation(err)) {
      return await store.upsertTemplate(deps.db, {
        name,
        containerType: type.type,
        options: text,
        isDefault: input.isDefault,
      });
    }
    throw err;
  }
}

/** Deletes template `name`; unknown: 404. */
export async function deleteTemplate(deps: Deps, name: string): Promise<void> {
  if (!(await store.deleteTemplate(deps.db, name))) {
    throw new ResourceNotFoundError(`Template ${name} does not exist.`);
  }
}
