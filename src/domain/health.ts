/**
 * Readiness: the database answers a trivial query.
 *
 * @module
 */
import type { Deps } from "../deps.ts";
import { pingDatabase } from "../db/health_store.ts";

/** Returns a problem description, or undefined when the database answers. */
export async function checkDatabase(deps: Deps): Promise<string | undefined> {
  try {
    await pingDatabase(deps.db);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
