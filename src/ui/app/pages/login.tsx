/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * The login form: `POST /auth` with the realm password (admins and users).
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "../api.ts";
import { type Session, sessionOf, settingsOf } from "../session.ts";
import { Field, Form, Outcome, useAction } from "../ui.tsx";

/** The login page; `notice` says why the last session ended. */
export function LoginPage(props: { notice?: string; onLogin: (s: Session) => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [realm, setRealm] = useState("");
  const action = useAction();
  useEffect(() => {
    document.title = "Log in · Tessera";
  }, []);

  function submit() {
    action.run(async () => {
      const { value } = await api<Record<string, unknown>>("POST", "/auth", {
        username,
        password,
        ...(realm ? { realm } : {}),
      });
      const s = sessionOf(String(value.token), settingsOf(value));
      if (!s) throw new Error("The server answered without a readable token");
      props.onLogin(s);
    });
  }

  return (
    <main id="main" class="login">
      <h1>Tessera</h1>
      <p class="muted">Multi-factor authentication server</p>
      {props.notice && <p class="notice" role="status">{props.notice}</p>}
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
        <Field
          label="Realm"
          value={realm}
          onValue={setRealm}
          hint="Optional: users may also log in as name@realm"
        />
        <button type="submit" class="primary" disabled={action.busy}>Log in</button>
        <Outcome error={action.error} />
      </Form>
    </main>
  );
}
