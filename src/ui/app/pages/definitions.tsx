/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * A list of named definitions (RADIUS servers, SMTP servers, machine
 * resolvers) with a create/edit form, a test and delete.
 *
 * @module
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import {
  Check,
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

/** One input of a definition. */
export interface FieldSpec {
  key: string;
  label: string;
  type?: "text" | "password" | "number" | "bool";
  default?: string;
  options?: string[];
  required?: boolean;
}

/** How a kind of definition is read, shown, saved and tested. */
export interface DefinitionKind {
  title: string;
  noun: string;
  listPath: string;
  itemPath: (id: string) => string;
  /** Fields per type (key "" when the kind has no types). */
  fields: Record<string, FieldSpec[]>;
  columns: FieldSpec[];
  readRight: string;
  writeRight: string;
  deleteRight: string;
  /** A stored record as form values (type under "type"). */
  valuesOf?: (record: Record<string, unknown>) => Record<string, string>;
  /** The list's value as records by identifier, where it is not already that map. */
  listOf?: (value: unknown) => Record<string, Record<string, unknown>>;
  test?: { label: string; path: string; fields: FieldSpec[] };
}

function defaultsOf(fields: FieldSpec[]): Record<string, string> {
  return Object.fromEntries(fields.map((f) => [f.key, f.default ?? ""]));
}

function plain(record: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record).map(([k, v]) => [k, v === null || v === undefined ? "" : String(v)]),
  );
}

/** Inputs for `fields`. */
export function SpecFields(
  props: {
    fields: FieldSpec[];
    values: Record<string, string>;
    onValues: (v: Record<string, string>) => void;
  },
) {
  return (
    <>
      {props.fields.map((f) => {
        const v = props.values[f.key] ?? "";
        const set = (nv: string) => props.onValues({ ...props.values, [f.key]: nv });
        if (f.type === "bool") {
          return (
            <Check
              key={f.key}
              label={f.label}
              checked={v === "1" || v === "true" || v === "True"}
              onChecked={(on) => set(on ? "1" : "0")}
            />
          );
        }
        if (f.options) {
          return <Select key={f.key} label={f.label} value={v} onValue={set} options={f.options} />;
        }
        return (
          <Field
            key={f.key}
            label={f.label}
            type={f.type ?? "text"}
            value={v}
            onValue={set}
            required={f.required}
            autoComplete="off"
          />
        );
      })}
    </>
  );
}

function paramsOf(fields: FieldSpec[], values: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[f.key] ?? "";
    if (f.type === "bool") out[f.key] = v === "1" || v === "true" || v === "True";
    else if (f.type === "number") {
      if (v !== "") out[f.key] = Number(v);
    } else out[f.key] = v;
  }
  return out;
}

function DefinitionForm(
  props: {
    kind: DefinitionKind;
    id?: string;
    record?: Record<string, unknown>;
    onSaved: () => void;
  },
) {
  const k = props.kind;
  const { session } = useSession();
  const types = Object.keys(k.fields);
  const initial = props.record ? (k.valuesOf ?? plain)(props.record) : {};
  const [id, setId] = useState(props.id ?? "");
  const [type, setType] = useState(initial.type || types[0]);
  const [values, setValues] = useState<Record<string, string>>({
    ...defaultsOf(k.fields[initial.type || types[0]] ?? []),
    ...initial,
  });
  const [testValues, setTestValues] = useState<Record<string, string>>({});
  const act = useAction();
  const fields = k.fields[type] ?? [];
  const params = () => ({ ...(type ? { type } : {}), ...paramsOf(fields, values) });
  const canWrite = hasRight(session, k.writeRight);
  return (
    <Form
      label={props.id ? `Edit ${k.noun} ${props.id}` : `New ${k.noun}`}
      onSubmit={() =>
        act.run(async () => {
          await api("POST", k.itemPath(id), params());
          props.onSaved();
        }, `${k.noun} ${id} saved`)}
    >
      <Field label="Identifier" value={id} onValue={setId} required disabled={!!props.id} />
      {types.length > 1 && (
        <Select
          label="Type"
          value={type}
          onValue={(t) => {
            setType(t);
            setValues({ ...defaultsOf(k.fields[t]), ...values });
          }}
          options={types}
        />
      )}
      <SpecFields fields={fields} values={values} onValues={setValues} />
      {canWrite && <button type="submit" class="primary" disabled={act.busy}>Save {k.noun}</button>}
      {canWrite && k.test && (
        <fieldset>
          <legend>{k.test.label}</legend>
          <SpecFields fields={k.test.fields} values={testValues} onValues={setTestValues} />
          <button
            type="button"
            disabled={act.busy}
            onClick={() =>
              act.run(async () => {
                const r = await api<unknown>("POST", k.test!.path, {
                  identifier: id,
                  name: id,
                  ...params(),
                  ...paramsOf(k.test!.fields, testValues),
                });
                const d = r.detail?.description ?? r.detail?.message;
                if (r.value === false) throw new Error(d || "The test failed");
                return d || "The test passed";
              })}
          >
            {k.test.label}
          </button>
        </fieldset>
      )}
      <Outcome error={act.error} note={act.note} />
    </Form>
  );
}

/** A definitions page for `kind`; `children` follow the list (e.g. related lists). */
export function DefinitionsPage(props: { kind: DefinitionKind; children?: ComponentChildren }) {
  const k = props.kind;
  const { session } = useSession();
  const list = useLoad(async () => {
    const value = await get<unknown>(k.listPath);
    return k.listOf ? k.listOf(value) : value as Record<string, Record<string, unknown>>;
  }, []);
  const [editing, setEditing] = useState<string | undefined>();
  const act = useAction();
  const ids = Object.keys(list.data ?? {}).sort();
  return (
    <Page
      title={k.title}
      actions={hasRight(session, k.writeRight) && (
        <button
          type="button"
          class="primary"
          onClick={() => setEditing("")}
        >
          New {k.noun}
        </button>
      )}
    >
      <LoadState error={list.error} loading={list.loading && !list.data} />
      {list.data && ids.length === 0 && <p class="muted">There is no {k.noun} yet.</p>}
      {ids.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Identifier</th>
              {k.columns.map((c) => <th scope="col" key={c.key}>{c.label}</th>)}
              <th scope="col">
                <span class="sr-only">Change</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {ids.map((id) => {
              const values = (k.valuesOf ?? plain)(list.data![id]);
              return (
                <tr key={id}>
                  <td data-label="Identifier">{id}</td>
                  {k.columns.map((c) => <td key={c.key} data-label={c.label}>{values[c.key]}</td>)}
                  <td class="actions">
                    <button type="button" onClick={() => setEditing(id)}>Edit {id}</button>
                    {hasRight(session, k.deleteRight) && (
                      <ConfirmButton
                        label={`Delete ${id}`}
                        question={`Delete ${k.noun} ${id}?`}
                        danger
                        onConfirm={() =>
                          act.run(async () => {
                            await api("DELETE", k.itemPath(id));
                            list.reload();
                          }, `${k.noun} ${id} deleted`)}
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
      {editing !== undefined && (
        <Panel title={editing ? `${k.noun} ${editing}` : `New ${k.noun}`}>
          <DefinitionForm
            key={editing}
            kind={k}
            id={editing || undefined}
            record={editing ? list.data?.[editing] : undefined}
            onSaved={list.reload}
          />
        </Panel>
      )}
      {props.children}
    </Page>
  );
}

/** Path of one definition under `base`. */
export function itemPath(base: string): (id: string) => string {
  return (id) => `${base}${seg(id)}`;
}
