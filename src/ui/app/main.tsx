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
import { api, get, messageOf, onSessionEnded, setApiToken } from "./api.ts";
import {
  hasRight,
  type Session,
  SessionContext,
  sessionOf,
  settingsOf,
  storedSettings,
  storedToken,
  storeToken,
} from "./session.ts";
import {
  Field,
  focusHeading,
  Form,
  go,
  href,
  Outcome,
  type Route,
  StatusLine,
  trapTab,
  useAction,
  useFocusRescue,
  useRoute,
} from "./ui.tsx";
import { LoginPage, type LoginPageConfig, PrivacyLink } from "./pages/login.tsx";
import { DashboardPage } from "./pages/dashboard.tsx";
import { TokenDetailsPage, TokensPage } from "./pages/tokens.tsx";
import { EnrollPage } from "./pages/enroll.tsx";
import { UserDetailsPage, UsersPage } from "./pages/users.tsx";
import { ResolversPage } from "./pages/resolvers.tsx";
import { RealmsPage } from "./pages/realms.tsx";
import { PoliciesPage, PolicyEditPage } from "./pages/policies.tsx";
import { EventEditPage, EventsPage } from "./pages/events.tsx";
import { MachinesPage } from "./pages/machines.tsx";
import { PrivacyideaServersPage, RadiusPage, SmtpPage } from "./pages/servers.tsx";
import { ImportPage } from "./pages/import.tsx";
import { PeriodicTasksPage } from "./pages/periodic_tasks.tsx";
import { SmsGatewaysPage } from "./pages/sms.tsx";
import { StatisticsPage } from "./pages/statistics.tsx";
import { ServiceIdsPage } from "./pages/service_ids.tsx";
import { CaConnectorsPage } from "./pages/ca_connectors.tsx";
import { TokenGroupsPage } from "./pages/token_groups.tsx";
import { ContainerDetailsPage, ContainersPage } from "./pages/containers.tsx";
import { SubscriptionsPage } from "./pages/subscriptions.tsx";
import { AuditPage } from "./pages/audit.tsx";
import { SystemPage } from "./pages/system.tsx";
import { MyDetailsPage, SelfServicePage, USER_PAGES } from "./pages/self_service.tsx";
import { ContainerWizardPage } from "./pages/container_wizard.tsx";
import { ContainerTemplatesPage } from "./pages/container_templates.tsx";

/** An admin page: its route, its menu label and the rights that show it. */
interface AdminPage {
  path: string;
  label: string;
  /** Shown when the admin holds any of these rights (empty: every admin). */
  rights: string[];
}

const ADMIN_PAGES: AdminPage[] = [
  { path: "dashboard", label: "Dashboard", rights: [] },
  { path: "tokens", label: "Tokens", rights: ["tokenlist"] },
  { path: "tokengroups", label: "Token groups", rights: ["tokengroup_list"] },
  { path: "containers", label: "Containers", rights: ["container_list"] },
  {
    path: "containertemplates",
    label: "Container templates",
    rights: ["container_template_list"],
  },
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
  { path: "serviceids", label: "Service IDs", rights: ["serviceid_list"] },
  { path: "caconnectors", label: "CA connectors", rights: ["caconnectorread"] },
  { path: "radius", label: "RADIUS servers", rights: ["radiusserver_read"] },
  { path: "smtp", label: "SMTP servers", rights: ["smtpserver_read"] },
  { path: "sms", label: "SMS gateways", rights: ["smsgateway_read"] },
  { path: "privacyidea", label: "privacyIDEA servers", rights: ["privacyideaserver_read"] },
  { path: "periodic", label: "Periodic tasks", rights: ["periodictask_read"] },
  { path: "statistics", label: "Statistics", rights: ["statistics_read"] },
  { path: "subscriptions", label: "Subscriptions", rights: ["managesubscription"] },
  { path: "audit", label: "Audit log", rights: ["auditlog"] },
  { path: "system", label: "System", rights: ["configread"] },
];

function allowedPages(s: Session): AdminPage[] {
  return ADMIN_PAGES.filter((p) => p.rights.length === 0 || p.rights.some((r) => hasRight(s, r)));
}

function userPages(s: Session) {
  // the container wizard is the only page until the user has a container (privacyIDEA's too)
  if (s.settings.containerWizard) return [];
  return USER_PAGES.filter((p) => p.rights.length === 0 || p.rights.some((r) => hasRight(s, r)));
}

/** The self-service pages: those the user's policies allow. */
function UserRoutes(props: { route: Route; session: Session }) {
  const wizard = props.session.settings.containerWizard;
  if (wizard) return <ContainerWizardPage wizard={wizard} />;
  const first = props.route.parts[0] ?? "";
  if (first === "" || first === "enrol") return <SelfServicePage />;
  if (!userPages(props.session).some((p) => p.path === first)) {
    return <p class="error" role="alert">You are not allowed to see this page.</p>;
  }
  if (first === "details") return <MyDetailsPage />;
  if (first === "containers") {
    const serial = props.route.parts[1];
    return serial ? <ContainerDetailsPage serial={serial} /> : <ContainersPage />;
  }
  return <AuditPage title="My audit log" />;
}

