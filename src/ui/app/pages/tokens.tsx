/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Tokens: the list (search, filters, paging), a token's details and every
 * action on it that the caller's rights allow.
 *
 * @module
 */
import { useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import {
  Check,
  ConfirmButton,
  Field,
  Form,
  go,
  href,
  LoadState,
  Outcome,
  Page,
  Pager,
  Panel,
  type Route,
  Select,
  useAction,
  useLoad,
  yesNo,
} from "../ui.tsx";

/** A token as `GET /token/` lists it. */
export interface Token {
  serial: string;
  tokentype: string;
  active: boolean;
  revoked: boolean;
  locked: boolean;
  description: string;
  failcount: number;
  maxfail: number;
  count: number;
  count_window: number;
  sync_window: number;
  otplen: number;
  username: string;
  user_realm: string;
  resolver: string;
  realms: string[];
  rollout_state: string;
  info: Record<string, string>;
}

/** `GET /token/`'s value. */
export interface TokenList {
  tokens: Token[];
  count: number;
}

/** Token types known to the UI's filters and enrolment form. */
export const TOKEN_TYPES = [
  "hotp",
  "totp",
  "spass",
  "pw",
  "registration",
  "paper",
  "sshkey",
  "radius",
];

/** A search term as a pattern: `*` is the wildcard; without one, a substring. */
function pattern(text: string): string {
  const t = text.trim();
  return t === "" || t.includes("*") ? t : `*${t}*`;
}

function TokenTable(props: { tokens: Token[]; showOwner?: boolean; link?: boolean }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Serial</th>
          <th scope="col">Type</th>
          <th scope="col">Active</th>
          <th scope="col">Description</th>
          <th scope="col">Fail counter</th>
          {props.showOwner && <th scope="col">User</th>}
          {props.showOwner && <th scope="col">Realms</th>}
        </tr>
      </thead>
      <tbody>
        {props.tokens.map((t) => (
          <tr key={t.serial}>
            <td>{props.link ? <a href={href(["tokens", t.serial])}>{t.serial}</a> : t.serial}</td>
            <td>{t.tokentype}</td>
            <td>{t.revoked ? "revoked" : yesNo(t.active)}</td>
            <td>{t.description}</td>
            <td>{t.failcount} / {t.maxfail}</td>
            {props.showOwner && (
              <td>
                {t.username ? `${t.username}@${t.user_realm}` : <span class="muted">none</span>}
              </td>
            )}
            {props.showOwner && <td>{t.realms.join(", ")}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export { TokenTable };

/** `#/tokens`: the token list. */
export function TokensPage(_props: { route: Route }) {
  const { session } = useSession();
  const [serial, setSerial] = useState("");
  const [description, setDescription] = useState("");
  const [type, setType] = useState("");
  const [user, setUser] = useState("");
  const [realm, setRealm] = useState("");
  const [assigned, setAssigned] = useState("");
  const [active, setActive] = useState("");
  const [page, setPage] = useState(1);
  const [query, setQuery] = useState<Record<string, unknown>>({});
  const pageSize = session.settings.tokenPageSize;
  const list = useLoad(
    () => get<TokenList>("/token/", { ...query, page, pagesize: pageSize }),
    [query, page],
  );
  const canEnroll = [...session.rights].some((r) => r.startsWith("enroll"));
  return (
    <Page
      title="Tokens"
      actions={canEnroll && <a class="button primary" href={href(["enroll"])}>Enrol token</a>}
    >
      <Form
        label="Search tokens"
        class="filters"
        onSubmit={() => {
          setPage(1);
          setQuery({
            serial: pattern(serial),
            description: pattern(description),
            type,
            user: user.trim(),
            realm: user.trim() ? realm.trim() : "",
            tokenrealm: user.trim() ? "" : realm.trim(),
            assigned,
            active,
          });
        }}
      >
        <Field label="Serial" value={serial} onValue={setSerial} type="search" />
        <Field label="Description" value={description} onValue={setDescription} type="search" />
        <Select
          label="Type"
          value={type}
          onValue={setType}
          options={[["", "any"], ...TOKEN_TYPES]}
        />
        <Field label="User" value={user} onValue={setUser} />
        <Field label="Realm" value={realm} onValue={setRealm} />
        <Select
          label="Assigned"
          value={assigned}
          onValue={setAssigned}
          options={[["", "any"], ["1", "assigned"], ["0", "not assigned"]]}
        />
        <Select
          label="Active"
          value={active}
          onValue={setActive}
          options={[["", "any"], ["1", "active"], ["0", "disabled"]]}
        />
        <button type="submit">Search</button>
      </Form>
      <LoadState error={list.error} loading={list.loading && !list.data} />
      {list.data && (
        <>
          <TokenTable tokens={list.data.tokens} showOwner link />
          <Pager page={page} pageSize={pageSize} count={list.data.count} onPage={setPage} />
        </>
      )}
    </Page>
  );
}

/** The actions on one token the caller may take (admin and user alike). */
export function TokenActions(
  props: { token: Token; onChanged: () => void; onDeleted: () => void; admin?: boolean },
) {
  const { session } = useSession();
  const t = props.token;
  const can = (r: string) => hasRight(session, r);
  const act = useAction();
  const [pin, setPin] = useState("");
  const [otp1, setOtp1] = useState("");
  const [otp2, setOtp2] = useState("");
  const [desc, setDesc] = useState(t.description);
  const [user, setUser] = useState("");
  const [realm, setRealm] = useState("");
  const [realms, setRealms] = useState(t.realms.join(", "));
  const serial = { serial: t.serial };
  const post = (path: string, params: Record<string, unknown>, note: string) =>
    act.run(async () => {
      await api("POST", path, { ...serial, ...params });
      props.onChanged();
    }, note);
  return (
    <div class="token-actions">
      <div class="actions" role="group" aria-label={`Actions on ${t.serial}`}>
        {t.active && can("disable") && (
          <button
            type="button"
            onClick={() => post("/token/disable", {}, "Token disabled")}
          >
            Disable
          </button>
        )}
        {!t.active && !t.revoked && can("enable") && (
          <button
            type="button"
            onClick={() => post("/token/enable", {}, "Token enabled")}
          >
            Enable
          </button>
        )}
        {can("reset") && (
          <button
            type="button"
            onClick={() => post("/token/reset", {}, "Fail counter reset")}
          >
            Reset fail counter
          </button>
        )}
        {!t.revoked && can("revoke") && (
          <ConfirmButton
            label="Revoke"
            question={`Revoke token ${t.serial}? A revoked token cannot be used again.`}
            onConfirm={() => post("/token/revoke", {}, "Token revoked")}
            danger
          />
        )}
        {props.admin && t.username && can("unassign") && (
          <ConfirmButton
            label="Unassign"
            question={`Unassign token ${t.serial} from ${t.username}? Its PIN is removed.`}
            onConfirm={() => post("/token/unassign", {}, "Token unassigned")}
          />
        )}
        {can("delete") && (
          <ConfirmButton
            label="Delete"
            question={`Delete token ${t.serial}? This cannot be undone.`}
            onConfirm={() =>
              act.run(async () => {
                await api("DELETE", `/token/${seg(t.serial)}`);
                props.onDeleted();
              })}
            danger
          />
        )}
      </div>
      <Outcome error={act.error} note={act.note} />
      <div class="forms">
        {can("setpin") && (
          <Form
            label={`Set PIN of ${t.serial}`}
            onSubmit={() =>
              post("/token/setpin", { otppin: pin }, "PIN set").then(() => setPin(""))}
          >
            <Field
              label="New PIN"
              type="password"
              value={pin}
              onValue={setPin}
              autoComplete="new-password"
            />
            <button type="submit">Set PIN</button>
          </Form>
        )}
        {can("resync") && ["hotp", "totp"].includes(t.tokentype) && (
          <Form
            label={`Resynchronise ${t.serial}`}
            onSubmit={() => post("/token/resync", { otp1, otp2 }, "Token resynchronised")}
          >
            <Field label="First OTP" value={otp1} onValue={setOtp1} inputMode="numeric" />
            <Field label="Next OTP" value={otp2} onValue={setOtp2} inputMode="numeric" />
            <button type="submit">Resync</button>
          </Form>
        )}
        {can("setdescription") && (
          <Form
            label={`Description of ${t.serial}`}
            onSubmit={() => post("/token/description", { description: desc }, "Description saved")}
          >
            <Field label="Description" value={desc} onValue={setDesc} />
            <button type="submit">Save description</button>
          </Form>
        )}
        {props.admin && !t.username && can("assign") && (
          <Form
            label={`Assign ${t.serial}`}
            onSubmit={() => post("/token/assign", { user, realm }, "Token assigned")}
          >
            <Field label="User" value={user} onValue={setUser} required />
            <Field label="Realm" value={realm} onValue={setRealm} />
            <button type="submit">Assign</button>
          </Form>
        )}
        {props.admin && can("tokenrealms") && (
          <Form
            label={`Realms of ${t.serial}`}
            onSubmit={() =>
              act.run(async () => {
                await api("POST", `/token/realm/${seg(t.serial)}`, { realms });
                props.onChanged();
              }, "Token realms saved")}
          >
            <Field label="Token realms" value={realms} onValue={setRealms} hint="comma separated" />
            <button type="submit">Save realms</button>
          </Form>
        )}
      </div>
    </div>
  );
}

/** `#/tokens/<serial>`: one token. */
export function TokenDetailsPage(props: { serial: string }) {
  const load = useLoad(
    () => get<TokenList>("/token/", { serial: props.serial }),
    [props.serial],
  );
  const t = load.data?.tokens[0];
  const [showInfo, setShowInfo] = useState(false);
  return (
    <Page title={`Token ${props.serial}`} actions={<a href={href(["tokens"])}>Back to tokens</a>}>
      <LoadState error={load.error} loading={load.loading && !load.data} />
      {load.data && !t && <p class="error" role="alert">The token could not be found.</p>}
      {t && (
        <>
          <Panel title="Details">
            <dl class="details">
              <dt>Type</dt>
              <dd>{t.tokentype}</dd>
              <dt>State</dt>
              <dd data-testid="token-state">
                {t.revoked ? "revoked" : t.active ? "active" : "disabled"}
                {t.locked ? ", locked" : ""}
              </dd>
              <dt>User</dt>
              <dd>
                {t.username
                  ? (
                    <a href={href(["users", t.user_realm, t.username])}>
                      {t.username}@{t.user_realm}
                    </a>
                  )
                  : "not assigned"}
              </dd>
              <dt>Realms</dt>
              <dd>{t.realms.join(", ") || "none"}</dd>
              <dt>Description</dt>
              <dd>{t.description || "none"}</dd>
              <dt>Fail counter</dt>
              <dd>{t.failcount} of {t.maxfail}</dd>
              <dt>Counter</dt>
              <dd>{t.count}</dd>
              <dt>OTP length</dt>
              <dd>{t.otplen}</dd>
              <dt>Rollout state</dt>
              <dd>{t.rollout_state || "none"}</dd>
            </dl>
            <Check label="Show token info" checked={showInfo} onChecked={setShowInfo} />
            {showInfo && (
              <dl class="details">
                {Object.entries(t.info).map(([k, v]) => (
                  <>
                    <dt key={`k${k}`}>{k}</dt>
                    <dd key={`v${k}`}>{v}</dd>
                  </>
                ))}
              </dl>
            )}
          </Panel>
          <Panel title="Actions">
            <TokenActions
              admin
              token={t}
              onChanged={load.reload}
              onDeleted={() => go(["tokens"])}
            />
          </Panel>
        </>
      )}
    </Page>
  );
}
