/**
 * What privacyIDEA hands a web interface from the `webui` policies (spec 15 §7): the settings
 * of a successful `POST /auth` ({@link loginSettings}, privacyIDEA's `get_webui_settings`) and
 * the login page's configuration before anyone logs in ({@link loginPageConfig}, `GET /config`).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { qrSvgDataUri } from "../../lib/qr.ts";
import {
  type CompiledPolicy,
  type ConditionData,
  loadPolicySet,
  type PolicyMatcher,
  userAgentName,
} from "../policy/mod.ts";
import { getUserAttributes, resolveUser, splitUser, type UserRef } from "../user/mod.ts";
import { getTokensOfUser } from "../token/mod.ts";
import { subscriptionStatus, webuiSubscriptionStatus } from "../subscription/mod.ts";
import { realmNames } from "../realm/mod.ts";
import { listContainers } from "../container/mod.ts";
import { isPasswordResetOffered } from "../register/mod.ts";

/** Who logged in: the `/auth` answer's user (a local admin has realm `""`). */
export interface WebuiCaller {
  username: string;
  realm: string;
  /** The realm user's resolver; `""` for a local admin. */
  resolver: string;
  role: "admin" | "user";
}

/** The request around a match: client address, user agent, and condition data. */
export interface WebuiRequest {
  client?: string | null;
  userAgent?: string | null;
  /** Request headers and environment for policy conditions (never the request's password). */
  conditions?: ConditionData;
}

/**
 * The condition data of a match about `who`: the request's sections and `who`'s user info
 * (the realm user looked up once, only when a condition needs it; none for a local admin).
 */
export function callerConditionData(
  deps: Deps,
  who: Pick<WebuiCaller, "username" | "realm" | "resolver">,
  request: ConditionData | undefined,
): ConditionData {
  let ref: Promise<UserRef | undefined> | undefined;
  const realmUser = () =>
    ref ??= who.resolver === ""
      ? Promise.resolve(undefined)
      : resolveUser(deps, who.username, who.realm, who.resolver);
  return {
    ...request,
    userinfo: async () => {
      const user = await realmUser();
      return user ? await getUserAttributes(deps, user) : undefined;
    },
  };
}

/** privacyIDEA's defaults (privacyidea/api/lib/postpolicy.py:91-98). */
export const WEBUI_DEFAULT = {
  logoutTime: 120,
  auditPageSize: 10,
  pageSize: 15,
  tokenType: "hotp",
  containerType: "generic",
  timeoutAction: "lockscreen",
  policyTemplateUrl:
    "https://raw.githubusercontent.com/privacyidea/policy-templates/master/templates/",
} as const;

/** The app store pages the `show_*_privacyidea_authenticator` QR codes lead to. */
export const AUTHENTICATOR_APP_URL = {
  android: "https://play.google.com/store/apps/details?id=it.netknights.piauthenticator",
  ios: "https://apps.apple.com/us/app/privacyidea-authenticator/id1445401301",
} as const;

/** News days of `rss_age` without a policy: admins see half a year, users none. */
const RSS_AGE_DEFAULT = { admin: 180, user: 0 } as const;

/** The `/auth` settings and the webui policies that made them (for the audit). */
export interface LoginSettings {
  /** Keys added to `/auth`'s `result.value`, in privacyIDEA's order. */
  values: Record<string, unknown>;
  /** Names of the policies that matched. */
  policies: string[];
}

/** The one value of a unique action split on whitespace as privacyIDEA reads it, if set. */
async function uniqueValue(m: PolicyMatcher, action: string): Promise<string | undefined> {
  return (await m.values(action, { unique: true })).values[0];
}

/** An integer setting: the policy's value, else the default (also for a value that is no integer). */
function intOr(value: string | undefined, fallback: number): number {
  if (value === undefined || !/^[+-]?\d+$/.test(value.trim())) return fallback;
  return Number.parseInt(value, 10);
}

/** Records the names of `policies` in `seen`. */
function note(seen: Set<string>, policies: readonly CompiledPolicy[] | readonly string[]): void {
  for (const p of policies) seen.add(typeof p === "string" ? p : p.name);
}

/**
 * The webui settings of a successful login (privacyIDEA's `get_webui_settings`): matched with
 * the logged-in user, their realm and resolver (a local admin: their name and realm `""`),
 * the client and the user agent. A unique action set to two values at one priority fails the
 * login with PolicyError 303, as in privacyIDEA.
 */
