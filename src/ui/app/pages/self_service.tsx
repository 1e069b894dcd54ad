/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * A user's self-service: exactly what their user policies allow (the rights list of `/auth`):
 * their tokens with the allowed actions, enrolling, their own details, and the audit rows about
 * them.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api, get } from "../api.ts";
import { canEnrollAny, hasRight, useSession } from "../session.ts";
import {
  Field,
  Form,
  go,
  LoadState,
  Outcome,
  Page,
  Panel,
  useAction,
  useLoad,
  useRoute,
  yesNo,
} from "../ui.tsx";
import { EnrollForm } from "./enroll.tsx";
import { stateText, TokenActions, type TokenList } from "./tokens.tsx";

/** A self-service page: its route, its menu label and the rights that show it. */
export interface UserPage {
  path: string;
  label: string;
  /** Shown when the user holds any of these rights (empty: always). */
  rights: string[];
}

/** The user's pages; each shows only with one of its rights. */
export const USER_PAGES: UserPage[] = [
  { path: "", label: "My tokens", rights: [] },
  { path: "details", label: "My details", rights: ["userlist", "updateuser"] },
  { path: "containers", label: "My containers", rights: ["container_list"] },
  { path: "audit", label: "My audit log", rights: ["auditlog"] },
];

/** `#/` for a user. */
export function SelfServicePage() {
  const { session } = useSession();
  const tokens = useLoad(() => get<TokenList>("/token/"), []);
  const route = useRoute();
  const canEnroll = canEnrollAny(session);
  // `#/enrol` opens the enrolment (the no-token dialog leads there)
  const [enrolling, setEnrolling] = useState(false);
  useEffect(() => {
    if (route.parts[0] !== "enrol") return;
    if (canEnroll) setEnrolling(true);
    go([]);
  }, [route.parts[0]]);
  const list = tokens.data?.tokens ?? [];
  return (
    <Page
      title="My tokens"
      actions={canEnroll && !enrolling && (
        <button
          type="button"
          class="primary"
          onClick={() => setEnrolling(true)}
        >
          Enrol a new token
        </button>
      )}
    >
      {enrolling && (
        <Panel title="Enrol a new token">
          <EnrollForm self onEnrolled={tokens.reload} />
          <button type="button" onClick={() => setEnrolling(false)}>Close enrolment</button>
        </Panel>
      )}
      <LoadState error={tokens.error} loading={tokens.loading && !tokens.data} />
      {tokens.data && list.length === 0 && <p class="muted">You have no token yet.</p>}
      {list.map((t) => (
        <article class="panel token" key={t.serial} aria-label={`Token ${t.serial}`}>
          <h2>{t.serial}</h2>
          <p>
            {t.tokentype.toUpperCase()} · {stateText(t)}
            {t.description ? ` · ${t.description}` : ""} · fail counter {t.failcount} of {t.maxfail}
            {t.rollout_state && t.rollout_state !== "enrolled" ? ` · ${t.rollout_state}` : ""}
            <span class="sr-only">Active: {yesNo(t.active)}</span>
          </p>
          <TokenActions token={t} onChanged={tokens.reload} onDeleted={tokens.reload} />
        </article>
      ))}
    </Page>
  );
}

/** The user as `GET /user/` lists them. */
interface Me {
  username: string;
  givenname?: string;
  surname?: string;
  email?: string;
  phone?: string;
  mobile?: string;
  resolver?: string;
  editable?: boolean;
}

const ATTRIBUTES: [keyof Me, string][] = [
  ["givenname", "Given name"],
  ["surname", "Surname"],
  ["email", "Email"],
  ["phone", "Phone"],
  ["mobile", "Mobile"],
];

/** `#/details`: the user's own attributes (userlist), changed where updateuser allows. */
export function MyDetailsPage() {
  const { session } = useSession();
  const canRead = hasRight(session, "userlist");
  const canUpdate = hasRight(session, "updateuser");
  const me = useLoad(
    () => canRead ? get<Me[]>("/user/").then((list) => list[0]) : Promise.resolve(undefined),
    [],
  );
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [password, setPassword] = useState("");
  const act = useAction();
  const u = me.data;
  const value = (k: string) => edits[k] ?? String(u?.[k as keyof Me] ?? "");
  return (
    <Page title="My details">
      <LoadState error={me.error} loading={me.loading && canRead} />
      {canRead && u && !canUpdate && (
        <Panel title="Details">
          <dl class="details">
            <dt>Username</dt>
            <dd>{u.username}@{session.realm}</dd>
            {ATTRIBUTES.map(([k, label]) => (
              <>
                <dt key={`k${k}`}>{label}</dt>
                <dd key={`v${k}`}>{String(u[k] ?? "") || <span class="muted">none</span>}</dd>
              </>
            ))}
          </dl>
        </Panel>
      )}
      {canUpdate && (!canRead || u) && (
        <Panel title="Change my details">
          <Form
            label="My details"
            onSubmit={() =>
              act.run(async () => {
                const params: Record<string, unknown> = {};
                for (const [k, v] of Object.entries(edits)) {
                  if (v !== String(u?.[k as keyof Me] ?? "")) params[k] = v;
                }
                if (password) params.password = password;
                if (Object.keys(params).length === 0) return "Nothing changed: nothing was saved";
                await api("PUT", "/user/", params);
                setPassword("");
                setEdits({});
                me.reload();
                return "Your details are saved";
              })}
          >
            {!canRead && <p class="muted">Fields left empty stay as they are.</p>}
            {ATTRIBUTES.map(([k, label]) => (
              <Field
                key={k}
                label={label}
                type={k === "email" ? "email" : "text"}
                value={value(k)}
                onValue={(v) => setEdits({ ...edits, [k]: v })}
              />
            ))}
            <Field
              label="New password"
              type="password"
              value={password}
              onValue={setPassword}
              autoComplete="new-password"
              hint="Empty: the password stays as it is"
            />
            <button type="submit" class="primary" disabled={act.busy}>Save my details</button>
            <Outcome error={act.error} note={act.note} />
          </Form>
        </Panel>
      )}
    </Page>
  );
}
