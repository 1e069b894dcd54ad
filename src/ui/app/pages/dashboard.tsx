/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * The admin's first page: token counts by type and state (`/dashboard/tokens`), checks and
 * failures of the last hour and day (counted by `/audit/`), subscriptions, and what needs
 * attention (locked tokens, resolvers that fail `/healthz/resolversz`), each as far as the
 * admin's rights reach.
 *
 * @module
 */
import type { ComponentChildren } from "preact";
import { get } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import { href, LoadState, Page, Panel, useLoad } from "../ui.tsx";

/** `GET /dashboard/tokens`: counts per state. */
interface StateCounts {
  count: number;
  active: number;
  locked: number;
  disabled: number;
  revoked: number;
}

interface TokenCounts extends StateCounts {
  types: Record<string, StateCounts>;
}

/** The audit rows of validation checks (`/validate/check`, `samlcheck`, `radiuscheck`). */
const CHECKS = "*/validate/*check";

const STATES = ["active", "locked", "disabled", "revoked"] as const;

/** How many audit rows match: one row is read, the count is the answer's. */
async function auditCount(params: Record<string, string>): Promise<number> {
  const page = await get<{ count: number }>("/audit/", { ...params, page_size: 1 });
  return page.count;
}

function TokenPanel() {
  const counts = useLoad(() => get<TokenCounts>("/dashboard/tokens"), []);
  const c = counts.data;
  const types = Object.keys(c?.types ?? {}).sort();
  return (
    <Panel title="Tokens">
      <LoadState error={counts.error} loading={counts.loading && !c} />
      {c && c.count === 0 && (
        <p class="muted">
          There is no token yet. <a href={href(["enroll"])}>Enrol a token</a>
        </p>
      )}
      {c && c.count > 0 && (
        <table class="compact" data-testid="token-counts">
          <caption class="sr-only">Tokens by type and state</caption>
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">All</th>
              {STATES.map((s) => <th scope="col" key={s}>{s}</th>)}
            </tr>
          </thead>
          <tbody>
            {types.map((t) => (
              <tr key={t}>
                <th scope="row">
                  <a href={href(["tokens"], { type: t })}>{t}</a>
                </th>
                <td data-label="All">{c.types[t].count}</td>
                {STATES.map((s) => <td key={s} data-label={s}>{c.types[t][s]}</td>)}
              </tr>
            ))}
            <tr class="total">
              <th scope="row">all types</th>
              <td data-label="All">{c.count}</td>
              {STATES.map((s) => (
                <td key={s} data-label={s}>
                  {c[s] > 0 ? <a href={href(["tokens"], { state: s })}>{c[s]}</a> : 0}
                </td>
              ))}
            </tr>
          </tbody>
        </table>
      )}
    </Panel>
  );
}

function AuthenticationPanel() {
  const figures = useLoad(async () => {
    const [hourAll, hourFailed, dayAll, dayFailed] = await Promise.all([
      auditCount({ action: CHECKS, timelimit: "1h" }),
      auditCount({ action: CHECKS, timelimit: "1h", authentication: "REJECT" }),
      auditCount({ action: CHECKS, timelimit: "1d" }),
      auditCount({ action: CHECKS, timelimit: "1d", authentication: "REJECT" }),
    ]);
    return { hourAll, hourFailed, dayAll, dayFailed };
  }, []);
  const f = figures.data;
  return (
    <Panel title="Authentication">
      <LoadState error={figures.error} loading={figures.loading && !f} />
      {f && (
        <table class="compact" data-testid="check-counts">
          <caption class="sr-only">Checks of the last hour and day</caption>
          <thead>
            <tr>
              <th scope="col">Period</th>
              <th scope="col">Checks</th>
              <th scope="col">Rejected</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <th scope="row">last hour</th>
              <td data-label="Checks">{f.hourAll}</td>
              <td data-label="Rejected">{f.hourFailed}</td>
            </tr>
            <tr>
              <th scope="row">last 24 hours</th>
              <td data-label="Checks">{f.dayAll}</td>
              <td data-label="Rejected">{f.dayFailed}</td>
            </tr>
          </tbody>
        </table>
      )}
      <p class="help">
        Checks are /validate/check, samlcheck and radiuscheck requests; rejected ones answered
        REJECT (a triggered challenge is no failure). <a href={href(["audit"])}>Audit log</a>
      </p>
    </Panel>
  );
}