function AdminRoutes(props: { route: Route; session: Session }) {
  const { parts } = props.route;
  const pages = allowedPages(props.session);
  const first = parts[0] ?? pages[0]?.path ?? "realms";
  if (!pages.some((p) => p.path === first) && first !== "enroll" && first !== "import") {
    return <p class="error" role="alert">You are not allowed to see this page.</p>;
  }
  switch (first) {
    case "dashboard":
      return <DashboardPage />;
    case "tokens":
      return parts[1]
        ? <TokenDetailsPage serial={parts[1]} />
        : <TokensPage key={props.route.query.toString()} route={props.route} />;
    case "tokengroups":
      return <TokenGroupsPage />;
    case "containers":
      return parts[1] ? <ContainerDetailsPage serial={parts[1]} /> : <ContainersPage />;
    case "containertemplates":
      return <ContainerTemplatesPage />;
    case "enroll":
      return <EnrollPage route={props.route} />;
    case "import":
      return <ImportPage />;
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
    case "serviceids":
      return <ServiceIdsPage />;
    case "caconnectors":
      return <CaConnectorsPage />;
    case "radius":
      return <RadiusPage />;
    case "smtp":
      return <SmtpPage />;
    case "sms":
      return <SmsGatewaysPage />;
    case "privacyidea":
      return <PrivacyideaServersPage />;
    case "periodic":
      return <PeriodicTasksPage />;
    case "statistics":
      return <StatisticsPage />;
    case "subscriptions":
      return <SubscriptionsPage />;
    case "audit":
      return <AuditPage />;
    case "system":
      return <SystemPage />;
  }
  return <p class="error" role="alert">There is no page "{first}".</p>;
}

/**
 * Calls `onIdle` once the person at the screen has done nothing (no key, pointer, wheel or
 * touch) for `seconds` (policy logout_time).
 */
function useIdle(seconds: number, onIdle: () => void, isActive: boolean) {
  const idle = useRef(onIdle);
  idle.current = onIdle;
  useEffect(() => {
    if (!isActive) return;
    let last = Date.now();
    let timer: ReturnType<typeof setTimeout>;
    const check = () => {
      const left = last + seconds * 1000 - Date.now();
      if (left <= 0) idle.current();
      else timer = setTimeout(check, left);
    };
    const seen = () => {
      last = Date.now();
    };
    const events = ["keydown", "pointerdown", "pointermove", "wheel", "touchstart"];
    for (const e of events) addEventListener(e, seen, { passive: true, capture: true });
    timer = setTimeout(check, seconds * 1000);
    return () => {
      clearTimeout(timer);
      for (const e of events) removeEventListener(e, seen, { capture: true });
    };
  }, [seconds, isActive]);
}

/**
 * The lock screen of policy timeout_action=lockscreen: the session's JWT is dropped, and the
 * same user's password gets a new one; the page underneath keeps its state.
 */
function LockScreen(
  props: {
    session: Session;
    onUnlock: (s: Session, answer: Record<string, unknown>) => void;
    onLogout: () => void;
  },
) {
  const ref = useRef<HTMLDialogElement>(null);
  const [password, setPassword] = useState("");
  const action = useAction();
  const s = props.session;
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      class="lock"
      aria-label="Session locked"
      // Escape does not lift the lock
      onCancel={(e) => e.preventDefault()}
      onKeyDown={trapTab}
    >
      <h2>Session locked</h2>
      <p>
        You did nothing for {s.settings.logoutTime} seconds. Enter the password of{" "}
        <strong>{s.username}{s.realm ? `@${s.realm}` : ""}</strong> to go on where you were.
      </p>
      <Form
        label="Unlock"
        onSubmit={() =>
          action.run(async () => {
            const { value } = await api<Record<string, unknown>>("POST", "/auth", {
              username: s.username,
              password,
              ...(s.realm ? { realm: s.realm } : {}),
            });
            const next = sessionOf(String(value.token), settingsOf(value));
            if (!next) throw new Error("The server answered without a readable token");
            props.onUnlock(next, value);
          })}
      >
        <Field
          label="Password"
          type="password"
          value={password}
          onValue={setPassword}
          autoComplete="current-password"
          required
          autoFocus
        />
        <div class="actions">
          <button type="submit" class="primary" disabled={action.busy}>Unlock</button>
          <button type="button" onClick={props.onLogout}>Log out</button>
        </div>
        <Outcome error={action.error} />
      </Form>
    </dialog>
  );
}

/** A welcome for an admin after the login (hidden by policy hide_welcome_info). */
function Welcome(props: { onClose: () => void }) {
  return (
    <section class="panel welcome" aria-label="Welcome">
      <p>
        Welcome to Tessera. Users come from <a href={href(["resolvers"])}>resolvers</a>, grouped in
        {" "}
        <a href={href(["realms"])}>realms</a>; <a href={href(["policies"])}>policies</a>{" "}
        decide what admins and users may do; then enrol tokens for your users.
      </p>
      <button type="button" onClick={props.onClose}>Close the welcome</button>
    </section>
  );
}

