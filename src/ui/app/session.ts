/**
 * The login session: the JWT from `POST /auth` and the web interface settings that came with
 * it (the webui policies, docs/webui.md), kept in sessionStorage (the only things the UI
 * stores), and what the UI reads from the JWT's claims.
 *
 * @module
 */
import { createContext } from "preact";
import { useContext } from "preact/hooks";

const STORAGE_KEY = "tessera.jwt";
const SETTINGS_KEY = "tessera.settings";

/** WebUI settings of the login answer that the pages use (the webui policies). */
export interface UiSettings {
  tokenPageSize: number;
  userPageSize: number;
  auditPageSize: number;
  /** Seconds without activity before {@link UiSettings.timeoutAction}. */
  logoutTime: number;
  /** `lockscreen`: ask for the password again; `logout`: end the session. */
  timeoutAction: "lockscreen" | "logout";
  /** The token type the enrolment form starts with. */
  defaultTokenType: string;
  /** Where the browser goes after logging out (an http(s) address), or "". */
  logoutRedirect: string;
  /** Lists search when Enter is pressed instead of while typing. */
  searchOnEnter: boolean;
  /** Buttons of actions the caller may not take are hidden instead of disabled. */
  hideButtons: boolean;
  /** No welcome note for admins. */
  hideWelcome: boolean;
  /** An enrolled token's key is shown as text next to its QR code. */
  showSeed: boolean;
  /** The node's name for the menu bar, or "". */
  node: string;
  /** The token list shows the owner's user id and resolver. */
  userDetails: boolean;
  /** A user without tokens is greeted by a dialog that offers the enrolment. */
  dialogNoToken: boolean;
  /** QR codes (data: URLs) of authenticator apps for the enrolment form. */
  appQrCodes: { src: string; label: string }[];
  /** The container type the create form starts with (policy default_container_type). */
  defaultContainerType: string;
  /**
   * The container wizard of a user without a container (policies container_wizard_*): the
   * type and template to create from, and whether to register the container at once.
   */
  containerWizard?: ContainerWizard;
}

/** What `POST /auth`'s `container_wizard` asks for when enabled. */
export interface ContainerWizard {
  type: string;
  /** The template's name, or "" for none. */
  template: string;
  registration: boolean;
}

/** The logged-in caller. */
export interface Session {
  token: string;
  username: string;
  realm: string;
  role: "admin" | "user";
  /** Policy actions of the caller (`action` or `action=value`). */
  rights: ReadonlySet<string>;
  /** Expiry, seconds since the epoch. */
  exp: number;
  settings: UiSettings;
}

const DEFAULT_SETTINGS: UiSettings = {
  tokenPageSize: 15,
  userPageSize: 15,
  auditPageSize: 10,
  logoutTime: 120,
  timeoutAction: "lockscreen",
  defaultTokenType: "hotp",
  logoutRedirect: "",
  searchOnEnter: false,
  hideButtons: false,
  hideWelcome: false,
  showSeed: false,
  node: "",
  userDetails: false,
  dialogNoToken: false,
  appQrCodes: [],
  defaultContainerType: "generic",
};

