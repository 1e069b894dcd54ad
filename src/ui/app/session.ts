/**
 * The login session: the JWT from `POST /auth`, kept in sessionStorage (the
 * only thing the UI stores), and what the UI reads from its claims.
 *
 * @module
 */
import { createContext } from "preact";
import { useContext } from "preact/hooks";

const STORAGE_KEY = "tessera.jwt";

/** WebUI settings of the login answer that the pages use. */
export interface UiSettings {
  tokenPageSize: number;
  userPageSize: number;
  auditPageSize: number;
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

const DEFAULT_SETTINGS: UiSettings = { tokenPageSize: 15, userPageSize: 15, auditPageSize: 10 };

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

/** The login answer's page sizes. */
export function settingsOf(value: Record<string, unknown>): Partial<UiSettings> {
  const n = (v: unknown) => (typeof v === "number" && v > 0 ? v : undefined);
  const out: Partial<UiSettings> = {};
  const t = n(value.token_page_size), u = n(value.user_page_size), a = n(value.audit_page_size);
  if (t) out.tokenPageSize = t;
  if (u) out.userPageSize = u;
  if (a) out.auditPageSize = a;
  return out;
}

/** Keeps the JWT for this browser tab only. */
export function storeToken(token: string | undefined): void {
  if (token) sessionStorage.setItem(STORAGE_KEY, token);
  else sessionStorage.removeItem(STORAGE_KEY);
}

/** The stored JWT, if any. */
export function storedToken(): string | undefined {
  return sessionStorage.getItem(STORAGE_KEY) ?? undefined;
}

/** True when the caller holds the policy action (plain or with a value). */
export function hasRight(s: Session, action: string): boolean {
  if (s.rights.has(action)) return true;
  for (const r of s.rights) if (r.startsWith(`${action}=`)) return true;
  return false;
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
