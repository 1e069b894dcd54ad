/**
 * The event names of spec 05 §4 and the endpoints that emit them.
 *
 * @module
 */

/** One endpoint that emits an event. */
interface EventRoute {
  name: string;
  methods: string[];
  regexp: RegExp;
  /** The endpoint needs a JWT: pre handlers only run for authenticated callers. */
  needsAuth: boolean;
}

const S = "[^/]+";

function route(name: string, methods: string, path: string, needsAuth = true): EventRoute {
  // "[/x]" marks an optional trailing segment; trailing slashes are always optional
  const body = path.replace(/\[\/([^\]]+)\]/g, "(?:/$1)?").replaceAll("<s>", S)
    .replace("<serial>", `(?<serial>${S})`);
  return { name, methods: methods.split(","), regexp: new RegExp(`^${body}/?$`), needsAuth };
}

/** Method/path → event name; the first match wins, so specific paths come first. */
const ROUTES: EventRoute[] = [
  route("auth", "POST", "/auth", false),
  route("validate_check", "GET,POST", "/validate/(?:check|radiuscheck)", false),
  route("validate_triggerchallenge", "GET,POST", "/validate/triggerchallenge", false),
  route("validate_poll_transaction", "GET", "/validate/polltransaction[/<s>]", false),
  route("validate_offlinerefill", "POST", "/validate/offlinerefill", false),
  route("token_init", "POST", "/token/init"),
  route("token_list", "GET", "/token"),
  route("token_assign", "POST", "/token/assign"),
  route("token_unassign", "POST", "/token/unassign"),
  route("token_revoke", "POST", "/token/revoke[/<serial>]"),
  route("token_enable", "POST", "/token/enable[/<serial>]"),
  route("token_disable", "POST", "/token/disable[/<serial>]"),
  route("token_reset", "POST", "/token/reset[/<serial>]"),
  route("token_resync", "POST", "/token/resync[/<serial>]"),
  route("token_setpin", "POST", "/token/setpin[/<serial>]"),
  route("token_setrandompin", "POST", "/token/setrandompin[/<serial>]"),
  route("token_set", "POST", "/token/(?:set|description)[/<serial>]"),
  route("token_realm", "POST", "/token/realm/<serial>"),
  route("token_load", "POST", "/token/load/<s>"),
  route("token_copypin", "POST", "/token/copypin"),
  route("token_copyuser", "POST", "/token/copyuser"),
  route("token_lost", "POST", "/token/lost/<serial>"),
  route("token_getserial", "GET", "/token/getserial/<s>"),
  route("token_info", "POST,DELETE", "/token/info/<serial>/<s>"),
  route("token_cancelchallenge", "DELETE", "/token/challenges/transaction/<s>"),
  route("token_getchallenges", "GET", "/token/challenges[/<serial>]"),
  route("token_assign_group", "POST", "/token/group/<serial>[/<s>]"),
  route("token_unassign_group", "DELETE", "/token/group/<serial>/<s>"),
  route("token_delete", "DELETE", "/token[/<serial>]"),
  route("user_settings_get", "GET", "/user/settings[/<s>]"),
  route("user_settings_set", "POST", "/user/settings[/<s>]"),
  route("user_settings_delete", "DELETE", "/user/settings[/<s>]"),
  route("set_custom_user_attribute", "POST", "/user/attribute"),
  route("get_user_attribute", "GET", "/user/attribute"),
  route("delete_custom_user_attribute", "DELETE", "/user/attribute/<s>/<s>/<s>"),
  route("get_user_internal_attribute", "GET", "/user/internal_attribute"),
  route("get_editable_attributes", "GET", "/user/editable_attributes"),
  route("user_list", "GET", "/user"),
  route("user_add", "POST", "/user"),
  route("user_update", "PUT", "/user"),
  route("user_delete", "DELETE", "/user/<s>/<s>"),
  route("subscription_status", "GET", "/subscriptions/status"),
  route("subscription_get", "GET", "/subscriptions[/<s>]"),
  route("subscription_save", "POST", "/subscriptions"),
  route("subscription_delete", "DELETE", "/subscriptions/<s>"),
  route("container_init", "POST", "/container/init"),
  route("container_create_challenge", "POST", "/container/challenge"),
  route("container_init_rollover", "POST", "/container/rollover"),
  route("container_synchronize", "POST", "/container/synchronize"),
  route("container_register_initialize", "POST", "/container/register/initialize"),
  route("container_register_finalize", "POST", "/container/register/finalize"),
  route("container_unregister", "POST", "/container/register/(?:terminate/client|<s>/terminate)"),
  route("container_assign", "POST", "/container/<s>/assign"),
  route("container_unassign", "POST", "/container/<s>/unassign"),
  route("container_add_token", "POST", "/container/<s>/(?:add|addall)"),
  route("container_remove_token", "POST", "/container/<s>/(?:remove|removeall)"),
  route("container_set_description", "POST", "/container/<s>/description"),
  route("container_set_states", "POST", "/container/<s>/states"),
  route("container_set_realms", "POST", "/container/<s>/realms"),
  route("container_delete", "DELETE", "/container/<s>"),
  route("tokengroup_add", "POST", "/tokengroup/<s>"),
  route("tokengroup_list", "GET", "/tokengroup[/<s>]"),
  route("tokengroup_delete", "DELETE", "/tokengroup/<s>"),
  route("serviceid_add", "POST", "/serviceid/<s>"),
  route("serviceid_list", "GET", "/serviceid[/<s>]"),
  route("serviceid_delete", "DELETE", "/serviceid/<s>"),
  route("ttype", "GET,POST", "/ttype/<s>", false),
];

/** Names without a Tessera endpoint yet (API clients, remembered devices): listed, never emitted. */
const UNROUTED = [
  "api_client_add",
  "api_client_list",
  "api_client_edit",
  "api_client_rotate",
  "api_client_delete",
  "remembered_device_list",
  "remembered_device_revoke",
  "remembered_device_revoke_all",
  "remembered_device_revoke_bulk",
];

/** Every event name, each once (`GET /event/available`). */
export const AVAILABLE_EVENTS: readonly string[] = [
  ...new Set([...ROUTES.map((r) => r.name), ...UNROUTED]),
];

/** The event an endpoint emits, or undefined for endpoints without events. */
export function eventOf(
  method: string,
  path: string,
): { name: string; needsAuth: boolean; pathSerial?: string } | undefined {
  for (const r of ROUTES) {
    if (!r.methods.includes(method)) continue;
    const m = path.match(r.regexp);
    if (!m) continue;
    const raw = m.groups?.serial;
    let pathSerial: string | undefined;
    if (raw !== undefined) {
      try {
        pathSerial = decodeURIComponent(raw);
      } catch {
        pathSerial = raw;
      }
    }
    return { name: r.name, needsAuth: r.needsAuth, pathSerial };
  }
  return undefined;
}