function decodeClaims(token: string): Record<string, unknown> | undefined {
  try {
    const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const bytes = Uint8Array.from(atob(part), (ch) => ch.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
}

/** A session from a JWT (undefined when the token cannot be read). */
export function sessionOf(
  token: string,
  settings: Partial<UiSettings> = {},
): Session | undefined {
  const c = decodeClaims(token);
  if (!c || typeof c.exp !== "number") return undefined;
  return {
    token,
    username: String(c.username ?? ""),
    realm: String(c.realm ?? ""),
    role: c.role === "admin" ? "admin" : "user",
    rights: new Set(Array.isArray(c.rights) ? c.rights.map(String) : []),
    exp: c.exp,
    settings: { ...DEFAULT_SETTINGS, ...settings },
  };
}

/** An address the browser may be sent to or link to: http(s) only (no `javascript:`). */
export function safeUrl(value: unknown): string {
  if (typeof value !== "string" || value === "") return "";
  try {
    const url = new URL(value, location.href);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : "";
  } catch {
    return "";
  }
}

/** A QR code's image address: only a `data:image/…` URL the server made. */
function qrImage(value: unknown): string | undefined {
  return typeof value === "string" && /^data:image\/(svg\+xml|png);base64,/.test(value)
    ? value
    : undefined;
}

/** The web interface settings of a login answer (`POST /auth`'s value). */
export function settingsOf(value: Record<string, unknown>): Partial<UiSettings> {
  const n = (v: unknown) => (typeof v === "number" && v > 0 ? v : undefined);
  const out: Partial<UiSettings> = {};
  const t = n(value.token_page_size), u = n(value.user_page_size), a = n(value.audit_page_size);
  if (t) out.tokenPageSize = t;
  if (u) out.userPageSize = u;
  if (a) out.auditPageSize = a;
  const logout = n(value.logout_time);
  if (logout) out.logoutTime = logout;
  if (value.timeout_action === "logout" || value.timeout_action === "lockscreen") {
    out.timeoutAction = value.timeout_action;
  }
  if (typeof value.default_tokentype === "string") out.defaultTokenType = value.default_tokentype;
  out.logoutRedirect = safeUrl(value.logout_redirect_url);
  out.searchOnEnter = value.search_on_enter === true;
  out.hideButtons = value.hide_buttons === true;
  out.hideWelcome = value.hide_welcome === true;
  out.showSeed = value.show_seed === true;
  out.node = typeof value.show_node === "string" ? value.show_node : "";
  out.userDetails = value.user_details === true;
  out.dialogNoToken = value.dialog_no_token === true;
  if (typeof value.default_container_type === "string") {
    out.defaultContainerType = value.default_container_type;
  }
  const wizard = value.container_wizard as Record<string, unknown> | null | undefined;
  if (wizard && wizard.enabled === true && typeof wizard.type === "string") {
    out.containerWizard = {
      type: wizard.type,
      template: typeof wizard.template === "string" ? wizard.template : "",
      registration: wizard.registration === true,
    };
  }
  const apps: [unknown, string][] = [
    [value.qr_image_android, "the privacyIDEA Authenticator for Android (Google Play)"],
    [value.qr_image_ios, "the privacyIDEA Authenticator for iOS (App Store)"],
    [value.qr_image_custom, "the authenticator app"],
  ];
  out.appQrCodes = apps.flatMap(([v, label]) => {
    const src = qrImage(v);
    return src ? [{ src, label }] : [];
  });
  return out;
}

/** The keys of a login answer {@link settingsOf} reads (what a reload needs again). */
const SETTING_KEYS = [
  "token_page_size",
  "user_page_size",
  "audit_page_size",
  "logout_time",
  "timeout_action",
  "default_tokentype",
  "default_container_type",
  "container_wizard",
  "logout_redirect_url",
  "search_on_enter",
  "hide_buttons",
  "hide_welcome",
  "show_seed",
  "show_node",
  "user_details",
  "dialog_no_token",
  "qr_image_android",
  "qr_image_ios",
  "qr_image_custom",
];

/**
 * Keeps the JWT and the login answer's settings for this browser tab only (read back through
 * {@link settingsOf}, so a reload checks them as a login does).
 */
export function storeToken(token: string | undefined, answer: Record<string, unknown> = {}): void {
  if (token) {
    sessionStorage.setItem(STORAGE_KEY, token);
    const kept = Object.fromEntries(
      SETTING_KEYS.filter((k) => k in answer).map((k) => [k, answer[k]]),
    );
    sessionStorage.setItem(SETTINGS_KEY, JSON.stringify(kept));
  } else {
    sessionStorage.removeItem(STORAGE_KEY);
    sessionStorage.removeItem(SETTINGS_KEY);
  }
}

/** The stored JWT, if any. */
export function storedToken(): string | undefined {
  return sessionStorage.getItem(STORAGE_KEY) ?? undefined;
}

/** The settings stored with the JWT (a reload keeps the session's settings). */
export function storedSettings(): Partial<UiSettings> {
  try {
    const parsed = JSON.parse(sessionStorage.getItem(SETTINGS_KEY) ?? "{}");
    return parsed && typeof parsed === "object" ? settingsOf(parsed) : {};
  } catch {
    return {};
  }
}

/** True when the caller holds the policy action (plain or with a value). */
export function hasRight(s: Session, action: string): boolean {
  if (s.rights.has(action)) return true;
  for (const r of s.rights) if (r.startsWith(`${action}=`)) return true;
  return false;
}

/** True when the caller may enrol some token type (an `enroll<TYPE>` right; not `enrollpin`). */
export function canEnrollAny(s: Session): boolean {
  return [...s.rights].some((r) => /^enroll[A-Z0-9]/.test(r));
}

/** The value of a non-boolean right (`action=value`), if any. */
export function rightValue(s: Session, action: string): string | undefined {
  for (const r of s.rights) if (r.startsWith(`${action}=`)) return r.slice(action.length + 1);
  return undefined;
}

/** The session of the logged-in caller and the logout action. */
export interface SessionApi {
  session: Session;
  logout: () => void;
}

/** Provides {@link SessionApi} to the pages. */
export const SessionContext = createContext<SessionApi | undefined>(undefined);

/** The current session (pages render only while logged in). */
export function useSession(): SessionApi {
  const s = useContext(SessionContext);
  if (!s) throw new Error("No session");
  return s;
}
