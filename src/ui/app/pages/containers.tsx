/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Token containers (`/container/`): the list (search, paging), a new container, and a
 * container's page with its tokens, owner, description, states and deletion. Each action is
 * offered only with its right (`container_list`, `container_create`, `container_add_token`, …);
 * the server checks the container's realms and owner as well. A user (self-service) sees the
 * same pages as "My containers": only their own containers, no owner or realm fields, and a
 * smartphone container's registration with the app (`container_register`).
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
  Select,
  useAction,
  useLiveSearch,
  useLoad,
} from "../ui.tsx";
import { EnrollResult } from "./enroll.tsx";
import { loadTemplates, templateTokensText } from "./container_templates.tsx";

// deno-lint-ignore no-explicit-any
type Detail = any;

/** A container's owner as `GET /container/` lists it. */
interface ContainerUser {
  user_name: string;
  user_realm: string;
  user_resolver: string;
  user_id: string;
}

/** A token in a container: `{serial}` only when the caller may not see the token itself. */
interface ContainerToken {
  serial: string;
  tokentype?: string;
  active?: boolean;
  revoked?: boolean;
  description?: string;
}

/** A container as `GET /container/` lists it. */
interface Container {
  serial: string;
  type: string;
  description: string;
  states: string[];
  realms: string[];
  users: ContainerUser[];
  tokens: ContainerToken[];
  /** The container's info (`registration_state`, `device` of a smartphone, …). */
  info?: Record<string, string>;
}

/** `GET /container/`'s value when paged. */
interface ContainerList {
  containers: Container[];
  count?: number;
}

/** `GET /container/types`: each type's description and the token types it holds. */
type ContainerTypes = Record<string, { description: string; token_types: string[] }>;

/** A search term as a pattern: `*` is the wildcard; without one, a substring. */
function pattern(text: string): string {
  const t = text.trim();
  return t === "" || t.includes("*") ? t : `*${t}*`;
}

function ownerText(c: Container): string {
  const u = c.users[0];
  return u ? `${u.user_name}@${u.user_realm}` : "";
}

