/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Realms: list, create and edit (resolvers and priorities), default realm,
 * delete.
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
  csv,
  Field,
  Form,
  LoadState,
  Outcome,
  Page,
  Panel,
  useAction,
  useLoad,
} from "../ui.tsx";
import type { Realms } from "./users.tsx";
import type { Resolvers } from "./resolvers.tsx";

/** A realm's resolvers in the order a lookup asks them: by priority (none: 1000), then name. */
function byPriority<T extends { name: string; priority: number | null }>(list: T[]): T[] {
  return [...list].sort((a, b) =>
    (a.priority ?? 1000) - (b.priority ?? 1000) || a.name.localeCompare(b.name)
  );
}

function RealmForm(
  props: { name?: string; realms: Realms; resolvers?: string[]; onSaved: (name: string) => void },
) {
  const existing = props.name ? props.realms[props.name] : undefined;
  const [name, setName] = useState(props.name ?? "");
  const [chosen, setChosen] = useState<string[]>(existing?.resolver.map((r) => r.name) ?? []);
  const [typed, setTyped] = useState(chosen.join(", "));
  const [prio, setPrio] = useState<Record<string, string>>(
    Object.fromEntries(
      (existing?.resolver ?? []).filter((r) => r.priority !== null).map((r) => [
        r.name,
        String(r.priority),
      ]),
    ),
  );
  const act = useAction();
  const list = props.resolvers ? chosen : csv(typed);
  return (
    <Form
      label={props.name ? `Edit realm ${props.name}` : "New realm"}
      onSubmit={() =>
        act.run(async () => {
          const params: Record<string, unknown> = { resolvers: list.join(",") };
          for (const r of list) {
            // a priority counts only as a JSON integer (spec)
            if (prio[r]?.trim()) params[`priority.${r}`] = Number(prio[r]);
          }
          const res = await api<{ failed: string[] }>("POST", `/realm/${seg(name)}`, params);
          if (res.value.failed?.length) {
            throw new Error(`These resolvers could not be added: ${res.value.failed.join(", ")}`);
          }
          props.onSaved(name);
        })}
    >
      <Field label="Realm name" value={name} onValue={setName} required disabled={!!props.name} />
      {props.resolvers
        ? (
          <fieldset>
            <legend>Resolvers</legend>
            {props.resolvers.length === 0 && <p class="muted">There is no resolver yet.</p>}
            {props.resolvers.map((r) => (
              <div class="row" key={r}>
                <Check
                  label={r}
                  checked={chosen.includes(r)}
                  onChecked={(on) => setChosen(on ? [...chosen, r] : chosen.filter((x) => x !== r))}
                />
                {chosen.includes(r) && (
                  <Field
                    label={`Priority of ${r}`}
                    type="number"
                    inputMode="numeric"
                    min={1}
                    max={999}
                    step={1}
                    value={prio[r] ?? ""}
                    onValue={(v) => setPrio({ ...prio, [r]: v })}
                    hint="Lower numbers are asked first; empty: after those with a number"
                  />
                )}
              </div>
            ))}
          </fieldset>
        )
        : <Field label="Resolvers" value={typed} onValue={setTyped} hint="comma separated" />}
      <button type="submit" class="primary" disabled={act.busy}>Save realm</button>
      <Outcome error={act.error} note={act.note} />
    </Form>
  );
}

/** `#/realms`. */
export function RealmsPage() {
  const { session } = useSession();
  const realms = useLoad(() => get<Realms>("/realm/"), []);
  const canReadResolvers = hasRight(session, "resolverread");
  const resolvers = useLoad(
    () => canReadResolvers ? get<Resolvers>("/resolver/") : Promise.resolve(undefined),
    [],
  );
  const [editing, setEditing] = useState<string | undefined>();
  // a new form after each save: a saved new realm's values and title do not stay
  const [round, setRound] = useState(0);
  const act = useAction();
  const canWrite = hasRight(session, "resolverwrite");
  const canDelete = hasRight(session, "resolverdelete");
  const names = Object.keys(realms.data ?? {}).sort();
  return (
    <Page
      title="Realms"
      actions={canWrite && (
        <button
          type="button"
          class="primary"
          onClick={() => {
            setEditing("");
            setRound(round + 1);
          }}
        >
          New realm
        </button>
      )}
    >
      <LoadState error={realms.error} loading={realms.loading && !realms.data} />
      {realms.data && names.length === 0 && <p class="muted">There is no realm yet.</p>}
      {names.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Realm</th>
              <th scope="col">Default</th>
              <th scope="col">Resolvers (priority)</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {names.map((n) => {
              const r = realms.data![n];
              return (
                <tr key={n}>
                  <td data-label="Realm">{n}</td>
                  <td data-label="Default">{r.default ? "default" : ""}</td>
                  <td data-label="Resolvers">
                    {byPriority(r.resolver).map((x) =>
                      x.priority !== null ? `${x.name} (${x.priority})` : x.name
                    ).join(", ")}
                  </td>
                  <td class="actions">
                    {canWrite && (
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
                    )}
                    {canWrite && !r.default && (
                      <button
                        type="button"
                        onClick={() =>
                          act.run(async () => {
                            await api("POST", `/defaultrealm/${seg(n)}`);
                            realms.reload();
                          }, `${n} is the default realm`)}
                      >
                        Make {n} default
                      </button>
                    )}
                    {canDelete && (
                      <ConfirmButton
                        label={`Delete ${n}`}
                        question={`Delete realm ${n}?`}
                        danger
                        onConfirm={() =>
                          act.run(async () => {
                            await api("DELETE", `/realm/${seg(n)}`);
                            realms.reload();
                          }, `Realm ${n} deleted`)}
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
      {editing !== undefined && realms.data && (!canReadResolvers || resolvers.data) && (
        <Panel title={editing ? `Realm ${editing}` : "New realm"}>
          <RealmForm
            key={`${editing}/${round}`}
            name={editing || undefined}
            realms={realms.data}
            resolvers={resolvers.data ? Object.keys(resolvers.data).sort() : undefined}
            onSaved={(saved) => {
              // a new realm's form starts afresh; an edited one keeps what was just saved
              if (!editing) {
                setRound(round + 1);
              }
              realms.reload();
              announce(`Realm ${saved} saved`);
            }}
          />
        </Panel>
      )}
    </Page>
  );
}
