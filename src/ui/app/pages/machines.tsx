/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Machines: machine resolvers, the machines they list, and the tokens
 * attached to machines (SSH keys, offline OTPs, LUKS).
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
  Select,
  useAction,
  useLoad,
} from "../ui.tsx";
import {
  type DefinitionKind,
  DefinitionsPage,
  type FieldSpec,
  itemPath,
  SpecFields,
} from "./definitions.tsx";

const LDAP_FIELDS: FieldSpec[] = [
  { key: "LDAPURI", label: "LDAPURI", required: true },
  { key: "LDAPBASE", label: "LDAPBASE", required: true },
  { key: "BINDDN", label: "BINDDN" },
  { key: "BINDPW", label: "BINDPW", type: "password" },
  { key: "AUTHTYPE", label: "AUTHTYPE", options: ["Simple", "Anonymous"] },
  { key: "TIMEOUT", label: "TIMEOUT", type: "number", default: "5" },
  { key: "SIZELIMIT", label: "SIZELIMIT", type: "number", default: "500" },
  { key: "HOSTNAMEATTRIBUTE", label: "HOSTNAMEATTRIBUTE", default: "dNSHostName" },
  { key: "IDATTRIBUTE", label: "IDATTRIBUTE", default: "DN" },
  { key: "IPATTRIBUTE", label: "IPATTRIBUTE" },
  { key: "SEARCHFILTER", label: "SEARCHFILTER", default: "(objectClass=computer)" },
  { key: "START_TLS", label: "START_TLS", type: "bool" },
  { key: "TLS_VERIFY", label: "TLS_VERIFY", type: "bool" },
  { key: "TLS_CA_FILE", label: "TLS_CA_FILE" },
];

const MACHINE_RESOLVERS: DefinitionKind = {
  title: "Machines",
  noun: "machine resolver",
  listPath: "/machineresolver/",
  itemPath: itemPath("/machineresolver/"),
  fields: {
    hosts: [{ key: "filename", label: "Hosts file", default: "/etc/hosts", required: true }],
    ldap: LDAP_FIELDS,
  },
  columns: [{ key: "type", label: "Type" }],
  readRight: "mresolverread",
  writeRight: "mresolverwrite",
  deleteRight: "mresolverdelete",
  valuesOf: (r) => {
    const data = (r.data ?? {}) as Record<string, unknown>;
    return {
      type: String(r.type ?? ""),
      ...Object.fromEntries(Object.entries(data).map(([k, v]) => [k, String(v ?? "")])),
    };
  },
  test: { label: "Test machine resolver", path: "/machineresolver/test", fields: [] },
};

interface Binding {
  id: number;
  serial: string;
  application: string;
  type: string;
  machine_id: string | null;
  resolver: string | null;
  hostname?: string;
  options: Record<string, string>;
}

type Applications = Record<
  string,
  { options: Record<string, Record<string, { type: string; value?: unknown[] }>> }
>;

/**
 * Tokens attached to machines, with attaching and detaching; `serial` narrows it to one token
 * (its details page).
 */