export async function loginSettings(
  deps: Deps,
  who: WebuiCaller,
  req: WebuiRequest = {},
): Promise<LoginSettings> {
  const set = await loadPolicySet(deps);
  const seen = new Set<string>();
  const isUser = who.role === "user";
  const isLocalAdmin = who.resolver === "";
  // the realm user behind the login, looked up once and only when a policy needs them
  let ref: Promise<UserRef | undefined> | undefined;
  const realmUser = () =>
    ref ??= isLocalAdmin
      ? Promise.resolve(undefined)
      : resolveUser(deps, who.username, who.realm, who.resolver);
  const conditions: ConditionData = {
    ...req.conditions,
    userinfo: async () => {
      const user = await realmUser();
      return user ? await getUserAttributes(deps, user) : undefined;
    },
  };
  const base = {
    client: req.client || null,
    userAgent: req.userAgent == null ? null : userAgentName(req.userAgent),
    conditions,
  };
  const m = set.matcher({
    ...base,
    scope: "webui",
    user: who.username,
    realm: who.realm,
    resolver: who.resolver || null,
  });
  const flag = async (action: string) => {
    const names = await m.bool(action);
    note(seen, names);
    return names.length > 0;
  };
  const value = async (action: string) => {
    const v = await m.values(action, { unique: true });
    note(seen, v.policies);
    return v.values[0];
  };

  const out: Record<string, unknown> = {};
  // the tokens count only for a user's wizard and no-token dialog (privacyIDEA counts them so)
  let tokenCount: Promise<number> | undefined;
  const hasNoToken = async () => {
    tokenCount ??= realmUser().then(async (u) =>
      u ? (await getTokensOfUser(deps, u, { withRealms: false })).length : 0
    );
    return await tokenCount === 0;
  };
  let tokenWizard = false;
  let dialogNoToken = false;
  if (isUser) {
    tokenWizard = await flag("tokenwizard") && await hasNoToken();
    dialogNoToken = await flag("dialog_no_token") && await hasNoToken();
    // a user-scope policy, matched with the user alone (privacyIDEA's Match.user)
    const force = await set.matcher({
      ...base,
      scope: "user",
      user: who.username,
      realm: who.realm,
      resolver: who.resolver || null,
    }).values("indexedsecret_force_attribute");
    note(seen, force.policies);
    if (force.values.length > 0) out.indexedsecret_force_attribute = 1;
  }
  const tokenRollover: Record<string, string[]> = {};
  for (const p of await m.policiesFor("token_rollover")) {
    seen.add(p.name);
    for (const type of p.valuesOf("token_rollover", false)) {
      const names = tokenRollover[type] ??= [];
      if (!names.includes(p.name)) names.push(p.name);
    }
  }
  // the policy template repository is one for the whole server: matched by client and agent only
  const templateMatch = set.matcher({ ...base, scope: "webui" });
  const templateUrl = await templateMatch.values("policy_template_url", { unique: true });
  note(seen, templateUrl.policies);
  // the indexedsecret preset is matched by the login realm only (privacyIDEA's Match.realm)
  const preset = await set.matcher({ ...base, scope: "webui", realm: who.realm })
    .values("indexedsecret_preset_attribute", { unique: true });
  note(seen, preset.policies);
  if (preset.values.length > 0) out.indexedsecret_preset_attribute = preset.values[0];

  const customApp = await value("show_custom_authenticator");
  const requireDescription = await set.matcher({
    ...base,
    scope: "enrollment",
    user: who.username,
    realm: who.realm,
    resolver: who.resolver || null,
  }).values("require_description");
  note(seen, requireDescription.policies);
  // matched with the user object alone: for a local admin an empty user (privacyIDEA's Match.user)
  const rssAge = isLocalAdmin
    ? await set.matcher({ ...base, scope: "webui", user: "", realm: "", resolver: "" })
      .values("rss_age", { unique: true })
    : await m.values("rss_age", { unique: true });
  note(seen, rssAge.policies);

  out.logout_time = intOr(await value("logout_time"), WEBUI_DEFAULT.logoutTime);
  out.audit_page_size = intOr(await value("audit_page_size"), WEBUI_DEFAULT.auditPageSize);
  out.token_page_size = intOr(await value("token_page_size"), WEBUI_DEFAULT.pageSize);
  out.user_page_size = intOr(await value("user_page_size"), WEBUI_DEFAULT.pageSize);
  out.policy_template_url = templateUrl.values[0] ?? WEBUI_DEFAULT.policyTemplateUrl;
  out.default_tokentype = (await value("default_tokentype")) ?? WEBUI_DEFAULT.tokenType;
  out.default_container_type = (await value("default_container_type")) ??
    WEBUI_DEFAULT.containerType;
  out.user_details = await flag("user_details");
  out.token_wizard = tokenWizard;
  out.token_wizard_2nd = isUser && await flag("tokenwizard_2nd_token");
  out.admin_dashboard = !isUser && await flag("admin_dashboard");
  out.dialog_no_token = dialogNoToken;
  out.search_on_enter = await flag("search_on_enter");
  out.timeout_action = (await value("timeout_action")) ?? WEBUI_DEFAULT.timeoutAction;
  out.token_rollover = tokenRollover;
  out.hide_welcome = await flag("hide_welcome_info");
  out.hide_buttons = await flag("hide_buttons");
  out.deletion_confirmation = await flag("deletion_confirmation");
  out.show_seed = await flag("show_seed");
  // matched without the login name for a local admin (privacyIDEA passes no user object then)
  out.show_node = await showNode(
    deps,
    set.matcher({
      ...base,
      scope: "webui",
      user: isLocalAdmin ? null : who.username,
      realm: who.realm,
      resolver: who.resolver || null,
    }),
    seen,
  );
  Object.assign(out, await webuiSubscriptionStatus(deps));
  out.qr_image_android = await flag("show_android_privacyidea_authenticator")
    ? qrSvgDataUri(AUTHENTICATOR_APP_URL.android)
    : null;
  out.qr_image_ios = await flag("show_ios_privacyidea_authenticator")
    ? qrSvgDataUri(AUTHENTICATOR_APP_URL.ios)
    : null;
  out.qr_image_custom = customApp === undefined ? null : qrSvgDataUri(customApp);
  out.logout_redirect_url = (await value("logout_redirect")) ?? "";
  out.require_description = requireDescription.values;
  out.rss_age = intOr(rssAge.values[0], RSS_AGE_DEFAULT[who.role]);
  out.container_wizard = isUser ? await containerWizard(deps, realmUser, m, seen) : {
    enabled: false,
  };
  return { values: out, policies: [...seen] };
}

