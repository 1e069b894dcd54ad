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
  announce,
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
  useLiveSearch,
  useLoad,
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
  user_id: string;
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

/**
 * What a token can do now, as `GET /token/?state=` filters it: a token whose
 * fail counter is at its maximum is locked (every check fails until a reset),
 * however enabled it is.
 */
export type TokenState = "active" | "locked" | "disabled" | "revoked";

/** The state of a token (see {@link TokenState}). */
export function tokenState(t: Token): TokenState {
  if (t.revoked) return "revoked";
  if (!t.active) return "disabled";
  return t.failcount >= t.maxfail ? "locked" : "active";
}

/** The state in words: a disabled token at its maximum says it is locked too. */
export function stateText(t: Token): string {
  const state = tokenState(t);
  return state === "disabled" && t.failcount >= t.maxfail ? "disabled, locked" : state;
}

/** A sortable column: `sortby` of `GET /token/` and its heading. */
type SortKey = "serial" | "tokentype" | "state" | "failcount";

/** The token list's order. */
export interface TokenSort {
  by: SortKey;
  desc: boolean;
}

function SortHeading(
  props: { label: string; by: SortKey; sort?: TokenSort; onSort?: (s: TokenSort) => void },
) {
  const { sort, onSort } = props;
  if (!sort || !onSort) return <th scope="col">{props.label}</th>;
  const current = sort.by === props.by;
  return (
    <th
      scope="col"
      aria-sort={current ? (sort.desc ? "descending" : "ascending") : undefined}
    >
      <button
        type="button"
        class="sort"
        onClick={() => onSort({ by: props.by, desc: current ? !sort.desc : false })}
      >
        {props.label}
        <span aria-hidden="true">{current ? (sort.desc ? " ▼" : " ▲") : ""}</span>
      </button>
    </th>
  );
}

