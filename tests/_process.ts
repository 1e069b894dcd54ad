/**
 * Stopping a test's own server process by its id: SIGTERM, and SIGKILL if it
 * is still there after a grace period.
 *
 * @module
 */

/** Sends SIGTERM, SIGKILL after `graceMs`, and resolves once the process is gone. */
export async function terminate(child: Deno.ChildProcess, graceMs = 10_000): Promise<void> {
  try {
    child.kill("SIGTERM");
  } catch { /* already gone */ }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, graceMs);
  await child.status;
  clearTimeout(timer);
}
