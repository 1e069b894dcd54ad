/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Resolvers: list, create and edit (the type's keys from
 * `/resolver/<type>/default`), test without saving, delete.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import {
  ConfirmButton,
  Field,
  Form,
  LoadState,
  Outcome,
  Page,
  Panel,
  Select,
  TextArea,
  useAction,
  useLoad,
} from "../ui.tsx";

/** `GET /resolver/`'s value. */
export interface Resolvers {
  [name: string]: { resolvername: string; type: string; data: Record<string, string> };
}

const RESOLVER_TYPES = ["passwdresolver", "sqlresolver", "ldapresolver"];
const LONG_KEYS = new Set(["Map", "Where", "conParams", "USERINFO", "SEARCHFILTER"]);
const SECRET_KEY_REGEXP = /pass(word)?$|^BINDPW$/i;

/** Config key inputs: secrets as password fields, long values as text areas. */
export function ConfigFields(
  props: { config: Record<string, string>; onConfig: (c: Record<string, string>) => void },
) {
  return (
    <>
      {Object.entries(props.config).map(([k, v]) => {
        const set = (nv: string) => props.onConfig({ ...props.config, [k]: nv });
        if (LONG_KEYS.has(k) || v.length > 60) {
          return <TextArea key={k} label={k} value={v} onValue={set} />;
        }
        return (
          <Field
            key={k}
            label={k}
            value={v}
            onValue={set}
            type={SECRET_KEY_REGEXP.test(k) ? "password" : "text"}
            autoComplete="off"
          />
        );
      })}
    </>
  );
}

function ResolverForm(
  props: { name?: string; type?: string; data?: Record<string, string>; onSaved: () => void },
) {
  const { session } = useSession();
  const [name, setName] = useState(props.name ?? "");
  const [type, setType] = useState(props.type ?? RESOLVER_TYPES[0]);
  const [config, setConfig] = useState<Record<string, string>>(props.data ?? {});
  const defaults = useLoad(() => get<Record<string, string>>(`/resolver/${seg(type)}/default`), [
    type,
  ]);
  useEffect(() => {
    // the type's keys with their defaults, overlaid with the stored values
    if (defaults.data) {
      const base = props.type === type ? props.data ?? {} : {};
      setConfig({
        ...Object.fromEntries(Object.entries(defaults.data).map(([k, v]) => [k, String(v)])),
        ...base,
      });
    }
  }, [defaults.data]);
  const act = useAction();
  const canWrite = hasRight(session, "resolverwrite");
  return (
    <Form
      label={props.name ? `Edit resolver ${props.name}` : "New resolver"}
      onSubmit={() =>
        act.run(async () => {
          await api("POST", `/resolver/${seg(name)}`, { type, ...config });
          props.onSaved();
        }, `Resolver ${name} saved`)}
    >
      <Field
        label="Resolver name"
        value={name}
        onValue={setName}
        required
        disabled={!!props.name}
      />
      <Select
        label="Resolver type"
        value={type}
        onValue={setType}
        options={RESOLVER_TYPES}
      />
      <LoadState error={defaults.error} loading={defaults.loading} />
      <ConfigFields config={config} onConfig={setConfig} />
      {canWrite && (
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>Save resolver</button>
          <button
            type="button"
            disabled={act.busy}
            onClick={() =>
              act.run(async () => {
                const r = await api("POST", "/resolver/test", { type, name, ...config });
                const text = r.detail?.description ?? (r.value ? "The resolver works" : "");
                if (!r.value) throw new Error(text || "The resolver test failed");
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
  const act = useAction();
  const names = Object.keys(list.data ?? {}).sort();
  const current = editing && editing !== "" ? list.data?.[editing] : undefined;
  return (
    <Page
      title="Resolvers"
      actions={hasRight(session, "resolverwrite") && (
        <button
          type="button"
          class="primary"
          onClick={() => setEditing("")}
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
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {names.map((n) => (
              <tr key={n}>
                <td data-label="Name">{n}</td>
                <td data-label="Type">{list.data![n].type}</td>
                <td class="actions">
                  <button type="button" onClick={() => setEditing(n)} aria-label={`Edit ${n}`}>
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
                          list.reload();
                        }, `Resolver ${n} deleted`)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Outcome error={act.error} note={act.note} />
      {editing !== undefined && (
        <Panel title={editing ? `Resolver ${editing}` : "New resolver"}>
          <ResolverForm
            key={editing}
            name={editing || undefined}
            type={current?.type}
            data={current?.data}
            onSaved={() => {
              list.reload();
            }}
          />
        </Panel>
      )}
    </Page>
  );
}