function TokenTable(
  props: {
    tokens: Token[];
    showOwner?: boolean;
    link?: boolean;
    sort?: TokenSort;
    onSort?: (s: TokenSort) => void;
  },
) {
  const { session } = useSession();
  // policy user_details: the owner's user id and resolver too
  const details = props.showOwner && session.settings.userDetails;
  const heading = (label: string, by: SortKey) => (
    <SortHeading label={label} by={by} sort={props.sort} onSort={props.onSort} />
  );
  return (
    <table class={props.sort ? "sortable" : undefined}>
      <thead>
        <tr>
          {heading("Serial", "serial")}
          {heading("Type", "tokentype")}
          {heading("State", "state")}
          <th scope="col">Description</th>
          {heading("Fail counter", "failcount")}
          {props.showOwner && <th scope="col">User</th>}
          {details && <th scope="col">User ID</th>}
          {details && <th scope="col">Resolver</th>}
          {props.showOwner && <th scope="col">Realms</th>}
        </tr>
      </thead>
      <tbody>
        {props.tokens.map((t) => (
          <tr key={t.serial}>
            <td>{props.link ? <a href={href(["tokens", t.serial])}>{t.serial}</a> : t.serial}</td>
            <td data-label="Type">{t.tokentype}</td>
            <td data-label="State" class={`state-${tokenState(t)}`}>{stateText(t)}</td>
            <td data-label="Description">{t.description}</td>
            <td data-label="Fail counter">{t.failcount} / {t.maxfail}</td>
            {props.showOwner && (
              <td data-label="User">
                {t.username ? `${t.username}@${t.user_realm}` : <span class="muted">none</span>}
              </td>
            )}
            {details && <td data-label="User ID">{t.user_id}</td>}
            {details && <td data-label="Resolver">{t.resolver}</td>}
            {props.showOwner && <td data-label="Realms">{t.realms.join(", ")}</td>}
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
  const [state, setState] = useState("");
  const [page, setPage] = useState(1);
  const [query, setQuery] = useState<Record<string, unknown>>({});
  const [sort, setSort] = useState<TokenSort>({ by: "serial", desc: false });
  const pageSize = session.settings.tokenPageSize;
  const list = useLoad(
    () =>
      get<TokenList>("/token/", {
        ...query,
        sortby: sort.by,
        sortdir: sort.desc ? "desc" : "asc",
        page,
        pagesize: pageSize,
      }),
    [query, page, sort],
  );
  const canEnroll = [...session.rights].some((r) => r.startsWith("enroll"));
  function search() {
    setPage(1);
    setQuery({
      serial: pattern(serial),
      description: pattern(description),
      type,
      user: user.trim(),
      realm: user.trim() ? realm.trim() : "",
      tokenrealm: user.trim() ? "" : realm.trim(),
      assigned,
      state,
    });
  }
  useLiveSearch(!session.settings.searchOnEnter, search, [
    serial,
    description,
    type,
    user,
    realm,
    assigned,
    state,
  ]);
  return (
    <Page
      title="Tokens"
      actions={canEnroll && <a class="button primary" href={href(["enroll"])}>Enrol token</a>}
    >
      <Form label="Search tokens" class="filters" onSubmit={search}>
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
          label="State"
          value={state}
          onValue={setState}
          options={[
            ["", "any"],
            "active",
            ["locked", "locked (fail counter at maximum)"],
            "disabled",
            "revoked",
          ]}
        />
        <button type="submit">Search</button>
      </Form>
      <LoadState error={list.error} loading={list.loading && !list.data} />
      {list.data && (
        <>
          <TokenTable
            tokens={list.data.tokens}
            showOwner
            link
            sort={sort}
            onSort={(next) => {
              setPage(1);
              setSort(next);
            }}
          />
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
  // an action the policies do not allow: a disabled button, or none with policy hide_buttons
  const shows = (allowed: boolean) => allowed || !session.settings.hideButtons;
  const NOT_ALLOWED = "Your policies do not allow this";
  const canToggle = t.active ? can("disable") : can("enable");
  const post = (path: string, params: Record<string, unknown>, note: string) =>
    act.run(async () => {
      await api("POST", path, { ...serial, ...params });
      props.onChanged();
    }, note);
  return (
    <div class="token-actions">
      <div class="actions" role="group" aria-label={`Actions on ${t.serial}`}>
        {
          // one button that changes its label, so it keeps the focus it was pressed with; a
          // revoked token cannot be enabled again
          (t.active || !t.revoked) && shows(canToggle) && (
            <button
              type="button"
              disabled={!canToggle}
              title={canToggle ? undefined : NOT_ALLOWED}
              onClick={() =>
                t.active
                  ? post("/token/disable", {}, "Token disabled")
                  : post("/token/enable", {}, "Token enabled")}
            >
              {t.active ? "Disable" : "Enable"}
            </button>
          )
        }
        {shows(can("reset")) && (
          <button
            type="button"
            disabled={!can("reset")}
            title={can("reset") ? undefined : NOT_ALLOWED}
            onClick={() => post("/token/reset", {}, "Fail counter reset")}
          >
            Reset fail counter
          </button>
        )}
        {!t.revoked && shows(can("revoke")) && (
          <ConfirmButton
            label="Revoke"
            question={`Revoke token ${t.serial}? A revoked token cannot be used again.`}
            onConfirm={() => post("/token/revoke", {}, "Token revoked")}
            disabled={!can("revoke")}
            title={can("revoke") ? undefined : NOT_ALLOWED}
            danger
          />
        )}
        {props.admin && t.username && shows(can("unassign")) && (
          <ConfirmButton
            label="Unassign"
            question={`Unassign token ${t.serial} from ${t.username}? Its PIN is removed.`}
            onConfirm={() => post("/token/unassign", {}, "Token unassigned")}
            disabled={!can("unassign")}
            title={can("unassign") ? undefined : NOT_ALLOWED}
          />
        )}
        {shows(can("delete")) && (
          <ConfirmButton
            label="Delete"
            disabled={!can("delete")}
            title={can("delete") ? undefined : NOT_ALLOWED}
            question={`Delete token ${t.serial}? This cannot be undone.`}
            onConfirm={() =>
              act.run(async () => {
                await api("DELETE", `/token/${seg(t.serial)}`);
                props.onDeleted();
                // the token's page or article is gone: the status line says what happened
                announce(`Token ${t.serial} deleted`);
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
                {stateText(t)}
                {t.failcount >= t.maxfail && !t.revoked && (
                  <span class="muted">
                    {" "}(the fail counter is at its maximum: every check fails until it is reset)
                  </span>
                )}
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
