/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Users per realm (search, paging), adding a user to an editable resolver,
 * and a user's details with their tokens.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { canEnrollAny, hasRight, useSession } from "../session.ts";
import {
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
import { type TokenList, TokenTable } from "./tokens.tsx";

/** A user as `GET /user/` lists them. */
interface User {
  username: string;
  userid: string;
  givenname: string;
  surname: string;
  email: string;
  phone: string;
  mobile: string;
  description?: string;
  realm?: string;
  resolver: string;
  editable: boolean;
}

/** `GET /realm/`'s value. */
export interface Realms {
  [name: string]: {
    default: boolean;
    resolver: { name: string; type: string; priority: number | null }[];
  };
}

const ATTRIBUTES = ["email", "givenname", "surname", "phone", "mobile", "description"] as const;

function AddUser(props: { realm: string; resolvers: string[]; onAdded: () => void }) {
  const [resolver, setResolver] = useState(props.resolvers[0] ?? "");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [attrs, setAttrs] = useState<Record<string, string>>({});
  const act = useAction();
  return (
    <Form
      label="Add a user"
      onSubmit={() =>
        act.run(async () => {
          await api("POST", "/user/", { user: username, resolver, password, ...attrs });
          setUsername("");
          setPassword("");
          setAttrs({});
          props.onAdded();
        }, `User ${username} added`)}
    >
      <Select label="Resolver" value={resolver} onValue={setResolver} options={props.resolvers} />
      <Field label="Username" value={username} onValue={setUsername} required />
      <Field
        label="Password"
        type="password"
        value={password}
        onValue={setPassword}
        autoComplete="new-password"
      />
      {ATTRIBUTES.slice(0, 3).map((a) => (
        <Field
          key={a}
          label={a === "email" ? "Email" : a === "givenname" ? "Given name" : "Surname"}
          value={attrs[a] ?? ""}
          onValue={(v) => setAttrs({ ...attrs, [a]: v })}
        />
      ))}
      <button type="submit" class="primary" disabled={act.busy}>Add user</button>
      <Outcome error={act.error} note={act.note} />
    </Form>
  );
}

/** `#/users?realm=…`: the users of a realm. */
export function UsersPage(props: { route: Route }) {
  const { session } = useSession();
  const realms = useLoad(() => get<Realms>("/realm/"), []);
  const names = Object.keys(realms.data ?? {}).sort();
  const defaultRealm = names.find((n) => realms.data![n].default) ?? names[0] ?? "";
  const [realm, setRealm] = useState(props.route.query.get("realm") ?? "");
  const [search, setSearch] = useState("");
  const [query, setQuery] = useState("");
  const [page, setPage] = useState(1);
  const r = realm || defaultRealm;
  const users = useLoad(
    () => r ? get<User[]>("/user/", { realm: r, username: query }) : Promise.resolve(undefined),
    [r, query],
  );
  useEffect(() => setPage(1), [r, query]);
  const size = session.settings.userPageSize;
  const list = users.data ?? [];
  const searchUsers = () =>
    setQuery(search.trim() && !search.includes("*") ? `*${search.trim()}*` : search.trim());
  useLiveSearch(!session.settings.searchOnEnter, searchUsers, [search]);
  return (
    <Page title="Users">
      <LoadState error={realms.error} loading={realms.loading} />
      {realms.data && names.length === 0 && (
        <p class="muted">
          There is no realm yet: create a <a href={href(["resolvers"])}>resolver</a> and a{" "}
          <a href={href(["realms"])}>realm</a> first.
        </p>
      )}
      {names.length > 0 && (
        <Form
          label="Search users"
          class="filters"
          onSubmit={searchUsers}
        >
          <Select label="Realm" value={r} onValue={setRealm} options={names} />
          <Field label="Username" type="search" value={search} onValue={setSearch} />
          <button type="submit">Search</button>
        </Form>
      )}
      <LoadState error={users.error} loading={users.loading && !users.data} />
      {users.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Username</th>
                <th scope="col">Given name</th>
                <th scope="col">Surname</th>
                <th scope="col">Email</th>
                <th scope="col">Resolver</th>
              </tr>
            </thead>
            <tbody>
              {list.slice((page - 1) * size, page * size).map((u) => (
                <tr key={`${u.resolver}/${u.username}`}>
                  <td>
                    <a href={href(["users", r, u.username])}>{u.username}</a>
                  </td>
                  <td data-label="Given name">{u.givenname}</td>
                  <td data-label="Surname">{u.surname}</td>
                  <td data-label="Email">{u.email}</td>
                  <td data-label="Resolver">{u.resolver}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} pageSize={size} count={list.length} onPage={setPage} />
        </>
      )}
      {r && realms.data?.[r] && hasRight(session, "adduser") && (
        <Panel title="Add a user">
          <AddUser
            key={r}
            realm={r}
            resolvers={realms.data[r].resolver.map((x) => x.name)}
            onAdded={users.reload}
          />
        </Panel>
      )}
    </Page>
  );
}

function EditUser(props: { user: User; onSaved: () => void }) {
  const u = props.user;
  const [attrs, setAttrs] = useState<Record<string, string>>(
    Object.fromEntries(ATTRIBUTES.map((a) => [a, String(u[a] ?? "")])),
  );
  const [password, setPassword] = useState("");
  const act = useAction();
  return (
    <Form
      label={`Edit ${u.username}`}
      onSubmit={() =>
        act.run(async () => {
          await api("PUT", "/user/", {
            user: u.username,
            resolver: u.resolver,
            ...attrs,
            ...(password ? { password } : {}),
          });
          setPassword("");
          props.onSaved();
        }, "User saved")}
    >
      {ATTRIBUTES.map((a) => (
        <Field
          key={a}
          label={a[0].toUpperCase() + a.slice(1)}
          value={attrs[a]}
          onValue={(v) => setAttrs({ ...attrs, [a]: v })}
        />
      ))}
      <Field
        label="New password"
        type="password"
        value={password}
        onValue={setPassword}
        autoComplete="new-password"
        hint="empty: unchanged"
      />
      <button type="submit" class="primary" disabled={act.busy}>Save user</button>
      <Outcome error={act.error} note={act.note} />
    </Form>
  );
}

/** `#/users/<realm>/<username>`: a user and their tokens. */
export function UserDetailsPage(props: { realm: string; username: string }) {
  const { session } = useSession();
  const user = useLoad(
    () => get<User[]>("/user/", { realm: props.realm, username: props.username }),
    [props.realm, props.username],
  );
  const tokens = useLoad(
    () =>
      hasRight(session, "tokenlist")
        ? get<TokenList>("/token/", { user: props.username, realm: props.realm })
        : Promise.resolve(undefined),
    [props.realm, props.username],
  );
  const u = user.data?.find((x) => x.username === props.username);
  const [serial, setSerial] = useState("");
  const act = useAction();
  const canEnroll = canEnrollAny(session);
  return (
    <Page
      title={`User ${props.username}@${props.realm}`}
      actions={<a href={href(["users"], { realm: props.realm })}>Back to users</a>}
    >
      <LoadState error={user.error} loading={user.loading && !user.data} />
      {user.data && !u && <p class="error" role="alert">The user could not be found.</p>}
      {u && (
        <Panel title="Details">
          <dl class="details">
            <dt>Resolver</dt>
            <dd>{u.resolver}</dd>
            <dt>User ID</dt>
            <dd>{u.userid}</dd>
            {ATTRIBUTES.map((a) => (
              <>
                <dt key={`k${a}`}>{a}</dt>
                <dd key={`v${a}`}>{u[a] || <span class="muted">none</span>}</dd>
              </>
            ))}
          </dl>
        </Panel>
      )}
      {hasRight(session, "tokenlist") && (
        <Panel title="Tokens">
          <LoadState error={tokens.error} loading={tokens.loading && !tokens.data} />
          {tokens.data && tokens.data.tokens.length === 0 && (
            <p class="muted">This user has no tokens.</p>
          )}
          {tokens.data && tokens.data.tokens.length > 0 && (
            <TokenTable tokens={tokens.data.tokens} link />
          )}
          <div class="actions">
            {canEnroll && (
              <a
                class="button primary"
                href={href(["enroll"], { user: props.username, realm: props.realm })}
              >
                Enrol token for {props.username}
              </a>
            )}
          </div>
          {hasRight(session, "assign") && (
            <Form
              label="Assign a token"
              onSubmit={() =>
                act.run(async () => {
                  await api("POST", "/token/assign", {
                    serial,
                    user: props.username,
                    realm: props.realm,
                  });
                  setSerial("");
                  tokens.reload();
                }, "Token assigned")}
            >
              <Field
                label="Serial of an unassigned token"
                value={serial}
                onValue={setSerial}
                required
              />
              <button type="submit">Assign token</button>
              <Outcome error={act.error} note={act.note} />
            </Form>
          )}
        </Panel>
      )}
      {u?.editable && hasRight(session, "updateuser") && (
        <Panel title="Edit user">
          <EditUser user={u} onSaved={user.reload} />
        </Panel>
      )}
      {u?.editable && hasRight(session, "deleteuser") && (
        <div class="actions">
          <ConfirmButton
            label="Delete user"
            question={`Delete user ${u.username} from resolver ${u.resolver}?`}
            danger
            onConfirm={() =>
              act.run(async () => {
                await api("DELETE", `/user/${seg(u.resolver)}/${seg(u.username)}`);
                go(["users"], { realm: props.realm });
              })}
          />
        </div>
      )}
    </Page>
  );
}
