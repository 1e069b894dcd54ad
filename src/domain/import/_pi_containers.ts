/**
 * Token containers of a privacyIDEA database (3.10+, `models/tokencontainer.py`): the
 * templates (`tokencontainertemplate`) as import items, and each container
 * (`tokencontainer` with its `tokencontainerowner`, `…realm`, `…states`, `…info` and
 * `tokencontainertoken` rows) as a plan written after the tokens, since it holds them.
 *
 * A container keeps its serial, type, description, template, owner, realms, states, info
 * (server-managed `pi_internal` entries stay server-managed) and its last authentication and
 * synchronisation. A registered smartphone stays registered: its registration is the
 * `pi_internal` info (the app's public key, `registration_state`, `server_url`, …); the app
 * goes on signing with its key and Tessera verifies with the carried one. A registration or
 * rollover that was waiting for the app cannot finish (its challenge is not carried): the log
 * says so, and it is started again.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  addTokenToContainer,
  assignContainerUser,
  containerTypeOf,
  createContainer,
  findContainer,
  getTemplate,
  PI_INTERNAL,
  setContainerInfo,
  setContainerStates,
  setInternalContainerInfo,
  setTemplate,
} from "../container/mod.ts";
// the import keeps the source's timestamps; the domain module only ever sets "now"
import { touch } from "../container/container_store.ts";
import { findTokenBySerial } from "../token/mod.ts";
import { realmExistsByName } from "../realm/mod.ts";
import type { PiRow } from "./privacyidea_store.ts";
import { bool, groupBy, int, type PiItem, str } from "./_pi_items.ts";

/** The container rows of a privacyIDEA database (empty lists when it has none). */
export interface PiContainerRows {
  containers: PiRow[];
  owners: PiRow[];
  realms: PiRow[];
  states: PiRow[];
  info: PiRow[];
  tokens: PiRow[];
  templates: PiRow[];
}

/** The container tables, in the order they are read. */
export const PI_CONTAINER_TABLES = [
  "tokencontainer",
  "tokencontainerowner",
  "tokencontainerrealm",
  "tokencontainerstates",
  "tokencontainerinfo",
  "tokencontainertoken",
  "tokencontainertemplate",
] as const;

/** One container as read, to be written after the tokens. */
export interface ContainerPlan {
  serial: string;
  type: string;
  description: string;
  templateName: string;
  owner?: { uid: string; resolver: string; realm: string };
  realms: string[];
  states: string[];
  info: { key: string; value: string; isInternal: boolean }[];
  tokenSerials: string[];
  lastSeen: number | null;
  lastUpdated: number | null;
  /** Why it cannot be imported, or undefined. */
  refusal?: string;
  notes: string[];
}

/** A source DateTime (UTC without zone; a string or a driver's Date) in ms, or null. */
function utcMs(v: unknown): number | null {
  if (v instanceof Date) return Number.isFinite(v.getTime()) ? v.getTime() : null;
  const s = str(v);
  if (s === "") return null;
  const ms = Date.parse(`${s.replace(" ", "T").slice(0, 23)}Z`);
  return Number.isFinite(ms) ? ms : null;
}

/** privacyIDEA's container templates as import items (same checks as the template route). */
export function templateItems(rows: PiRow[]): PiItem[] {
  return rows.map((r) => {
    const name = str(r.name);
    return {
      kind: "container templates",
      name,
      exists: async (deps: Deps) => (await getTemplate(deps, name)) !== undefined,
      refusal: () =>
        containerTypeOf(str(r.container_type) || "generic")
          ? undefined
          : `container type "${str(r.container_type)}", which Tessera does not have`,
      async write(deps: Deps) {
        let options: unknown = {};
        const text = str(r.options);
        if (text !== "") {
          try {
            options = JSON.parse(text);
          } catch {
            options = undefined;
          }
        }
        await setTemplate(deps, {
          name,
          containerType: str(r.container_type) || "generic",
          options,
          isDefault: bool(r.default),
        });
      },
    };
  });
}