/**
 * The container wizard of a user who has no container yet (privacyIDEA's get_webui_settings):
 * on with a `container_wizard_type`; its template (`container_wizard_template`, privacyIDEA
 * offers it as `name(type)`: the name alone is kept) and whether the new container is
 * registered at once (`container_wizard_registration`). The policies count as used (audit)
 * only when the wizard runs, as in privacyIDEA, which reads them only for a user without one.
 */
async function containerWizard(
  deps: Deps,
  realmUser: () => Promise<UserRef | undefined>,
  m: PolicyMatcher,
  seen: Set<string>,
): Promise<Record<string, unknown>> {
  const off = { enabled: false };
  // the policy first: without one, no login pays for counting the user's containers
  const type = await m.values("container_wizard_type", { unique: true });
  if (type.values.length === 0) return off;
  const user = await realmUser();
  if (!user) return off;
  const owned = await listContainers(deps, {
    owner: { uid: user.uid, realm: user.realm, resolver: user.resolver },
    page: 1,
    pagesize: 1,
  });
  if ((owned.count ?? owned.containers.length) > 0) return off;
  const template = await m.values("container_wizard_template", { unique: true });
  const registration = await m.bool("container_wizard_registration");
  note(seen, type.policies);
  note(seen, template.policies);
  note(seen, registration);
  return {
    enabled: true,
    type: type.values[0],
    template: template.values.length === 0
      ? null
      : template.values[0].split(`(${type.values[0]})`)[0],
    registration: registration.length > 0,
  };
}

/** The node name when a `show_node` policy matches, else `""`. */
async function showNode(deps: Deps, m: PolicyMatcher, seen?: Set<string>): Promise<string> {
  const names = await m.bool("show_node");
  if (seen) note(seen, names);
  return names.length > 0 ? deps.nodeName : "";
}

/** The request of the login page: nobody is logged in yet. */
export interface LoginPageRequest extends WebuiRequest {
  /**
   * The user the web server in front authenticated (privacyIDEA's REMOTE_USER), as a trusted
   * proxy passed it; undefined when none.
   */
  remoteUser?: string;
}

