/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Resolvers: list, create and edit with a form per type (the keys the type uses, typed, grouped
 * and with help; secrets as password fields that keep the stored value), test without saving,
 * delete.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import { ENDPOINT_FIELDS, RESOLVER_FIELDS, RESOLVER_TYPES } from "../specs/resolver_fields.ts";
import { type FieldSpec, isOn, TypedField, visibleSpecs } from "../typed.tsx";
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

/** `GET /resolver/`'s value. */
export interface Resolvers {
  [name: string]: { resolvername: string; type: string; data: Record<string, unknown> };
}

/** What `GET /resolver/` shows for a stored secret; sent back, it keeps the secret. */
const CENSORED = "__CENSORED__";

/** Keys of a definition that are no configuration, or that Tessera reads but never offers. */
const NOT_SHOWN = new Set(["type", "advanced", "NOREFERRALS", "NOSCHEMAS"]);

/** A stored or default value as the form's text (objects as JSON). */
function textOf(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** Whether a field's value is a JSON object on the wire. */
function isObjectField(spec: FieldSpec): boolean {
  return spec.type === "endpoint" || spec.type === "object" || spec.type === "json";
}

/** The value sent for a field: JSON objects as objects ("" deletes the key). */
function wireValue(spec: FieldSpec, text: string): unknown {
  if (!isObjectField(spec) || text.trim() === "") return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${spec.label ?? spec.key}: not valid JSON`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error(`${spec.label ?? spec.key}: a JSON object is needed`);
  }
  return parsed;
}

/** The sub-values of a JSON object field, each as text. */
function partsOf(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/**
 * A JSON object edited as one input per sub-key (an endpoint configuration, a client
 * certificate). A sub-value edited is sent as text; one left alone keeps its stored form.
 */
function ObjectField(
  props: {
    spec: FieldSpec;
    fields: FieldSpec[];
    value: string;
    onValue: (v: string) => void;
    disabled?: boolean;
  },
) {
  const obj = partsOf(props.value);
  const label = props.spec.label ?? props.spec.key;
  return (
    <fieldset class="object-field">
      <legend>{label}</legend>
      {props.spec.help && <small class="help">{props.spec.help}</small>}
      {props.fields.map((f) => {
        const raw = obj[f.key];
        const text = raw === true ? "true" : typeof raw === "string" ? raw : textOf(raw);
        return (
          <TypedField
            key={f.key}
            spec={{ ...f, label: `${label}: ${f.label ?? f.key}` }}
            value={text}
            disabled={props.disabled}
            onValue={(v) => {
              const next = { ...obj };
              if (v === "") delete next[f.key];
              else next[f.key] = f.type === "bool" ? true : v;
              props.onValue(Object.keys(next).length > 0 ? JSON.stringify(next) : "");
            }}
          />
        );
      })}
    </fieldset>
  );
}

/** One field of a resolver form. */
function ResolverField(
  props: { spec: FieldSpec; value: string; onValue: (v: string) => void; disabled?: boolean },
) {
  if (props.spec.type === "endpoint" || props.spec.type === "object") {
    return (
      <ObjectField
        {...props}
        fields={props.spec.type === "endpoint" ? ENDPOINT_FIELDS : props.spec.fields ?? []}
      />
    );
  }
  return <TypedField {...props} />;
}

/** The fields of a type plus the stored keys the form does not know (as text). */
function specsOf(type: string, data: Record<string, unknown>): FieldSpec[] {
  const known = RESOLVER_FIELDS[type] ?? [];
  const keys = new Set(known.map((s) => s.key));
  const other: FieldSpec[] = Object.keys(data).filter((k) => !keys.has(k) && !NOT_SHOWN.has(k))
    .sort().map((k) => ({
      key: k,
      type: data[k] !== null && typeof data[k] === "object"
        ? "json"
        : data[k] === CENSORED
        ? "password"
        : "text",
      group: "Other stored keys",
    }));
  return [...known, ...other];
}

function ResolverForm(
  props: {
    name?: string;
    type?: string;
    data?: Record<string, unknown>;
    onSaved: (name: string) => void;
  },
) {
  const { session } = useSession();
  const isNew = props.name === undefined;
  const [name, setName] = useState(props.name ?? "");
  const [type, setType] = useState(props.type ?? RESOLVER_TYPES[0][0]);
  const [edits, setEdits] = useState<Record<string, string>>({});
  // after a save the list is read again: the form then shows what is stored
  useEffect(() => setEdits({}), [props.data]);
  const defaults = useLoad(() => get<Record<string, unknown>>(`/resolver/${seg(type)}/default`), [
    type,
  ]);
  const act = useAction();
  const canWrite = hasRight(session, "resolverwrite");
  const stored = props.data ?? {};
  const specs = specsOf(type, stored);
  // what the form starts with: the stored values, else the type's defaults
  const base: Record<string, string> = {};
  for (const s of specs) {
    base[s.key] = textOf(s.key in stored ? stored[s.key] : defaults.data?.[s.key]);
  }
  const values = { ...base, ...edits };
  const shown = visibleSpecs(specs, values);

  /** The parameters of a save (`forTest`: of a test) from the form's values. */
  function paramsOf(forTest: boolean): Record<string, unknown> {
    const params: Record<string, unknown> = { type };
    for (const s of specs) {
      const isShown = shown.includes(s);
      const isEdited = s.key in edits && edits[s.key] !== base[s.key];
      let send: boolean;
      if (isNew) send = isShown && values[s.key] !== "";
      // an update sends what changed (the rest stays as stored); a test needs the whole
      // definition: the stored keys (secrets as the placeholder that keeps them) and the edits
      else if (forTest) send = s.key in stored || (isShown && isEdited);
      else send = isEdited;
      if (send) params[s.key] = wireValue(s, values[s.key]);
    }
    return params;
  }

  const groups: [string, FieldSpec[]][] = [];
  for (const s of shown) {
    const g = groups.find(([n]) => n === (s.group ?? ""));
    if (g) g[1].push(s);
    else groups.push([s.group ?? "", [s]]);
  }
  return (
    <Form
      label={isNew ? "New resolver" : `Edit resolver ${props.name}`}
      onSubmit={() =>
        act.run(async () => {
          await api("POST", `/resolver/${seg(name)}`, paramsOf(false));
          props.onSaved(name);
        })}
    >
      <Field
        label="Resolver name"
        value={name}
        onValue={setName}
        required
        disabled={!isNew}
        hint={isNew ? "Letters, digits and _ - ." : undefined}
      />
      <Select
        label="Resolver type"
        value={type}
        onValue={(t) => {
          setType(t);
          setEdits({});
        }}
        options={RESOLVER_TYPES}
        disabled={!isNew}
      />
      <LoadState error={defaults.error} loading={defaults.loading && !defaults.data} />
      {defaults.data && groups.map(([group, list]) => (
        <fieldset key={`${type}/${group}`}>
          <legend>{group}</legend>
          {list.map((s) => (
            <ResolverField
              key={s.key}
              spec={s}
              value={values[s.key] ?? ""}
              disabled={!canWrite}
              onValue={(v) => setEdits({ ...edits, [s.key]: v })}
            />
          ))}
        </fieldset>
      ))}
      {canWrite && (
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>Save resolver</button>
          <button
            type="button"
            disabled={act.busy}
            onClick={() =>
              act.run(async () => {
                const params = paramsOf(true);
                if (name) params.name = name;
                if (!isNew) params.resolver = props.name;
                const r = await api("POST", "/resolver/test", params);
                const text = r.detail?.description ?? (r.value ? "The resolver works" : "");
                if (!r.value || (typeof r.value === "number" && r.value < 0)) {
                  throw new Error(text || "The resolver test failed");
                }
                return text;
              }, "Resolver test passed")}
          >
            Test resolver
          </button>
        </div>
      )}
      <Outcome error={act.error} note={act.note} />
    </Form>
  );
}

/** `#/resolvers`. */
export function ResolversPage() {
  const { session } = useSession();
  const list = useLoad(() => get<Resolvers>("/resolver/"), []);
  const [editing, setEditing] = useState<string | undefined>();
  // a new form after each save: a saved new resolver's values and title do not stay
  const [round, setRound] = useState(0);
  const act = useAction();
  const names = Object.keys(list.data ?? {}).sort();
  const current = editing ? list.data?.[editing] : undefined;
  const typeName = (t: string) => RESOLVER_TYPES.find(([k]) => k === t)?.[1] ?? t;
  return (
    <Page
      title="Resolvers"
      actions={hasRight(session, "resolverwrite") && (
        <button
          type="button"
          class="primary"
          onClick={() => {
            setEditing("");
            setRound(round + 1);
          }}
        >
          New resolver
        </button>
      )}
    >
      <LoadState error={list.error} loading={list.loading && !list.data} />
      {list.data && names.length === 0 && <p class="muted">There is no resolver yet.</p>}
      {names.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Editable</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {names.map((n) => {
              const r = list.data![n];
              const editable = isOn(textOf(r.data.Editable ?? r.data.EDITABLE));
              return (
                <tr key={n}>
                  <td data-label="Name">{n}</td>
                  <td data-label="Type">{typeName(r.type)}</td>
                  <td data-label="Editable">{editable ? "yes" : "no"}</td>
                  <td class="actions">
                    <button
                      type="button"
                      onClick={() => {
                        setEditing(n);
                        setRound(round + 1);
                      }}
                      aria-label={`Edit ${n}`}
                    >
                      Edit
                    </button>
                    {hasRight(session, "resolverdelete") && (
                      <ConfirmButton
                        label={`Delete ${n}`}
                        question={`Delete resolver ${n}?`}
                        danger
                        onConfirm={() =>
                          act.run(async () => {
                            await api("DELETE", `/resolver/${seg(n)}`);
                            if (editing === n) setEditing(undefined);
                            list.reload();
                          }, `Resolver ${n} deleted`)}
                      />
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <Outcome error={act.error} note={act.note} />
      {editing !== undefined && (editing === "" || current) && (
        <Panel title={editing ? `Resolver ${editing}` : "New resolver"}>
          <ResolverForm
            key={`${editing}/${round}`}
            name={editing || undefined}
            type={current?.type}
            data={current?.data}
            onSaved={(saved) => {
              // a new resolver's form starts afresh (empty, titled New resolver); an edited
              // one keeps what was just saved
              if (!editing) {
                setRound(round + 1);
              }
              list.reload();
              announce(`Resolver ${saved} saved`);
            }}
          />
        </Panel>
      )}
    </Page>
  );
}
