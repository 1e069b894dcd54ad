/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * System settings: every key Tessera knows as a typed field with its help and default, the
 * other stored keys as text (secrets as password fields), all saved together in one
 * `POST /system/setConfig`; stored values can be reset to their default.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import { SYSTEM_SETTINGS } from "../specs/system_keys.ts";
import { type FieldSpec, TypedField } from "../typed.tsx";
import {
  ConfirmButton,
  Field,
  Form,
  LoadState,
  Outcome,
  Page,
  Panel,
  useAction,
  useLoad,
} from "../ui.tsx";

/** What `GET /system/` answers for a secret. */
const CENSORED = "__CENSORED__";

const KNOWN = new Set(SYSTEM_SETTINGS.map((s) => s.key));

/** The field of a stored key Tessera does not know: text, or a password field for a secret. */
function otherSpec(key: string, value: string): FieldSpec {
  return value === CENSORED
    ? {
      key,
      type: "password",
      group: "Other settings",
      help: "A secret: left as it is unless changed.",
    }
    : { key, type: "text", group: "Other settings" };
}

function SettingsForm(
  props: { stored: Record<string, string>; canWrite: boolean; onSaved: () => void },
) {
  const specs = [
    ...SYSTEM_SETTINGS.map((s) => ({
      ...s,
      help: `${s.help} Default: ${s.default === "" ? "empty" : s.default}.` +
        (props.stored[s.key] === undefined ? " Not set: the default applies." : ""),
    })),
    ...Object.keys(props.stored).filter((k) => !KNOWN.has(k)).sort()
      .map((k) => otherSpec(k, props.stored[k])),
  ];
  const initial = Object.fromEntries(
    specs.map((s) => [s.key, props.stored[s.key] ?? s.default ?? ""]),
  );
  // only what the person changed; the rest shows what is stored (or the default), also after a
  // reload: a saved or reset value then shows as the server has it
  const [edits, setEdits] = useState<Record<string, string>>({});
  useEffect(() => setEdits({}), [props.stored]);
  const values = { ...initial, ...edits };
  const act = useAction();
  const groups: [string, FieldSpec[]][] = [];
  for (const s of specs) {
    const g = groups.find(([name]) => name === s.group);
    if (g) g[1].push(s);
    else groups.push([s.group ?? "", [s]]);
  }
  return (
    <Form
      label="System settings"
      onSubmit={() =>
        act.run(async () => {
          const changed: Record<string, string> = {};
          for (const s of specs) {
            if (values[s.key] === initial[s.key]) continue;
            changed[s.key] = values[s.key];
            // a secret stays a secret when it is changed
            if (s.type === "password") changed[`${s.key}.type`] = "password";
          }
          const keys = Object.keys(changed).filter((k) => !k.endsWith(".type"));
          if (keys.length === 0) return "Nothing changed: nothing was saved";
          await api("POST", "/system/setConfig", changed);
          props.onSaved();
          return `Saved: ${keys.join(", ")}`;
        })}
    >
      {groups.map(([group, list]) => (
        <fieldset key={group}>
          <legend>{group}</legend>
          {list.map((s) => (
            <TypedField
              key={s.key}
              spec={s}
              value={values[s.key] ?? ""}
              disabled={!props.canWrite}
              onValue={(v) => setEdits({ ...edits, [s.key]: v })}
            />
          ))}
        </fieldset>
      ))}
      {props.canWrite && (
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>Save settings</button>
        </div>
      )}
      <Outcome error={act.error} note={act.note} />
    </Form>
  );
}

function StoredSettings(
  props: { stored: Record<string, string>; canDelete: boolean; onChanged: () => void },
) {
  const act = useAction();
  const keys = Object.keys(props.stored).sort((a, b) => a.localeCompare(b));
  return (
    <Panel title="Stored values">
      {keys.length === 0 && <p class="muted">No setting is stored: every default applies.</p>}
      {keys.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Stored value</th>
              <th scope="col">
                <span class="sr-only">Change</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k}>
                <td>{k}</td>
                <td data-label="Stored value">
                  {props.stored[k] === CENSORED
                    ? <span class="muted">secret</span>
                    : props.stored[k]}
                </td>
                <td class="actions">
                  {props.canDelete && (
                    <ConfirmButton
                      label={KNOWN.has(k) ? `Reset ${k}` : `Delete ${k}`}
                      question={KNOWN.has(k)
                        ? `Delete the stored value of ${k}? The default applies again.`
                        : `Delete the setting ${k}?`}
                      onConfirm={() =>
                        act.run(async () => {
                          await api("DELETE", `/system/${seg(k)}`);
                          props.onChanged();
                        }, `${k} ${KNOWN.has(k) ? "reset to its default" : "deleted"}`)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Outcome error={act.error} note={act.note} />
    </Panel>
  );
}

/** `#/system`. */
export function SystemPage() {
  const { session } = useSession();
  const config = useLoad(() => get<Record<string, string>>("/system/"), []);
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const act = useAction();
  const canWrite = hasRight(session, "configwrite");
  const canDelete = hasRight(session, "configdelete");
  const stored = config.data ?? {};
  return (
    <Page title="System settings">
      <LoadState error={config.error} loading={config.loading && !config.data} />
      {config.data && (
        <Panel title="Settings">
          <SettingsForm
            stored={stored}
            canWrite={canWrite}
            onSaved={config.reload}
          />
        </Panel>
      )}
      {config.data && (
        <StoredSettings stored={stored} canDelete={canDelete} onChanged={config.reload} />
      )}
      {canWrite && (
        <Panel title="Another setting">
          <Form
            label="Set another key"
            onSubmit={() =>
              act.run(async () => {
                await api("POST", "/system/setConfig", { [key]: value });
                setKey("");
                setValue("");
                config.reload();
              }, "Setting saved")}
          >
            <Field label="Key" value={key} onValue={setKey} required />
            <Field label="Value" value={value} onValue={setValue} />
            <button type="submit">Save setting</button>
            <Outcome error={act.error} note={act.note} />
          </Form>
        </Panel>
      )}
    </Page>
  );
}