/** `#/containers`: the containers the admin may list (a user: their own), and a new one. */
export function ContainersPage() {
  const { session } = useSession();
  const self = session.role === "user";
  const canCreate = hasRight(session, "container_create");
  const [serial, setSerial] = useState("");
  const [description, setDescription] = useState("");
  const [type, setType] = useState("");
  const [query, setQuery] = useState<Record<string, unknown>>({});
  const [page, setPage] = useState(1);
  const [isCreating, setCreating] = useState(false);
  const pageSize = session.settings.tokenPageSize;
  const types = useLoad(() => get<ContainerTypes>("/container/types"), []);
  const list = useLoad(
    () => get<ContainerList>("/container/", { ...query, page, pagesize: pageSize }),
    [query, page],
  );
  function search() {
    setPage(1);
    setQuery({ container_serial: pattern(serial), description: pattern(description), type });
  }
  useLiveSearch(!session.settings.searchOnEnter, search, [serial, description, type]);
  const typeNames = Object.keys(types.data ?? {}).sort();
  const count = list.data?.count ?? list.data?.containers.length ?? 0;
  return (
    <Page
      title={self ? "My containers" : "Containers"}
      actions={canCreate && !isCreating && (
        <button
          type="button"
          class="primary"
          onClick={() => setCreating(true)}
        >
          New container
        </button>
      )}
    >
      {isCreating && (
        <NewContainer
          self={self}
          types={types.data ?? {}}
          typesError={types.error}
          onClose={() => setCreating(false)}
        />
      )}
      <Form label="Search containers" class="filters" onSubmit={search}>
        <Field label="Serial" value={serial} onValue={setSerial} type="search" />
        <Field label="Description" value={description} onValue={setDescription} type="search" />
        <Select
          label="Type"
          value={type}
          onValue={setType}
          options={[["", "any"], ...typeNames]}
        />
        <button type="submit">Search</button>
      </Form>
      <LoadState error={list.error} loading={list.loading && !list.data} />
      {list.data && count === 0 && (
        <p class="muted" data-testid="empty-list">
          {Object.values(query).some((v) => v !== undefined && v !== "")
            ? "No container matches the search."
            : "There is no container yet."}
        </p>
      )}
      {list.data && count > 0 && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Serial</th>
                <th scope="col">Type</th>
                <th scope="col">Description</th>
                {!self && <th scope="col">Owner</th>}
                {!self && <th scope="col">Realms</th>}
                <th scope="col">States</th>
                <th scope="col">Tokens</th>
              </tr>
            </thead>
            <tbody>
              {list.data.containers.map((c) => (
                <tr key={c.serial}>
                  <td>
                    <a href={href(["containers", c.serial])}>{c.serial}</a>
                  </td>
                  <td data-label="Type">{c.type}</td>
                  <td data-label="Description">{c.description}</td>
                  {!self && (
                    <td data-label="Owner">
                      {ownerText(c) || <span class="muted">none</span>}
                    </td>
                  )}
                  {!self && <td data-label="Realms">{c.realms.join(", ")}</td>}
                  <td data-label="States">{c.states.join(", ")}</td>
                  <td data-label="Tokens">{c.tokens.length}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} pageSize={pageSize} count={count} onPage={setPage} />
        </>
      )}
    </Page>
  );
}

/** The form of `POST /container/init`; a made container's page opens. A user's is theirs. */
function NewContainer(
  props: { self: boolean; types: ContainerTypes; typesError?: string; onClose: () => void },
) {
  const { session } = useSession();
  const names = Object.keys(props.types).sort();
  // policy default_container_type names the type the form starts with
  const [chosen, setType] = useState(session.settings.defaultContainerType);
  const [description, setDescription] = useState("");
  const [user, setUser] = useState("");
  const [realm, setRealm] = useState("");
  // undefined: the default template of the type (privacyIDEA's form starts with it)
  const [picked, setPicked] = useState<string | undefined>(undefined);
  const [made, setMade] = useState<{ serial: string; tokens: Record<string, Detail> }>();
  const canTemplates = hasRight(session, "container_template_list");
  const templates = useLoad(
    () => canTemplates ? loadTemplates() : Promise.resolve([]),
    [canTemplates],
  );
  const act = useAction();
  const type = names.includes(chosen) ? chosen : names[0] ?? "";
  const ofType = (templates.data ?? []).filter((t) => t.container_type === type);
  const template = picked ?? ofType.find((t) => t.default)?.name ?? "";
  if (made) {
    // the template's tokens were enrolled with the container: their QR codes are shown once
    return (
      <Panel title="New container">
        <p class="note" role="status">
          Container <a href={href(["containers", made.serial])}>{made.serial}</a>{" "}
          is created with the template's tokens.
        </p>
        {Object.entries(made.tokens).map(([s, d]) => (
          <EnrollResult key={s} type={String(d.type ?? "")} detail={{ serial: s, ...d }} />
        ))}
        <div class="actions">
          <button type="button" onClick={props.onClose}>Close</button>
        </div>
      </Panel>
    );
  }
  return (
    <Panel title="New container">
      <Form
        label="New container"
        onSubmit={() =>
          act.run(async () => {
            // a user's container is theirs: the server takes the owner from the login
            const { value } = await api<
              { container_serial: string; tokens?: Record<string, Detail> }
            >(
              "POST",
              "/container/init",
              {
                type,
                description,
                ...(template ? { template_name: template } : {}),
                ...(props.self ? {} : { user: user.trim(), realm: realm.trim() }),
              },
            );
            const tokens = value.tokens ?? {};
            if (Object.keys(tokens).length > 0) {
              setMade({ serial: value.container_serial, tokens });
            } else go(["containers", value.container_serial]);
          })}
      >
        <LoadState error={props.typesError} />
        <Select
          label="Container type"
          value={type}
          onValue={(v) => {
            setType(v);
            setPicked(undefined);
          }}
          options={names.map((n) => [n, props.types[n].description])}
          required
        />
        {canTemplates && (
          <>
            <LoadState error={templates.error} />
            <Select
              label="Template"
              value={template}
              onValue={setPicked}
              options={[
                ["", "No template"],
                ...ofType.map((t): [string, string] => [
                  t.name,
                  `${t.name}: ${templateTokensText(t)}`,
                ]),
              ]}
              hint="The template's tokens are enrolled into the new container"
            />
          </>
        )}
        <Field label="Description" value={description} onValue={setDescription} />
        {!props.self && (
          <>
            <Field
              label="User"
              value={user}
              onValue={setUser}
              hint="Optional: the owner (with the realm)"
            />
            <Field
              label="Realm"
              value={realm}
              onValue={setRealm}
              hint="Optional: the owner's realm, or a realm for a container without owner"
            />
          </>
        )}
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy || type === ""}>
            Create container
          </button>
          <button type="button" onClick={props.onClose}>Cancel</button>
        </div>
        <Outcome error={act.error} note={act.note} />
      </Form>
    </Panel>
  );
}

