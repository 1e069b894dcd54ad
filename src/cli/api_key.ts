/**
 * `tessera api createtoken`: issues an API key for the validate API, as
 * privacyIDEA's `pi-manage api createtoken -r validate` does. Clients send it
 * in the `Authorization` (or `PI-Authorization`) header where the policy
 * `api_key_required` asks for one.
 *
 * @module
 */
import type { Config } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { closeRuntime, openRuntime } from "../runtime.ts";
import { API_KEY_ROLE, issueApiKey } from "../http/jwt.ts";
import { nearest } from "./nearest.ts";

/** Help text of the `api` command. */
export const API_HELP = `Usage: tessera api createtoken --username <name> [options]

Issues an API key for the validate API: a JWT with role "validate", signed
with this server's JWT secret (the key file), so every node sharing the key
file accepts it. Send it in the Authorization (or PI-Authorization) header
of /validate/check, /validate/radiuscheck, /validate/samlcheck and
/validate/polltransaction; the authorization policy api_key_required refuses
those requests without one. It grants nothing else: admin and user endpoints
refuse it. A key cannot be revoked before it expires: keep it like a
password and choose the validity accordingly.

  --username <name>   who the key is for (written into the key; required)
  --days <n>          validity in days, 1 to 3650 (default 365)
  --realm <realm>     realm written into the key (default API)
  --role validate     the only role an API key has (privacyIDEA's admin API keys
                      are not offered: use an admin login)`;

/** A mistake in the command line (exit code 2). */
export class ApiUsageError extends Error {}

/** Longest validity, in days, of an API key (ten years). */
const MAX_DAYS = 3650;

/** The options of `api createtoken`, checked. */
export function apiKeyOptions(
  args: string[],
  flags: Map<string, string | true>,
): { username: string; realm: string; days: number } {
  const [action, ...rest] = args;
  if (action === undefined) {
    throw new ApiUsageError(`tessera api needs a command: createtoken\n\n${API_HELP}`);
  }
  if (action !== "createtoken") {
    const near = nearest(action, ["createtoken"]);
    throw new ApiUsageError(
      `Unknown api command "${action}"${near ? `; did you mean "${near}"?` : ""}\n\n${API_HELP}`,
    );
  }
  if (rest.length > 0) throw new ApiUsageError(`Unexpected argument "${rest[0]}"`);
  const role = flags.get("role") ?? API_KEY_ROLE;
  if (role !== API_KEY_ROLE) {
    throw new ApiUsageError(
      `Cannot parse --role "${role}": an API key has the role "validate"`,
    );
  }
  const username = flags.get("username");
  if (typeof username !== "string" || username.trim() === "") {
    throw new ApiUsageError(`tessera api createtoken needs --username <name>\n\n${API_HELP}`);
  }
  const daysText = flags.get("days") ?? "365";
  const days = typeof daysText === "string" && /^\d{1,4}$/.test(daysText) ? Number(daysText) : NaN;
  if (!(days >= 1 && days <= MAX_DAYS)) {
    throw new ApiUsageError(
      `Cannot parse --days "${daysText}": expected an integer from 1 to ${MAX_DAYS}`,
    );
  }
  const realm = flags.get("realm") ?? "API";
  if (typeof realm !== "string" || realm.trim() === "") {
    throw new ApiUsageError('Cannot parse --realm "": expected a realm name');
  }
  return { username: username.trim(), realm: realm.trim(), days };
}

/** Runs `tessera api …` (options already checked by {@link apiKeyOptions}); returns the exit code. */
export async function runApiCommand(
  config: Config,
  log: Logger,
  options: { username: string; realm: string; days: number },
): Promise<number> {
  const deps = await openRuntime(config, log);
  try {
    const { token, claims } = await issueApiKey(deps, options);
    console.log(`Username:   ${claims.username}`);
    console.log(`Realm:      ${claims.realm}`);
    console.log(`Role:       ${claims.role}`);
    console.log(
      `Validity:   ${options.days} days (until ${new Date(claims.exp * 1000).toISOString()})`,
    );
    console.log(`Auth-Token: ${token}`);
    return 0;
  } finally {
    await closeRuntime(deps);
  }
}