/** The containers of the source, with everything that belongs to them. */
export function containerPlans(
  rows: PiContainerRows,
  realmNames: Map<number, string>,
  tokenSerials: Map<number, string>,
): ContainerPlan[] {
  const owners = groupBy(rows.owners, "container_id");
  const realms = groupBy(rows.realms, "container_id");
  const states = groupBy(rows.states, "container_id");
  const info = groupBy(rows.info, "container_id");
  const tokens = groupBy(rows.tokens, "container_id");
  const templates = new Map(rows.templates.map((t) => [int(t.id), str(t.name)]));
  return rows.containers.map((c) => {
    const id = int(c.id);
    const type = str(c.type).toLowerCase();
    const notes: string[] = [];
    const ownerRows = owners.get(id) ?? [];
    if (ownerRows.length > 1) notes.push("extra owner rows not imported");
    const o = ownerRows[0];
    const infoRows = (info.get(id) ?? []).map((i) => ({
      key: str(i.key),
      value: i.value === null || i.value === undefined ? "" : String(i.value),
      isInternal: str(i.type) === PI_INTERNAL,
    }));
    const registration = infoRows.find((i) => i.key === "registration_state")?.value;
    if (registration === "client_wait" || registration === "rollover") {
      notes.push(
        `its ${
          registration === "rollover" ? "rollover" : "registration"
        } was waiting for the app and cannot finish here: start it again`,
      );
    }
    const serials: string[] = [];
    for (const t of tokens.get(id) ?? []) {
      const serial = tokenSerials.get(int(t.token_id));
      if (serial) serials.push(serial);
    }
    return {
      serial: str(c.serial),
      type,
      description: c.description === null || c.description === undefined
        ? ""
        : String(c.description),
      templateName: c.template_id === null || c.template_id === undefined
        ? ""
        : templates.get(int(c.template_id)) ?? "",
      owner: o
        ? {
          uid: str(o.user_id),
          resolver: str(o.resolver),
          realm: realmNames.get(int(o.realm_id)) ?? "",
        }
        : undefined,
      realms: [
        ...new Set(
          (realms.get(id) ?? []).map((r) => realmNames.get(int(r.realm_id)) ?? "").filter(Boolean),
        ),
      ],
      states: [...new Set((states.get(id) ?? []).map((s) => str(s.state)).filter(Boolean))],
      info: infoRows.filter((i) => i.key !== ""),
      tokenSerials: serials,
      lastSeen: utcMs(c.last_seen),
      lastUpdated: utcMs(c.last_updated),
      refusal: containerTypeOf(type)
        ? undefined
        : `container type "${str(c.type)}", which Tessera does not have`,
      notes,
    };
  });
}

/** Whether a container with the plan's serial exists (in any case). */
export async function containerExists(deps: Deps, plan: ContainerPlan): Promise<boolean> {
  return (await findContainer(deps, plan.serial)) !== undefined;
}

/**
 * Writes one container with its owner, realms, states, info, tokens and timestamps; returns
 * notes for the log (a token not in Tessera, a token type the container type does not hold,
 * an owner whose login is not found). Throws an AppError when the container itself is refused.
 */
export async function writeContainer(
  deps: Deps,
  plan: ContainerPlan,
  ownerLogin: (deps: Deps, owner: { uid: string; resolver: string }) => Promise<string | undefined>,
): Promise<string[]> {
  const notes = [...plan.notes];
  const realms: string[] = [];
  for (const r of plan.realms) {
    if (await realmExistsByName(deps, r)) realms.push(r);
    else notes.push(`realm ${r} not in Tessera: left out`);
  }
  const created = await createContainer(deps, {
    type: plan.type,
    description: plan.description,
    serial: plan.serial,
    realms,
    templateName: plan.templateName || undefined,
  });
  if (plan.owner) {
    const login = await ownerLogin(deps, plan.owner);
    if (login === undefined) {
      notes.push(`owner ${plan.owner.uid} (${plan.owner.resolver}): login not found`);
    }
    await assignContainerUser(deps, created, { ...plan.owner, login: login ?? "" });
  }
  await setContainerStates(deps, created, plan.states);
  const internal: Record<string, string> = {};
  for (const i of plan.info) {
    if (i.isInternal) internal[i.key] = i.value;
    else await setContainerInfo(deps, created, i.key, i.value);
  }
  if (Object.keys(internal).length > 0) await setInternalContainerInfo(deps, created, internal);
  for (const serial of plan.tokenSerials) {
    const token = await findTokenBySerial(deps, serial, { withRealms: false });
    if (!token) {
      notes.push(`token ${serial} not in Tessera: not put in`);
      continue;
    }
    try {
      await addTokenToContainer(deps, created, token);
    } catch (err) {
      notes.push(`token ${serial} not put in: ${err instanceof Error ? err.message : err}`);
    }
  }
  if (plan.lastSeen !== null) await touch(deps.db, created.id, "last_seen", plan.lastSeen);
  if (plan.lastUpdated !== null) {
    await touch(deps.db, created.id, "last_updated", plan.lastUpdated);
  }
  return notes;
}
