/**
 * Readiness: the database answers a trivial query within a few seconds.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { pingDatabase } from "../../db/health_store.ts";

/**
 * How long readiness waits for the database. A load balancer's check has a
 * timeout of its own (often 2–5 s); a node whose database takes longer than
 * this is better taken out of rotation than left to answer late.
 */
export const READY_TIMEOUT_MS = 2_000;

/** Returns a problem description, or undefined when the database answers in time. */
export async function checkDatabase(
  deps: Deps,
  options: { timeoutMs?: number } = {},
): Promise<string | undefined> {
  const timeoutMs = options.timeoutMs ?? READY_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([pingDatabase(deps.db).then(() => undefined), late]);
  } catch (err) {
    return (err as Error).message;
  } finally {
    clearTimeout(timer);
  }
}