/** What `GET /config` reveals of a matching user-scope `otp_pin_set_random` policy. */
export interface RandomPinPolicy {
  name: string;
  scope: "user";
  active: boolean;
  priority: number;
  action: { otp_pin_set_random: string | true };
}

/**
 * The `remote_user` policy for a REMOTE_USER value (privacyIDEA's `is_remote_user_allowed`):
 * matched with its login and realm (the default realm when it names none); the first value of
 * the union, `disable` without a policy.
 */
export async function remoteUserMode(
  deps: Deps,
  remoteUser: string | undefined,
  req: WebuiRequest = {},
): Promise<"allowed" | "disable" | "force"> {
  if (!remoteUser) return "disable";
  const { login, realm } = await splitUser(deps, remoteUser);
  const set = await loadPolicySet(deps);
  const m = set.matcher({
    scope: "webui",
    user: login,
    realm,
    client: req.client || null,
    userAgent: req.userAgent == null ? null : userAgentName(req.userAgent),
    conditions: req.conditions ?? {},
  });
  const mode = (await m.values("remote_user")).values[0];
  return mode === "allowed" || mode === "force" ? mode : "disable";
}

/**
 * The login page's configuration (privacyIDEA's `get_render_context`, answered by `GET /config`):
 * nobody is logged in, so policies match by client, user agent and time only (privacyIDEA's
 * `action_only`). It reveals what privacyIDEA's reveals, and of a user-scope
 * `otp_pin_set_random` policy only its name, priority and that value (privacyIDEA sends the
 * whole policy: realms, users, client networks and its other actions).
 */
export async function loginPageConfig(
  deps: Deps,
  req: LoginPageRequest = {},
): Promise<Record<string, unknown>> {
  const set = await loadPolicySet(deps);
  const base = {
    client: req.client || null,
    userAgent: req.userAgent == null ? null : userAgentName(req.userAgent),
    conditions: req.conditions ?? {},
  };
  const m = set.matcher({ ...base, scope: "webui" });
  const dropdown = await m.policiesFor("realm_dropdown");
  let realms = "";
  if (dropdown.length > 0) {
    // a bare realm_dropdown (an older boolean policy) offers every realm
    const isBare = dropdown.some((p) => typeof p.policy.action.realm_dropdown !== "string");
    realms = isBare
      ? (await realmNames(deps)).join(",")
      : (await m.values("realm_dropdown")).values.join(",");
  }
  const mode = await remoteUserMode(deps, req.remoteUser, req);
  // with too many tokens for no subscription (1) or an expired one (2) the texts are not shown
  const isCustomizable = ![1, 2].includes(await subscriptionStatus(deps, "privacyidea"));
  const text = async (action: string, fallback: string) => {
    const v = (await m.values(action, { unique: true, freeText: true })).values[0];
    return v && isCustomizable ? v : fallback;
  };
  const randomPin: RandomPinPolicy[] = [];
  for (const p of await set.matcher({ ...base, scope: "user" }).policiesFor("otp_pin_set_random")) {
    const v = p.policy.action.otp_pin_set_random;
    randomPin.push({
      name: p.name,
      scope: "user",
      active: p.policy.active,
      priority: p.priority,
      action: { otp_pin_set_random: typeof v === "string" ? v : true },
    });
  }
  const passkeyLogin = await uniqueValue(m, "passkey_login");
  return {
    instance: "",
    backendUrl: "",
    // the web interface speaks English only
    browser_lang: "en",
    remote_user: mode === "disable" ? "" : req.remoteUser ?? "",
    force_remote_user: mode === "force",
    theme: "",
    translation_warning: false,
    password_reset: await isPasswordResetOffered(deps, req),
    hsm_ready: true,
    has_job_queue: "False",
    customization: "",
    custom_css: "",
    customization_menu_file: await text("custom_menu", "templates/menu.html"),
    customization_baseline_file: await text("custom_baseline", "templates/baseline.html"),
    realms,
    show_node: await showNode(deps, m),
    external_links: true,
    login_text: await text("login_text", ""),
    gdpr_link: await text("privacy_statement_link", ""),
    logo: "",
    page_title: "Tessera",
    otp_pin_set_random_user: randomPin,
    privacyideaVersionNumber: deps.config.compat.versionnumber,
    passkey_login: passkeyLogin === "hide" ? "hide" : "show",
  };
}