/** The dialog of policy dialog_no_token: a user without tokens is offered the enrolment. */
function NoTokenDialog(props: { onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog ref={ref} aria-label="You have no token" onClose={props.onClose} onKeyDown={trapTab}>
      <h2>You have no token</h2>
      <p>To log in with a second factor you need a token. Enrol one now.</p>
      <div class="actions">
        <button
          type="button"
          class="primary"
          onClick={() => {
            props.onClose();
            go(["enrol"]);
          }}
        >
          Enrol a token
        </button>
        <button type="button" onClick={props.onClose}>Not now</button>
      </div>
    </dialog>
  );
}

function Shell(
  props: {
    session: Session;
    logout: () => void;
    focusOnStart: boolean;
    privacyLink: string;
  },
) {
  const route = useRoute();
  const s = props.session;
  const current = route.parts[0];
  const pages = s.role === "admin" ? allowedPages(s) : [];
  const path = route.parts.join("/");
  const started = useRef(false);
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  // shown after a login (not after a reload), until closed or the page changes
  const [welcome, setWelcome] = useState(
    props.focusOnStart && s.role === "admin" && !s.settings.hideWelcome,
  );
  const [noToken, setNoToken] = useState(
    props.focusOnStart && s.role === "user" && s.settings.dialogNoToken &&
      !s.settings.containerWizard,
  );
  useFocusRescue();
  useEffect(() => {
    setMenuOpen(false);
    if (started.current) setWelcome(false);
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
        {s.settings.node && (
          <span class="node" title="The node that answers">{s.settings.node}</span>
        )}
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
            : userPages(s).map((p) => (
              <a
                key={p.path}
                href={p.path ? href([p.path]) : "#/"}
                aria-current={(current ?? "") === p.path ||
                    (p.path === "" && current === "enrol")
                  ? "page"
                  : undefined}
              >
                {p.label}
              </a>
            ))}
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
        {welcome && (
          <Welcome
            onClose={() => {
              setWelcome(false);
              focusHeading();
            }}
          />
        )}
        {s.role === "admin"
          ? <AdminRoutes route={route} session={s} />
          : <UserRoutes route={route} session={s} />}
        {noToken && <NoTokenDialog onClose={() => setNoToken(false)} />}
      </main>
      {props.privacyLink && (
        <footer class="baseline">
          <PrivacyLink href={props.privacyLink} />
        </footer>
      )}
    </SessionContext.Provider>
  );
}

function App() {
  const [session, setSession] = useState<Session | undefined>(() => {
    const token = storedToken();
    const s = token ? sessionOf(token, storedSettings()) : undefined;
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
  const [isLocked, setLocked] = useState(false);
  // the login page's configuration (GET /config): login text, realms, privacy statement
  const [config, setConfig] = useState<LoginPageConfig | undefined>(undefined);
  const [configError, setConfigError] = useState<string | undefined>(undefined);
  useEffect(() => {
    get<LoginPageConfig>("/config").then(setConfig, (err) => setConfigError(messageOf(err)));
  }, []);

  function end(message?: string) {
    const redirect = session?.settings.logoutRedirect ?? "";
    storeToken(undefined);
    setApiToken(undefined);
    setSession(undefined);
    setLocked(false);
    setNotice(message);
    // policy logout_redirect: e.g. the single sign-on's logout
    if (redirect) location.assign(redirect);
  }

  function lock() {
    // the JWT goes: nothing can be done, and a reload asks for a login
    storeToken(undefined);
    setApiToken(undefined);
    setLocked(true);
  }

  function idle() {
    if (!session) return;
    const seconds = session.settings.logoutTime;
    if (session.settings.timeoutAction === "logout") {
      end(`You were logged out after ${seconds} seconds without activity.`);
    } else lock();
  }

  useIdle(session?.settings.logoutTime ?? 0, idle, session !== undefined && !isLocked);

  useEffect(() => {
    if (!session || isLocked) return;
    onSessionEnded((m) => end(m));
    // the session ends with its JWT, and says so
    const ms = Math.max(0, session.exp * 1000 - Date.now());
    const timer = setTimeout(() => end("Your session has expired. Please log in again."), ms);
    return () => clearTimeout(timer);
  }, [session, isLocked]);

  function start(s: Session, answer: Record<string, unknown>) {
    storeToken(s.token, answer);
    setApiToken(s.token);
    setNotice(undefined);
    setSession(s);
  }

  if (!session) {
    return (
      <LoginPage
        notice={notice}
        config={config}
        configError={configError}
        onLogin={(s, answer) => {
          setLoggedInHere(true);
          start(s, answer);
        }}
      />
    );
  }
  return (
    <>
      <Shell
        session={session}
        logout={() => end("You have logged out.")}
        focusOnStart={loggedInHere}
        privacyLink={config?.gdpr_link ?? ""}
      />
      {
        // a modal dialog: the page underneath can be neither reached nor read out
        isLocked && (
          <LockScreen
            session={session}
            onUnlock={(s, answer) => {
              setLocked(false);
              start(s, answer);
            }}
            onLogout={() => end("You have logged out.")}
          />
        )
      }
    </>
  );
}

render(<App />, document.getElementById("app")!);
