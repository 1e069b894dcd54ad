/**
 * The container dict of `GET /container/` (spec 13 §2.2) and the template comparison of
 * `GET /container/template/<name>/compare`.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { findTokensBySerials, tokenView, type TokenWithInfo } from "../token/mod.ts";
import { currentUser } from "../user/mod.ts";
import { type Container, containerTimestamp, PI_INTERNAL, type Template } from "./model.ts";

/** Info keys never shown (the app's key and a pending rollover's settings). */
const PRIVATE_INFO = ["public_key_client", "rollover_server_url", "rollover_challenge_ttl"];

/** What a caller may see of a container list. */
export interface ContainerViewOptions {
  /** `no_token=1`: no `tokens` key. */
  noToken?: boolean;
  /** Info keys the `hide_container_info` policies hide. */
  hiddenInfo?: string[];
  /** Token info keys the `hide_tokeninfo` policies hide. */
  hiddenTokenInfo?: string[];
  /** Whether the caller may see this token's details (else only `{serial}`). */
  canSeeToken: (token: TokenWithInfo) => boolean;
}

/** The list dicts of `containers`, in their order. */
export async function containerViews(
  deps: Deps,
  containers: Container[],
  opts: ContainerViewOptions,
): Promise<Record<string, unknown>[]> {
  const hidden = new Set([...PRIVATE_INFO, ...(opts.hiddenInfo ?? [])]);
  const serials = containers.flatMap((c) => c.tokens.map((t) => t.serial));
  const tokens = opts.noToken || serials.length === 0
    ? []
    : await findTokensBySerials(deps, serials);
  const bySerial = new Map(tokens.map((t) => [t.serial, t]));
  const out: Record<string, unknown>[] = [];
  for (const c of containers) {
    const users: Record<string, string>[] = [];
    if (c.owner) {
      // the login as the user store has it now; a user gone from it is a resolver error
      const now = await currentUser(deps, c.owner);
      users.push({
        user_realm: c.owner.realm,
        user_resolver: c.owner.resolver,
        user_name: now?.login ?? "**resolver error**",
        user_id: now?.uid ?? "**resolver error**",
      });
    }
    const view: Record<string, unknown> = {
      type: c.type,
      serial: c.serial,
      description: c.description,
      last_authentication: containerTimestamp(c.lastSeen),
      last_synchronization: containerTimestamp(c.lastUpdated),
      states: c.states,
      info: Object.fromEntries(
        c.info.filter((i) => !hidden.has(i.key)).map((i) => [
          i.key,
          i.value,
        ]),
      ),
      internal_info_keys: c.info.filter((i) => i.type === PI_INTERNAL).map((i) => i.key),
      template: c.templateName,
      realms: c.realms,
      users,
    };
    if (!opts.noToken) {
      view.tokens = c.tokens.map(({ serial }) => {
        const t = bySerial.get(serial);
        if (!t || !opts.canSeeToken(t)) return { serial };
        return { ...tokenView(t, opts.hiddenTokenInfo), container_serial: c.serial };
      });
    }
    out.push(view);
  }
  return out;
}

/**
 * How a container differs from its template by token types: types the template has more of
 * (`missing`), types the container has more of (`additional`), and whether they are `equal`.
 */
export function compareWithTemplate(
  template: Template,
  containerTokenTypes: string[],
): { tokens: { missing: string[]; additional: string[]; equal: boolean } } {
  const count = (types: string[]) => {
    const m = new Map<string, number>();
    for (const t of types) m.set(t, (m.get(t) ?? 0) + 1);
    return m;
  };
  const inTemplate = count(template.template_options.tokens.map((t) => String(t.type)));
  const inContainer = count(containerTokenTypes);
  const missing: string[] = [];
  const additional: string[] = [];
  for (const [type, n] of inTemplate) {
    const have = inContainer.get(type) ?? 0;
    for (let i = have; i < n; i++) missing.push(type);
  }
  for (const [type, n] of inContainer) {
    const want = inTemplate.get(type) ?? 0;
    for (let i = want; i < n; i++) additional.push(type);
  }
  return {
    tokens: { missing, additional, equal: missing.length === 0 && additional.length === 0 },
  };
}

/** The token types of each container's tokens (by container id). */
export async function containerTokenTypes(
  deps: Deps,
  containers: Container[],
): Promise<Map<number, string[]>> {
  const tokens = await findTokensBySerials(
    deps,
    containers.flatMap((x) => x.tokens.map((t) => t.serial)),
  );
  const typeOf = new Map(tokens.map((t) => [t.id, t.type]));
  return new Map(
    containers.map((x) => [x.id, x.tokens.map((t) => typeOf.get(t.id) ?? "").filter(Boolean)]),
  );
}