/** `#/containers/<serial>`: one container and what the caller's rights allow on it. */
export function ContainerDetailsPage(props: { serial: string }) {
  const { session } = useSession();
  const self = session.role === "user";
  const can = (r: string) => hasRight(session, r);
  const load = useLoad(
    () => get<ContainerList>("/container/", { container_serial: props.serial }),
    [props.serial],
  );
  const c = load.data?.containers.find((x) => x.serial === props.serial);
  const del = useAction();
  const path = `/container/${seg(props.serial)}`;
  return (
    <Page
      title={`Container ${props.serial}`}
      actions={
        <a href={href(["containers"])}>{self ? "Back to my containers" : "Back to containers"}</a>
      }
    >
      <LoadState error={load.error} loading={load.loading && !load.data} />
      {load.data && !c && <p class="error" role="alert">The container could not be found.</p>}
      {c && (
        <>
          <Panel title="Details">
            <dl class="details">
              <dt>Type</dt>
              <dd>{c.type}</dd>
              <dt>Description</dt>
              <dd data-testid="container-description">{c.description || "none"}</dd>
              {!self && (
                <>
                  <dt>Owner</dt>
                  <dd data-testid="container-owner">{ownerText(c) || "none"}</dd>
                  <dt>Realms</dt>
                  <dd>{c.realms.join(", ") || "none"}</dd>
                </>
              )}
              <dt>States</dt>
              <dd data-testid="container-states">{c.states.join(", ") || "none"}</dd>
            </dl>
            {can("container_delete") && (
              <div class="actions">
                <ConfirmButton
                  label={`Delete container ${c.serial}`}
                  question={`Delete container ${c.serial}? Its tokens are kept.`}
                  danger
                  onConfirm={() =>
                    del.run(async () => {
                      await api("DELETE", path);
                      go(["containers"]);
                    })}
                />
              </div>
            )}
            <Outcome error={del.error} note={del.note} />
          </Panel>
          {c.type === "smartphone" && (
            <SmartphoneRegistration container={c} path={path} onChanged={load.reload} />
          )}
          <ContainerTokens container={c} path={path} onChanged={load.reload} />
          {!self && <ContainerOwner container={c} path={path} onChanged={load.reload} />}
          {can("container_description") && (
            <ContainerDescription container={c} path={path} onChanged={load.reload} />
          )}
          {can("container_state") && (
            <ContainerStates container={c} path={path} onChanged={load.reload} />
          )}
        </>
      )}
    </Page>
  );
}

interface PartProps {
  container: Container;
  /** `/container/<serial>`, encoded. */
  path: string;
  onChanged: () => void;
}

function tokenState(t: ContainerToken): string {
  if (t.active === undefined) return "";
  return t.revoked ? "revoked" : t.active ? "active" : "disabled";
}

