/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * The audit log: search by column, choose the columns shown, page through.
 *
 * @module
 */
import { useState } from "preact/hooks";
import { get } from "../api.ts";
import { useSession } from "../session.ts";
import {
  Check,
  Field,
  Form,
  LoadState,
  Page,
  Pager,
  Select,
  useLiveSearch,
  useLoad,
} from "../ui.tsx";

interface AuditPage {
  auditcolumns: string[];
  auditdata: Record<string, string | number>[];
  count: number;
}

const FILTERS = ["action", "user", "realm", "serial", "administrator", "info", "client"] as const;
const DEFAULT_COLUMNS = [
  "number",
  "date",
  "action",
  "success",
  "serial",
  "user",
  "realm",
  "administrator",
  "info",
  "client",
];

/** The success column in words, with a mark for the eye (1 and 0 say little). */
function Success(props: { value: unknown }) {
  const ok = props.value === 1 || props.value === "1" || props.value === true;
  return (
    <span class={ok ? "success" : "failure"}>
      <span aria-hidden="true">{ok ? "✓ " : "✗ "}</span>
      {ok ? "success" : "failed"}
    </span>
  );
}

/** `#/audit`: the audit log (for a user: the rows about them, titled `title`). */
export function AuditPage(props: { title?: string }) {
  const { session } = useSession();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [success, setSuccess] = useState("");
  const [query, setQuery] = useState<Record<string, string>>({});
  const [page, setPage] = useState(1);
  const [columns, setColumns] = useState<string[]>(DEFAULT_COLUMNS);
  const [chooser, setChooser] = useState(false);
  const size = session.settings.auditPageSize;
  const data = useLoad(
    () => get<AuditPage>("/audit/", { ...query, page, page_size: size, sortorder: "desc" }),
    [query, page],
  );
  const all = data.data?.auditcolumns ?? DEFAULT_COLUMNS;
  const shown = all.filter((c) => columns.includes(c));
  function search() {
    const q: Record<string, string> = {};
    for (const [k, v] of Object.entries(filters)) {
      const t = v.trim();
      // a term without a wildcard matches anywhere in the column
      if (t) q[k] = t.includes("*") ? t : `*${t}*`;
    }
    if (success) q.success = success;
    setPage(1);
    setQuery(q);
  }
  useLiveSearch(!session.settings.searchOnEnter, search, [filters, success]);
  return (
    <Page title={props.title ?? "Audit log"}>
      <Form label="Search the audit log" class="filters" onSubmit={search}>
        {FILTERS.map((f) => (
          <Field
            key={f}
            label={f[0].toUpperCase() + f.slice(1)}
            type="search"
            value={filters[f] ?? ""}
            onValue={(v) => setFilters({ ...filters, [f]: v })}
          />
        ))}
        <Select
          label="Success"
          value={success}
          onValue={setSuccess}
          options={[["", "any"], ["1", "success"], ["0", "failed"]]}
        />
        <button type="submit">Search</button>
      </Form>
      <Check label="Choose columns" checked={chooser} onChecked={setChooser} />
      {chooser && (
        <fieldset class="grid">
          <legend>Columns</legend>
          {all.map((c) => (
            <Check
              key={c}
              label={c}
              checked={columns.includes(c)}
              onChecked={(on) => setColumns(on ? [...columns, c] : columns.filter((x) => x !== c))}
            />
          ))}
        </fieldset>
      )}
      <LoadState error={data.error} loading={data.loading && !data.data} />
      {data.data && (
        <>
          <div class="scroll">
            <table class="compact">
              <thead>
                <tr>{shown.map((c) => <th scope="col" key={c}>{c}</th>)}</tr>
              </thead>
              <tbody>
                {data.data.auditdata.map((row) => (
                  <tr key={row.number}>
                    {shown.map((c) => (
                      <td key={c} data-label={c}>
                        {c === "success" ? <Success value={row[c]} /> : String(row[c] ?? "")}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={page} pageSize={size} count={data.data.count} onPage={setPage} />
        </>
      )}
    </Page>
  );
}
