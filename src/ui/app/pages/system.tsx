/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * System settings: the known keys with privacyIDEA's defaults, other stored
 * keys, set and delete.
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
  Page,
  Panel,
  useAction,
  useLoad,
} from "../ui.tsx";

/** Known keys and their defaults (docs/api.md). */
const KNOWN: Record<string, string> = {
  DefaultMaxFailCount: "10",
  DefaultCountWindow: "10",
  DefaultSyncWindow: "1000",
  DefaultOtpLen: "6",
  DefaultChallengeValidityTime: "120",
  PrependPin: "True",
  splitAtSign: "True",
  IncFailCountOnFalsePin: "True",
  AutoResync: "False",
  AutoResyncTimeout: "300",
  failcounter_clear_timeout: "0",
  no_auth_counter: "False",
  ReturnSamlAttributes: "True",
  ReturnSamlAttributesOnFail: "False",
  SerialLength: "8",
  OverrideAuthorizationClient: "",
  "hotp.hashlib": "sha1",
  "totp.hashlib": "sha1",
  "totp.timeStep": "30",
  "totp.timeWindow": "180",
};

function Setting(
  props: {
    name: string;
    stored?: string;
    canWrite: boolean;
    canDelete: boolean;
    onChanged: () => void;
  },
) {
  const [value, setValue] = useState(props.stored ?? KNOWN[props.name] ?? "");
  const act = useAction();
  return (
    <Form
      label={`Setting ${props.name}`}
      class="row setting"
      onSubmit={() =>
        act.run(async () => {
          await api("POST", "/system/setConfig", { [props.name]: value });
          props.onChanged();
        }, `${props.name} saved`)}
    >
      <Field
        label={props.name}
        value={value}
        onValue={setValue}
        disabled={!props.canWrite}
        hint={props.stored === undefined
          ? `default${KNOWN[props.name] ? `: ${KNOWN[props.name]}` : ""}`
          : undefined}
      />
      {props.canWrite && <button type="submit">Save {props.name}</button>}
      {props.canDelete && props.stored !== undefined && (
        <ConfirmButton
          label={`Reset ${props.name}`}
          question={`Delete the stored value of ${props.name}? The default applies again.`}
          onConfirm={() =>
            act.run(async () => {
              await api("DELETE", `/system/${seg(props.name)}`);
              props.onChanged();
            }, `${props.name} reset`)}
        />
      )}
      <Outcome error={act.error} note={act.note} />
    </Form>
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
  const names = [...new Set([...Object.keys(KNOWN), ...Object.keys(stored)])].sort((a, b) =>
    a.localeCompare(b)
  );
  return (
    <Page title="System settings">
      <LoadState error={config.error} loading={config.loading && !config.data} />
      {config.data && (
        <Panel title="Settings">
          {names.map((n) => (
            <Setting
              key={`${n}=${stored[n]}`}
              name={n}
              stored={stored[n]}
              canWrite={canWrite}
              canDelete={canDelete}
              onChanged={config.reload}
            />
          ))}
        </Panel>
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
