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
import { canEnrollAny, hasRight, rightValue, useSession } from "../session.ts";
import { MachineTokens } from "./machines.tsx";
import { TokenGroupsPanel } from "./token_groups.tsx";
import {
  announce,
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
  /** The names of the token's groups. */
  tokengroup?: string[];
}

/** `GET /token/`'s value. */
export interface TokenList {
  tokens: Token[];
  count: number;
}

/** The token types Tessera has, for the list's type filter. */
export const TOKEN_TYPES = [
  "hotp",
  "totp",
  "spass",
  "pw",
  "registration",
  "paper",
  "tan",
  "sshkey",
  "radius",
  "email",
  "sms",
  "indexedsecret",
  "question",
  "daypassword",
  "webauthn",
  "passkey",
  "yubikey",
  "yubico",
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

/** `#/tokens`: the token list; `?state=locked`, `?type=hotp` (the dashboard's links) filter it. */
export function TokensPage(props: { route: Route }) {
  const { session } = useSession();
  const startState = props.route.query.get("state") ?? "";
  const startType = props.route.query.get("type") ?? "";
  const [serial, setSerial] = useState("");
  const [description, setDescription] = useState("");
  const [type, setType] = useState(startType);
  const [user, setUser] = useState("");
  const [realm, setRealm] = useState("");
  const [assigned, setAssigned] = useState("");
  const [state, setState] = useState(startState);
  const [page, setPage] = useState(1);
  const [query, setQuery] = useState<Record<string, unknown>>({
    state: startState,
    type: startType,
  });
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
  const canEnroll = canEnrollAny(session);
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
      actions={
        <>
          {canEnroll && <a class="button primary" href={href(["enroll"])}>Enrol token</a>}
          {hasRight(session, "importtokens") && (
            <a class="button" href={href(["import"])}>Import tokens</a>
          )}
        </>
      }
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
      {list.data && list.data.count === 0 && (
        <p class="muted" data-testid="empty-list">
          {Object.values(query).some((v) => v !== undefined && v !== "")
            ? "No token matches the search."
            : "There is no token yet."}
          {canEnroll && (
            <>
              {" "}
              <a href={href(["enroll"])}>Enrol a token</a>
            </>
          )}
        </p>
      )}
      {list.data && list.data.count > 0 && (
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

/** What `POST /token/lost/<serial>` answers. */
interface LostToken {
  serial: string;
  password: string;
  end_date: string;
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
  const [lost, setLost] = useState<LostToken | undefined>(undefined);
  const [randomPin, setRandomPin] = useState("");
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
        {t.username && (props.admin ? shows(can("unassign")) : can("unassign")) && (
          <ConfirmButton
            label="Unassign"
            question={`Unassign token ${t.serial} from ${t.username}? Its PIN is removed.`}
            onConfirm={() => post("/token/unassign", {}, "Token unassigned")}
            disabled={!can("unassign")}
            title={can("unassign") ? undefined : NOT_ALLOWED}
          />
        )}
        {t.username && !t.revoked && can("losttoken") && (
          <ConfirmButton
            label="Lost token"
            question={`Mark token ${t.serial} as lost? It is disabled, and a temporary password ` +
              `token replaces it for a few days.`}
            confirmLabel="Mark as lost"
            onConfirm={() =>
              act.run(async () => {
                const r = await api<LostToken>("POST", `/token/lost/${seg(t.serial)}`);
                setLost(r.value);
                props.onChanged();
              })}
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
      {lost && (
        <div class="notice" role="status" data-testid="lost-token">
          <p>
            Token {t.serial} is marked as lost. Until {lost.end_date}{" "}
            its owner logs in with the temporary token <strong>{lost.serial}</strong>{" "}
            and the password <code class="secret">{lost.password}</code>{" "}
            (shown only now; the PIN stays the same).
          </p>
        </div>
      )}
      <div class="forms">
        {
          // the server needs the PIN's length (otp_pin_set_random) besides the right
          can("setrandompin") && rightValue(session, "otp_pin_set_random") !== undefined && (
            <div class="actions">
              <button
                type="button"
                disabled={act.busy}
                onClick={() =>
                  act.run(async () => {
                    const r = await api<number>("POST", "/token/setrandompin", serial);
                    setRandomPin(typeof r.detail?.pin === "string" ? r.detail.pin : "");
                    props.onChanged();
                  }, "A random PIN is set")}
              >
                Set a random PIN
              </button>
              {randomPin && (
                <p role="status">
                  The new PIN is <code class="secret" data-testid="random-pin">{randomPin}</code>
                  {" "}
                  (shown only now).
                </p>
              )}
            </div>
          )
        }
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

/** An open challenge as `GET /token/challenges/<serial>` lists it. */
interface Challenge {
  id: number;
  transaction_id: string;
  timestamp: string;
  expiration: string;
  otp_received: boolean;
  valid: boolean;
}

/** What a test check said. */
interface CheckResult {
  kind: "accept" | "reject" | "challenge";
  text: string;
}

/**
 * Checks a value of the token with `POST /validate/check` and the serial, exactly as a client
 * would: it changes what a check changes (counter, fail counter, challenges) and nothing else.
 */
function TestToken(props: { token: Token; onChecked: () => void }) {
  const t = props.token;
  const [pass, setPass] = useState("");
  const [transaction, setTransaction] = useState<string | undefined>(undefined);
  const [result, setResult] = useState<CheckResult | undefined>(undefined);
  const act = useAction();
  return (
    <Panel title="Test the token">
      <Form
        label={`Test token ${t.serial}`}
        onSubmit={() =>
          act.run(async () => {
            setResult(undefined);
            const params: Record<string, unknown> = { serial: t.serial, pass };
            if (transaction) params.transaction_id = transaction;
            const r = await api<boolean>("POST", "/validate/check", params);
            const message = typeof r.detail?.message === "string" ? r.detail.message : "";
            setPass("");
            if (r.authentication === "CHALLENGE" || (!r.value && r.detail?.transaction_id)) {
              setTransaction(String(r.detail.transaction_id));
              setResult({
                kind: "challenge",
                text: `Challenge triggered: ${message || "answer it with the next value"}`,
              });
            } else {
              setTransaction(undefined);
              setResult(
                r.value === true
                  ? {
                    kind: "accept",
                    text: `Accepted: the value is right${message ? ` (${message})` : ""}`,
                  }
                  : { kind: "reject", text: `Rejected: ${message || "wrong value"}` },
              );
            }
            props.onChecked();
          })}
      >
        <Field
          label={transaction ? "Answer to the challenge" : "PIN and OTP value"}
          type="password"
          value={pass}
          onValue={setPass}
          autoComplete="off"
          hint="The PIN (if the token has one) followed by the value the token shows. This is a real check: the counters and the fail counter change as for any login."
        />
        <button type="submit" class="primary" disabled={act.busy}>Check</button>
      </Form>
      <p
        role="status"
        data-testid="test-result"
        class={result
          ? (result.kind === "accept" ? "note" : result.kind === "reject" ? "error" : "notice")
          : "announcement"}
      >
        {result?.text ?? ""}
      </p>
      <Outcome error={act.error} />
    </Panel>
  );
}

/** Integer settings of `/token/set` and where the list shows their values. */
const SET_FIELDS: { key: string; label: string; help: string; of: (t: Token) => string }[] = [
  {
    key: "max_failcount",
    label: "Maximum fail counter",
    help: "Failed checks after which the token is locked.",
    of: (t) => String(t.maxfail),
  },
  {
    key: "count_window",
    label: "Count window",
    help: "How many values ahead a check looks (HOTP).",
    of: (t) => String(t.count_window),
  },
  {
    key: "sync_window",
    label: "Sync window",
    help: "How many values ahead a resynchronisation looks.",
    of: (t) => String(t.sync_window),
  },
  {
    key: "count_auth_max",
    label: "Most authentications",
    help: "Checks the token may answer at all (empty or 0: no limit).",
    of: (t) => t.info.count_auth_max ?? "",
  },
  {
    key: "count_auth_success_max",
    label: "Most successful authentications",
    help: "Successful checks the token may answer (empty or 0: no limit).",
    of: (t) => t.info.count_auth_success_max ?? "",
  },
];

/** `/token/set`: the token's limits and validity period. */
function TokenSettings(props: { token: Token; onChanged: () => void }) {
  const t = props.token;
  const initial: Record<string, string> = Object.fromEntries(
    SET_FIELDS.map((f) => [f.key, f.of(t)]),
  );
  initial.validity_period_start = t.info.validity_period_start ?? "";
  initial.validity_period_end = t.info.validity_period_end ?? "";
  const [values, setValues] = useState(initial);
  const act = useAction();
  const set = (k: string) => (v: string) => setValues({ ...values, [k]: v });
  return (
    <Panel title="Settings">
      <Form
        label={`Settings of ${t.serial}`}
        onSubmit={() =>
          act.run(async () => {
            const changed = Object.fromEntries(
              Object.entries(values).filter(([k, v]) => v !== initial[k]),
            );
            if (Object.keys(changed).length === 0) return "Nothing changed: nothing was saved";
            await api("POST", "/token/set", { serial: t.serial, ...changed });
            props.onChanged();
            return "Settings saved";
          })}
      >
        {SET_FIELDS.map((f) => (
          <Field
            key={f.key}
            label={f.label}
            type="number"
            inputMode="numeric"
            min={0}
            step={1}
            value={values[f.key]}
            onValue={set(f.key)}
            hint={f.help}
          />
        ))}
        <Field
          label="Valid from"
          value={values.validity_period_start}
          onValue={set("validity_period_start")}
          placeholder="2026-01-31T08:00+0100"
          hint="Before this time every check fails (empty: no limit)."
        />
        <Field
          label="Valid until"
          value={values.validity_period_end}
          onValue={set("validity_period_end")}
          placeholder="2026-12-31T18:00+0100"
          hint="After this time every check fails (empty: no limit)."
        />
        <button type="submit" disabled={act.busy}>Save settings</button>
        <Outcome error={act.error} note={act.note} />
      </Form>
    </Panel>
  );
}

/** The token's info entries; with the settokeninfo right they can be set and deleted. */
function TokenInfo(props: { token: Token; canEdit: boolean; onChanged: () => void }) {
  const t = props.token;
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const act = useAction();
  const entries = Object.entries(t.info).sort(([a], [b]) => a.localeCompare(b));
  return (
    <Panel title="Token info">
      {entries.length === 0 && <p class="muted">The token has no info entries.</p>}
      {entries.length > 0 && (
        <table class="compact">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Value</th>
              {props.canEdit && (
                <th scope="col">
                  <span class="sr-only">Change</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {entries.map(([k, v]) => (
              <tr key={k}>
                <td>{k}</td>
                <td data-label="Value" class="clip" title={v}>{v}</td>
                {props.canEdit && (
                  <td class="actions">
                    <ConfirmButton
                      label={`Remove ${k}`}
                      question={`Remove the info entry ${k} of token ${t.serial}?`}
                      onConfirm={() =>
                        act.run(async () => {
                          await api("DELETE", `/token/info/${seg(t.serial)}/${seg(k)}`);
                          props.onChanged();
                        }, `Info entry ${k} removed`)}
                    />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {props.canEdit && (
        <Form
          label={`Set token info of ${t.serial}`}
          onSubmit={() =>
            act.run(async () => {
              await api("POST", `/token/info/${seg(t.serial)}/${seg(key.trim())}`, { value });
              setKey("");
              setValue("");
              props.onChanged();
            }, `Info entry ${key.trim()} saved`)}
        >
          <Field label="Info key" value={key} onValue={setKey} required />
          <Field label="Info value" value={value} onValue={setValue} />
          <button type="submit" disabled={act.busy}>Set info</button>
        </Form>
      )}
      <Outcome error={act.error} note={act.note} />
    </Panel>
  );
}

/** The token's open challenges (`GET /token/challenges/<serial>`). */
function TokenChallenges(props: { serial: string; version: number }) {
  const list = useLoad(
    () => get<{ challenges: Challenge[]; count: number }>(`/token/challenges/${seg(props.serial)}`),
    [props.serial, props.version],
  );
  const items = list.data?.challenges ?? [];
  return (
    <Panel title="Open challenges">
      <LoadState error={list.error} loading={list.loading && !list.data} />
      {list.data && items.length === 0 && <p class="muted">The token has no open challenge.</p>}
      {items.length > 0 && (
        <table class="compact">
          <thead>
            <tr>
              <th scope="col">Transaction</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Answered</th>
              <th scope="col">Still valid</th>
            </tr>
          </thead>
          <tbody>
            {items.map((c) => (
              <tr key={c.id}>
                <td>{c.transaction_id}</td>
                <td data-label="Created">{new Date(c.timestamp).toLocaleString()}</td>
                <td data-label="Expires">{new Date(c.expiration).toLocaleString()}</td>
                <td data-label="Answered">{c.otp_received ? "yes" : "no"}</td>
                <td data-label="Still valid">{c.valid ? "yes" : "no"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}

/** `#/tokens/<serial>`: one token. */
export function TokenDetailsPage(props: { serial: string }) {
  const { session } = useSession();
  const can = (r: string) => hasRight(session, r);
  const load = useLoad(
    () => get<TokenList>("/token/", { serial: props.serial }),
    [props.serial],
  );
  const t = load.data?.tokens[0];
  // the challenge list follows the token: a test check may have triggered one
  const [version, setVersion] = useState(0);
  const reload = () => {
    load.reload();
    setVersion((v) => v + 1);
  };
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
              <dd data-testid="token-failcount">{t.failcount} of {t.maxfail}</dd>
              <dt>Counter</dt>
              <dd data-testid="token-counter">{t.count}</dd>
              <dt>OTP length</dt>
              <dd>{t.otplen}</dd>
              <dt>Rollout state</dt>
              <dd>{t.rollout_state || "none"}</dd>
            </dl>
          </Panel>
          <Panel title="Actions">
            <TokenActions
              admin
              token={t}
              onChanged={reload}
              onDeleted={() => go(["tokens"])}
            />
          </Panel>
          <TestToken token={t} onChecked={reload} />
          {can("set") && <TokenSettings key={JSON.stringify(t)} token={t} onChanged={reload} />}
          <TokenInfo token={t} canEdit={can("settokeninfo")} onChanged={reload} />
          <TokenGroupsPanel serial={t.serial} groups={t.tokengroup ?? []} onChanged={reload} />
          {can("getchallenges") && <TokenChallenges serial={t.serial} version={version} />}
          {can("manage_machine_tokens") && <MachineTokens serial={t.serial} />}
        </>
      )}
    </Page>
  );
}
