/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * SMS gateways (`/smsgateway/`): the list, and a form per provider built from what
 * `GET /smsgateway/providers` says about each of its parameters (required, the allowed values,
 * the description as help); secrets as password fields that keep the stored value unless typed
 * anew; the free options and headers of a provider that takes them as name/value rows.
 *
 * @module
 */
import { useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import { type FieldSpec, TypedField } from "../typed.tsx";
import {
  announce,
  ConfirmButton,
  Field,
  Form,
  LoadState,
  Outcome,
  Page,
  Panel,
  Select,
  useAction,
  useLoad,
} from "../ui.tsx";

/** What the server shows instead of a stored secret; sent back, it keeps the secret. */
const CENSORED = "__CENSORED__";
// the option and header names the server stores encrypted and censors
const SECRET_NAME = /pass|secret|token|auth|api[-_]?key/i;

/** A gateway as `GET /smsgateway/` lists it. */
interface Gateway {
  id: number;
  name: string;
  providermodule: string;
  description: string;
  options: Record<string, string>;
  headers: Record<string, string>;
}

/** One parameter of a provider, as `GET /smsgateway/providers` describes it. */
interface Parameter {
  required?: boolean;
  description?: string;
  values?: string[];
  type?: string;
}

/** A provider module of `GET /smsgateway/providers`. */
interface Provider {
  options_allowed?: boolean;
  headers_allowed?: boolean;
  parameters: Record<string, Parameter>;
}

type Pairs = [string, string][];

/** `privacyidea.lib.smsprovider.HttpSMSProvider.HttpSMSProvider` → `HttpSMSProvider`. */
function shortName(module: string): string {
  return module.split(".").pop() || module;
}

/** A provider parameter as a typed form field. */
function parameterSpec(key: string, p: Parameter): FieldSpec {
  const base = { key, help: p.description, required: p.required };
  if (p.values && p.values.length > 0) {
    const options: [string, string][] = p.values.map((v) => [v, v]);
    return { ...base, type: "select", options: p.required ? options : [["", "—"], ...options] };
  }
  if (SECRET_NAME.test(key)) return { ...base, type: "password" };
  if (p.type === "text") return { ...base, type: "textarea", wide: true };
  return { ...base, type: "text" };
}

/** The values a new form starts with: a required list's first value, else empty. */
function startValues(provider: Provider | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(provider?.parameters ?? {}).map((
      [k, p],
    ) => [k, p.required && p.values?.length ? p.values[0] : ""]),
  );
}

/** Name/value rows (a provider's free options, or headers), each labelled by its number. */
function PairRows(
  props: { noun: string; rows: Pairs; onRows: (rows: Pairs) => void; disabled?: boolean },
) {
  const { noun, rows } = props;
  const set = (i: number, at: 0 | 1, v: string) =>
    props.onRows(rows.map((r, j) => (j === i ? (at === 0 ? [v, r[1]] : [r[0], v]) : r)));
  return (
    <fieldset>
      <legend>{noun === "Option" ? "Other options" : "Headers"}</legend>
      <div class="row">
        <small class="help">
          {noun === "Option"
            ? "Sent to the gateway as request parameters; {phone} and {otp} are replaced."
            : "HTTP headers of the request to the gateway."}
        </small>
      </div>
      {rows.map(([k, v], i) => (
        <div class="row" key={i}>
          <Field
            label={`${noun} ${i + 1} name`}
            value={k}
            onValue={(x) => set(i, 0, x)}
            required
            disabled={props.disabled}
            autoComplete="off"
          />
          <Field
            label={`${noun} ${i + 1} value`}
            type={SECRET_NAME.test(k) ? "password" : "text"}
            value={v}
            onValue={(x) => set(i, 1, x)}
            disabled={props.disabled}
            autoComplete={SECRET_NAME.test(k) ? "new-password" : "off"}
          />
          {!props.disabled && (
            <button
              type="button"
              onClick={() => props.onRows(rows.filter((_, j) => j !== i))}
            >
              Remove {noun.toLowerCase()} {i + 1}
            </button>
          )}
        </div>
      ))}
      {!props.disabled && (
        <button type="button" onClick={() => props.onRows([...rows, ["", ""]])}>
          Add {noun === "Option" ? "an option" : "a header"}
        </button>
      )}
    </fieldset>
  );
}

