/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Policies: list (enable, disable, delete) and the editor, whose actions come
 * from `/policy/defs`.
 *
 * @module
 */
import { useMemo, useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import { type FieldSpec, TypedField } from "../typed.tsx";
import {
  announce,
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

/** A policy as `GET /policy/` returns it. */
interface Policy {
  name: string;
  scope: string;
  active: boolean;
  priority: number;
  action: Record<string, string | boolean>;
  realm: string[];
  resolver: string[];
  user: string[];
  adminrealm: string[];
  adminuser: string[];
  client: string[];
  pinode: string[];
  time: string;
  description: string | null;
  check_all_resolvers: boolean;
}

/** An action definition of `/policy/defs`. */
export interface ActionDef {
  type: "bool" | "str" | "int" | "text";
  desc: string;
  group?: string;
  value?: (string | number)[];
  /** Several of `value` at once, space separated. */
  multiple?: boolean;
}

type Defs = Record<string, Record<string, ActionDef>>;

/** True when a policy of exactly this name exists (names are case-sensitive). */
async function policyExists(name: string): Promise<boolean> {
  const found = await get<Policy[] | Record<string, Policy>>(`/policy/${seg(name)}`);
  return policiesOf(found).some((x) => x.name === name);
}

/** `GET /policy/` as a list, whatever `compat.policy_list` says. */
function policiesOf(value: Policy[] | Record<string, Policy>): Policy[] {
  return (Array.isArray(value) ? value : Object.values(value)).sort((a, b) =>
    a.name.localeCompare(b.name)
  );
}

function actionText(a: Record<string, string | boolean>): string {
  return Object.entries(a).map(([k, v]) => (v === true ? k : `${k}=${v}`)).join(", ");
}

/** `#/policies`. */
export function PoliciesPage() {
  const { session } = useSession();
  const list = useLoad(() => get<Policy[] | Record<string, Policy>>("/policy/"), []);
  const act = useAction();
  const canWrite = hasRight(session, "policywrite");
  const policies = list.data ? policiesOf(list.data) : [];
  return (
    <Page
      title="Policies"
      actions={canWrite && (
        <a class="button primary" href={href(["policies", "new"])}>
          New policy
        </a>
      )}
    >
      <LoadState error={list.error} loading={list.loading && !list.data} />
      {list.data && policies.length === 0 && <p class="muted">There is no policy yet.</p>}
      {policies.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scope</th>
              <th scope="col">Active</th>
              <th scope="col">Priority</th>
              <th scope="col">Realms</th>
              <th scope="col">Actions</th>
              <th scope="col">
                <span class="sr-only">Change</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {policies.map((p) => (
              <tr key={p.name}>
                <td>
                  <a href={href(["policies", p.name])}>{p.name}</a>
                </td>
                <td data-label="Scope">{p.scope}</td>
                <td data-label="Active">{yesNo(p.active)}</td>
                <td data-label="Priority">{p.priority}</td>
                <td data-label="Realms">{p.realm.join(", ")}</td>
                <td data-label="Actions" class="clip" title={actionText(p.action)}>
                  {actionText(p.action)}
                </td>
                <td class="actions">
                  {canWrite && (
                    <button
                      type="button"
                      onClick={() =>
                        act.run(async () => {
                          await api(
                            "POST",
                            `/policy/${p.active ? "disable" : "enable"}/${seg(p.name)}`,
                          );
                          list.reload();
                        }, `Policy ${p.name} ${p.active ? "disabled" : "enabled"}`)}
                    >
                      {p.active ? "Disable" : "Enable"} {p.name}
                    </button>
                  )}
                  {hasRight(session, "policydelete") && (
                    <ConfirmButton
                      label={`Delete ${p.name}`}
                      question={`Delete policy ${p.name}?`}
                      danger
                      onConfirm={() =>
                        act.run(async () => {
                          await api("DELETE", `/policy/${seg(p.name)}`);
                          list.reload();
                        }, `Policy ${p.name} deleted`)}
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

const CONDITION_FIELDS = [
  ["realm", "Realms"],
  ["resolver", "Resolvers"],
  ["user", "Users"],
  ["adminrealm", "Admin realms"],
  ["adminuser", "Admins"],
  ["client", "Clients"],
  ["pinode", "Nodes"],
] as const;

/**
 * The form field of a policy action as `/policy/defs` describes it: a flag is a checkbox, a
 * list of values a select (several values: checkboxes), an integer a number within the listed
 * range, and the description is the field's help text.
 */
export function actionSpec(name: string, def: ActionDef): FieldSpec {
  const help = def.desc;
  if (def.type === "bool") return { key: name, type: "bool", help, bool: ["1", ""] };
  const values = (def.value ?? []).map(String);
  if (def.multiple && values.length > 0) return { key: name, type: "multi", help, options: values };
  const notSet: [string, string] = ["", "not set"];
  if (def.type === "int") {
    const nums = (def.value ?? []).map(Number);
    const isRange = nums.length > 4 && nums.every((n, i) => i === 0 || n === nums[i - 1] + 1);
    if (isRange) return { key: name, type: "int", help, min: nums[0], max: nums[nums.length - 1] };
    if (nums.length > 0) return { key: name, type: "select", help, options: [notSet, ...values] };
    return { key: name, type: "int", help, min: 0 };
  }
  if (values.length > 0) return { key: name, type: "select", help, options: [notSet, ...values] };
  if (def.type === "text") return { key: name, type: "textarea", help };
  return { key: name, type: "text", help };
}

function ActionInput(
  props: {
    name: string;
    def: ActionDef;
    value: string | true | undefined;
    onValue: (v: string | true | undefined) => void;
  },
) {
  const spec = actionSpec(props.name, props.def);
  const v = props.value;
  const text = v === undefined ? "" : v === true ? (spec.type === "bool" ? "1" : "") : v;
  return (
    <TypedField
      spec={spec}
      value={text}
      onValue={(nv) => props.onValue(nv === "" ? undefined : spec.type === "bool" ? true : nv)}
    />
  );
}

function PolicyForm(props: { policy?: Policy; defs: Defs }) {
  const p = props.policy;
  const { session } = useSession();
  const [name, setName] = useState(p?.name ?? "");
  const [scope, setScope] = useState(p?.scope ?? "admin");
  const [active, setActive] = useState(p?.active ?? true);
  const [priority, setPriority] = useState(String(p?.priority ?? 1));
  const [description, setDescription] = useState(p?.description ?? "");
  const [time, setTime] = useState(p?.time ?? "");
  const [conds, setConds] = useState<Record<string, string>>(
    Object.fromEntries(CONDITION_FIELDS.map(([k]) => [k, (p?.[k] ?? []).join(", ")])),
  );
  const [actions, setActions] = useState<Record<string, string | true>>(
    Object.fromEntries(
      Object.entries(p?.action ?? {}).map(([k, v]) => [k, v === true ? true : String(v)]),
    ),
  );
  const [filter, setFilter] = useState("");
  const act = useAction();
  const defs = props.defs[scope] ?? {};
  const groups = useMemo(() => {
    const out: Record<string, string[]> = {};
    const f = filter.trim().toLowerCase();
    for (const [k, d] of Object.entries(defs)) {
      if (f && !k.toLowerCase().includes(f) && !d.desc.toLowerCase().includes(f)) continue;
      (out[d.group ?? "other"] ??= []).push(k);
    }
    return Object.entries(out).sort(([a], [b]) => a.localeCompare(b));
  }, [defs, filter]);
  const chosen = Object.keys(actions).filter((k) => k in defs);
  // the name of an existing policy given to "New policy": refused, never replaced
  const [taken, setTaken] = useState<string | undefined>(undefined);
  return (
    <Form
      label={p ? `Edit policy ${p.name}` : "New policy"}
      onSubmit={() => {
        setTaken(undefined);
        act.run(async () => {
          // POST /policy/<name> replaces a policy of that name: a new one must not have one
          if (!p && (await policyExists(name))) {
            setTaken(name);
            throw new Error(`A policy named "${name}" already exists: nothing was saved.`);
          }
          const action = Object.fromEntries(Object.entries(actions).filter(([k]) => k in defs));
          await api("POST", `/policy/${seg(name)}`, {
            scope,
            action,
            active,
            priority: Number(priority),
            description,
            time,
            ...conds,
          });
          if (p) return;
          go(["policies", name]);
          announce(`Policy ${name} created`);
        }, `Policy ${name} saved`);
      }}
    >
      <Field label="Policy name" value={name} onValue={setName} required disabled={!!p} />
      <Select
        label="Scope"
        value={scope}
        onValue={setScope}
        options={Object.keys(props.defs).sort()}
      />
      <Check label="Active" checked={active} onChecked={setActive} />
      <Field label="Priority" type="number" min={1} value={priority} onValue={setPriority} />
      <Field label="Description" value={description} onValue={setDescription} />
      <fieldset>
        <legend>Conditions (comma separated; empty matches all)</legend>
        {CONDITION_FIELDS.map(([k, label]) => (
          <Field
            key={k}
            label={label}
            value={conds[k]}
            onValue={(v) => setConds({ ...conds, [k]: v })}
          />
        ))}
        <Field label="Time" value={time} onValue={setTime} hint="e.g. Mon-Fri: 08:00-18:00" />
      </fieldset>
      <fieldset class="policy-actions">
        <legend>Actions of scope {scope} ({chosen.length} set)</legend>
        <Field label="Filter actions" type="search" value={filter} onValue={setFilter} />
        {groups.map(([group, names]) => (
          <details
            key={group}
            open={!!filter || names.some((n) => n in actions)}
          >
            <summary>{group} ({names.length})</summary>
            <div class="grid">
              {names.map((n) => (
                <ActionInput
                  key={n}
                  name={n}
                  def={defs[n]}
                  value={actions[n]}
                  onValue={(v) => {
                    const next = { ...actions };
                    if (v === undefined) delete next[n];
                    else next[n] = v;
                    setActions(next);
                  }}
                />
              ))}
            </div>
          </details>
        ))}
      </fieldset>
      {hasRight(session, "policywrite") && (
        <button type="submit" class="primary" disabled={act.busy}>Save policy</button>
      )}
      <Outcome error={act.error} note={act.note} />
      {taken && (
        <p>
          <a href={href(["policies", taken])}>Open policy {taken}</a>{" "}
          to change it, or choose another name.
        </p>
      )}
    </Form>
  );
}

/** `#/policies/<name>` and `#/policies/new`. */
export function PolicyEditPage(props: { name: string }) {
  const defs = useLoad(() => get<Defs>("/policy/defs"), []);
  const policy = useLoad(
    () =>
      props.name
        ? get<Policy[] | Record<string, Policy>>(`/policy/${seg(props.name)}`)
        : Promise.resolve(undefined),
    [props.name],
  );
  // while another name loads, the last policy's data must not fill this form (e.g. New policy
  // opened from a policy's page would start with that policy's actions)
  const loaded = !policy.loading;
  const p = loaded && props.name && policy.data
    ? policiesOf(policy.data).find((x) => x.name === props.name)
    : undefined;
  return (
    <Page
      title={props.name ? `Policy ${props.name}` : "New policy"}
      actions={<a href={href(["policies"])}>Back to policies</a>}
    >
      <LoadState
        error={defs.error ?? policy.error}
        loading={defs.loading || policy.loading}
      />
      {loaded && props.name && policy.data && !p && (
        <p class="error" role="alert">The policy could not be found.</p>
      )}
      {defs.data && loaded && (!props.name || p) && (
        <Panel title="Policy">
          <PolicyForm key={props.name} policy={p} defs={defs.data} />
        </Panel>
      )}
    </Page>
  );
}
