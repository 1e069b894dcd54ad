/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Periodic tasks (`/periodictask/`): the list with each node's last run, switching a task on and
 * off, and a form whose module options are typed from `GET /periodictask/options/<module>`
 * (a flag as a checkbox, text as a text field, required as the server says, the description as
 * help); the nodes to choose from are those of `GET /periodictask/nodes` and the task's own.
 *
 * @module
 */
import { useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import { type FieldSpec, TypedField } from "../typed.tsx";
import {
  announce,
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
  yesNo,
} from "../ui.tsx";

/** A task as `GET /periodictask/` lists it. */
interface Task {
  id: number;
  name: string;
  active: boolean;
  interval: string;
  nodes: string[];
  taskmodule: string;
  retry_if_failed: boolean;
  ordering: number;
  last_update: string;
  options: Record<string, string>;
  last_runs: Record<string, string>;
}

/** One option of a task module, as `GET /periodictask/options/<module>` describes it. */
interface TaskOption {
  type: string;
  description?: string;
  required?: boolean;
}

/** A module option as a typed field; flags are stored as privacyIDEA stores them. */
function optionSpec(key: string, o: TaskOption): FieldSpec {
  return o.type === "bool"
    ? { key, type: "bool", help: o.description, bool: ["True", "False"] }
    : { key, type: "text", help: o.description, required: o.required };
}

function TaskForm(
  props: { task?: Task; modules: string[]; nodes: string[]; onSaved: (name: string) => void },
) {
  const { session } = useSession();
  const t = props.task;
  const [name, setName] = useState(t?.name ?? "");
  const [module, setModule] = useState(t?.taskmodule ?? props.modules[0] ?? "");
  const [interval, setCron] = useState(t?.interval ?? "*/5 * * * *");
  const [nodes, setNodes] = useState<string[]>(t?.nodes ?? props.nodes.slice(0, 1));
  const [ordering, setOrdering] = useState(String(t?.ordering ?? 0));
  const [active, setActive] = useState(t?.active ?? true);
  const [retry, setRetry] = useState(t?.retry_if_failed ?? true);
  const [values, setValues] = useState<Record<string, string>>(t?.options ?? {});
  const options = useLoad(
    (): Promise<Record<string, TaskOption>> =>
      module ? get(`/periodictask/options/${seg(module)}`) : Promise.resolve({}),
    [module],
  );
  const act = useAction();
  const canWrite = hasRight(session, "periodictask_write");
  const specs = Object.entries(options.data ?? {}).map(([k, o]) => optionSpec(k, o));
  const nodeChoices = [...new Set([...props.nodes, ...(t?.nodes ?? [])])];
  return (
    <Form
      label={t ? `Edit periodic task ${t.name}` : "New periodic task"}
      onSubmit={() =>
        act.run(async () => {
          if (nodes.length === 0) throw new Error("Choose at least one node");
          // the module's options only; a flag left alone is stored as off
          const sent: Record<string, string> = {};
          for (const s of specs) {
            const v = values[s.key] ?? (s.type === "bool" ? "False" : "");
            if (v !== "") sent[s.key] = v;
          }
          await api("POST", "/periodictask/", {
            ...(t ? { id: t.id } : {}),
            name,
            taskmodule: module,
            interval,
            nodes: nodes.join(", "),
            ordering,
            active,
            retry_if_failed: retry,
            options: sent,
          });
          props.onSaved(name);
        })}
    >
      <Field label="Task name" value={name} onValue={setName} required disabled={!canWrite} />
      <Select
        label="Task module"
        value={module}
        onValue={(m) => {
          setModule(m);
          setValues({});
        }}
        options={props.modules}
        disabled={!canWrite}
      />
      <Field
        label="Interval"
        value={interval}
        onValue={setCron}
        required
        disabled={!canWrite}
        hint="Crontab: minute hour day month weekday, e.g. */5 * * * * (every 5 minutes) or 0 3 * * 1 (Mondays 03:00), in the server's time zone."
      />
      <Field
        label="Order"
        type="number"
        inputMode="numeric"
        step={1}
        value={ordering}
        onValue={setOrdering}
        required
        disabled={!canWrite}
        hint="Tasks due at the same time run by this number, lowest first."
      />
      <Check
        label="Active"
        checked={active}
        onChecked={setActive}
        disabled={!canWrite}
      />
      <Check
        label="Retry if failed"
        checked={retry}
        onChecked={setRetry}
        disabled={!canWrite}
        hint="A failed run is not recorded, so it is tried again a minute later."
      />
      <fieldset class="multi">
        <legend>Nodes</legend>
        <small class="help">The nodes (server.node_name) that run the task.</small>
        {nodeChoices.map((n) => (
          <Check
            key={n}
            label={n}
            checked={nodes.includes(n)}
            disabled={!canWrite}
            onChecked={(on) => setNodes(on ? [...nodes, n] : nodes.filter((x) => x !== n))}
          />
        ))}
      </fieldset>
      <fieldset>
        <legend>Options of {module}</legend>
        <LoadState error={options.error} loading={options.loading && !options.data} />
        {specs.map((s) => (
          <TypedField
            key={`${module}/${s.key}`}
            spec={s}
            value={values[s.key] ?? (s.type === "bool" ? "False" : "")}
            disabled={!canWrite}
            onValue={(v) => setValues({ ...values, [s.key]: v })}
          />
        ))}
      </fieldset>
      {canWrite && (
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>Save periodic task</button>
        </div>
      )}
      <Outcome error={act.error} note={act.note} />
    </Form>
  );
}

/** The last runs of a task, per node. */
function lastRuns(t: Task): string {
  const runs = Object.entries(t.last_runs);
  return runs.length === 0 ? "never" : runs.map(([n, at]) => `${n}: ${at}`).join("; ");
}

/** `#/periodic`. */
export function PeriodicTasksPage() {
  const { session } = useSession();
  const list = useLoad(() => get<Task[]>("/periodictask/"), []);
  const modules = useLoad(() => get<string[]>("/periodictask/taskmodules"), []);
  const nodes = useLoad(() => get<string[]>("/periodictask/nodes"), []);
  const [editing, setEditing] = useState<number | "new" | undefined>();
  const [round, setRound] = useState(0);
  const act = useAction();
  const canWrite = hasRight(session, "periodictask_write");
  const tasks = list.data ?? [];
  const current = typeof editing === "number" ? tasks.find((x) => x.id === editing) : undefined;
  const open = (e: number | "new") => {
    setEditing(e);
    setRound(round + 1);
  };
  return (
    <Page
      title="Periodic tasks"
      actions={canWrite && (
        <button type="button" class="primary" onClick={() => open("new")}>
          New periodic task
        </button>
      )}
    >
      <LoadState
        error={list.error ?? modules.error ?? nodes.error}
        loading={list.loading && !list.data}
      />
      {list.data && tasks.length === 0 && <p class="muted">There is no periodic task yet.</p>}
      {tasks.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Module</th>
              <th scope="col">Interval</th>
              <th scope="col">Nodes</th>
              <th scope="col">Active</th>
              <th scope="col">Last run</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((x) => (
              <tr key={x.id}>
                <td data-label="Name">{x.name}</td>
                <td data-label="Module">{x.taskmodule}</td>
                <td data-label="Interval">
                  <code>{x.interval}</code>
                </td>
                <td data-label="Nodes">{x.nodes.join(", ")}</td>
                <td data-label="Active">{yesNo(x.active)}</td>
                <td data-label="Last run">{lastRuns(x)}</td>
                <td class="actions">
                  <button type="button" aria-label={`Edit ${x.name}`} onClick={() => open(x.id)}>
                    Edit
                  </button>
                  {canWrite && (
                    <button
                      type="button"
                      disabled={act.busy}
                      onClick={() =>
                        act.run(async () => {
                          await api(
                            "POST",
                            `/periodictask/${x.active ? "disable" : "enable"}/${x.id}`,
                          );
                          list.reload();
                        }, `Periodic task ${x.name} ${x.active ? "disabled" : "enabled"}`)}
                    >
                      {x.active ? "Disable" : "Enable"} {x.name}
                    </button>
                  )}
                  {canWrite && (
                    <ConfirmButton
                      label={`Delete ${x.name}`}
                      question={`Delete periodic task ${x.name}?`}
                      danger
                      onConfirm={() =>
                        act.run(async () => {
                          await api("DELETE", `/periodictask/${x.id}`);
                          if (editing === x.id) setEditing(undefined);
                          list.reload();
                        }, `Periodic task ${x.name} deleted`)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Outcome error={act.error} note={act.note} />
      {editing !== undefined && (editing === "new" || current) && modules.data && nodes.data && (
        <Panel title={current ? `Periodic task ${current.name}` : "New periodic task"}>
          <TaskForm
            // an edited task's form is built again from what the server then lists
            key={`${editing}/${round}/${JSON.stringify(current ?? {})}`}
            task={current}
            modules={modules.data}
            nodes={nodes.data}
            onSaved={(saved) => {
              if (editing === "new") setRound(round + 1);
              list.reload();
              announce(`Periodic task ${saved} saved`);
            }}
          />
        </Panel>
      )}
    </Page>
  );
}