/** What needs attention: locked tokens and failing resolvers, with links. */
function AttentionPanel(props: { canTokens: boolean; canResolvers: boolean }) {
  const locked = useLoad(
    () =>
      props.canTokens
        ? get<{ count: number }>("/token/", { state: "locked", pagesize: 1 }).then((v) => v.count)
        : Promise.resolve(undefined),
    [],
  );
  // the probe names resolvers to an admin's JWT only; it is the node's view, reused 10 s
  const probe = useLoad(
    () => get<Record<string, string | Record<string, string>>>("/healthz/resolversz"),
    [],
  );
  // per resolver type, name → OK or fail (the answer's other key is the overall status)
  const failing = Object.entries(probe.data ?? {}).flatMap(([, v]) =>
    typeof v === "object" && v !== null
      ? Object.entries(v).filter(([, s]) => s !== "OK").map(([n]) => n)
      : []
  ).sort();
  const items: ComponentChildren[] = [];
  if (locked.data) {
    items.push(
      <li key="locked">
        <a href={href(["tokens"], { state: "locked" })}>
          {locked.data === 1 ? "1 token is locked" : `${locked.data} tokens are locked`}
        </a>{" "}
        (fail counter at its maximum: every check fails until it is reset)
      </li>,
    );
  }
  if (probe.data?.status === "error") {
    items.push(<li key="probe">The resolver probe failed: see the server's log.</li>);
  }
  if (failing.length > 0) {
    items.push(
      <li key="resolvers">
        {props.canResolvers
          ? <a href={href(["resolvers"])}>Resolvers that fail</a>
          : "Resolvers that fail"}: {failing.join(", ")}
      </li>,
    );
  }
  const loading = (locked.loading && locked.data === undefined) || (probe.loading && !probe.data);
  return (
    <Panel title="Needs attention">
      <LoadState error={locked.error ?? probe.error} loading={loading} />
      {!loading && items.length === 0 && !locked.error && !probe.error && (
        <p class="muted" data-testid="attention">Nothing needs attention.</p>
      )}
      {items.length > 0 && <ul data-testid="attention">{items}</ul>}
    </Panel>
  );
}

/** A subscription as `GET /subscriptions/` lists it. */
interface Subscription {
  application: string;
  for_name: string;
  date_till: string;
  num_users: number;
  active_users: number;
  active: boolean;
  days_left: number;
}

function SubscriptionsPanel() {
  const list = useLoad(() => get<Subscription[]>("/subscriptions/"), []);
  const subs = list.data ?? [];
  return (
    <Panel title="Subscriptions">
      <LoadState error={list.error} loading={list.loading && !list.data} />
      {list.data && subs.length === 0 && <p class="muted">No subscription is installed.</p>}
      {subs.length > 0 && (
        <table class="compact">
          <thead>
            <tr>
              <th scope="col">Application</th>
              <th scope="col">For</th>
              <th scope="col">Valid until</th>
              <th scope="col">Users</th>
            </tr>
          </thead>
          <tbody>
            {subs.map((s) => (
              <tr key={s.application}>
                <td>{s.application}</td>
                <td data-label="For">{s.for_name}</td>
                <td data-label="Valid until" class={s.active ? undefined : "failure"}>
                  {s.date_till}
                  {s.active ? ` (${s.days_left} days left)` : " (expired)"}
                </td>
                <td
                  data-label="Users"
                  class={s.active_users > s.num_users ? "failure" : undefined}
                >
                  {s.active_users} of {s.num_users}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}

/** `#/` and `#/dashboard` for an admin. */
export function DashboardPage() {
  const { session } = useSession();
  const can = (r: string) => hasRight(session, r);
  return (
    <Page title="Dashboard">
      <div class="dashboard">
        <AttentionPanel canTokens={can("tokenlist")} canResolvers={can("resolverread")} />
        {can("tokenlist") && <TokenPanel />}
        {can("auditlog") && <AuthenticationPanel />}
        {can("managesubscription") && <SubscriptionsPanel />}
      </div>
    </Page>
  );
}