export function MachineTokens(props: { serial?: string }) {
  const list = useLoad(
    () => get<Binding[]>("/machine/token", props.serial ? { serial: props.serial } : {}),
    [props.serial],
  );
  const apps = useLoad(() => get<Applications>("/application/"), []);
  const [serialInput, setSerial] = useState("");
  const serial = props.serial ?? serialInput;
  const [application, setApplication] = useState("ssh");
  const [machine, setMachine] = useState<Record<string, string>>({});
  const [options, setOptions] = useState<Record<string, string>>({});
  const act = useAction();
  const optionFields: FieldSpec[] = [];
  for (const perType of Object.values(apps.data?.[application]?.options ?? {})) {
    for (const [k, d] of Object.entries(perType)) {
      if (!optionFields.some((f) => f.key === k)) {
        optionFields.push({
          key: k,
          label: `Option ${k}`,
          options: Array.isArray(d.value) && d.value.length > 0
            ? ["", ...d.value.map(String)]
            : undefined,
        });
      }
    }
  }
  return (
    <Panel title={props.serial ? "Machines" : "Tokens on machines"}>
      <LoadState error={list.error ?? apps.error} loading={list.loading && !list.data} />
      {list.data && list.data.length === 0 && (
        <p class="muted">
          {props.serial
            ? "This token is not attached to a machine."
            : "No token is attached to a machine."}
        </p>
      )}
      {list.data && list.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Serial</th>
              <th scope="col">Type</th>
              <th scope="col">Application</th>
              <th scope="col">Machine</th>
              <th scope="col">Options</th>
              <th scope="col">
                <span class="sr-only">Change</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((b) => (
              <tr key={b.id}>
                <td data-label="Serial">{b.serial}</td>
                <td data-label="Type">{b.type}</td>
                <td data-label="Application">{b.application}</td>
                <td data-label="Machine">
                  {b.hostname ?? (b.machine_id ? `${b.machine_id} (${b.resolver})` : "any")}
                </td>
                <td data-label="Options">
                  {Object.entries(b.options).map(([k, v]) => `${k}=${v}`).join(", ")}
                </td>
                <td>
                  <ConfirmButton
                    label={`Detach ${b.serial} (${b.application} ${b.id})`}
                    question={`Detach token ${b.serial} from this machine (${b.application})?`}
                    danger
                    onConfirm={() =>
                      act.run(async () => {
                        await api(
                          "DELETE",
                          `/machine/token/${seg(b.serial)}/${seg(b.application)}/${b.id}`,
                        );
                        list.reload();
                      }, "Token detached")}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Form
        label={props.serial ? `Attach ${props.serial} to a machine` : "Attach a token to a machine"}
        onSubmit={() =>
          act.run(async () => {
            const params: Record<string, unknown> = { serial, application };
            for (const [k, v] of Object.entries({ ...machine, ...options })) if (v) params[k] = v;
            await api("POST", "/machine/token", params);
            list.reload();
          }, "Token attached")}
      >
        {!props.serial && (
          <Field label="Token serial" value={serialInput} onValue={setSerial} required />
        )}
        <Select
          label="Application"
          value={application}
          onValue={setApplication}
          options={Object.keys(apps.data ?? { ssh: {} })}
        />
        <SpecFields
          fields={[
            { key: "hostname", label: "Hostname" },
            { key: "machineid", label: "Machine ID" },
            { key: "resolver", label: "Machine resolver" },
          ]}
          values={machine}
          onValues={setMachine}
        />
        <SpecFields fields={optionFields} values={options} onValues={setOptions} />
        <button type="submit" class="primary" disabled={act.busy}>Attach token</button>
      </Form>
      <Outcome error={act.error} note={act.note} />
    </Panel>
  );
}

interface Machine {
  id: string;
  hostname: string[] | string;
  ip: string;
  resolver_name: string;
}

function MachineList() {
  const [hostname, setHostname] = useState("");
  const [query, setQuery] = useState<string | undefined>();
  const list = useLoad(
    () =>
      query === undefined
        ? Promise.resolve(undefined)
        : get<Machine[]>("/machine/", query ? { hostname: query } : {}),
    [query],
  );
  return (
    <Panel title="Machines of the resolvers">
      <Form label="Search machines" class="filters" onSubmit={() => setQuery(hostname.trim())}>
        <Field label="Hostname" type="search" value={hostname} onValue={setHostname} />
        <button type="submit">List machines</button>
      </Form>
      <LoadState error={list.error} loading={list.loading && query !== undefined} />
      {list.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">ID</th>
              <th scope="col">Hostname</th>
              <th scope="col">IP</th>
              <th scope="col">Resolver</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((m, i) => (
              <tr key={i}>
                <td data-label="ID">{m.id}</td>
                <td data-label="Hostname">
                  {Array.isArray(m.hostname) ? m.hostname.join(", ") : m.hostname}
                </td>
                <td data-label="IP">{m.ip}</td>
                <td data-label="Resolver">{m.resolver_name}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}

/** `#/machines`. */
export function MachinesPage() {
  const { session } = useSession();
  const extra = (
    <>
      {hasRight(session, "machinelist") && <MachineList />}
      {hasRight(session, "manage_machine_tokens") && <MachineTokens />}
    </>
  );
  if (hasRight(session, "mresolverread")) {
    return <DefinitionsPage kind={MACHINE_RESOLVERS}>{extra}</DefinitionsPage>;
  }
  return <Page title="Machines">{extra}</Page>;
}
