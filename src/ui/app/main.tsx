/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/// <reference lib="dom" />
/**
 * Tessera's web interface: the login, the navigation by rights and the
 * hash routes of the admin pages and the user's self-service.
 *
 * @module
 */
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { onSessionEnded, setApiToken } from "./api.ts";
import {
  hasRight,
  type Session,
  SessionContext,
  sessionOf,
  storedToken,
  storeToken,
} from "./session.ts";
import { focusHeading, href, type Route, StatusLine, useFocusRescue, useRoute } from "./ui.tsx";
import { LoginPage } from "./pages/login.tsx";
import { TokenDetailsPage, TokensPage } from "./pages/tokens.tsx";
import { EnrollPage } from "./pages/enroll.tsx";
import { UserDetailsPage, UsersPage } from "./pages/users.tsx";
import { ResolversPage } from "./pages/resolvers.tsx";
import { RealmsPage } from "./pages/realms.tsx";
import { PoliciesPage, PolicyEditPage } from "./pages/policies.tsx";
import { EventEditPage, EventsPage } from "./pages/events.tsx";
import { MachinesPage } from "./pages/machines.tsx";
import { RadiusPage, SmtpPage } from "./pages/servers.tsx";
import { AuditPage } from "./pages/audit.tsx";
import { SystemPage } from "./pages/system.tsx";
import { SelfServicePage } from "./pages/self_service.tsx";

/** An admin page: its route, its menu label and the rights that show it. */
interface AdminPage {
  path: string;
  label: string;
  /** Shown when the admin holds any of these rights (empty: every admin). */
  rights: string[];
}

const ADMIN_PAGES: AdminPage[] = [
  { path: "tokens", label: "Tokens", rights: ["tokenlist"] },
  { path: "users", label: "Users", rights: ["userlist"] },
  { path: "resolvers", label: "Resolvers", rights: ["resolverread"] },
  { path: "realms", label: "Realms", rights: [] },
  { path: "policies", label: "Policies", rights: ["policyread"] },
  { path: "events", label: "Events", rights: ["eventhandling_read"] },
  {
    path: "machines",
    label: "Machines",
    rights: ["mresolverread", "machinelist", "manage_machine_tokens"],
  },
  { path: "radius", label: "RADIUS servers", rights: ["radiusserver_read"] },
  { path: "smtp", label: "SMTP servers", rights: ["smtpserver_read"] },
  { path: "audit", label: "Audit log", rights: ["auditlog"] },
  { path: "system", label: "System", rights: ["configread"] },
];

function allowedPages(s: Session): AdminPage[] {
  return ADMIN_PAGES.filter((p) => p.rights.length === 0 || p.rights.some((r) => hasRight(s, r)));
}

function AdminRoutes(props: { route: Route; session: Session }) {
  const { parts } = props.route;
  const pages = allowedPages(props.session);
  const first = parts[0] ?? pages[0]?.path ?? "realms";
  if (!pages.some((p) => p.path === first) && first !== "enroll") {
    return <p class="error" role="alert">You are not allowed to see this page.</p>;
  }
  switch (first) {
    case "tokens":
      return parts[1] ? <TokenDetailsPage serial={parts[1]} /> : <TokensPage route={props.route} />;
    case "enroll":
      return <EnrollPage route={props.route} />;
    case "users":
      return parts[2]
        ? <UserDetailsPage realm={parts[1]} username={parts[2]} />
        : <UsersPage route={props.route} />;
    case "resolvers":
      return <ResolversPage />;
    case "realms":
      return <RealmsPage />;
    case "policies":
      return parts[1] !== undefined
        ? <PolicyEditPage name={parts[1] === "new" ? "" : parts[1]} />
        : <PoliciesPage />;
    case "events":
      return parts[1] !== undefined
        ? <EventEditPage id={parts[1] === "new" ? undefined : parts[1]} />
        : <EventsPage />;
    case "machines":
      return <MachinesPage />;
    case "radius":
      return <RadiusPage />;
    case "smtp":
      return <SmtpPage />;
    case "audit":
      return <AuditPage />;
    case "system":
      return <SystemPage />;
  }
  return <p class="error" role="alert">There is no page "{first}".</p>;
}

