/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Container templates (`GET /container/templates`, admin right `container_template_list`): a
 * template names a container type and the tokens a container made from it gets, each enrolled
 * for the container's owner or for nobody. A new template (`container_template_create`,
 * `POST /container/<type>/template/<name>`) takes the token types `GET
 * /container/template/tokentypes` allows for its container type; a template is deleted
 * (`container_template_delete`) after a confirmation. The New container form offers them.
 *
 * @module
 */
import { useState } from "preact/hooks";
import { api, get, seg } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import {
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
} from "../ui.tsx";

/** One token of a template: its type, and whether it goes to the container's owner. */
export interface TemplateToken {
  type: string;
  user?: boolean;
  genkey?: boolean;
  [option: string]: unknown;
}

/** A template as `GET /container/templates` lists it. */
export interface ContainerTemplate {
  name: string;
  container_type: string;
  default: boolean;
  template_options: { tokens?: TemplateToken[] };
}

/** `GET /container/template/tokentypes`: the token types a template of each type may hold. */
type TemplateTypes = Record<string, { description: string; token_types: string[] }>;

/** The templates, as the container forms and this page read them. */
export function loadTemplates(): Promise<ContainerTemplate[]> {
  return get<{ templates: ContainerTemplate[] }>("/container/templates").then((v) => v.templates);
}

/** A template's tokens as text: `hotp (owner), totp`. */
export function templateTokensText(t: ContainerTemplate): string {
  const tokens = t.template_options.tokens ?? [];
  if (tokens.length === 0) return "none";
  return tokens.map((k) => `${k.type}${k.user ? " (owner)" : ""}`).join(", ");
}

/** `#/containertemplates`. */
export function ContainerTemplatesPage() {
  const { session } = useSession();
  const canCreate = hasRight(session, "container_template_create");
  const canDelete = hasRight(session, "container_template_delete");
  const list = useLoad(loadTemplates, []);
  const [isCreating, setCreating] = useState(false);
  const [saved, setSaved] = useState<string | undefined>(undefined);
  const act = useAction();
  const templates = list.data ?? [];
  return (
    <Page
      title="Container templates"
      actions={canCreate && !isCreating && (
        <button
          type="button"
          class="primary"
          onClick={() => setCreating(true)}
        >
          New template
        </button>
      )}
    >
      {isCreating && (
        <NewTemplate
          existing={templates.map((t) => t.name)}
          onMade={(name) => {
            setCreating(false);
            act.clear();
            setSaved(`Template ${name} saved`);
            list.reload();
          }}
          onClose={() => setCreating(false)}
        />
      )}
      <LoadState error={list.error} loading={list.loading && !list.data} />
      {list.data && templates.length === 0 && (
        <p class="muted" data-testid="empty-list">There is no container template yet.</p>
      )}
      {templates.length > 0 && (
        <table data-testid="templates">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Container type</th>
              <th scope="col">Default</th>
              <th scope="col">Tokens</th>
              <th scope="col">
                <span class="sr-only">Delete</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {templates.map((t) => (
              <tr key={t.name}>
                <td>{t.name}</td>
                <td data-label="Container type">{t.container_type}</td>
                <td data-label="Default">{t.default ? "yes" : "no"}</td>
                <td data-label="Tokens">{templateTokensText(t)}</td>
                <td class="actions">
                  {canDelete && (
                    <ConfirmButton
                      label={`Delete template ${t.name}`}
                      question={`Delete template ${t.name}? Containers made from it are kept.`}
                      danger
                      onConfirm={() =>
                        act.run(async () => {
                          setSaved(undefined);
                          await api("DELETE", `/container/template/${seg(t.name)}`);
                          list.reload();
                        }, `Template ${t.name} deleted`)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Outcome error={act.error} note={act.note ?? saved} />
    </Page>
  );
}

/** The form of `POST /container/<type>/template/<name>`: type, default, and the token list. */
function NewTemplate(
  props: { existing: string[]; onMade: (name: string) => void; onClose: () => void },
) {
  const types = useLoad(() => get<TemplateTypes>("/container/template/tokentypes"), []);
  const [name, setName] = useState("");
  const [chosen, setType] = useState("");
  const [isDefault, setDefault] = useState(false);
  const [tokens, setTokens] = useState<TemplateToken[]>([]);
  const [adding, setAdding] = useState("");
  const act = useAction();
  const names = Object.keys(types.data ?? {}).sort();
  const type = names.includes(chosen) ? chosen : names[0] ?? "";
  const allowed = types.data?.[type]?.token_types ?? [];
  const next = allowed.includes(adding) ? adding : allowed[0] ?? "";
  const taken = props.existing.includes(name.trim());
  return (
    <Panel title="New template">
      <LoadState error={types.error} loading={types.loading && !types.data} />
      <Form
        label="New template"
        onSubmit={() =>
          act.run(async () => {
            const n = name.trim();
            await api("POST", `/container/${seg(type)}/template/${seg(n)}`, {
              template_options: { tokens },
              default: isDefault,
            });
            props.onMade(n);
          })}
      >
        <Field
          label="Name"
          value={name}
          onValue={setName}
          required
          hint={taken ? "A template of this name exists" : undefined}
        />
        <Select
          label="Container type"
          value={type}
          onValue={(v) => {
            setType(v);
            // the new type may not hold the chosen tokens
            const ok = types.data?.[v]?.token_types ?? [];
            setTokens(tokens.filter((t) => ok.includes(t.type)));
          }}
          options={names.map((n) => [n, types.data![n].description])}
          required
        />
        <Check
          label="Default template (the New container form starts with it)"
          checked={isDefault}
          onChecked={setDefault}
        />
        <fieldset>
          <legend>Tokens</legend>
          {tokens.length === 0 && <p class="muted">The template has no token yet.</p>}
          {tokens.length > 0 && (
            <ul class="template-tokens" data-testid="template-tokens">
              {tokens.map((t, i) => (
                <li key={i}>
                  <span>{t.type}</span>
                  <Check
                    label={`Token ${i + 1} (${t.type}) for the container's owner`}
                    checked={t.user === true}
                    onChecked={(on) =>
                      setTokens(tokens.map((x, j) => j === i ? { ...x, user: on } : x))}
                  />
                  <button
                    type="button"
                    onClick={() => setTokens(tokens.filter((_, j) => j !== i))}
                  >
                    Remove token {i + 1}
                  </button>
                </li>
              ))}
            </ul>
          )}
          <Select
            label="Token type to add"
            value={next}
            onValue={setAdding}
            options={allowed}
          />
          <button
            type="button"
            disabled={next === ""}
            // privacyIDEA's template editor adds a token with a key made by the server, for
            // the container's owner
            onClick={() => setTokens([...tokens, { type: next, genkey: true, user: true }])}
          >
            Add token
          </button>
        </fieldset>
        <div class="actions">
          <button
            type="submit"
            class="primary"
            disabled={act.busy || type === "" || name.trim() === "" || taken}
          >
            Save template
          </button>
          <button type="button" onClick={props.onClose}>Cancel</button>
        </div>
        <Outcome error={act.error} note={act.note} />
      </Form>
    </Panel>
  );
}
