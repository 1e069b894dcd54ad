/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Event handlers: list (enable, disable, delete) and the editor with the
 * module's actions, options and conditions from `/event/*`.
 *
 * @module
 */
import { useEffect, useId, useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import { type FieldSpec, TypedField } from "../typed.tsx";
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

/** A handler option of `/event/actions/<module>`. */
export interface OptionDef {
  type: string;
  description?: string;
  required?: boolean;
  value?: (string | number)[];
  visibleIf?: string;
  visibleValue?: string;
  /** What applies when the option is not set. */
  default?: string | number | boolean;
}

/** A condition of `/event/conditions/<module>`. */
export interface ConditionDef {
  type: string;
  desc: string;
  group?: string;
  value?: (string | number)[];
}

/**
 * The form field of a handler option as `/event/actions` describes it: a flag is a checkbox, a
 * list of values a select, an integer a number, a text a text area; the description is its help.
 */
export function optionSpec(key: string, o: OptionDef): FieldSpec {
  const dflt = o.default === undefined || o.default === "" ? undefined : String(o.default);
  const help = dflt === undefined ? o.description : `${o.description ?? ""} Default: ${dflt}.`;
  const values = (o.value ?? []).map(String);
  if (o.type === "bool") return { key, type: "bool", help, bool: ["1", ""] };
  if (o.type === "int") {
    const nums = (o.value ?? []).map(Number);
    const isRange = nums.length > 4 && nums.every((n, i) => i === 0 || n === nums[i - 1] + 1);
    if (isRange) {
      return {
        key,
        type: "int",
        help,
        min: nums[0],
        max: nums[nums.length - 1],
        required: o.required,
      };
    }
    // other lists of an integer are examples (a default), not the only values
    return { key, type: "int", help, required: o.required, placeholder: values[0] };
  }
  if (values.length > 0) {
    const choices: (string | [string, string])[] = values.map((v) => v === "" ? ["", "none"] : v);
    if (!values.includes("")) choices.unshift(["", dflt ? `default (${dflt})` : "not set"]);
    return { key, type: "select", help, options: choices, required: o.required };
  }
  if (o.type === "text") {
    return { key, type: "textarea", help, required: o.required, placeholder: dflt };
  }
  return { key, type: "text", help, required: o.required, placeholder: dflt };
}

/** The form field of a condition: a select for a list of values, else text with its help. */
export function conditionSpec(key: string, c: ConditionDef | undefined): FieldSpec {
  const values = (c?.value ?? []).map(String);
  let help = c?.desc;
  if (values.length > 0) {
    return { key, type: "select", help, options: [["", "choose…"], ...values], required: true };
  }
  if (c?.type === "regexp") help = `${help} (a regular expression)`;
  return { key, type: "text", help };
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
  const eventsId = useId();
  // each load remembers its module: right after the module changes, the last module's actions
  // and positions are still loaded, and must neither show nor be saved with the new module
  const actions = useLoad(
    async () => ({
      module,
      defs: await get<Record<string, Record<string, OptionDef>>>(`/event/actions/${seg(module)}`),
    }),
    [module],
  );
  const positions = useLoad(
    async () => ({ module, list: await get<string[]>(`/event/positions/${seg(module)}`) }),
    [module],
  );
  const actionDefs = actions.data?.module === module ? actions.data.defs : undefined;
  const positionList = positions.data?.module === module ? positions.data.list : undefined;
  const conds = useLoad(
    () => get<Record<string, ConditionDef>>(`/event/conditions/${seg(module)}`),
    [module],
  );
  const actionNames = Object.keys(actionDefs ?? {});
  const a = action || actionNames[0] || "";
  useEffect(() => {
    if (actionDefs && action && !(action in actionDefs)) setAction("");
  }, [actionDefs]);
  const optionDefs = actionDefs?.[a] ?? {};
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
      <div class="field">
        <label for={eventsId}>Events</label>
        <select
          id={eventsId}
          multiple
          size={8}
          required
          aria-describedby={`${eventsId}-hint`}
          onChange={(e) =>
            setEvents(
              [...(e.target as HTMLSelectElement).selectedOptions].map((o) => o.value),
            )}
        >
          {props.available.map((ev) => (
            <option key={ev} value={ev} selected={events.includes(ev)}>{ev}</option>
          ))}
        </select>
        <small id={`${eventsId}-hint`} class="help">
          The requests that run the handler; Ctrl or Shift chooses several.
        </small>
      </div>
      <Select label="Handler module" value={module} onValue={setModule} options={props.modules} />
      <LoadState error={actions.error ?? positions.error ?? conds.error} />
      {actionNames.length > 0 && (
        <Select label="Action" value={a} onValue={setAction} options={actionNames} />
      )}
      {positionList && (
        <Select
          label="Position"
          value={position}
          onValue={setPosition}
          options={positionList}
          hint="pre: before the request is handled; post: after it"
        />
      )}
      <Field
        label="Order"
        type="number"
        inputMode="numeric"
        min={0}
        step={1}
        value={ordering}
        onValue={setOrdering}
        hint="Handlers of the same event run by this number, lowest first"
      />
      <Check label="Active" checked={active} onChecked={setActive} />
      {Object.keys(optionDefs).length > 0 && (
        <fieldset>
          <legend>Options of {a}</legend>
          {Object.entries(optionDefs).map(([k, o]) => {
            if (o.visibleIf && options[o.visibleIf] !== o.visibleValue) return null;
            return (
              <TypedField
                key={k}
                spec={optionSpec(k, o)}
                value={options[k] ?? ""}
                onValue={(v) => setOptions({ ...options, [k]: v })}
              />
            );
          })}
        </fieldset>
      )}
      <fieldset>
        <legend>Conditions</legend>
        {Object.keys(conditions).length === 0 && (
          <p class="muted">No condition: the handler runs on every event it is bound to.</p>
        )}
        {Object.entries(conditions).map(([k, v]) => (
          <div class="row" key={k}>
            <TypedField
              spec={conditionSpec(k, conds.data?.[k])}
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
              hint={newCond ? conds.data[newCond]?.desc : undefined}
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
        <button
          type="submit"
          class="primary"
          disabled={act.busy || actionDefs === undefined || positionList === undefined}
        >
          Save event handler
        </button>
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