function Shell(props: { session: Session; logout: () => void; focusOnStart: boolean }) {
  const route = useRoute();
  const s = props.session;
  const current = route.parts[0];
  const pages = s.role === "admin" ? allowedPages(s) : [];
  const path = route.parts.join("/");
  const started = useRef(false);
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  useFocusRescue();
  useEffect(() => {
    setMenuOpen(false);
    // after a login and on every page change focus goes to the new page's heading (not on a
    // reload, where the browser starts at the top)
    if (started.current || props.focusOnStart) focusHeading();
    started.current = true;
  }, [path]);
  return (
    <SessionContext.Provider value={{ session: s, logout: props.logout }}>
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          // the hash is the router's: move focus without changing it
          e.preventDefault();
          focusHeading();
        }}
      >
        Skip to content
      </a>
      <header
        class="top"
        onKeyDown={(e) => {
          if (e.key !== "Escape" || !menuOpen) return;
          setMenuOpen(false);
          menuButton.current?.focus();
        }}
      >
        <a class="brand" href="#/">Tessera</a>
        <button
          ref={menuButton}
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav
          id="main-nav"
          aria-label="Main"
          class={menuOpen ? "open" : undefined}
          onClick={(e) => {
            // a chosen page closes the menu, also the page already shown
            if ((e.target as Element).closest("a")) setMenuOpen(false);
          }}
        >
          {s.role === "admin"
            ? pages.map((p) => (
              <a
                key={p.path}
                href={href([p.path])}
                aria-current={(current ?? pages[0]?.path) === p.path ? "page" : undefined}
              >
                {p.label}
              </a>
            ))
            : <a href="#/" aria-current="page">My tokens</a>}
        </nav>
        <div class="who">
          <span>
            {s.username}
            {s.realm ? `@${s.realm}` : ""} ({s.role})
          </span>
          <button type="button" onClick={props.logout}>Log out</button>
        </div>
      </header>
      <main id="main">
        <StatusLine />
        {s.role === "admin" ? <AdminRoutes route={route} session={s} /> : <SelfServicePage />}
      </main>
    </SessionContext.Provider>
  );
}

function App() {
  const [session, setSession] = useState<Session | undefined>(() => {
    const token = storedToken();
    const s = token ? sessionOf(token) : undefined;
    if (s && s.exp * 1000 > Date.now()) {
      setApiToken(s.token);
      return s;
    }
    return undefined;
  });
  const [notice, setNotice] = useState<string | undefined>(() =>
    storedToken() && !session ? "Your session has expired. Please log in again." : undefined
  );
  const [loggedInHere, setLoggedInHere] = useState(false);

  function end(message?: string) {
    storeToken(undefined);
    setApiToken(undefined);
    setSession(undefined);
    setNotice(message);
  }

  useEffect(() => {
    if (!session) return;
    onSessionEnded((m) => end(m));
    // the session ends with its JWT, and says so
    const ms = Math.max(0, session.exp * 1000 - Date.now());
    const timer = setTimeout(() => end("Your session has expired. Please log in again."), ms);
    return () => clearTimeout(timer);
  }, [session]);

  if (!session) {
    return (
      <LoginPage
        notice={notice}
        onLogin={(s) => {
          storeToken(s.token);
          setApiToken(s.token);
          setNotice(undefined);
          setLoggedInHere(true);
          setSession(s);
        }}
      />
    );
  }
  return (
    <Shell
      session={session}
      logout={() => end("You have logged out.")}
      focusOnStart={loggedInHere}
    />
  );
}

render(<App />, document.getElementById("app")!);
