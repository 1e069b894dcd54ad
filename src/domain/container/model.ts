/**
 * The container domain's plain types and formats, shared by its modules without importing
 * `mod.ts`.
 *
 * @module
 */
import type { UserRef } from "../user/model.ts";
import type { InfoRow } from "./container_store.ts";

/** Info type of keys the server manages (users and admins cannot change them). */
export const PI_INTERNAL = "pi_internal";

/** A container with what belongs to it. */
export interface Container {
  id: number;
  serial: string;
  /** Lower case, a key of {@link CONTAINER_TYPES}. */
  type: string;
  description: string;
  /** Last authentication with one of its tokens (ms), null = never. */
  lastSeen: number | null;
  /** Last synchronisation with the app (ms), null = never. */
  lastUpdated: number | null;
  createdAt: number;
  /** Name of the template it was made from ("" = none or deleted). */
  templateName: string;
  /** The owner as stored (login as at assignment), undefined = none. */
  owner: UserRef | undefined;
  /** Its realms (lower case, sorted; the owner's realm is one of them). */
  realms: string[];
  states: string[];
  info: InfoRow[];
  /** Its tokens, sorted by serial. */
  tokens: { id: number; serial: string }[];
}

/**
 * Python's `datetime.isoformat()` of a UTC time: microseconds when not zero
 * (`…T12:00:00.123000+00:00`), none otherwise. The format of the last authentication and
 * synchronisation.
 */
export function containerTimestamp(ms: number | null): string | null {
  if (ms === null) return null;
  const iso = new Date(ms).toISOString();
  const fraction = iso.slice(20, 23);
  return `${iso.slice(0, 19)}${fraction === "000" ? "" : `.${fraction}000`}+00:00`;
}

/** A template as the API shows it. */
export interface Template {
  name: string;
  container_type: string;
  template_options: { tokens: Record<string, unknown>[] };
  default: boolean;
}
