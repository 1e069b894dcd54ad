/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * The login form: `POST /auth` with the realm password (admins and users), shaped by the login
 * page's configuration (`GET /config`: the webui policies login_text, realm_dropdown,
 * privacy_statement_link and remote_user).
 *
 * @module
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api.ts";
import { safeUrl, type Session, sessionOf, settingsOf } from "../session.ts";
import { Field, Form, Outcome, Select, useAction } from "../ui.tsx";

/** What the login page reads of `GET /config`. */
export interface LoginPageConfig {
  login_text: string;
  /** Realms of the realm dropdown, comma separated; "" for a free realm field. */
  realms: string;
  gdpr_link: string;
  /** The user the web server in front authenticated, when policy remote_user allows it. */
  remote_user: string;
  force_remote_user: boolean;
}

/** The link to the privacy statement (policy privacy_statement_link); http(s) addresses only. */
export function PrivacyLink(props: { href: string }) {
  const url = safeUrl(props.href);
  if (!url) return null;
  return <a href={url} rel="noopener noreferrer">Privacy statement</a>;
}

/** The login page; `notice` says why the last session ended. */
export function LoginPage(
  props: {
    notice?: string;
    config?: LoginPageConfig;
    configError?: string;
    onLogin: (s: Session, answer: Record<string, unknown>) => void;
  },
) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [realm, setRealm] = useState("");
  const action = useAction();
  const config = props.config;
  const realms = (config?.realms ?? "").split(",").map((r) => r.trim()).filter((r) => r !== "");
  const remoteUser = config?.remote_user ?? "";
  const forced = useRef(false);
  useEffect(() => {
    document.title = "Log in · Tessera";
  }, []);
  // with a realm dropdown the first realm is chosen, as in privacyIDEA
  useEffect(() => {
    if (realms.length > 0 && !realms.includes(realm)) setRealm(realms[0]);
  }, [config?.realms]);

  function logIn(params: Record<string, unknown>) {
    action.run(async () => {
      const { value } = await api<Record<string, unknown>>("POST", "/auth", params);
      const s = sessionOf(String(value.token), settingsOf(value));
      if (!s) throw new Error("The server answered without a readable token");
      props.onLogin(s, value);
    });
  }

  function submit() {
    logIn({ username, password, ...(realm ? { realm } : {}) });
  }

  // policy remote_user=force: the web server in front vouches for the user, log in at once
  useEffect(() => {
    if (!remoteUser || !config?.force_remote_user || forced.current || props.notice) return;
    forced.current = true;
    logIn({ username: remoteUser });
  }, [remoteUser, config?.force_remote_user]);

  return (
    <main id="main" class="login">
      <h1>Tessera</h1>
      <p class="muted" data-testid="login-text">
        {config?.login_text || "Multi-factor authentication server"}
      </p>
      {props.notice && <p class="notice" role="status">{props.notice}</p>}
      {props.configError && (
        <p class="error" role="alert">
          Cannot read the login page's configuration: {props.configError}
        </p>
      )}
      {remoteUser && (
        <Form onSubmit={() => logIn({ username: remoteUser })} label="Log in as the known user">
          <p>The web server in front of Tessera knows you as {remoteUser}.</p>
          <button type="submit" class="primary" disabled={action.busy}>
            Log in as {remoteUser}
          </button>
        </Form>
      )}
      <Form onSubmit={submit} label="Log in">
        <Field
          label="Username"
          value={username}
          onValue={setUsername}
          autoComplete="username"
          required
          autoFocus
        />
        <Field
          label="Password"
          type="password"
          value={password}
          onValue={setPassword}
          autoComplete="current-password"
          required
        />
        {realms.length > 0
          ? <Select label="Realm" value={realm} onValue={setRealm} options={realms} />
          : (
            <Field
              label="Realm"
              value={realm}
              onValue={setRealm}
              hint="Optional: users may also log in as name@realm"
            />
          )}
        <button type="submit" class="primary" disabled={action.busy}>Log in</button>
        <Outcome error={action.error} />
      </Form>
      {config?.gdpr_link && (
        <p class="baseline">
          <PrivacyLink href={config.gdpr_link} />
        </p>
      )}
    </main>
  );
}
