/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Statistics (`/monitoring/`, admin rights `statistics_read` and `statistics_delete`): the keys
 * periodic tasks write, a key's values between two times with its newest value, and deleting a
 * key's values (all, or those in the range).
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
  href,
  LoadState,
  Outcome,
  Page,
  Panel,
  Select,
  useAction,
  useLoad,
} from "../ui.tsx";

/** The most rows a key's table shows (the newest). */
const MAX_ROWS = 200;

const TIME_HINT = "Empty: no limit. E.g. 2026-03-02 08:00 (local time) or 2026-03-02 08:00+0200.";

function KeyValues(
  props: { statsKey: string; canDelete: boolean; onDeleted: (note: string) => void },
) {
  const [start, setStart] = useState("");
  const [end, setEnd] = useState("");
  const [range, setRange] = useState<{ start: string; end: string }>({ start: "", end: "" });
  const values = useLoad(
    () => get<[string, number][]>(`/monitoring/${seg(props.statsKey)}`, range),
    [props.statsKey, range],
  );
  const last = useLoad(() => get<number | null>(`/monitoring/${seg(props.statsKey)}/last`), [
    props.statsKey,
    values.data,
  ]);
  const act = useAction();
  const rows = [...(values.data ?? [])].reverse().slice(0, MAX_ROWS);
  return (
    <Panel title={`Values of ${props.statsKey}`}>
      <p>
        Newest value: <strong data-testid="last-value">{last.data ?? "none"}</strong>
      </p>
      <Form label="Time range" onSubmit={() => setRange({ start, end })}>
        <Field label="From" value={start} onValue={setStart} hint={TIME_HINT} />
        <Field label="Until" value={end} onValue={setEnd} hint={TIME_HINT} />
        <div class="actions">
          <button type="submit">Show</button>
          {props.canDelete && (
            <ConfirmButton
              label="Delete these values"
              question={range.start || range.end
                ? `Delete the values of ${props.statsKey} in this time range?`
                : `Delete every value of ${props.statsKey}?`}
              danger
              onConfirm={() =>
                act.run(async () => {
                  const r = await api<number>(
                    "DELETE",
                    `/monitoring/${seg(props.statsKey)}`,
                    range,
                  );
                  values.reload();
                  // said by the page: the key may be gone with its values, and this panel too
                  props.onDeleted(`${r.value} values of ${props.statsKey} deleted`);
                })}
            />
          )}
        </div>
      </Form>
      <Outcome error={act.error} note={act.note} />
      <LoadState error={values.error} loading={values.loading && !values.data} />
      {values.data && values.data.length === 0 && <p class="muted">No value in this range.</p>}
      {rows.length > 0 && (
        <table>
          <caption class="sr-only">Values of {props.statsKey}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time (UTC)</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(([time, value], i) => (
              <tr key={`${time}/${i}`}>
                <td data-label="Time (UTC)">{time}</td>
                <td data-label="Value">{value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(values.data?.length ?? 0) > MAX_ROWS && (
        <p class="muted">
          The newest {MAX_ROWS} of {values.data!.length} values; narrow the time range for others.
        </p>
      )}
    </Panel>
  );
}

/** `#/statistics`. */
export function StatisticsPage() {
  const { session } = useSession();
  const keys = useLoad(() => get<string[]>("/monitoring/"), []);
  const [chosen, setChosen] = useState("");
  const [note, setNote] = useState("");
  const names = [...(keys.data ?? [])].sort();
  const key = names.includes(chosen) ? chosen : names[0] ?? "";
  return (
    <Page title="Statistics">
      <Outcome note={note} />
      <LoadState error={keys.error} loading={keys.loading && !keys.data} />
      {keys.data && names.length === 0 && (
        <p class="muted">
          No statistics yet: {hasRight(session, "periodictask_read")
            ? <a href={href(["periodic"])}>periodic tasks</a>
            : "periodic tasks"} (EventCounter, SimpleStats) write them.
        </p>
      )}
      {names.length > 0 && (
        <>
          <Select
            label="Statistics key"
            value={key}
            onValue={(k) => {
              setChosen(k);
              setNote("");
            }}
            options={names}
          />
          <KeyValues
            key={key}
            statsKey={key}
            canDelete={hasRight(session, "statistics_delete")}
            onDeleted={(said) => {
              setNote(said);
              keys.reload();
            }}
          />
        </>
      )}
    </Page>
  );
}
