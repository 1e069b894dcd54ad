/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Event handlers: list (enable, disable, delete) and the editor with the
 * module's actions, options and conditions from `/event/*`.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
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
  Panel,
  Select,
  useAction,
  useLoad,
  yesNo,
} from "../ui.tsx";

/** An event handler definition. */
interface EventDef {
  id: number;
  name: string;
  active: boolean;
  ordering: number;
  position: string;
  event: string[];
  handlermodule: string;
  action: string;
  options: Record<string, string>;
  conditions: Record<string, string>;
}

interface OptionDef {
  type: string;
  description?: string;
  required?: boolean;
  value?: (string | number)[];
  visibleIf?: string;
  visibleValue?: string;
}

/** `#/events`. */
export function EventsPage() {
  const { session } = useSession();
  const list = useLoad(() => get<EventDef[]>("/event/"), []);
  const act = useAction();
  const canWrite = hasRight(session, "eventhandling_write");
  return (
    <Page
      title="Event handlers"
      actions={canWrite && (
        <a class="button primary" href={href(["events", "new"])}>New event handler</a>
      )}
    >
      <LoadState error={list.error} loading={list.loading && !list.data} />
      {list.data && list.data.length === 0 && <p class="muted">There is no event handler yet.</p>}
      {list.data && list.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Active</th>
              <th scope="col">Events</th>
              <th scope="col">Handler</th>
              <th scope="col">Action</th>
              <th scope="col">Position</th>
              <th scope="col">Order</th>
              <th scope="col">
                <span class="sr-only">Change</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((e) => (
              <tr key={e.id}>
                <td>
                  <a href={href(["events", e.id])}>{e.name}</a>
                </td>
                <td data-label="Active">{yesNo(e.active)}</td>
                <td data-label="Events">{e.event.join(", ")}</td>
                <td data-label="Handler">{e.handlermodule}</td>
                <td data-label="Action">{e.action}</td>
                <td data-label="Position">{e.position}</td>
                <td data-label="Order">{e.ordering}</td>
                <td class="actions">
                  {canWrite && (
                    <button
                      type="button"
                      onClick={() =>
                        act.run(async () => {
                          await api("POST", `/event/${e.active ? "disable" : "enable"}/${e.id}`);
                          list.reload();
                        }, `Event handler ${e.name} ${e.active ? "disabled" : "enabled"}`)}
                    >
                      {e.active ? "Disable" : "Enable"} {e.name}
                    </button>
                  )}
                  {canWrite && (
                    <ConfirmButton
                      label={`Delete ${e.name}`}
                      question={`Delete event handler ${e.name}?`}
                      danger
                      onConfirm={() =>
                        act.run(async () => {
                          await api("DELETE", `/event/${e.id}`);
                          list.reload();
                        }, `Event handler ${e.name} deleted`)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Outcome error={act.error} note={act.note} />
    </Page>
  );
}

function EventForm(props: { def?: EventDef; available: string[]; modules: string[] }) {
  const d = props.def;
  const { session } = useSession();
  const [name, setName] = useState(d?.name ?? "");
  const [events, setEvents] = useState<string[]>(d?.event ?? []);
  const [module, setModule] = useState(d?.handlermodule ?? props.modules[0] ?? "");
  const [action, setAction] = useState(d?.action ?? "");
  const [position, setPosition] = useState(d?.position ?? "post");
  const [ordering, setOrdering] = useState(String(d?.ordering ?? 0));
  const [active, setActive] = useState(d?.active ?? true);
  const [options, setOptions] = useState<Record<string, string>>(d?.options ?? {});
  const [conditions, setConditions] = useState<Record<string, string>>(d?.conditions ?? {});
  const [newCond, setNewCond] = useState("");
  const actions = useLoad(
    () => get<Record<string, Record<string, OptionDef>>>(`/event/actions/${seg(module)}`),
    [module],
  );
  const positions = useLoad(() => get<string[]>(`/event/positions/${seg(module)}`), [module]);
  const conds = useLoad(
    () => get<Record<string, { desc: string }>>(`/event/conditions/${seg(module)}`),
    [module],
  );
  const actionNames = Object.keys(actions.data ?? {});
  const a = action || actionNames[0] || "";
  useEffect(() => {
    if (actions.data && action && !(action in actions.data)) setAction("");
  }, [actions.data]);
  const optionDefs = actions.data?.[a] ?? {};
  const act = useAction();
  return (
    <Form
      label={d ? `Edit event handler ${d.name}` : "New event handler"}
      onSubmit={() =>
        act.run(async () => {
          const params: Record<string, unknown> = {
            name,
            event: events.join(","),
            handlermodule: module,
            action: a,
            position,
            ordering,
            active,
            conditions,
          };
          if (d) params.id = d.id;
          for (const [k, v] of Object.entries(options)) {
            if (k in optionDefs && v !== "") params[`option.${k}`] = v;
          }
          const r = await api<number>("POST", "/event", params);
          if (!d) go(["events", r.value]);
        }, `Event handler ${name} saved`)}
    >
      <Field label="Name" value={name} onValue={setName} required />
      <label class="field">
        <span>Events</span>
        <select
          multiple
          size={8}
          onChange={(e) =>
            setEvents(
              [...(e.target as HTMLSelectElement).selectedOptions].map((o) => o.value),
            )}
        >
          {props.available.map((ev) => (
            <option key={ev} value={ev} selected={events.includes(ev)}>{ev}</option>
          ))}
        </select>
      </label>
      <Select label="Handler module" value={module} onValue={setModule} options={props.modules} />
      <LoadState error={actions.error ?? positions.error ?? conds.error} />
      {actionNames.length > 0 && (
        <Select label="Action" value={a} onValue={setAction} options={actionNames} />
      )}
      {positions.data && (
        <Select label="Position" value={position} onValue={setPosition} options={positions.data} />
      )}
      <Field label="Order" type="number" value={ordering} onValue={setOrdering} />
      <Check label="Active" checked={active} onChecked={setActive} />
      {Object.keys(optionDefs).length > 0 && (
        <fieldset>
          <legend>Options of {a}</legend>
          {Object.entries(optionDefs).map(([k, o]) => {
            if (o.visibleIf && options[o.visibleIf] !== o.visibleValue) return null;
            const set = (v: string) => setOptions({ ...options, [k]: v });
            const v = options[k] ?? "";
            if (o.type === "bool") {
              return (
                <Check
                  key={k}
                  label={k}
                  title={o.description}
                  checked={v === "1" || v === "True" || v === "true"}
                  onChecked={(on) => set(on ? "1" : "")}
                />
              );
            }
            if (o.value && o.value.length > 0) {
              return (
                <Select
                  key={k}
                  label={k}
                  value={v}
                  onValue={set}
                  options={[["", "not set"], ...o.value.map(String)]}
                  required={o.required}
                />
              );
            }
            return (
              <Field
                key={k}
                label={k}
                value={v}
                onValue={set}
                title={o.description}
                required={o.required}
              />
            );
          })}
        </fieldset>
      )}
      <fieldset>
        <legend>Conditions</legend>
        {Object.entries(conditions).map(([k, v]) => (
          <div class="row" key={k}>
            <Field
              label={k}
              value={v}
              onValue={(nv) => setConditions({ ...conditions, [k]: nv })}
            />
            <button
              type="button"
              onClick={() => {
                const next = { ...conditions };
                delete next[k];
                setConditions(next);
              }}
            >
              Remove condition {k}
            </button>
          </div>
        ))}
        {conds.data && (
          <div class="row">
            <Select
              label="Add a condition"
              value={newCond}
              onValue={setNewCond}
              options={[
                ["", "choose…"],
                ...Object.keys(conds.data).filter((k) => !(k in conditions)),
              ]}
            />
            <button
              type="button"
              disabled={!newCond}
              onClick={() => {
                setConditions({ ...conditions, [newCond]: "" });
                setNewCond("");
              }}
            >
              Add condition
            </button>
          </div>
        )}
      </fieldset>
      {hasRight(session, "eventhandling_write") && (
        <button type="submit" class="primary" disabled={act.busy}>Save event handler</button>
      )}
      <Outcome error={act.error} note={act.note} />
    </Form>
  );
}

/** `#/events/<id>` and `#/events/new`. */
export function EventEditPage(props: { id?: string }) {
  const available = useLoad(() => get<string[]>("/event/available"), []);
  const modules = useLoad(() => get<string[]>("/event/handlermodules"), []);
  const def = useLoad(
    () => props.id ? get<EventDef[]>(`/event/${seg(props.id)}`) : Promise.resolve(undefined),
    [props.id],
  );
  // while another id loads, the last handler's data must not fill this form (New event handler
  // opened from a handler's page would start as that handler, id included, and replace it)
  const d = def.loading ? undefined : def.data?.[0];
  const ready = available.data && modules.data && !def.loading && (!props.id || def.data);
  return (
    <Page
      title={d ? `Event handler ${d.name}` : "New event handler"}
      actions={<a href={href(["events"])}>Back to event handlers</a>}
    >
      <LoadState
        error={available.error ?? modules.error ?? def.error}
        loading={!ready && !available.error && !modules.error && !def.error}
      />
      {props.id && !def.loading && def.data && !d && (
        <p class="error" role="alert">The event handler could not be found.</p>
      )}
      {ready && (!props.id || d) && (
        <Panel title="Event handler">
          <EventForm
            key={props.id ?? "new"}
            def={d}
            available={available.data!}
            modules={modules.data!}
          />
        </Panel>
      )}
    </Page>
  );
}
