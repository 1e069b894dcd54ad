/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Subscriptions (`/subscriptions/`, admin right `managesubscription`): the installed ones with
 * customer, vendor, validity and use, uploading a vendor-signed subscription file, and deleting.
 *
 * @module
 */
import { useState } from "preact/hooks";
import { api, get, seg, upload } from "../api.ts";
import {
  ConfirmButton,
  Form,
  LoadState,
  Outcome,
  Page,
  Panel,
  useAction,
  useLoad,
} from "../ui.tsx";

/** A subscription as `GET /subscriptions/` lists it. */
interface Subscription {
  application: string;
  for_name: string;
  by_name: string;
  level: string;
  date_from: string;
  date_till: string;
  num_users: number;
  active_users: number;
  active: boolean;
  days_left: number;
}

/** `#/subscriptions`. */
export function SubscriptionsPage() {
  const list = useLoad(() => get<Subscription[]>("/subscriptions/"), []);
  const [file, setFile] = useState<File | undefined>();
  // a new file input after each upload: the chosen file does not stay
  const [round, setRound] = useState(0);
  const act = useAction();
  const subs = list.data ?? [];
  return (
    <Page title="Subscriptions">
      <LoadState error={list.error} loading={list.loading && !list.data} />
      {list.data && subs.length === 0 && <p class="muted">No subscription is installed.</p>}
      {subs.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Application</th>
              <th scope="col">For</th>
              <th scope="col">By</th>
              <th scope="col">Level</th>
              <th scope="col">Valid</th>
              <th scope="col">Users</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {subs.map((s) => (
              <tr key={s.application}>
                <td data-label="Application">{s.application}</td>
                <td data-label="For">{s.for_name}</td>
                <td data-label="By">{s.by_name}</td>
                <td data-label="Level">{s.level}</td>
                <td data-label="Valid" class={s.active ? undefined : "failure"}>
                  {s.date_from} to {s.date_till}
                  {s.active ? ` (${s.days_left} days left)` : " (not valid now)"}
                </td>
                <td
                  data-label="Users"
                  class={s.active_users > s.num_users ? "failure" : undefined}
                >
                  {s.active_users} of {s.num_users}
                </td>
                <td class="actions">
                  <ConfirmButton
                    label={`Delete ${s.application}`}
                    question={`Delete the subscription of ${s.application}?`}
                    danger
                    onConfirm={() =>
                      act.run(async () => {
                        await api("DELETE", `/subscriptions/${seg(s.application)}`);
                        list.reload();
                      }, `Subscription ${s.application} deleted`)}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Panel title="Upload a subscription">
        <Form
          label="Upload a subscription"
          onSubmit={() =>
            act.run(async () => {
              if (!file) throw new Error("Choose a file");
              const form = new FormData();
              form.set("file", file, file.name);
              await upload("/subscriptions/", form);
              setFile(undefined);
              setRound(round + 1);
              list.reload();
            }, "Subscription installed")}
        >
          <div class="field wide" key={round}>
            <label for="subscription-file">Subscription file</label>
            <input
              id="subscription-file"
              type="file"
              required
              aria-describedby="subscription-file-hint"
              onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0])}
            />
            <small id="subscription-file-hint" class="help">
              The file the vendor sent; its signature is checked against the vendor's key.
            </small>
          </div>
          <div class="actions">
            <button type="submit" class="primary" disabled={act.busy}>Upload</button>
          </div>
        </Form>
      </Panel>
      <Outcome error={act.error} note={act.note} />
    </Page>
  );
}
