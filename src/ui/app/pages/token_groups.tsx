/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Token groups (`/tokengroup/`, admin rights `tokengroup_list`, `tokengroup_add` and
 * `tokengroup_delete`): named groups with a description. A token's groups are set on its page.
 *
 * @module
 */
import { useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import {
  ConfirmButton,
  Field,
  Form,
  LoadState,
  Outcome,
  Panel,
  Select,
  useAction,
  useLoad,
} from "../ui.tsx";
import { type DefinitionKind, DefinitionsPage, itemPath } from "./definitions.tsx";

const TOKEN_GROUPS: DefinitionKind = {
  title: "Token groups",
  noun: "token group",
  listPath: "/tokengroup/",
  itemPath: itemPath("/tokengroup/"),
  fields: { "": [{ key: "description", label: "Description" }] },
  columns: [{ key: "description", label: "Description" }],
  readRight: "tokengroup_list",
  writeRight: "tokengroup_add",
  deleteRight: "tokengroup_delete",
};

/** `#/tokengroups`. */
export function TokenGroupsPage() {
  return <DefinitionsPage kind={TOKEN_GROUPS} />;
}

/**
 * A token's groups on its page; with the right `tokengroups` they are added and removed
 * (`/token/group/<serial>/<group>`), chosen from the defined groups where `tokengroup_list` allows.
 */
export function TokenGroupsPanel(
  props: { serial: string; groups: string[]; onChanged: () => void },
) {
  const { session } = useSession();
  const canEdit = hasRight(session, "tokengroups");
  const canList = hasRight(session, "tokengroup_list");
  const defined = useLoad(
    () =>
      canEdit && canList
        ? get<Record<string, unknown>>("/tokengroup/")
        : Promise.resolve(undefined),
    [canEdit, canList],
  );
  const [typed, setTyped] = useState("");
  const act = useAction();
  const free = Object.keys(defined.data ?? {}).filter((g) => !props.groups.includes(g)).sort();
  const group = canList ? (free.includes(typed) ? typed : free[0] ?? "") : typed.trim();
  return (
    <Panel title="Token groups">
      {props.groups.length === 0
        ? <p class="muted">The token is in no group.</p>
        : (
          <ul data-testid="token-groups">
            {props.groups.map((g) => (
              <li key={g}>
                {g} {canEdit && (
                  <ConfirmButton
                    label={`Remove from ${g}`}
                    question={`Take token ${props.serial} out of group ${g}?`}
                    onConfirm={() =>
                      act.run(async () => {
                        await api("DELETE", `/token/group/${seg(props.serial)}/${seg(g)}`);
                        props.onChanged();
                      }, `Token taken out of group ${g}`)}
                  />
                )}
              </li>
            ))}
          </ul>
        )}
      {canEdit && (
        <Form
          label={`Add token ${props.serial} to a group`}
          onSubmit={() =>
            act.run(async () => {
              await api("POST", `/token/group/${seg(props.serial)}/${seg(group)}`);
              setTyped("");
              props.onChanged();
            }, `Token added to group ${group}`)}
        >
          <LoadState error={defined.error} loading={defined.loading && !defined.data} />
          {canList
            ? (free.length > 0
              ? <Select label="Group" value={group} onValue={setTyped} options={free} />
              : defined.data && <p class="muted">No other token group is defined.</p>)
            : <Field label="Group" value={typed} onValue={setTyped} required />}
          <button type="submit" disabled={act.busy || group === ""}>Add to group</button>
        </Form>
      )}
      <Outcome error={act.error} note={act.note} />
    </Panel>
  );
}
