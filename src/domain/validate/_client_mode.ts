/**
 * The client mode of a reply with challenges (`preferred_client_mode`,
 * `client_mode_per_user`): which challenge the client should show first,
 * and the token type a user last logged in with from each agent.
 *
 * @module
 */
import type { UserRef } from "../token/mod.ts";
import { getCustomAttributes, setInternalAttribute } from "../user/mod.ts";
import type { CheckContext, CheckResult } from "./_context.ts";

/** Custom user attribute `<prefix>_<agent>`: the type of the token the user last logged in with. */
const LAST_USED_TOKEN = "last_used_token";

/**
 * privacyIDEA's plugin name of a User-Agent (`privacyidea-cp/2.0 …` →
 * `privacyidea-cp`): its leading letters, digits, `_` and `-`; "" if none.
 */
function pluginNameOf(userAgent: string): string {
  return userAgent.match(/^[A-Za-z0-9_-]+/)?.[0] ?? "";
}

/**
 * `client_mode_per_user`: after a success with one token, the user's
 * `last_used_token_<agent>` remembers its type (written only when it changes).
 */
export async function rememberLastUsedToken(
  ctx: CheckContext,
  user: UserRef,
  result: CheckResult,
): Promise<void> {
  if (!ctx.policies.clientModePerUser || !result.tokenType) return;
  const key = `${LAST_USED_TOKEN}_${pluginNameOf(ctx.request.userAgent)}`;
  await setInternalAttribute(ctx.deps, user, key, result.tokenType);
}

/**
 * `preferred_client_mode` (and `client_mode_per_user`) on a reply with
 * challenges: the client mode of the challenge of the token type the user
 * last logged in with from this agent, else the first mode of the policy's
 * list that one of the challenges has, else `interactive`.
 */
export async function withPreferredClientMode(
  ctx: CheckContext,
  detail: Record<string, unknown>,
  user: UserRef | undefined,
): Promise<void> {
  const challenges = detail.multi_challenge;
  if (!Array.isArray(challenges) || challenges.length === 0) return;
  const entries = challenges as Record<string, unknown>[];
  const p = ctx.policies;
  if (p.clientModePerUser && user) {
    const key = `${LAST_USED_TOKEN}_${pluginNameOf(ctx.request.userAgent)}`;
    const type = (await getCustomAttributes(ctx.deps, user))[key];
    const last = type === undefined ? undefined : entries.find((c) => c.type === type);
    if (last) {
      detail.preferred_client_mode = last.client_mode;
      return;
    }
  }
  const modes = new Set(entries.map((c) => c.client_mode));
  detail.preferred_client_mode = p.preferredClientMode.find((m) => modes.has(m)) ?? "interactive";
}