function GatewayForm(
  props: {
    gateway?: Gateway;
    providers: Record<string, Provider>;
    onSaved: (name: string) => void;
  },
) {
  const { session } = useSession();
  const g = props.gateway;
  const modules = Object.keys(props.providers);
  const [name, setName] = useState(g?.name ?? "");
  const [module, setModule] = useState(g?.providermodule ?? modules[0] ?? "");
  const [description, setDescription] = useState(g?.description ?? "");
  const provider = props.providers[module];
  const known = (key: string) => key in (provider?.parameters ?? {});
  const [values, setValues] = useState<Record<string, string>>(() =>
    g
      ? Object.fromEntries(Object.entries(g.options).filter(([k]) => known(k)))
      : startValues(provider)
  );
  const [options, setOptions] = useState<Pairs>(() =>
    Object.entries(g?.options ?? {}).filter(([k]) => !known(k))
  );
  const [headers, setHeaders] = useState<Pairs>(() => Object.entries(g?.headers ?? {}));
  const act = useAction();
  const canWrite = hasRight(session, "smsgateway_write");
  const specs = Object.entries(provider?.parameters ?? {}).map(([k, p]) => parameterSpec(k, p));
  return (
    <Form
      label={g ? `Edit SMS gateway ${g.name}` : "New SMS gateway"}
      onSubmit={() =>
        act.run(async () => {
          // the definition is replaced whole: every value is sent, a stored secret as the
          // placeholder that keeps it
          const params: Record<string, string> = { name, module, description };
          for (const s of specs) {
            if ((values[s.key] ?? "") !== "") params[`option.${s.key}`] = values[s.key];
          }
          if (provider?.options_allowed) {
            for (const [k, v] of options) params[`option.${k.trim()}`] = v;
          }
          if (provider?.headers_allowed) {
            for (const [k, v] of headers) params[`header.${k.trim()}`] = v;
          }
          await api("POST", "/smsgateway", params);
          props.onSaved(name);
        })}
    >
      <Field
        label="Gateway name"
        value={name}
        onValue={setName}
        required
        disabled={!!g || !canWrite}
      />
      <Select
        label="Provider"
        value={module}
        onValue={(m) => {
          setModule(m);
          // a value of a parameter both providers have stays
          const next = startValues(props.providers[m]);
          for (const k of Object.keys(next)) if (values[k]) next[k] = values[k];
          setValues(next);
        }}
        options={modules.map((m) => [m, shortName(m)])}
        disabled={!canWrite}
      />
      <Field
        label="Description"
        value={description}
        onValue={setDescription}
        disabled={!canWrite}
      />
      <fieldset>
        <legend>Settings of {shortName(module)}</legend>
        {specs.map((s) => (
          <TypedField
            key={`${module}/${s.key}`}
            spec={s}
            value={values[s.key] ?? ""}
            disabled={!canWrite}
            onValue={(v) => setValues({ ...values, [s.key]: v })}
          />
        ))}
      </fieldset>
      {provider?.options_allowed && (
        <PairRows noun="Option" rows={options} onRows={setOptions} disabled={!canWrite} />
      )}
      {provider?.headers_allowed && (
        <PairRows noun="Header" rows={headers} onRows={setHeaders} disabled={!canWrite} />
      )}
      {g && Object.values({ ...g.options, ...g.headers }).includes(CENSORED) && (
        <p class="muted">Secrets are not shown: they stay as stored unless you type new ones.</p>
      )}
      {canWrite && (
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>Save SMS gateway</button>
        </div>
      )}
      <Outcome error={act.error} note={act.note} />
    </Form>
  );
}

/** `#/sms`. */
export function SmsGatewaysPage() {
  const { session } = useSession();
  const list = useLoad(() => get<Gateway[]>("/smsgateway/"), []);
  const providers = useLoad(() => get<Record<string, Provider>>("/smsgateway/providers"), []);
  const [editing, setEditing] = useState<string | undefined>();
  // a new form after each save of a new gateway: its values and title do not stay
  const [round, setRound] = useState(0);
  const act = useAction();
  const canWrite = hasRight(session, "smsgateway_write");
  const gateways = [...(list.data ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  const current = editing ? gateways.find((x) => x.name === editing) : undefined;
  return (
    <Page
      title="SMS gateways"
      actions={canWrite && (
        <button
          type="button"
          class="primary"
          onClick={() => {
            setEditing("");
            setRound(round + 1);
          }}
        >
          New SMS gateway
        </button>
      )}
    >
      <LoadState error={list.error ?? providers.error} loading={list.loading && !list.data} />
      {list.data && gateways.length === 0 && <p class="muted">There is no SMS gateway yet.</p>}
      {gateways.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Provider</th>
              <th scope="col">Description</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {gateways.map((x) => (
              <tr key={x.name}>
                <td data-label="Name">{x.name}</td>
                <td data-label="Provider">{shortName(x.providermodule)}</td>
                <td data-label="Description">{x.description}</td>
                <td class="actions">
                  <button
                    type="button"
                    aria-label={`Edit ${x.name}`}
                    onClick={() => {
                      setEditing(x.name);
                      setRound(round + 1);
                    }}
                  >
                    Edit
                  </button>
                  {canWrite && (
                    <ConfirmButton
                      label={`Delete ${x.name}`}
                      question={`Delete SMS gateway ${x.name}? Tokens that send through it fail.`}
                      danger
                      onConfirm={() =>
                        act.run(async () => {
                          await api("DELETE", `/smsgateway/${seg(x.name)}`);
                          if (editing === x.name) setEditing(undefined);
                          list.reload();
                        }, `SMS gateway ${x.name} deleted`)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Outcome error={act.error} note={act.note} />
      {editing !== undefined && (editing === "" || current) && providers.data && (
        <Panel title={editing ? `SMS gateway ${editing}` : "New SMS gateway"}>
          <GatewayForm
            // an edited gateway's form is built again from what the server then lists
            key={`${editing}/${round}/${JSON.stringify(current ?? {})}`}
            gateway={current}
            providers={providers.data}
            onSaved={(saved) => {
              if (!editing) {
                setRound(round + 1);
              }
              list.reload();
              announce(`SMS gateway ${saved} saved`);
            }}
          />
        </Panel>
      )}
    </Page>
  );
}