/** The container's tokens: removed (`container_remove_token`), added by serial. */
function ContainerTokens(props: PartProps) {
  const { session } = useSession();
  const canAdd = hasRight(session, "container_add_token");
  const canRemove = hasRight(session, "container_remove_token");
  const [serial, setSerial] = useState("");
  const act = useAction();
  const { container: c } = props;
  return (
    <Panel title="Tokens">
      {c.tokens.length === 0
        ? <p class="muted">The container holds no token.</p>
        : (
          <table data-testid="container-tokens">
            <thead>
              <tr>
                <th scope="col">Serial</th>
                <th scope="col">Type</th>
                <th scope="col">State</th>
                <th scope="col">Description</th>
                <th scope="col">
                  <span class="sr-only">Remove</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {c.tokens.map((t) => (
                <tr key={t.serial}>
                  <td>
                    {t.tokentype && session.role === "admin"
                      ? <a href={href(["tokens", t.serial])}>{t.serial}</a>
                      : t.serial}
                  </td>
                  <td data-label="Type">{t.tokentype ?? ""}</td>
                  <td data-label="State">{tokenState(t)}</td>
                  <td data-label="Description">{t.description ?? ""}</td>
                  <td class="actions">
                    {canRemove && (
                      <ConfirmButton
                        label={`Remove ${t.serial}`}
                        question={`Take token ${t.serial} out of container ${c.serial}?`}
                        onConfirm={() =>
                          act.run(async () => {
                            await api("POST", `${props.path}/remove`, { serial: t.serial });
                            props.onChanged();
                          }, `Token ${t.serial} taken out of the container`)}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      {canAdd && (
        <Form
          label={`Add a token to container ${c.serial}`}
          onSubmit={() =>
            act.run(async () => {
              const added = serial.trim();
              await api("POST", `${props.path}/add`, { serial: added });
              setSerial("");
              props.onChanged();
              return `Token ${added} added to the container`;
            })}
        >
          <Field
            label="Token serial"
            value={serial}
            onValue={setSerial}
            required
            hint="A token in another container moves into this one"
          />
          <button type="submit" disabled={act.busy || serial.trim() === ""}>Add token</button>
        </Form>
      )}
      <Outcome error={act.error} note={act.note} />
    </Panel>
  );
}

/** The owner: unassigned (`container_unassign_user`) or assigned (`container_assign_user`). */
function ContainerOwner(props: PartProps) {
  const { session } = useSession();
  const canAssign = hasRight(session, "container_assign_user");
  const canUnassign = hasRight(session, "container_unassign_user");
  const [user, setUser] = useState("");
  const [realm, setRealm] = useState("");
  const act = useAction();
  const owner = props.container.users[0];
  if (owner ? !canUnassign : !canAssign) return null;
  return (
    <Panel title="Owner">
      {owner
        ? (
          <ConfirmButton
            label={`Unassign ${owner.user_name}@${owner.user_realm}`}
            question={`Take container ${props.container.serial} from ${owner.user_name}@${owner.user_realm}?`}
            onConfirm={() =>
              act.run(async () => {
                await api("POST", `${props.path}/unassign`, {
                  user: owner.user_name,
                  realm: owner.user_realm,
                  resolver: owner.user_resolver,
                  user_id: owner.user_id,
                });
                props.onChanged();
              }, "The container has no owner now")}
          />
        )
        : (
          <Form
            label={`Assign container ${props.container.serial}`}
            onSubmit={() =>
              act.run(async () => {
                const login = user.trim();
                await api("POST", `${props.path}/assign`, { user: login, realm: realm.trim() });
                setUser("");
                setRealm("");
                props.onChanged();
                return `The container belongs to ${login} now`;
              })}
          >
            <Field label="User" value={user} onValue={setUser} required />
            <Field label="Realm" value={realm} onValue={setRealm} />
            <button type="submit" disabled={act.busy || user.trim() === ""}>Assign</button>
          </Form>
        )}
      <Outcome error={act.error} note={act.note} />
    </Panel>
  );
}

/** `POST /container/<serial>/description`. */
function ContainerDescription(props: PartProps) {
  const [text, setText] = useState<string | undefined>(undefined);
  const act = useAction();
  const value = text ?? props.container.description;
  return (
    <Panel title="Description">
      <Form
        label={`Description of container ${props.container.serial}`}
        onSubmit={() =>
          act.run(async () => {
            await api("POST", `${props.path}/description`, { description: value });
            setText(undefined);
            props.onChanged();
          }, "Description saved")}
      >
        <Field label="Description" value={value} onValue={setText} />
        <button type="submit" disabled={act.busy}>Save description</button>
      </Form>
      <Outcome error={act.error} note={act.note} />
    </Panel>
  );
}

/** `POST /container/<serial>/states`: the states of `GET /container/statetypes`. */
function ContainerStates(props: PartProps) {
  const types = useLoad(() => get<Record<string, string[]>>("/container/statetypes"), []);
  const [picked, setPicked] = useState<string[] | undefined>(undefined);
  const act = useAction();
  const states = picked ?? props.container.states;
  const names = Object.keys(types.data ?? {});
  return (
    <Panel title="States">
      <LoadState error={types.error} loading={types.loading && !types.data} />
      {types.data && (
        <Form
          label={`States of container ${props.container.serial}`}
          onSubmit={() =>
            act.run(async () => {
              await api("POST", `${props.path}/states`, { states: states.join(",") });
              setPicked(undefined);
              props.onChanged();
            }, "States saved")}
        >
          {names.map((s) => (
            <Check
              key={s}
              label={s}
              checked={states.includes(s)}
              onChecked={(on) => {
                // a state excludes others (active and disabled): choosing one clears those
                const excluded = types.data?.[s] ?? [];
                setPicked(
                  on
                    ? [...states.filter((x) => !excluded.includes(x)), s]
                    : states.filter((x) => x !== s),
                );
              }}
            />
          ))}
          <button type="submit" disabled={act.busy}>Save states</button>
        </Form>
      )}
      <Outcome error={act.error} note={act.note} />
    </Panel>
  );
}

/** What `POST /container/register/initialize` answers: the app's URL and its QR code. */
export interface Registration {
  container_url: { value: string; img: string };
  ttl?: number;
}

/** The registration's QR code and `pia://` link for the privacyIDEA Authenticator app. */
export function RegistrationQr(props: { serial: string; registration: Registration }) {
  const { container_url: shown, ttl } = props.registration;
  const url = shown.value;
  return (
    <figure class="qr">
      <img
        src={shown.img}
        width={220}
        height={220}
        alt={`QR code of container ${props.serial}: scan it with the privacyIDEA Authenticator app`}
        data-otpauth={url}
      />
      <figcaption>
        Scan the QR code with the privacyIDEA Authenticator app
        {ttl ? ` within ${ttl} minutes` : ""}.{" "}
        <a href={url} class="otpauth" data-otpauth={url}>Open in the app</a>
        <br />
        Registration URL: <code class="secret" data-testid="container-url">{url}</code>
      </figcaption>
    </figure>
  );
}

function registrationText(state: string, device: string): string {
  const on = device ? ` (${device})` : "";
  if (state === "registered") {
    return `The smartphone is registered${on}: the app synchronises the container's tokens.`;
  }
  if (state === "client_wait") {
    return "The container waits for the app (registration state client_wait): it is registered once the app has scanned the QR code.";
  }
  if (state === "rollover") {
    return `A new device is being registered (registration state rollover): until it has scanned the QR code, the old device${on} keeps the container.`;
  }
  if (state === "rollover_completed") {
    return `The container moved to a new device${on} (registration state rollover_completed): its tokens get new keys at the app's next synchronisation.`;
  }
  return "No smartphone is registered for this container.";
}

/** Registration states in which the container is on a device (a rollover may start). */
const ON_A_DEVICE = ["registered", "rollover", "rollover_completed"];

/**
 * A smartphone container's registration with the privacyIDEA Authenticator app: the QR code of
 * `POST /container/register/initialize` (`container_register`) and the state, read again from
 * `GET /container/` when the app has scanned it (as the push enrolment does). A registered
 * container moves to a new device with `rollover` (`container_rollover`): a new QR code, the old
 * device's keys valid until the new one has scanned it. Either may ask the app for a passphrase
 * (`passphrase_prompt`, `passphrase_response`) or the owner's password (`passphrase_user`). A registration is ended with
 * `POST /container/register/<serial>/terminate` (`container_unregister`).
 */
function SmartphoneRegistration(props: PartProps) {
  const { session } = useSession();
  const canUnregister = hasRight(session, "container_unregister");
  const [shown, setShown] = useState<Registration | undefined>(undefined);
  const [prompt, setPrompt] = useState("");
  const [passphrase, setPassphrase] = useState("");
  const [isUserPassword, setUserPassword] = useState(false);
  const act = useAction();
  const c = props.container;
  const state = c.info?.registration_state ?? "";
  const owned = c.users.length > 0;
  const waiting = state === "client_wait" || state === "rollover";
  const isRollover = ON_A_DEVICE.includes(state);
  // a registration starts on a container without one, a rollover on one with a device
  const canStart = isRollover
    ? hasRight(session, "container_rollover")
    : hasRight(session, "container_register");
  let label = "Register smartphone";
  if (state === "client_wait") label = "New QR code";
  else if (state === "rollover") label = "New rollover QR code";
  else if (isRollover) label = "Roll over to a new device";
  return (
    <Panel title="Smartphone">
      <p class="note" role="status" data-testid="registration-state">
        {registrationText(state, c.info?.device ?? "")}
      </p>
      {shown && waiting && <RegistrationQr serial={c.serial} registration={shown} />}
      {canStart && (
        <Form
          label={isRollover
            ? `Rollover of container ${c.serial}`
            : `Registration of container ${c.serial}`}
          onSubmit={() =>
            act.run(async () => {
              const params: Record<string, unknown> = { container_serial: c.serial };
              if (isRollover) params.rollover = true;
              if (prompt.trim()) params.passphrase_prompt = prompt.trim();
              // the owner's password instead of a passphrase of its own (passphrase_user)
              if (isUserPassword && owned) params.passphrase_user = true;
              else if (passphrase) params.passphrase_response = passphrase;
              const { value } = await api<Registration>(
                "POST",
                "/container/register/initialize",
                params,
              );
              setShown(value);
              // each registration asks anew: nothing carries over to the next one
              setPrompt("");
              setPassphrase("");
              setUserPassword(false);
              props.onChanged();
            })}
        >
          <Field
            label="Passphrase prompt"
            value={prompt}
            onValue={setPrompt}
            hint="Optional: the app asks for a passphrase with this text before it registers"
          />
          <Field
            label="Passphrase"
            type="password"
            autoComplete="new-password"
            value={isUserPassword && owned ? "" : passphrase}
            onValue={setPassphrase}
            disabled={isUserPassword && owned}
            hint="Optional: the answer the app must be given (tell it to the user another way)"
          />
          {owned && (
            <Check
              label="The owner's password is the passphrase"
              checked={isUserPassword}
              onChecked={setUserPassword}
              hint="The app asks for the password of the owner's user store"
            />
          )}
          <button type="submit" class={waiting ? undefined : "primary"} disabled={act.busy}>
            {label}
          </button>
        </Form>
      )}
      <div class="actions">
        {waiting && (
          <button type="button" disabled={act.busy} onClick={props.onChanged}>
            Refresh the registration state
          </button>
        )}
        {canUnregister && state !== "" && (
          <ConfirmButton
            label="Unregister smartphone"
            question={`End the registration of container ${c.serial}? The app can no longer synchronise it; its tokens stay in the container.`}
            danger
            onConfirm={() =>
              act.run(async () => {
                await api("POST", `/container/register/${seg(c.serial)}/terminate`);
                setShown(undefined);
                props.onChanged();
              }, "The smartphone is unregistered")}
          />
        )}
      </div>
      <Outcome error={act.error} note={act.note} />
    </Panel>
  );
}
